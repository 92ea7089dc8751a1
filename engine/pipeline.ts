/**
 * The types the pipeline stages share: what ingest hands the shards (committed batches, through a
 * dispatcher), and what a rollback needs of ingest. Stages import these, not each other.
 */
import type { Checkpoint, Store } from './store/store.js';
import type { EngineViews } from './state/views.js';
import type { Catalog } from './catalog/catalog.js';
import type { Snapshots } from './snapshot/snapshots.js';

/** A batch acknowledged by the log, for the shard that owns its chain. */
export interface CommittedBatch {
  readonly chain: number;
  readonly seq: number;
  /** Owned by the dispatcher from now on (it may move the buffer to another thread). */
  readonly bytes: Uint8Array;
}

export interface ApplyOptions {
  /** false: rebuild the views only (a rollback), writing nothing to the store and feeding no stream. */
  readonly persist?: boolean;
}

/** Applies committed batches, in order per chain, on the shards that own their chains. */
export interface ShardDispatcher {
  apply(batches: readonly CommittedBatch[], options?: ApplyOptions): Promise<unknown>;
  /** Writes what the shards still hold for the store (pending candles, transactions); resolves once on disk. */
  flush?(): Promise<unknown>;
  /** Zeroes the dynamic view state of these pools and tokens of `chain` (a rollback replays its log next). */
  reset?(chain: number, pools: readonly number[], tokens: readonly number[]): Promise<unknown>;
  /** Copies the shard-written rows of these pools and tokens of `chain` from a snapshot file (after a reset). */
  restore?(chain: number, path: string, pools: readonly number[], tokens: readonly number[]): Promise<unknown>;
}

/** What a rollback (ingest/rollback.ts) reads and resets of the ingest stage. */
export interface RollbackHost {
  readonly registry: Catalog;
  readonly logStore: Store;
  readonly sharedViews: EngineViews;
  readonly dispatch: ShardDispatcher;
  readonly snapshots: Snapshots | null;
  /** Resolves once every batch ingested so far is durable and applied by its shard. */
  settled(): Promise<void>;
  checkpoint(chain: string): Checkpoint;
  recentBlocks(chain: string): [number, string][];
  resetChain(chain: string, ck: Checkpoint, recent: [number, string][]): void;
}
