/**
 * Ingest: normalise, dedupe, persist, dispatch. Events at or before a chain's checkpoint are
 * dropped, so feeding the same events twice changes nothing (the events one log gives share its key:
 * they are taken or dropped together). A batch is acknowledged once it and
 * the checkpoint it advances are committed to LMDB; only then is it handed to the chain's shard.
 * A `reorg` event rolls the chain back first (rollback.ts), then the events after it are taken.
 */
import * as flatbuffers from 'flatbuffers';
import { encodeBatch, batchRoot, type IdResolver } from '../events/codec.js';
import type { ChainEvent, ChainEventBatch, NetworkInfo } from '../events/model.js';
import { metaKeys, type Checkpoint, type PoolRecord, type Store, type TokenRecord } from '../store/store.js';
import type { EngineViews } from '../state/views.js';
import type { Snapshots } from '../snapshot/snapshots.js';
import { Catalog } from '../catalog/catalog.js';
import { rollbackChain, type RollbackResult } from './rollback.js';
import type { CommittedBatch, RollbackHost, ShardDispatcher } from '../pipeline.js';

export interface IngestResult {
  readonly accepted: number;
  readonly dropped: number;
  readonly batches: number;
  /** Resolves when the batches and checkpoints are durable (acknowledged). */
  readonly committed: Promise<void>;
  /** Resolves when every shard has applied the batches (after `committed`). */
  readonly applied: Promise<void>;
}

/** Events per log batch; larger source batches are cut. */
export const MAX_EVENTS_PER_BATCH = 4096;

const START: Checkpoint = { block: -1, tx: -1, log: -1, blockEvent: -1, time: 0 };
/** Hashes of a chain's newest blocks persisted with its checkpoint: where a follower resumes its reorg checks. */
export const RECENT_BLOCKS_KEPT = 128;

export class Ingest implements RollbackHost {
  /** The catalog (ids, addresses, names): this stage writes it. */
  readonly registry: Catalog;
  private readonly store: Store;
  private readonly views: EngineViews;
  private readonly dispatcher: ShardDispatcher;
  private readonly checkpoints = new Map<string, Checkpoint>();
  /** The builder every batch is encoded in (its bytes are copied out): one buffer for the engine's life, not one per batch. */
  private readonly builder = new flatbuffers.Builder(1 << 20);
  private logHead = 0;
  /** Settles once the previous ingest call's batches were handed to the dispatcher. */
  private dispatchTail: Promise<unknown> = Promise.resolve();
  /** Settles once every batch handed over so far was applied (or failed). */
  private appliedTail: Promise<unknown> = Promise.resolve();
  /** Per chain id: [number, hash] of the newest blocks ingested, oldest first. */
  private readonly recent = new Map<string, [number, string][]>();
  /** Events accepted since start, per chain id (/metrics). */
  readonly eventsByChain = new Map<string, number>();
  droppedDuplicates = 0;
  droppedUnknownPool = 0;
  /** Snapshots of the views, when the engine keeps them: a rollback rebuilds a chain from one. */
  snapshots: Snapshots | null = null;
  /** Rollbacks done since start, and the last one's figures. */
  rollbacks = 0;
  lastRollback: RollbackResult | null = null;

  constructor(store: Store, views: EngineViews, dispatcher: ShardDispatcher, registry?: Catalog) {
    this.store = store;
    this.views = views;
    this.dispatcher = dispatcher;
    this.registry = registry ?? new Catalog(views);
    this.logHead = (store.meta.get(metaKeys.logHead) as number | undefined) ?? 0;
  }

  get head(): number {
    return this.logHead;
  }

  checkpoint(chain: string): Checkpoint {
    return this.checkpoints.get(chain) ?? (this.store.meta.get(metaKeys.checkpoint(chain)) as Checkpoint | undefined) ?? START;
  }

  /** [number, hash] of the chain's newest blocks ingested, oldest first (at most RECENT_BLOCKS_KEPT). */
  recentBlocks(chain: string): [number, string][] {
    let r = this.recent.get(chain);
    if (r === undefined) {
      r = ((this.store.meta.get(metaKeys.recentBlocks(chain)) as [number, string][] | undefined) ?? []).slice();
      this.recent.set(chain, r);
    }
    return r;
  }

  /** Sets the chain's position after a rollback (rollback.ts, with the store already rewritten). */
  resetChain(chain: string, ck: Checkpoint, recent: [number, string][]): void {
    this.checkpoints.set(chain, ck);
    this.recent.set(chain, recent);
  }

  /** Resolves once every batch ingested so far is durable and applied by its shard. */
  async settled(): Promise<void> {
    await this.dispatchTail;
    await this.appliedTail;
  }

  /**
   * Calls `fn` once every batch ingested so far was handed to the dispatcher, and before any batch
   * ingested later is: work `fn` submits to the shards runs between the two (a snapshot cut).
   */
  afterHandOver<T>(fn: () => Promise<T>): Promise<T> {
    const handed = this.dispatchTail.then(() => ({ done: fn() }));
    this.dispatchTail = handed.catch(() => undefined);
    return handed.then((h) => h.done);
  }

