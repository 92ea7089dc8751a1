/**
 * Rolling a chain back to a block after a reorganisation: every effect of the orphaned blocks
 * (events after `toBlock`) goes, in the store and in the shared views.
 *
 * Durability: the store is rewritten in ONE LMDB transaction (the chain's log batches trimmed to
 * the events at or before `toBlock`, its checkpoint and recent block hashes, the pools and tokens
 * the orphaned blocks created, the stored transactions after `toBlock`, and the stored candles from
 * the interval of the first orphaned event on). A crash before that commit leaves the chain as it
 * was (the follower finds the reorganisation again from the persisted block hashes); a crash after
 * it leaves the rolled-back store, from which a restart rebuilds the views by replaying the log.
 *
 * Views: candles, windows and routed prices cannot be undone event by event, so the chain's pools
 * and tokens are zeroed, their rows are copied back from the newest snapshot taken before the first
 * rewritten batch (when there is one), and the chain's (trimmed) log after that snapshot is applied
 * again on its shard, persisting nothing. Other chains keep serving meanwhile; their ingest waits for
 * the rollback to finish. Without a snapshot the whole log is read and the chain's events applied
 * again (bench figures in bench/RESULTS.md); with a pruned log and no snapshot old enough, the
 * rollback fails rather than serve a chain rebuilt from part of its history.
 *
 * A touched pool without a ring block in the snapshot's rows had handed its candles over before the
 * cut: those still open then (store/parked.ts), which the cut of the store may have taken out, are put
 * back as its version for its swap count holds them, before the log after the snapshot is applied.
 *
 * Why deleting stored candles from the first orphaned interval on is exact: every event kept is at
 * or before the first orphaned event's time, so in the canonical history no candle opening at or
 * after that interval was ever evicted from a ring; the ones stored were evicted by orphaned events.
 */
import { batchRoot, decodeBatch, encodeBatch, type DecodedEvent, type IdResolver } from '../events/codec.js';
import { chunkStart, CANDLE_FIELDS, putChunks, type ChunkWrite } from '../store/candles.js';
import { PARKED_HEAD, PARKED_STRIDE, parkedAt, parkedBatch, parkedCandlesEnd } from '../store/parked.js';
import { metaKeys, type Checkpoint } from '../store/store.js';
import { INTERVALS, INTERVAL_SECONDS } from '../state/layout.js';
import { logPrunedThrough } from '../snapshot/prune-log.js';
import type { CommittedBatch, RollbackHost } from '../pipeline.js';

export interface RollbackResult {
  readonly chain: string;
  readonly toBlock: number;
  /** Log batches of the chain that held orphaned events (rewritten or deleted). */
  readonly batchesRewritten: number;
  readonly eventsOrphaned: number;
  readonly poolsRemoved: number;
  readonly tokensRemoved: number;
  readonly transactionsRemoved: number;
  /** Log batches of the chain applied again to rebuild its views. */
  readonly batchesReplayed: number;
  readonly eventsReplayed: number;
  /** Milliseconds: waiting for work in flight, the store transaction, the view rebuild, in all. */
  readonly settleMs: number;
  readonly commitMs: number;
  readonly rebuildMs: number;
  readonly totalMs: number;
}

/** Events replayed per task while rebuilding a chain's views. */
const REBUILD_GROUP = 32;
const TX_MAX = Number.MAX_SAFE_INTEGER;

function blockOf(e: DecodedEvent): number {
  return e.kind === 'block' ? e.number : e.kind === 'reorg' ? -1 : e.key.blockNumber;
}

function timeOf(e: DecodedEvent): number {
  return e.kind === 'reorg' ? 0 : e.timestamp;
}

