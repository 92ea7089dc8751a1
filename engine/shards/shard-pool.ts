/**
 * The engine shards: one Piscina pool of exactly one thread per shard, so each shard applies its
 * batches strictly in order. Whole chains are assigned to shards: USD price routing reads other
 * pools of the same chain, and one writer per chain keeps that exact and deterministic.
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
  private readonly now: () => number;

  constructor(options: ShardPoolOptions) {
    if (!Number.isInteger(options.shards) || options.shards < 1) throw new TypeError('options.shards must be a positive integer');
    this.shards = options.shards;
    this.now = options.now ?? (() => Date.now() / 1000);
    const filename = new URL('./worker.js', import.meta.url).href;
    this.pools = Array.from({ length: options.shards }, (_, shard) => {
      const workerData: ShardWorkerData = { shard, buffers: options.buffers, storePath: options.storePath };
      return new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: 2 ** 31 - 1, workerData });
    });
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
    return this.pools[this.shardOf(chain)]!.run(task, { name: 'apply', transferList: [bytes.buffer as ArrayBuffer] }) as Promise<ApplyStats>;
  }

  /** Refreshes stale rolling windows on every shard; resolves with the number of pools changed. */
  async sweep(chainCount: number): Promise<number> {
    const counts = await Promise.all(this.pools.map((p, s) => p.run({ chains: this.chainsOf(s, chainCount) }, { name: 'sweep' }) as Promise<number>));
    return counts.reduce((a, b) => a + b, 0);
  }

  async flush(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.run(null, { name: 'flush' })));
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.run(null, { name: 'close' })));
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
