/**
 * The sealed candles a snapshot carries for the store (shards gather them before writing, and the
 * snapshot's rings no longer hold them): merged into the store when the snapshot is loaded, with the
 * shard watermarks settled at least at the snapshot's batch in the same transaction, since every
 * effect of the batches up to it is then stored (lmdb-sink.ts, shards/assignment.ts).
 */
import { unpack } from 'msgpackr';
import { mergeChunk } from '../store/candles.js';
import type { Store } from '../store/store.js';
import type { PendingChunkData } from './capture.js';
import type { SnapshotHeader } from './format.js';
import { readSection } from './load.js';
import { settleWatermarks } from '../shards/assignment.js';

export function readPending(path: string, header: SnapshotHeader): PendingChunkData[] {
  return header.pending.bytes === 0 ? [] : (unpack(readSection(path, header.pending)) as PendingChunkData[]);
}

/** Returns the settled watermark: every effect of the batches up to it is stored. */
export async function restorePending(store: Store, snapshot: SnapshotHeader & { readonly path: string }, shards: number): Promise<number> {
  const chunks = readPending(snapshot.path, snapshot);
  return store.root.transaction(() => {
    for (const [pool, interval, start, data] of chunks) {
      const key: [number, number, number] = [pool, interval, start];
      store.candles.put(key, mergeChunk(store.candles.get(key), data));
    }
    return settleWatermarks(store, shards, snapshot.seq);
  });
}