export async function rollbackChain(ingest: RollbackHost, chainId: string, toBlock: number): Promise<RollbackResult> {
  const t0 = performance.now();
  const store = ingest.logStore;
  const views = ingest.sharedViews;
  const registry = ingest.registry;
  const dispatcher = ingest.dispatch;
  const net = registry.networkOf(chainId);
  if (!net) throw new Error(`rollback of unregistered network ${chainId}`);
  if (!dispatcher.reset || !dispatcher.flush) throw new Error('the shard dispatcher cannot roll a chain back (no reset or flush)');
  const chain = net.index;

  // Everything taken so far is durable and applied, and what the shards hold for the store is on disk:
  // from here on the store holds every effect of the orphaned blocks, and nothing more will arrive.
  await ingest.settled();
  await dispatcher.flush();
  const t1 = performance.now();

  // The chain's batches with events after toBlock: the newest ones (reorganisations are shallow).
  const affected: { seq: number; kept: DecodedEvent[] }[] = [];
  const orphaned: DecodedEvent[] = [];
  let keptTime = 0;
  for (const { key, value } of store.log.getRange({ reverse: true })) {
    if (batchRoot(value).chain() !== chainId) continue;
    const events = decodeBatch(value).events;
    let cut = events.length;
    while (cut > 0 && blockOf(events[cut - 1]!) > toBlock) cut--;
    for (let i = 0; i < cut; i++) keptTime = Math.max(keptTime, timeOf(events[i]!));
    if (cut === events.length) break;
    affected.push({ seq: key, kept: events.slice(0, cut) });
    for (let i = cut; i < events.length; i++) orphaned.push(events[i]!);
  }

  // The views are rebuilt from the newest snapshot taken before the first rewritten batch (then only
  // the log after it is applied), or from the whole log when there is none; snapshots of rewritten
  // batches go before the store is rewritten, so no restart can load one.
  const firstRewritten = affected.length > 0 ? affected[affected.length - 1]!.seq : Infinity;
  const snapshots = ingest.snapshots;
  await snapshots?.idle();
  const base = snapshots && Number.isFinite(firstRewritten) ? snapshots.before(firstRewritten) : null;
  const prunedThrough = logPrunedThrough(store);
  if (Number.isFinite(firstRewritten) && base === null && prunedThrough > 0) {
    throw new Error(`${chainId}: cannot roll back to block ${toBlock}: the log is pruned through batch ${prunedThrough} and no snapshot predates batch ${firstRewritten}`);
  }
  if (Number.isFinite(firstRewritten)) snapshots?.dropFrom(firstRewritten);

  const old = ingest.checkpoint(chainId);
  const ck: Checkpoint = {
    block: Math.min(Math.max(old.block, old.blockEvent), toBlock),
    tx: TX_MAX,
    log: TX_MAX,
    blockEvent: Math.min(old.blockEvent, toBlock),
    time: keptTime,
  };
  const recent = ingest.recentBlocks(chainId).filter(([n]) => n <= toBlock);

  // What the orphaned events touched.
  const removedPools = new Set<number>();
  const touched = new Set<number>();
  let firstTime = Infinity;
  for (const e of orphaned) {
    if (e.kind === 'reorg' || e.kind === 'block') continue;
    firstTime = Math.min(firstTime, e.timestamp);
    if (e.poolId === undefined) continue;
    touched.add(e.poolId);
    if (e.kind === 'pool_created') removedPools.add(e.poolId);
  }
  const survivingTokens = new Set<number>();
  for (let p = registry.firstPoolOfChain(chain); p >= 0; p = registry.nextPoolOfChain(p)) {
    if (removedPools.has(p)) continue;
    survivingTokens.add(registry.poolToken0(p));
    survivingTokens.add(registry.poolToken1(p));
  }
  const removedTokens = new Set<number>();
  for (const p of removedPools) {
    if (!registry.poolKnown(p)) continue;
    for (const t of [registry.poolToken0(p), registry.poolToken1(p)]) if (!survivingTokens.has(t)) removedTokens.add(t);
  }

  // Trimmed batches keep their sequence numbers; ids in them are those the batch carries.
  const resolverFor = (events: readonly DecodedEvent[]): IdResolver => {
    const pools = new Map<string, number>();
    const tokens = new Map<string, number>();
    for (const e of events) {
      if (e.kind !== 'pool_created') continue;
      pools.set(e.pool, e.poolId!);
      tokens.set(e.token0.address, e.token0Id!);
      tokens.set(e.token1.address, e.token1Id!);
    }
    return {
      poolId: (a) => (a.startsWith('#') ? Number(a.slice(1)) : pools.get(a)!),
      tokenId: (a) => tokens.get(a)!,
    };
  };
  const rewrites = affected.map(({ seq, kept }) => ({ seq, bytes: kept.length > 0 ? encodeBatch(chainId, kept, resolverFor(kept)) : null }));

  let transactionsRemoved = 0;
  // Keys are listed before they are removed: nothing is deleted under an open cursor.
  await store.root.transaction(() => {
    for (const { seq, bytes } of rewrites) {
      if (bytes === null) store.log.remove(seq);
      else store.log.put(seq, bytes);
    }
    store.meta.put(metaKeys.checkpoint(chainId), ck);
    store.meta.put(metaKeys.recentBlocks(chainId), recent);
    for (const p of removedPools) {
      store.pools.remove(p);
      for (const k of [...store.candles.getKeys({ start: [p], end: [p + 1] })]) store.candles.remove(k);
      for (const k of [...store.parked.getKeys({ start: [p], end: [p + 1] })]) store.parked.remove(k);
      for (const k of [...store.txs.getKeys({ start: [p], end: [p + 1] })]) {
        store.txs.remove(k);
        transactionsRemoved++;
      }
    }
    for (const t of removedTokens) store.tokens.remove(t);
    for (const p of touched) {
      if (removedPools.has(p)) continue;
      for (const k of [...store.txs.getKeys({ start: [p, toBlock + 1], end: [p + 1] })]) {
        store.txs.remove(k);
        transactionsRemoved++;
      }
      // Versions of its open candles written after the state the views are rebuilt from may hold orphaned swaps.
      for (const { key, value } of [...store.parked.getRange({ start: [p], end: [p + 1] })]) if (parkedBatch(value) > (base?.seq ?? 0)) store.parked.remove(key);
      if (!Number.isFinite(firstTime)) continue;
      for (let iv = 0; iv < INTERVALS.length; iv++) {
        const cutoff = firstTime - (firstTime % INTERVAL_SECONDS[iv]!);
        for (const { key, value } of [...store.candles.getRange({ start: [p, iv, chunkStart(iv, cutoff)], end: [p, iv + 1] })]) {
          let keep = 0;
          while (keep < value.length && value[keep]! < cutoff) keep += CANDLE_FIELDS;
          if (keep === value.length) continue;
          if (keep === 0) store.candles.remove(key);
          else store.candles.put(key, value.slice(0, keep));
        }
      }
    }
  });
  ingest.resetChain(chainId, ck, recent);
  const t2 = performance.now();

  // Views: orphaned pools and tokens leave the lookups, then the chain is rebuilt from its log
  // (not needed when the orphaned blocks carried no event of a known pool).
  const allPools = registry.poolsOfChain(chain);
  let batchesReplayed = 0;
  let eventsReplayed = 0;
  if (touched.size > 0) {
  const allTokens = [...new Set(allPools.flatMap((p) => [registry.poolToken0(p), registry.poolToken1(p)]))];
  registry.removePools(chain, [...removedPools], [...removedTokens]);
  await dispatcher.reset(chain, allPools, allTokens);
  if (base !== null) {
    if (!dispatcher.restore) throw new Error('the shard dispatcher cannot restore rows from a snapshot');
    await dispatcher.restore(chain, base.path, allPools, allTokens);
    await restoreOpenCandles(ingest, touched, removedPools);
  }
  let group: CommittedBatch[] = [];
  const pending: Promise<unknown>[] = [];
  for (const { key, value } of store.log.getRange({ start: (base?.seq ?? 0) + 1 })) {
    const root = batchRoot(value);
    if (root.chain() !== chainId) continue;
    group.push({ chain, seq: key, bytes: new Uint8Array(value) });
    batchesReplayed++;
    eventsReplayed += root.eventsLength();
    if (group.length >= REBUILD_GROUP) {
      pending.push(dispatcher.apply(group, { persist: false }));
      group = [];
      if (pending.length >= 8) await pending.shift();
    }
  }
  if (group.length > 0) pending.push(dispatcher.apply(group, { persist: false }));
  await Promise.all(pending);
  }
  const t3 = performance.now();

  // The rolled-back chain is visible: tell readers (streams), block first, then the counter.
  views.chainReorgBlock[chain] = toBlock;
  Atomics.add(views.chainReorgs, chain, 1);

  return {
    chain: chainId,
    toBlock,
    batchesRewritten: affected.length,
    eventsOrphaned: orphaned.length,
    poolsRemoved: removedPools.size,
    tokensRemoved: removedTokens.size,
    transactionsRemoved,
    batchesReplayed,
    eventsReplayed,
    settleMs: t1 - t0,
    commitMs: t2 - t1,
    rebuildMs: t3 - t2,
    totalMs: t3 - t0,
  };
}

/** Puts back into the candle store the open candles of the touched pools that hold no ring block (rows as the snapshot restored them), as their versions hold them. */
async function restoreOpenCandles(ingest: RollbackHost, touched: ReadonlySet<number>, removed: ReadonlySet<number>): Promise<void> {
  const store = ingest.logStore;
  const v = ingest.sharedViews;
  const chunks: ChunkWrite[] = [];
  for (const p of touched) {
    if (removed.has(p) || v.poolBlock[p] !== 0 || v.lastSwapTime[p] === 0) continue;
    const version = parkedAt(store, p, v.txnsTotal[p]!);
    if (version === undefined) continue;
    const end = parkedCandlesEnd(version);
    for (let at = PARKED_HEAD; at < end; at += PARKED_STRIDE) {
      const interval = version[at]!;
      const data = version.slice(at + 1, at + PARKED_STRIDE);
      chunks.push({ pool: p, interval, start: chunkStart(interval, data[0]!), data });
    }
  }
  if (chunks.length > 0) await store.root.transaction(() => putChunks(store, chunks));
}