  get dispatch(): ShardDispatcher {
    return this.dispatcher;
  }

  get logStore(): Store {
    return this.store;
  }

  get sharedViews(): EngineViews {
    return this.views;
  }

  /** Registers the source's networks and DEXes (persisted at once). */
  async registerNetworks(infos: readonly NetworkInfo[]): Promise<void> {
    const { networks, dexes } = this.registry.syncNetworks(infos);
    if (networks.length === 0 && dexes.length === 0) return;
    await this.store.root.transaction(() => {
      for (const n of networks) this.store.networks.put(n.index, n);
      for (const d of dexes) this.store.dexes.put(d.index, d);
    });
  }

  /**
   * Takes the events that are new: ids, encoding and the log write are issued now, in call order;
   * shards get the batches once the write is durable. Calls must not overlap (await each one);
   * their commits may, which keeps the source busy while the disk syncs.
   */
  async ingest(batches: readonly ChainEventBatch[]): Promise<IngestResult> {
    let reorgs = false;
    for (const b of batches) for (const e of b.events) if (e.kind === 'reorg') reorgs = true;
    if (!reorgs) return this.take(batches);
    // Events before a reorg are taken (and settled), the chain is rolled back, then the rest is taken.
    const results: IngestResult[] = [];
    let pending: ChainEventBatch[] = [];
    for (const b of batches) {
      let run: ChainEvent[] = [];
      for (const e of b.events) {
        if (e.kind !== 'reorg') {
          run.push(e);
          continue;
        }
        if (run.length > 0) pending.push({ chain: b.chain, events: run });
        run = [];
        if (pending.length > 0) results.push(await this.take(pending));
        pending = [];
        this.lastRollback = await rollbackChain(this, b.chain, e.toBlock);
        this.rollbacks++;
      }
      // The batch's records go with what follows its last reorg.
      if (run.length > 0 || b.records) pending.push({ chain: b.chain, events: run, ...(b.records ? { records: b.records } : {}) });
    }
    if (pending.length > 0) results.push(await this.take(pending));
    return {
      accepted: results.reduce((a, r) => a + r.accepted, 0),
      dropped: results.reduce((a, r) => a + r.dropped, 0),
      batches: results.reduce((a, r) => a + r.batches, 0),
      committed: Promise.all(results.map((r) => r.committed)).then(() => undefined),
      applied: Promise.all(results.map((r) => r.applied)).then(() => undefined),
    };
  }

