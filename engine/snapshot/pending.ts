/**
 * The sealed candles a snapshot carries for the store (shards gather them before writing, and the
 * snapshot's rings no longer hold them): merged into the store when the snapshot is loaded, with every
 * shard watermark kept raised to the snapshot's batch in the same transaction, since every effect of
 * the batches up to it is then stored (lmdb-sink.ts).
 */
import { unpack } from 'msgpackr';
import { mergeChunk } from '../store/candles.js';
import { metaKeys, type Store } from '../store/store.js';
import type { PendingChunkData } from './capture.js';
import type { SnapshotHeader } from './format.js';
import { readSection } from './load.js';
import { shardWatermarks } from '../shards/assignment.js';

export function readPending(path: string, header: SnapshotHeader): PendingChunkData[] {
  return header.pending.bytes === 0 ? [] : (unpack(readSection(path, header.pending)) as PendingChunkData[]);
}

export async function restorePending(store: Store, snapshot: SnapshotHeader & { readonly path: string }, shards: number): Promise<void> {
  const chunks = readPending(snapshot.path, snapshot);
  await store.root.transaction(() => {
    for (const [pool, interval, start, data] of chunks) {
      const key: [number, number, number] = [pool, interval, start];
      store.candles.put(key, mergeChunk(store.candles.get(key), data));
    }
    // Every watermark kept, an earlier run's threads' too: the lowest one counts for all (shards/assignment.ts).
    const kept = shardWatermarks(store);
    for (let s = 0; s < shards; s++) if (!kept.has(s)) kept.set(s, 0);
    for (const [s, w] of kept) if (w < snapshot.seq) store.meta.put(metaKeys.shardWatermark(s), snapshot.seq);
  });
}
