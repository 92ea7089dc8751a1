/**
 * The durable store: one LMDB environment, values packed with msgpackr (lmdb's default encoding).
 *
 *  log       batch sequence -> FlatBuffers EventBatch bytes; the source of truth the views are rebuilt from
 *  meta      string -> value: per-chain checkpoints and recent block hashes, the log head and how far it was pruned, genesis time, shard watermarks
 *  networks  chain index -> network record;  dexes  [chain index, dex id] -> DEX record
 *  pools     pool id -> pool record;  tokens  token id -> token record
 *  candles   [pool id, interval index, chunk start] -> sealed candles that left their shared-memory ring (candles.ts)
 *  txs       [pool id, block, tx index, log index] -> transaction of the last 7 days
 *
 * A batch, the checkpoint it advances and the pools and tokens it creates commit in one transaction:
 * once that commit resolves the batch is acknowledged, and a crash after it loses nothing.
 */
import { open } from 'lmdb';
import { RetryingWriter } from './durable.js';
const DEFAULT_MAP_SIZE_BYTES = 64 * 1024 ** 3; // 64 GiB of address space, not of disk
const PAGE_SIZE_BYTES = 16 * 1024; // 16 KiB
export function openStore(path, options = {}) {
    // Always a directory, even when its name has a dot (lmdb would otherwise take it for a file name).
    // 16 KiB pages (a new store only; an existing one keeps its size): a candle chunk then fits in its
    // leaf instead of needing a run of overflow pages, and the free-page list is a quarter as long.
    // Commits merge that list each time; with 4 KiB pages, after a 30-day backfill, that took 40-60 %
    // of a core for minutes after each start (bench/RESULTS.md).
    const root = open({ path, mapSize: options.mapSizeBytes ?? DEFAULT_MAP_SIZE_BYTES, maxDbs: 32, noSubdir: false, pageSize: PAGE_SIZE_BYTES });
    const db = (name, extra = {}) => root.openDB({ name, ...extra });
    const store = {
        path,
        root,
        // Batches are large and repetitive (hex hashes and addresses): LZ4 cuts them by about a third.
        log: db('log', { encoding: 'binary', compression: true }),
        meta: db('meta'),
        networks: db('networks'),
        dexes: db('dexes'),
        pools: db('pools'),
        tokens: db('tokens'),
        candles: db('candles'),
        txs: db('txs'),
        writer: new RetryingWriter(root, path),
        close: () => root.close(),
    };
    return store;
}
export const metaKeys = {
    logHead: 'log.head',
    /** Log batches up to this one were removed (they are in a snapshot); absent: the log is whole. */
    logPrunedThrough: 'log.prunedThrough',
    genesis: 'sim.genesis',
    checkpoint: (chain) => `checkpoint.${chain}`,
    /** [number, hash][] of the chain's newest blocks ingested, oldest first (written with the checkpoint). */
    recentBlocks: (chain) => `blocks.${chain}`,
    shardWatermark: (shard) => `shard.${shard}.watermark`,
};
/** Bytes of pages each database holds (branch, leaf and overflow pages; free pages not counted). */
export function databaseBytes(store) {
    const bytes = (db) => {
        const st = db.getStats();
        return (st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages) * st.pageSize;
    };
    return { log: bytes(store.log), txs: bytes(store.txs), candles: bytes(store.candles), pools: bytes(store.pools), tokens: bytes(store.tokens), meta: bytes(store.meta) };
}
//# sourceMappingURL=store.js.map