  private async take(batches: readonly ChainEventBatch[]): Promise<IngestResult> {
    const committed: CommittedBatch[] = [];
    const newPools: PoolRecord[] = [];
    const newTokens: TokenRecord[] = [];
    const checkpoints: [string, Checkpoint][] = [];
    const recentWrites: [string, [number, string][]][] = [];
    const recordWrites: [string, unknown][] = [];
    let accepted = 0;
    let dropped = 0;
    for (const batch of batches) {
      const net = this.registry.networkOf(batch.chain);
      if (!net) throw new Error(`events for unregistered network ${batch.chain}`);
      const chain = net.index;
      // The checkpoint's fields as locals: no object per event (this loop runs for every event).
      const ck0 = this.checkpoint(batch.chain);
      let block = ck0.block;
      let tx = ck0.tx;
      let log = ck0.log;
      let blockEvent = ck0.blockEvent;
      let time = ck0.time;
      const kept: ChainEvent[] = [];
      let recent: [number, string][] | null = null;
      // Whether the last event with a key was kept: one log may give several events under its key
      // (a Uniswap v4 Swap: the swap, then a sync of the reserves), taken together or dropped together.
      let keptLast = false;
      // The pool id of the last address looked up: a pool's events come in runs, under the same string.
      let lastPool: string | null = null;
      let lastPoolId = -1;
      const poolId = (address: string): number => {
        if (address !== lastPool) {
          lastPool = address;
          lastPoolId = this.registry.poolId(chain, address);
        }
        return lastPoolId;
      };
      for (const e of batch.events) {
        if (e.kind === 'block') {
          if (e.number <= blockEvent) {
            dropped++;
            this.droppedDuplicates++;
            continue;
          }
          blockEvent = e.number;
          if (e.timestamp > time) time = e.timestamp;
          kept.push(e);
          if (e.hash !== '') (recent ??= this.recentBlocks(batch.chain)).push([e.number, e.hash]);
          continue;
        }
        // Reorgs are split off by ingest() before events get here.
        if (e.kind === 'reorg') continue;
        const k = e.key;
        const order = k.blockNumber - block || k.txIndex - tx || k.logIndex - log;
        if (order < 0 || (order === 0 && !keptLast)) {
          dropped++;
          this.droppedDuplicates++;
          keptLast = false;
          continue;
        }
        if (e.kind === 'pool_created') {
          const created = this.registry.createPool(chain, e);
          if (!created) {
            dropped++;
            this.droppedDuplicates++;
            keptLast = false;
            continue;
          }
          newPools.push(created.pool);
          newTokens.push(...created.tokens);
          lastPool = null;
        } else if (poolId(e.pool) < 0) {
          dropped++;
          this.droppedUnknownPool++;
          keptLast = false;
          continue;
        }
        keptLast = true;
        block = k.blockNumber;
        tx = k.txIndex;
        log = k.logIndex;
        if (e.timestamp > time) time = e.timestamp;
        kept.push(e);
      }
      const ck: Checkpoint = { block, tx, log, blockEvent, time };
      if (batch.records) for (const [k, v] of batch.records) recordWrites.push([metaKeys.sourceRecord(batch.chain, k), v]);
      if (kept.length === 0) continue;
      accepted += kept.length;
      this.eventsByChain.set(batch.chain, (this.eventsByChain.get(batch.chain) ?? 0) + kept.length);
      const ids: IdResolver = {
        poolId,
        tokenId: (address) => this.registry.tokenId(chain, address),
      };
      for (let i = 0; i < kept.length; i += MAX_EVENTS_PER_BATCH) {
        const bytes = encodeBatch(batch.chain, i === 0 && kept.length <= MAX_EVENTS_PER_BATCH ? kept : kept.slice(i, i + MAX_EVENTS_PER_BATCH), ids, this.builder);
        committed.push({ chain, seq: ++this.logHead, bytes });
      }
      this.checkpoints.set(batch.chain, ck);
      checkpoints.push([batch.chain, ck]);
      if (recent !== null) {
        if (recent.length > RECENT_BLOCKS_KEPT) recent.splice(0, recent.length - RECENT_BLOCKS_KEPT);
        recentWrites.push([batch.chain, recent.slice()]);
      }
    }
    if (committed.length === 0) {
      // Records of a step whose events were all taken already: written on their own.
      const done = recordWrites.length === 0 ? Promise.resolve() : this.store.writer.write(() => recordWrites.forEach(([k, v]) => this.store.meta.put(k, v)));
      return { accepted, dropped, batches: 0, committed: done, applied: done };
    }

    const head = this.logHead;
    // Waits out a full disk (durable.ts): the step is acknowledged, and handed to the shards, once written.
    const durable = this.store.writer
      .write(() => {
        for (const t of newTokens) this.store.tokens.put(t.id, t);
        for (const p of newPools) this.store.pools.put(p.id, p);
        for (const c of committed) this.store.log.put(c.seq, c.bytes);
        for (const [chain, ck] of checkpoints) this.store.meta.put(metaKeys.checkpoint(chain), ck);
        for (const [chain, r] of recentWrites) this.store.meta.put(metaKeys.recentBlocks(chain), r);
        for (const [k, v] of recordWrites) this.store.meta.put(k, v);
        this.store.meta.put(metaKeys.logHead, head);
      })
      .then(() => {
        for (const [chain, ck] of checkpoints) this.advanceClock(this.registry.networkOf(chain)!.index, ck.time);
      });
    // Hand-overs are chained in call order (after the previous one and after this commit), so shards
    // receive batches in log order; only the hand-over is chained, the shards' work overlaps.
    const handedOver = Promise.all([this.dispatchTail, durable]).then(() => ({ done: this.dispatcher.apply(committed) }));
    this.dispatchTail = handedOver.catch(() => undefined);
    const applied = handedOver.then((h) => h.done).then(() => undefined);
    this.appliedTail = Promise.all([this.appliedTail, applied]).catch(() => undefined);
    return { accepted, dropped, batches: committed.length, committed: durable, applied };
  }

  /** Moves a chain's clock forward (never back): block time while catching up, wall time when live. */
  advanceClock(chain: number, time: number): void {
    if (time > this.views.chainClock[chain]!) this.views.chainClock[chain] = time;
  }

  /**
   * Re-applies the log after batch `after` (0: all of it) to views that hold the state as of that
   * batch (zeroed, or loaded from a snapshot) after a restart, keeping at most `inFlight` batches
   * queued; resolves with the number of batches replayed.
   */
  async replay(after = 0, inFlight = 8, group = 32): Promise<number> {
    const pending = new Set<Promise<unknown>>();
    let count = 0;
    let next: CommittedBatch[] = [];
    const flush = async () => {
      const p = this.dispatcher.apply(next).finally(() => pending.delete(p));
      pending.add(p);
      next = [];
      if (pending.size >= inFlight) await Promise.race(pending);
    };
    for (const { key, value } of this.store.log.getRange({ start: after + 1 })) {
      const chainId = batchRoot(value).chain() ?? '';
      const net = this.registry.networkOf(chainId);
      if (!net) throw new Error(`log batch ${key} names unknown network ${chainId}`);
      // A private copy: dispatchers may take ownership of the buffer.
      next.push({ chain: net.index, seq: key, bytes: new Uint8Array(value) });
      count++;
      if (next.length >= group) await flush();
    }
    if (next.length > 0) await flush();
    await Promise.all(pending);
    for (const net of this.registry.networks) this.advanceClock(net.index, this.checkpoint(net.id).time);
    return count;
  }
}

