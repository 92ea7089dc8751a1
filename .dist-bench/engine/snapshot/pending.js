/**
 * The sealed candles a snapshot carries for the store (shards gather them before writing, and the
 * snapshot's rings no longer hold them): merged into the store when the snapshot is loaded, with each
 * shard's watermark raised to the snapshot's batch in the same transaction, since every effect of
 * the batches up to it is then stored (lmdb-sink.ts).
 */
import { unpack } from 'msgpackr';
import { mergeChunk } from '../store/candles.js';
import { metaKeys } from '../store/store.js';
import { readSection } from './load.js';
export function readPending(path, header) {
    return header.pending.bytes === 0 ? [] : unpack(readSection(path, header.pending));
}
export async function restorePending(store, snapshot, shards) {
    const chunks = readPending(snapshot.path, snapshot);
    await store.root.transaction(() => {
        for (const [pool, interval, start, data] of chunks) {
            const key = [pool, interval, start];
            store.candles.put(key, mergeChunk(store.candles.get(key), data));
        }
        for (let s = 0; s < shards; s++) {
            const w = store.meta.get(metaKeys.shardWatermark(s)) ?? 0;
            if (w < snapshot.seq)
                store.meta.put(metaKeys.shardWatermark(s), snapshot.seq);
        }
    });
}
//# sourceMappingURL=pending.js.map