/**
 * The engine shards: one Piscina pool of exactly one thread per shard. Whole chains are assigned to
 * shards: USD price routing reads other pools of the same chain, and one writer per chain keeps that
 * exact and deterministic. Piscina does not keep submission order even on a one-thread pool, so each
 * shard's tasks are chained: a task is submitted once the one before it has settled.
 */
import { Piscina } from 'piscina';
import type { ShardDispatcher } from '../ingest/ingest.js';
import type { EngineBuffers } from '../state/views.js';
import type { ApplyStats } from './apply.js';
import type { ApplyTask, ShardWorkerData } from './worker.js';

export interface ShardPoolOptions {
  readonly shards: number;
  readonly buffers: EngineBuffers;
  readonly storePath: string | null;
  /** Unix seconds "now" for transaction retention; defaults to the wall clock. */
  readonly now?: () => number;
}

export class ShardPool implements ShardDispatcher {
  readonly shards: number;
  private readonly pools: Piscina[];
  /** Per shard: settles when the last submitted task has settled. */
  private readonly tails: Promise<unknown>[];
  private readonly now: () => number;

  constructor(options: ShardPoolOptions) {
    if (!Number.isInteger(options.shards) || options.shards < 1) throw new TypeError('options.shards must be a positive integer');
    this.shards = options.shards;
    this.now = options.now ?? (() => Date.now() / 1000);
    const filename = new URL('./worker.js', import.meta.url).href;
    this.pools = Array.from({ length: options.shards }, (_, shard) => {
      const workerData: ShardWorkerData = { shard, buffers: options.buffers, storePath: options.storePath };
      // 'async': between tasks the thread's event loop must run, or LMDB commit callbacks (and with
      // them the shard's durable candles) would wait for the next task.
      return new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: 2 ** 31 - 1, atomics: 'async', workerData });
    });
    this.tails = this.pools.map(() => Promise.resolve());
  }

  /** Runs `name` on shard `shard` after every task submitted to it before. */
  private run<T>(shard: number, task: unknown, name: string, transferList?: ArrayBuffer[]): Promise<T> {
    const pool = this.pools[shard]!;
    const result = this.tails[shard]!.then(() => pool.run(task, transferList ? { name, transferList } : { name }) as Promise<T>);
    this.tails[shard] = result.catch(() => undefined);
    return result;
  }

  shardOf(chain: number): number {
    return chain % this.shards;
  }

  chainsOf(shard: number, chainCount: number): number[] {
    return Array.from({ length: chainCount }, (_, c) => c).filter((c) => this.shardOf(c) === shard);
  }

  /** `bytes` must own its whole buffer (it is transferred, not copied). */
  apply(chain: number, seq: number, bytes: Uint8Array): Promise<ApplyStats> {
    const task: ApplyTask = { seq, bytes, now: this.now() };
    // The batch buffer moves to the shard thread; callers must not touch `bytes` afterwards.
    return this.run<ApplyStats>(this.shardOf(chain), task, 'apply', [bytes.buffer as ArrayBuffer]);
  }

  /** Refreshes stale rolling windows on every shard; resolves with the number of pools changed. */
  async sweep(chainCount: number): Promise<number> {
    const counts = await Promise.all(this.pools.map((_, s) => this.run<number>(s, { chains: this.chainsOf(s, chainCount) }, 'sweep')));
    return counts.reduce((a, b) => a + b, 0);
  }

  async flush(): Promise<void> {
    await Promise.all(this.pools.map((_, s) => this.run(s, null, 'flush')));
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((_, s) => this.run(s, null, 'close')));
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
