/**
 * Entry of an engine shard thread (one Piscina pool with a single thread per shard). The thread is
 * the only writer of the pools and tokens of the chains assigned to it.
 */
import { workerData } from 'node:worker_threads';
import { EngineViews, type EngineBuffers } from '../state/views.js';
import { metaKeys, openStore } from '../store/store.js';
import { ShardWriter, type ApplyStats } from './apply.js';
import { LmdbSink } from './lmdb-sink.js';
import { sweepChains } from './sweep.js';

export interface ShardWorkerData {
  readonly shard: number;
  readonly buffers: EngineBuffers;
  /** LMDB path, or null to keep nothing (benchmarks). */
  readonly storePath: string | null;
}

export interface ApplyTask {
  readonly seq: number;
  readonly bytes: Uint8Array;
  /** Unix seconds; transactions older than 7 days before it are not stored. */
  readonly now: number;
}

const TX_RETENTION_SECONDS = 7 * 86_400; // 7 days

const data = workerData as ShardWorkerData;
const views = EngineViews.attach(data.buffers);
const store = data.storePath ? openStore(data.storePath) : null;
const sink = store ? new LmdbSink(store) : null;
const writer = new ShardWriter(views, sink);
let watermark = store ? ((store.meta.get(metaKeys.shardWatermark(data.shard)) as number | undefined) ?? 0) : 0;

export function apply(task: ApplyTask): ApplyStats {
  writer.transactionsSince = task.now - TX_RETENTION_SECONDS;
  const persist = sink !== null && task.seq > watermark;
  const stats = writer.applyBatch(task.bytes, persist);
  if (persist) {
    sink.commit(data.shard, task.seq);
    watermark = task.seq;
  }
  return stats;
}

export function sweep(task: { readonly chains: readonly number[] }): number {
  return sweepChains(writer, views, task.chains);
}

export async function flush(): Promise<void> {
  await sink?.flushed();
}

export async function close(): Promise<void> {
  await sink?.flushed();
  await store?.close();
}
