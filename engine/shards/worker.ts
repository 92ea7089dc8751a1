/**
 * Entry of an engine shard thread (one Piscina pool with a single thread per shard). The thread is
 * the only writer of the pools and tokens of the chains assigned to it.
 */
import { workerData } from 'node:worker_threads';
import { errorText, fallbackLog } from '../log.js';
import { EngineViews, type EngineBuffers } from '../state/views.js';
import { metaKeys, openStore } from '../store/store.js';
import { PoolRankIndex, type RankQuery, type RankResult } from '../search/rank-index.js';
import { ShardWriter, type ApplyStats } from './apply.js';
import { ChainAssignment } from './assignment.js';
import { LmdbSink } from './lmdb-sink.js';
import { pruneTransactions } from './prune.js';
import { resetState } from './reset.js';
import { restoreRows } from '../snapshot/load.js';
import { CaptureArena, type ShardRuns } from '../snapshot/capture.js';
import { CutCopying, CutMarks, ShardCut, type HandedOver } from '../snapshot/shard-cut.js';
import { sweepChains } from './sweep.js';
import { LmdbCandles } from './stored-candles.js';
import { ShardTiers, type TierPolicy, type TierStats } from './tiers.js';
import { collectGarbage, heapFigures, type HeapFigures } from '../heap.js';

export interface ShardWorkerData {
  readonly shard: number;
  readonly shards: number;
  /** Which shard owns each chain (assignment.ts): placed by the main thread before any task that needs it. */
  readonly assignment: SharedArrayBuffer;
  readonly buffers: EngineBuffers;
  /** LMDB path, or null to keep nothing (benchmarks). */
  readonly storePath: string | null;
  /** Int32 [0]: 1 once the engine stops: writes waiting for disk space are given up. */
  readonly stopping: SharedArrayBuffer;
  /** When pools give their ring blocks back (null: never). */
  readonly tiers: TierPolicy | null;
}

export interface ApplyTask {
  /** Log batches of this shard's chains, in log order. */
  readonly items: readonly { readonly seq: number; readonly bytes: Uint8Array }[];
  /** Unix seconds; transactions older than 7 days before it are not stored. */
  readonly now: number;
  /** Live (caught up): candles leaving the rings are written at once rather than gathered. */
  readonly live: boolean;
  /** false: a rollback's rebuild; views only, nothing stored or fed to streams. */
  readonly persist?: boolean;
  /** Batches up to this one had every effect stored before this run (the settled watermarks, snapshot/take.ts openState): replayed, they rebuild state only. */
  readonly storedThrough: number;
}

const TX_RETENTION_SECONDS = 7 * 86_400; // 7 days
const PRUNE_INTERVAL_MS = 10 * 60_000; // 10 min

const data = workerData as ShardWorkerData;
const views = EngineViews.attach(data.buffers);
const store = data.storePath ? openStore(data.storePath) : null;
const stopping = new Int32Array(data.stopping);
store?.writer.abandonWhen(() => Atomics.load(stopping, 0) === 1);
const sink = store ? new LmdbSink(store) : null;
const candles = store && sink ? new LmdbCandles(store, sink) : null;
const writer = new ShardWriter(views, sink, candles);
const assignment = new ChainAssignment(data.assignment, data.shards);
const ownsChain = (c: number) => assignment.shardOf(c) === data.shard;
const tiers = new ShardTiers(views, writer, sink, store, ownsChain, data.tiers);
const index = new PoolRankIndex(views, ownsChain);
writer.index = index;
/** Batches up to this one had all their effects stored before this run (ApplyTask.storedThrough, taken from the first apply). */
let storedThrough: number | null = null;

let lastPersisted = 0;

export function apply(task: ApplyTask): ApplyStats {
  index.beginTask();
  // A cut still copying moves on by a slice per task too, not only while the thread is idle.
  copying.slice();
  writer.transactionsSince = task.now - TX_RETENTION_SECONDS;
  const total: ApplyStats = { events: 0, swaps: 0, skipped: 0 };
  let persisted = 0;
  storedThrough ??= task.storedThrough;
  for (const { seq, bytes } of task.items) {
    // Batches at or below the stored watermark were persisted before a restart: rebuild state only.
    const persist = sink !== null && seq > storedThrough && task.persist !== false;
    sink?.applying(seq);
    if (persist) sink.beginBatch(seq);
    const stats = writer.applyBatch(bytes, persist);
    if (persist) persisted = seq;
    total.events += stats.events;
    total.swaps += stats.swaps;
    total.skipped += stats.skipped;
  }
  // While catching up the chain clocks run hours ahead per second: pools that went quiet meanwhile
  // hand their candles over with this task's commit rather than wait for the next sweep, and tokens
  // with no recent 1 s candle give their second blocks back (else every token that traded during
  // the backfill would keep one until it is over, and their memory stays resident once touched).
  const due = tiers.due();
  if (due) tiers.sweepSeconds();
  const handedOver = persisted > 0 && due ? tiers.sweep() : 0;
  // One commit for the whole task.
  if (sink !== null && persisted > 0) {
    sink.commit(data.shard, persisted, task.live || handedOver > 0);
    lastPersisted = persisted;
    if (handedOver > 0) tiers.written(sink.flushed());
  }
  const feed = writer.takeFeed();
  if (feed !== null && task.persist !== false) total.feed = feed;
  return total;
}

