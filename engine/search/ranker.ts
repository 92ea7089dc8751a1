import type { RankQuery, RankResult } from './rank-index.js';

/** Where ranked pool searches run: one PoolRankIndex per shard, each on the thread writing that shard. */
export interface PoolRanker {
  readonly shards: number;
  shardOf(chain: number): number;
  /** One page of `q` over shard `shard`'s pools, in rank order. */
  rank(shard: number, q: RankQuery): Promise<RankResult>;
}
