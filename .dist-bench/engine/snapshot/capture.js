import { keptColumns, rowBytes } from './format.js';
/** Kept columns the shards write per pool or token row, in table order (the order of ShardCapture.columns). */
export function shardRowColumns(table) {
    return keptColumns(table).filter((c) => c.writer === 'shard' && (c.scope === 'pool' || c.scope === 'token'));
}
/**
 * Splits the pools and tokens that exist at the cut (ids below the bounds) into runs per owning
 * shard. Ids not in use at the cut belong to no shard and stay zero in the snapshot: a pool or token
 * made after it may take such an id (ids come in per-chain blocks), and its owner may write its row
 * before another shard reaches the cut, which must not copy that later state.
 */
export function runsByShard(views, shards, shardOfChain, pools, tokens, tokenExists) {
    const out = Array.from({ length: shards }, () => ({ pools: [], tokens: [] }));
    const split = (count, ownerOf, key) => {
        let start = 0;
        let owner = count > 0 ? ownerOf(0) : -1;
        for (let id = 1; id <= count; id++) {
            const next = id < count ? ownerOf(id) : -2;
            if (next === owner)
                continue;
            if (owner >= 0)
                out[owner][key].push(start, id);
            start = id;
            owner = next;
        }
    };
    split(pools, (p) => (views.poolExists[p] === 1 ? shardOfChain(views.poolChain[p]) : -1), 'pools');
    split(tokens, (t) => (tokenExists(t) ? shardOfChain(views.tokenChain[t]) : -1), 'tokens');
    return out;
}
function rowsOf(runs) {
    let n = 0;
    for (let i = 0; i < runs.length; i += 2)
        n += runs[i + 1] - runs[i];
    return n;
}
/** On a shard: copies its runs of every shard row column, packed. */
export function captureShardRows(views, runs) {
    return shardRowColumns(views.columnTable).map((c) => {
        const r = c.scope === 'pool' ? runs.pools : runs.tokens;
        const size = rowBytes(c);
        const out = new Uint8Array(rowsOf(r) * size);
        const src = new Uint8Array(c.array.buffer, c.array.byteOffset, c.array.byteLength);
        let at = 0;
        for (let i = 0; i < r.length; i += 2) {
            const from = r[i] * size;
            const to = r[i + 1] * size;
            out.set(src.subarray(from, to), at);
            at += to - from;
        }
        return out;
    });
}
//# sourceMappingURL=capture.js.map