/** Zeroes pools and tokens of a chain being rolled back (its log is applied again next). */
export function reset(task: { readonly pools: readonly number[]; readonly tokens: readonly number[] }): void {
  index.beginTask();
  copying.finish();
  tiers.forget(task.pools);
  candles?.forgetAll();
  resetState(views, task.pools, task.tokens);
  markChanged(task.pools, task.tokens);
}

/** Copies the rows of a chain being rolled back from a snapshot taken before the rewritten batches. */
export function restore(task: { readonly path: string; readonly pools: readonly number[]; readonly tokens: readonly number[] }): void {
  index.beginTask();
  copying.finish();
  candles?.forgetAll();
  restoreRows(task.path, views, task.pools, task.tokens);
  markChanged(task.pools, task.tokens);
}

/** Rows a rollback rewrote: changed for search, for the window sweep and for the next snapshot cut. */
function markChanged(pools: readonly number[], tokens: readonly number[]): void {
  for (const p of pools) {
    index.markDirty(p);
    writer.sweepSet.add(p);
    views.txKeptFrom[p] = 0;
  }
  writer.dirty.pools.markAll(pools);
  writer.dirty.candles.markAll(pools);
  writer.dirty.tokens.markAll(tokens);
}

/**
 * A snapshot cut reached this shard: it notes what the cut copies and takes its pending candles now
 * (it applies nothing meanwhile); the copies are made after this returns (snapshot/shard-cut.ts).
 */
export function capture(task: { readonly runs: ShardRuns; readonly delta: boolean; readonly held: boolean }): HandedOver {
  // The copies are in the shard's capture arena (shared memory): the main thread reads them where they are.
  return copying.begin(() => new ShardCut(views, task.runs, writer.dirty, task.delta, arena, ownsChain, marks, sink?.pendingChunks() ?? [], task.held));
}

/** This shard's capture buffers and not-yet-copied marks, reused from cut to cut (snapshot/capture.ts, shard-cut.ts). */
const arena = new CaptureArena();
const marks = new CutMarks(views.capacity.pools, views.capacity.tokens);
const copying = new CutCopying(writer, (err) => fallbackLog().error(`shard ${data.shard}: a snapshot's copy failed: ${errorText(err)}`));

/** Resolves once every store write this shard issued so far is on disk. */
export async function durable(): Promise<void> {
  await sink?.flushed();
}

let lastPruneMs = 0;

/** Ages rolling windows to the chain clocks and, every PRUNE_INTERVAL_MS, drops transactions past retention. */
export async function sweep(task: { readonly chains: readonly number[]; readonly now: number }): Promise<number> {
  index.beginTask();
  const changed = sweepChains(writer, views, task.chains);
  tiers.sweepSeconds();
  // Pools that went quiet hand their candles to the store, written now, with the watermark already true.
  const through = lastPersisted > 0 ? lastPersisted : (storedThrough ?? 0);
  if (sink !== null && through > 0 && tiers.sweep() > 0) {
    sink.commit(data.shard, through, true);
    tiers.written(sink.flushed());
  }
  if (store && performance.now() - lastPruneMs >= PRUNE_INTERVAL_MS) {
    lastPruneMs = performance.now();
    await pruneTransactions(store, views, task.chains, task.now - TX_RETENTION_SECONDS, views.txKeptFrom);
  }
  return changed;
}

export function tierStats(): TierStats {
  return tiers.stats();
}

/** A full collection of this thread's heap; its milliseconds (null: the runtime allows none). */
export function collect(): number | null {
  return collectGarbage();
}

/** This thread's JS heap (for /stats). */
export function heap(): HeapFigures {
  return heapFigures();
}

/** Pages of ranked pool searches over this shard's chains (between apply tasks), in the order given; a search that fails answers its error. */
export function searchBatch(qs: readonly RankQuery[]): (RankResult | Error)[] {
  return qs.map((q) => {
    try {
      return index.query(q);
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  });
}

/** Writes every pending candle and waits until all is on disk. */
export async function flush(): Promise<void> {
  if (sink !== null && lastPersisted > 0) sink.commit(data.shard, lastPersisted, true);
  await sink?.flushed();
}

export async function close(): Promise<void> {
  copying.finish();
  // On a full disk what is not written yet is given up (replay from the watermark re-creates it).
  store?.writer.abandon();
  await flush().catch((err: unknown) => fallbackLog().error(`shard ${data.shard}: candles not written at shutdown: ${errorText(err)}`));
  await store?.close();
}
