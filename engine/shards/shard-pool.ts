/**
 * The engine shards: one Piscina pool of exactly one thread per shard. Whole chains are assigned to
 * shards: USD price routing reads other pools of the same chain, and one writer per chain keeps that
 * exact and deterministic. The chains are placed once per run, balancing the threads' expected load
 * (assignment.ts), at the first task that needs the placement. Piscina does not keep submission order even on a one-thread pool, so each
 * shard's tasks are chained: a task is submitted once the one before it has settled.
 */
import { Piscina } from 'piscina';
import type { Log } from '../log.js';
import type { ApplyOptions, CommittedBatch, ShardDispatcher } from '../pipeline.js';
import { EngineViews, type EngineBuffers } from '../state/views.js';
import type { RankQuery, RankResult } from '../search/rank-index.js';
import type { PoolRanker } from '../search/ranker.js';
import type { ApplyStats } from './apply.js';
import { SwapFeed } from '../feed/swaps.js';
import type { ApplyTask, ShardWorkerData } from './worker.js';
import type { TierPolicy, TierStats } from './tiers.js';
import type { HeapFigures } from '../heap.js';
import type { ShardCapture, ShardRuns } from '../snapshot/capture.js';
import { copied, type HandedOver } from '../snapshot/shard-cut.js';
import { ChainAssignment, chainWeights } from './assignment.js';

export interface ShardPoolOptions {
  readonly shards: number;
  readonly buffers: EngineBuffers;
  readonly storePath: string | null;
  /** Unix seconds "now" for transaction retention; defaults to the wall clock. */
  readonly now?: () => number;
  /** Where a failing swap-feed listener is reported. */
  readonly log?: Log;
  /** When pools give their ring blocks back (null: never; needs a store). */
  readonly tiers?: TierPolicy | null;
}

export class ShardPool implements ShardDispatcher, PoolRanker {
  readonly shards: number;
  private readonly pools: Piscina[];
  /** Per shard: settles when the last submitted task has settled. */
  private readonly tails: Promise<unknown>[];
  private readonly now: () => number;
  /** Set once the source has caught up: shards then write evicted candles at once. */
  live = false;
  /** Batches up to this one had every effect stored before this run (snapshot/take.ts openState): set before the first apply. */
  storedThrough = 0;
  /** Watched swaps, published as each shard's task settles. */
  readonly swapFeed: SwapFeed;
  /** [0] = 1 once stopping: the threads give up writes waiting for disk space (ShardWorkerData.stopping). */
  private readonly stopping = new Int32Array(new SharedArrayBuffer(4));
  /** Which shard writes each chain, shared with the threads; placed by `placed()`. */
  private readonly assignment: ChainAssignment;
  private readonly buffers: EngineBuffers;

  constructor(options: ShardPoolOptions) {
    if (!Number.isInteger(options.shards) || options.shards < 1) throw new TypeError('options.shards must be a positive integer');
    this.shards = options.shards;
    this.now = options.now ?? (() => Date.now() / 1000);
    this.swapFeed = new SwapFeed(options.log);
    this.buffers = options.buffers;
    this.assignment = ChainAssignment.create(options.buffers.capacity.chains, options.shards);
    const filename = new URL('./worker.js', import.meta.url).href;
    this.pools = Array.from({ length: options.shards }, (_, shard) => {
      const workerData: ShardWorkerData = { shard, shards: options.shards, buffers: options.buffers, storePath: options.storePath, stopping: this.stopping.buffer as SharedArrayBuffer, assignment: this.assignment.buffer, tiers: options.tiers ?? null };
      // 'async': between tasks the thread's event loop must run, or LMDB commit callbacks (and with
      // them the shard's durable candles) would wait for the next task.
      return new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: 2 ** 31 - 1, atomics: 'async', workerData });
    });
    this.tails = this.pools.map(() => Promise.resolve());
    this.searchQueue = this.pools.map(() => []);
    this.searching = this.pools.map(() => false);
  }

  /** Runs `name` on shard `shard` after every task submitted to it before. */
  private run<T>(shard: number, task: unknown, name: string, transferList?: ArrayBuffer[]): Promise<T> {
    const pool = this.pools[shard]!;
    const result = this.tails[shard]!.then(() => pool.run(task, transferList ? { name, transferList } : { name }) as Promise<T>);
    this.tails[shard] = result.catch(() => undefined);
    return result;
  }

  /**
   * The chains' placement, made on first use: by the pools' transactions in the views (a loaded
   * snapshot) and the events of `batches` (the first step applied). Every chain is placed then.
   */
  private placed(batches?: readonly CommittedBatch[]): ChainAssignment {
    const a = this.assignment;
    if (!a.placed) a.place(chainWeights(EngineViews.attach(this.buffers), batches));
    return a;
  }

  shardOf(chain: number): number {
    return this.placed().shardOf(chain);
  }

  chainsOf(shard: number, chainCount: number): number[] {
    if (chainCount === 0) return [];
    return Array.from({ length: chainCount }, (_, c) => c).filter((c) => this.shardOf(c) === shard);
  }

  /**
   * One task per shard carrying all of that shard's batches, in order. Each `bytes` must own its
   * whole buffer: it moves to the shard thread rather than being copied.
   */
  async apply(batches: readonly CommittedBatch[], options?: ApplyOptions): Promise<ApplyStats> {
    const perShard = this.pools.map(() => [] as CommittedBatch[]);
    const assignment = this.placed(batches);
    for (const b of batches) perShard[assignment.shardOf(b.chain)]!.push(b);
    const now = this.now();
    const results = await Promise.all(
      perShard.map((items, shard) => {
        if (items.length === 0) return null;
        const task: ApplyTask = { items: items.map((b) => ({ seq: b.seq, bytes: b.bytes })), now, live: this.live, storedThrough: this.storedThrough, ...(options?.persist === false ? { persist: false } : {}) };
        return this.run<ApplyStats>(shard, task, 'apply', items.map((b) => b.bytes.buffer as ArrayBuffer)).then((r) => {
          if (r.feed !== undefined) this.swapFeed.publish(r.feed);
          return r;
        });
      }),
    );
    const total: ApplyStats = { events: 0, swaps: 0, skipped: 0 };
    for (const r of results) {
      if (!r) continue;
      total.events += r.events;
      total.swaps += r.swaps;
      total.skipped += r.skipped;
    }
    return total;
  }

  /**
   * A ranked search on one shard. Not chained: it runs as soon as the shard thread finishes the
   * task in hand, and reads nothing a later task could change under it. Searches asked while one
   * of the shard's search tasks is out wait for it and then go together in the next task, answered
   * in the order asked: one message each way per task rather than per search.
   */
  rank(shard: number, q: RankQuery): Promise<RankResult> {
    return new Promise<RankResult>((resolve, reject) => {
      this.searchQueue[shard]!.push({ q, resolve, reject });
      if (!this.searching[shard]) this.sendSearches(shard);
    });
  }

  /** Searches waiting for the shard's search task in flight (searching[shard]) to settle. */
  private readonly searchQueue: { q: RankQuery; resolve: (r: RankResult) => void; reject: (e: unknown) => void }[][];
  private readonly searching: boolean[];

  private sendSearches(shard: number): void {
    const asked = this.searchQueue[shard]!;
    if (asked.length === 0) {
      this.searching[shard] = false;
      return;
    }
    this.searching[shard] = true;
    this.searchQueue[shard] = [];
    const qs = asked.map((a) => a.q);
    (this.pools[shard]!.run(qs, { name: 'searchBatch' }) as Promise<(RankResult | Error)[]>).then(
      (results) => {
        for (let i = 0; i < asked.length; i++) {
          const r = results[i]!;
          if (r instanceof Error) asked[i]!.reject(r);
          else asked[i]!.resolve(r);
        }
        this.sendSearches(shard);
      },
      (err: unknown) => {
        for (const a of asked) a.reject(err);
        this.sendSearches(shard);
      },
    );
  }

  /** Refreshes stale rolling windows on every shard; resolves with the number of pools changed. */
  async sweep(chainCount: number): Promise<number> {
    const counts = await Promise.all(this.pools.map((_, s) => this.run<number>(s, { chains: this.chainsOf(s, chainCount), now: this.now() }, 'sweep')));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Pools each shard let go of and took back (ring blocks), summed. */
  async tierStats(): Promise<TierStats> {
    const all = await Promise.all(this.pools.map((p) => p.run(null, { name: 'tierStats' }) as Promise<TierStats>));
    return all.reduce((a, s) => ({ released: a.released + s.released, reloaded: a.reloaded + s.reloaded, forced: a.forced + s.forced, missing: a.missing + s.missing }), { released: 0, reloaded: 0, forced: 0, missing: 0 });
  }

  /** A full garbage collection on every shard thread, after the tasks submitted before it; the longest one's milliseconds. */
  async collectGarbage(): Promise<number | null> {
    const ms = await Promise.all(this.pools.map((_, s) => this.run<number | null>(s, null, 'collect')));
    return ms.reduce<number | null>((a, b) => (b === null ? a : Math.max(a ?? 0, b)), null);
  }

  /** Each shard thread's JS heap (not chained: answered between tasks). */
  heaps(): Promise<HeapFigures[]> {
    return Promise.all(this.pools.map((p) => p.run(null, { name: 'heap' }) as Promise<HeapFigures>));
  }

  /** Seconds each shard thread has spent busy (running tasks) since it started. */
  busySeconds(): number[] {
    return this.pools.map((p) => p.threads.reduce((s, w) => s + w.performance.eventLoopUtilization().active / 1000, 0));
  }

  async reset(chain: number, pools: readonly number[], tokens: readonly number[]): Promise<void> {
    await this.run(this.shardOf(chain), { pools, tokens }, 'reset');
  }

  /** Copies snapshot rows of the given pools and tokens on the shard owning `chain`, after the tasks before it. */
  async restore(chain: number, path: string, pools: readonly number[], tokens: readonly number[]): Promise<void> {
    await this.run(this.shardOf(chain), { path, pools, tokens }, 'restore');
  }

  /** A snapshot cut on every shard, after the tasks submitted before it: each shard's rows (runs[shard]) and pending candles. */
  capture(runs: readonly ShardRuns[], delta: boolean, held: boolean): Promise<ShardCapture[]> {
    // Each shard's ring blocks and window slots are still being copied when its task returns.
    return Promise.all(this.pools.map((_, s) => this.run<HandedOver>(s, { runs: runs[s], delta, held }, 'capture').then(copied)));
  }

  /** Resolves once every store write the shards issued so far is on disk. */
  async durable(): Promise<void> {
    await Promise.all(this.pools.map((_, s) => this.run(s, null, 'durable')));
  }

  async flush(): Promise<void> {
    await Promise.all(this.pools.map((_, s) => this.run(s, null, 'flush')));
  }

  /** The threads give up their writes that wait for disk space (at shutdown, before their last tasks). */
  abandonWrites(): void {
    Atomics.store(this.stopping, 0, 1);
  }

  async close(): Promise<void> {
    this.abandonWrites();
    await Promise.all(this.pools.map((_, s) => this.run(s, null, 'close')));
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
