/**
 * The shard writer: folds a chain's events, in chain order, into the shared views. One writer per
 * chain (the shard that owns it), so every read-modify-write here is race free, and results depend
 * only on the event sequence, never on batch boundaries or thread timing.
 *
 * Per swap the cost is constant: reserves, price routing, 9 candle rings, 9 rolling windows and two
 * 1 s token candles. A window (state/windows.ts) is re-summed from its base ring (at most 50
 * candles) only when its anchor moves (once per base interval); otherwise a swap is added to it, and
 * as minutes pass the one-minute candles that leave it are subtracted, each read once (ring, the
 * candles waiting for the store, or the store).
 */
import { Burn } from '../events/fb/dex/events/burn.js';
import { EventBatch } from '../events/fb/dex/events/event-batch.js';
import { EventBody } from '../events/fb/dex/events/event-body.js';
import { Event } from '../events/fb/dex/events/event.js';
import { EventKey } from '../events/fb/dex/events/event-key.js';
import { FastByteBuffer } from '../events/fast-byte-buffer.js';
import { Mint } from '../events/fb/dex/events/mint.js';
import { PoolCreated } from '../events/fb/dex/events/pool-created.js';
import { ReserveDelta } from '../events/fb/dex/events/reserve-delta.js';
import { ReserveDeltaFlags } from '../events/fb/dex/events/reserve-delta-flags.js';
import { Swap } from '../events/fb/dex/events/swap.js';
import { SwapFlags } from '../events/fb/dex/events/swap-flags.js';
import { Sync } from '../events/fb/dex/events/sync.js';
import { TokenInfo } from '../events/fb/dex/events/token-info.js';
import { U128 } from '../events/fb/dex/events/u128.js';
import { U160 } from '../events/fb/dex/events/u160.js';
import { INTERVALS, INTERVAL_SECONDS, TOKEN_SECOND_SLOTS, WINDOWS, WINDOW_BASES, WINDOW_COUNT } from '../state/layout.js';
import { RING_OPENED_STRIDE, ringOpenedAt, syncMark, type CandleRing, type EngineViews } from '../state/views.js';
import { CANDLE_U32_WORDS, CANDLE_WORDS, CandleF64, CandleU32, SECOND_U32_WORDS, SECOND_WORDS, SecondF64, SecondU32 } from '../state/candle-record.js';
import { ringBlocks, secondBlocks, take, type BlockPool } from '../state/ring-blocks.js';
import { quietAsOf, releaseWindowSlot, windowAsOf, windowSlotOf, windowSlots } from '../state/window-slots.js';
import { createScratchRings, newestCandleOpen } from '../state/read.js';
import {
  createLeavingCandle,
  createWindowSums,
  leaveCandle,
  minuteOf,
  MINUTE_S,
  NEVER_CHANGES,
  priceChange,
  anchorMoves,
  parkedWindows,
  reloadNewest,
  resummedSinceSwap,
  sumWindows,
  windowAnchor,
  windowsEmpty,
  windowsEmptyFrom,
  type LeavingCandle,
  type StoredCandles,
} from '../state/windows.js';
import { ROW_WINDOWS, ROW_WINDOW_FIGURES, type RowWindowFigure } from '../search/figures.js';
import type { PoolRankIndex } from '../search/rank-index.js';
import { DirtyRows } from '../snapshot/dirty.js';
import type { CutBarrier } from '../snapshot/shard-cut.js';
import { MIN_QUIET_AFTER_SECONDS } from './tiers.js';
import { SweepSet, windowsMayMove } from './sweep.js';
import { lastWalkedHops, MAX_ROUTE_HOPS, MIN_ROUTE_LIQUIDITY_USD, poolBase1, poolPricesFrom, priceThroughRoute, ROUTE_STALE_AFTER_S, routedPriceInto, routeReaches } from '../state/exact-price.js';
import { pricedByReserves, reserveInto, setReserveRatio } from '../state/reserve-price.js';
import { addU128, setU128, subU128, u128Into, u160Into } from './u128.js';
import { feedSwap, type FeedSwap } from '../feed/swaps.js';

const Q96 = 2 ** 96;
const POW10: readonly number[] = Array.from({ length: 78 }, (_, i) => 10 ** i);

/**
 * Where candles leaving the rings and recent transactions go (LMDB in the service, nothing in
 * benchmarks). A candle is stored when the ring evicts it: until then the ring holds it, and a
 * restart rebuilds the ring from the log, so every sealed candle is always in one of the two.
 */
export interface ShardSink {
  candleEvicted(pool: number, interval: number, ring: CandleRing, slot: number): void;
  /** `kind` 0 swap, 1 mint, 2 burn. Called with the event still readable through `ev`. */
  transaction(kind: 0 | 1 | 2, pool: number, ev: Swap | Mint | Burn, key: EventKey, usd: TxUsd): void;
}

/** Where a shard finds the candles of a pool that holds no ring block (state/windows.ts). */
export type { StoredCandles } from '../state/windows.js';

/** Per window base, the row window figures (search/figures.ts) of the windows on it. */
const ROW_OF_BASE: readonly (readonly { readonly figure: RowWindowFigure; readonly w: number }[])[] = WINDOW_BASES.map(({ windows }) =>
  ROW_WINDOW_FIGURES.flatMap((figure) => ROW_WINDOWS[figure].filter((w) => windows.includes(w)).map((w) => ({ figure, w }))),
);

/**
 * Per interval: whether its candles go to the store as they close (a later one opens), besides when
 * they leave the ring. Those of intervals longer than the shortest quiet time may have been stored
 * while open, by a pool that went quiet and then traded again (tiers.ts): the store gets them final.
 */
const STORED_AT_CLOSE: readonly boolean[] = INTERVAL_SECONDS.map((s) => s > MIN_QUIET_AFTER_SECONDS);

/** Per window base, the windows whose volume (and whose transaction count) is a row figure. */
const VOLUME_ROWS_OF_BASE: readonly (readonly number[])[] = ROW_OF_BASE.map((rows) => rows.filter((r) => r.figure === 'volumeUsd').map((r) => r.w));
const TXNS_ROWS_OF_BASE: readonly (readonly number[])[] = ROW_OF_BASE.map((rows) => rows.filter((r) => r.figure === 'txns').map((r) => r.w));

/** USD figures of a transaction at the time it happened. */
export interface TxUsd {
  price0Usd: number;
  price1Usd: number;
  volumeUsd: number;
  ratio: number;
}

export interface ApplyStats {
  events: number;
  swaps: number;
  skipped: number;
  /** Swaps of watched pools and tokens (views.watchPool / watchToken), in chain order; absent when none. */
  feed?: FeedSwap[];
}

/**
 * True when token `role` may be priced through a counterpart of role `via`: an anchor (a stablecoin
 * or the wrapped native token) only through another anchor, never from a lesser token.
 */
function routeAllowed(role: number, via: number): boolean {
  switch (role) {
    case 0:
      return false;
    case 1:
      return via === 0 || via === 2;
    case 2:
      return via === 0 || via === 1;
    default:
      return true;
  }
}

export class ShardWriter {
  private readonly v: EngineViews;
  private readonly sink: ShardSink | null;
  private readonly ev = new Event();
  private readonly swap = new Swap();
  private readonly sync = new Sync();
  private readonly mint = new Mint();
  private readonly burn = new Burn();
  private readonly delta = new ReserveDelta();
  private readonly created = new PoolCreated();
  private readonly token = new TokenInfo();
  private readonly key = new EventKey();
  /** The event after the one being applied, read ahead (a Sync's own transaction). */
  private readonly nextEv = new Event();
  private readonly nextSwap = new Swap();
  private readonly nextMint = new Mint();
  private readonly nextBurn = new Burn();
  private readonly nextKey = new EventKey();
  private readonly u128 = new U128();
  private readonly u160 = new U160();
  private readonly usd: TxUsd = { price0Usd: 0, price1Usd: 0, volumeUsd: 0, ratio: 0 };
  /** A pool's USD prices and liquidity as poolPricesUsd gives them. */
  private readonly prices = new Float64Array(3);
  /** The route offerRoute weighs: [0] the token's USD price through it, [1] the hop's USD liquidity. */
  private readonly offer = new Float64Array(2);
  /** An event's 128- or 160-bit integer as a number (u128Into). */
  private readonly num = new Float64Array(1);
  /** The routed USD prices of the last repriced pool's tokens. */
  private readonly tokenPrices = new Float64Array(2);
  /** Transactions older than this (Unix s) are not handed to the sink. */
  transactionsSince = 0;
  /** Told of every pool whose figures this writer changes (the shard's search ranking). */
  index: PoolRankIndex | null = null;
  /** Set by resumWindows when a window figure took a new value. */
  private windowsMoved = false;
  /** Watched swaps applied since the last takeFeed (allocated only when one is watched). */
  private feed: FeedSwap[] | null = null;
  /** Stored candles, for pools that trade again after giving their block back and for their windows meanwhile. */
  private readonly stored: StoredCandles | null;
  /** One private row per interval: a quiet pool's stored candles, re-summed as its ring would be. */
  private readonly scratch = createScratchRings();
  /** The windows of one base as last summed (resumWindows). */
  private readonly sums = createWindowSums();
  /** A one-minute candle leaving a window (advanceWindows), and one found for it (findLeaving). */
  private readonly leaving: LeavingCandle = createLeavingCandle();
  private readonly found: LeavingCandle = createLeavingCandle();
  /** Per interval, while a swap is written into its candles: the slot of the newest candle it joins, -1 when it opens one. */
  private readonly newestSlot = new Int32Array(INTERVALS.length);
  /**
   * The swap being applied, in USD: token 0's and token 1's price, its volume and its buy volume
   * (handed to the candle and window writers in place, not as arguments: no number is boxed per swap).
   */
  private readonly swapUsd = new Float64Array(4);
  /** Per window base, while a swap is written into its windows: the minute they were as of. */
  private readonly asOfs = new Float64Array(WINDOW_BASES.length);
  /**
   * [0] the time (Unix s) of the event being applied, [1] its minute: read by the methods that need
   * them rather than passed, since a time above 2^30 crossing a call that is not inlined is boxed.
   */
  private readonly at = new Float64Array(2);
  /** Called when no ring block is free: frees some (tiers.ts), or throws. */
  onBlocksExhausted: (() => void) | null = null;
  /** Ring blocks taken back from LMDB (pools that traded again after going quiet). */
  reloads = 0;
  /** Candles a reload expected but LMDB did not have (a store that lost data). */
  reloadMisses = 0;
  /** Swaps whose 1 s token candle was not kept because every second block was in use. */
  secondsDropped = 0;
  /**
   * Per chain: the newest event time this writer applied (Unix s). A chain's events come in time
   * order, so no later event opens or changes a candle whose period ended before it.
   */
  readonly chainTime: Float64Array;
  /** The block pools this writer takes ring and second blocks from. */
  private readonly ringPool: BlockPool;
  private readonly secondPool: BlockPool;
  private readonly slotPool: BlockPool;
  /** The pools and tokens this writer changed since the last snapshot cut (snapshot/dirty.ts). */
  readonly dirty: DirtyRows;
  /** The pools whose rolling windows a sweep still has to move (sweep.ts). */
  readonly sweepSet: SweepSet;

  constructor(views: EngineViews, sink: ShardSink | null, stored: StoredCandles | null = null) {
    this.v = views;
    this.dirty = new DirtyRows(views.capacity.pools, views.capacity.tokens);
    this.sweepSet = new SweepSet(views.capacity.pools);
    this.sink = sink;
    this.stored = stored;
    this.chainTime = new Float64Array(views.capacity.chains);
    this.ringPool = ringBlocks(views);
    this.secondPool = secondBlocks(views);
    this.slotPool = windowSlots(views);
  }

  /** A snapshot cut still copying this shard's rows: told before a pool or token is written (snapshot/shard-cut.ts). */
  cut: CutBarrier | null = null;

  /** Moves pool p's seqlock word (as a write begins or ends) and marks its row changed since the last cut. */
  seqPool(p: number): void {
    // Every write of a pool's row, ring block or window slot begins here, so its rows as of a cut still being copied are copied first.
    if (this.cut !== null) this.cut.before(p);
    Atomics.add(this.v.poolSeq, p, 1);
    this.dirty.pools.mark(p);
  }

  /** The same for token t. */
  seqToken(t: number): void {
    if (this.cut !== null) this.cut.beforeToken(t);
    Atomics.add(this.v.tokenSeq, t, 1);
    this.dirty.tokens.mark(t);
  }

  /** Pool p's chain has reached the event's time. */
  private passed(p: number): void {
    const c = this.v.poolChain[p]!;
    const t = this.at[0]!;
    if (t > this.chainTime[c]!) this.chainTime[c] = t;
  }

  /** The event being applied happened at t (Unix s). */
  private setTime(t: number): void {
    this.at[0] = t;
    this.at[1] = minuteOf(t);
  }

  applyBatch(bytes: Uint8Array, persist = true): ApplyStats {
    const root = EventBatch.getRootAsEventBatch(new FastByteBuffer(bytes));
    const n = root.eventsLength();
    const sink = persist ? this.sink : null;
    const stats: ApplyStats = { events: n, swaps: 0, skipped: 0 };
    for (let i = 0; i < n; i++) {
      const ev = root.events(i, this.ev)!;
      switch (ev.bodyType()) {
        case EventBody.Swap:
          this.applySwap(ev.body(this.swap) as Swap, sink);
          stats.swaps++;
          break;
        case EventBody.Sync:
          this.applySync(ev.body(this.sync) as Sync, i + 1 < n && this.takesOverSync(root.events(i + 1, this.nextEv)!, this.sync));
          break;
        case EventBody.Mint:
          this.applyLiquidity(ev.body(this.mint) as Mint, 1, sink);
          break;
        case EventBody.Burn:
          this.applyLiquidity(ev.body(this.burn) as Burn, 2, sink);
          break;
        case EventBody.ReserveDelta:
          this.applyReserveDelta(ev.body(this.delta) as ReserveDelta);
          break;
        case EventBody.PoolCreated:
          this.applyPoolCreated(ev.body(this.created) as PoolCreated);
          break;
        case EventBody.Block:
          break;
        default:
          // Reorgs are resolved by ingest before batches reach a shard.
          stats.skipped++;
      }
    }
    return stats;
  }

  /**
   * True when event `next`, right after Sync `e`, is a Swap, Mint or Burn of the same pool in the same
   * transaction that finds the Sync's reserves (its `synced` rule), of a pool priced by its reserves
   * that holds a ring block: that event prices the pool from the same ratio and reserves and rewrites
   * every price change, so the Sync need not (and `updatePriceChanges` runs once for the pair).
   */
  private takesOverSync(next: Event, e: Sync): boolean {
    const type = next.bodyType();
    let pool: number;
    let key: EventKey;
    let time: number;
    if (type === EventBody.Swap) {
      const s = next.body(this.nextSwap) as Swap;
      pool = s.poolId();
      key = s.key(this.nextKey)!;
      time = s.timestamp();
    } else if (type === EventBody.Mint || type === EventBody.Burn) {
      const m = next.body(type === EventBody.Mint ? this.nextMint : this.nextBurn) as Mint | Burn;
      pool = m.poolId();
      key = m.key(this.nextKey)!;
      time = m.timestamp();
    } else return false;
    const v = this.v;
    const p = e.poolId();
    if (pool !== p || v.poolBlock[p] === 0 || !pricedByReserves(v.poolProtocol[p]!) || time !== e.timestamp()) return false;
    const k = e.key(this.key)!;
    return key.blockNumber() === k.blockNumber() && key.txIndex() === k.txIndex();
  }

  /** The watched swaps applied since the last call (null when none). */
  takeFeed(): FeedSwap[] | null {
    const f = this.feed;
    this.feed = null;
    return f;
  }

  private applyPoolCreated(e: PoolCreated): void {
    this.index?.markDirty(e.poolId());
    // Static columns were written by ingest; here the shard seeds the reference stablecoin's price.
    for (const t of [e.token0(this.token)!.tokenId(), e.token1(this.token)!.tokenId()]) {
      const v = this.v;
      if (v.tokenRole[t] === 0 && v.tokenPriceUsd[t] !== 1) {
        this.seqToken(t);
        v.tokenPriceUsd[t] = 1;
        v.tokenPriceTime[t] = e.timestamp();
        this.seqToken(t);
      }
    }
  }

  /** Records the block and time of a reserve change (the event's). */
  private beginReserveChange(p: number, block: number): void {
    const v = this.v;
    v.reserveBlock[p] = block;
    v.reserveTime[p] = this.at[0]!;
  }

  /** Applies a signed delta (magnitude words + negative flag) to reserve `side` of pool p. */
  private moveReserve(p: number, side: 0 | 1, s: U128, negative: boolean): void {
    const at = p * 8 + side * 4;
    if (negative) subU128(this.v.reserveRaw, at, s);
    else addU128(this.v.reserveRaw, at, s);
  }

  /** `takenOver`: the next event reprices the pool from these reserves (takesOverSync). */
  private applySync(e: Sync, takenOver: boolean): void {
    const v = this.v;
    const p = e.poolId();
    if (v.poolProtocol[p] === 1 && e.sqrtPriceX96(this.u160) !== null) {
      this.applyInitialPrice(p, e);
      return;
    }
    const k = e.key(this.key)!;
    this.setTime(e.timestamp());
    this.seqPool(p);
    this.beginReserveChange(p, k.blockNumber());
    const o = p * 8;
    setU128(v.reserveRaw, o, e.reserve0(this.u128)!);
    setU128(v.reserveRaw, o + 4, e.reserve1(this.u128)!);
    v.syncBlock[p] = syncMark(k.blockNumber());
    v.syncTx[p] = k.txIndex();
    v.lastEventTime[p] = this.at[0]!;
    this.passed(p);
    setReserveRatio(v, p);
    if (!takenOver) {
      this.reprice(p, false);
      this.updatePriceChanges(p);
    }
    this.seqPool(p);
    this.index?.markDirty(p);
  }

  /** A concentrated pool's `Initialize`: the price it starts at, from sqrtPriceX96, before any swap. */
  private applyInitialPrice(p: number, e: Sync): void {
    const v = this.v;
    const q = e.sqrtPriceX96(this.u160)!;
    u160Into(q, this.num, 0);
    const sqrt = this.num[0]! / Q96;
    if (!(sqrt > 0)) return;
    this.setTime(e.timestamp());
    this.seqPool(p);
    v.ratio[p] = (sqrt * sqrt * POW10[v.poolDecimals0[p]!]!) / POW10[v.poolDecimals1[p]!]!;
    v.lastEventTime[p] = this.at[0]!;
    this.passed(p);
    this.reprice(p, false);
    this.updatePriceChanges(p);
    this.seqPool(p);
    this.index?.markDirty(p);
  }

  private applyLiquidity(e: Mint | Burn, kind: 1 | 2, sink: ShardSink | null): void {
    const v = this.v;
    const p = e.poolId();
    const k = e.key(this.key)!;
    const block = k.blockNumber();
    this.setTime(e.timestamp());
    this.seqPool(p);
    // A Sync in the same tx already holds the reserves after it (a pool priced by its reserves, or a
    // concentrated pool whose source states its reserves, Uniswap v4's; its syncBlock stays 0 otherwise).
    const synced = v.syncBlock[p] === syncMark(block) && v.syncTx[p] === k.txIndex() && (pricedByReserves(v.poolProtocol[p]!) || block > 0);
    // A concentrated pool's Burn only credits the position: its tokens leave with the Collect (a ReserveDelta).
    const moves = !synced && !(kind === 2 && v.poolProtocol[p] === 1);
    if (moves) {
      this.beginReserveChange(p, block);
      this.moveReserve(p, 0, e.amount0(this.u128)!, kind === 2);
      this.moveReserve(p, 1, e.amount1(this.u128)!, kind === 2);
      setReserveRatio(v, p);
    }
    v.lastEventTime[p] = this.at[0]!;
    this.passed(p);
    this.reprice(p, false);
    this.updatePriceChanges(p);
    this.seqPool(p);
    this.index?.markDirty(p);
    if (sink !== null && this.at[0]! >= this.transactionsSince) {
      const u = this.usd;
      u.price0Usd = v.priceUsd0[p]!;
      u.price1Usd = v.priceUsd1[p]!;
      const a0 = e.amount0(this.u128)!;
      u128Into(a0, this.num, 0);
      const n0 = this.num[0]! / POW10[v.poolDecimals0[p]!]!;
      const a1 = e.amount1(this.u128)!;
      u128Into(a1, this.num, 0);
      const n1 = this.num[0]! / POW10[v.poolDecimals1[p]!]!;
      u.volumeUsd = n0 * u.price0Usd + n1 * u.price1Usd;
      u.ratio = v.ratio[p]!;
      sink.transaction(kind, p, e, k, u);
    }
  }

  /**
   * Tokens that entered or left the pool outside a transaction (a concentrated pool's Collect,
   * CollectProtocol or Flash): its reserves move, so they stay its token balances, and its prices
   * and liquidity follow; nothing is recorded as a transaction.
   */
  private applyReserveDelta(e: ReserveDelta): void {
    const v = this.v;
    const p = e.poolId();
    const k = e.key(this.key)!;
    const flags = e.flags();
    this.setTime(e.timestamp());
    this.seqPool(p);
    this.beginReserveChange(p, k.blockNumber());
    this.moveReserve(p, 0, e.amount0(this.u128)!, (flags & ReserveDeltaFlags.Amount0Negative) !== 0);
    this.moveReserve(p, 1, e.amount1(this.u128)!, (flags & ReserveDeltaFlags.Amount1Negative) !== 0);
    setReserveRatio(v, p);
    v.lastEventTime[p] = this.at[0]!;
    this.passed(p);
    this.reprice(p, false);
    this.updatePriceChanges(p);
    this.seqPool(p);
    this.index?.markDirty(p);
  }

  private applySwap(e: Swap, sink: ShardSink | null): void {
    const v = this.v;
    const p = e.poolId();
    const k = e.key(this.key)!;
    const block = k.blockNumber();
    this.setTime(e.timestamp());
    const t = this.at[0]!;
    const flags = e.flags();
    const neg0 = (flags & SwapFlags.Amount0Negative) !== 0;
    const neg1 = (flags & SwapFlags.Amount1Negative) !== 0;
    const d0 = POW10[v.poolDecimals0[p]!]!;
    const d1 = POW10[v.poolDecimals1[p]!]!;

    this.seqPool(p);
    // Its candles change (and its ring block may be taken): a cut copies its candle rows again.
    this.dirty.candles.mark(p);
    // Its window slot, then its ring block, taken back first when it was quiet: before lastSwapTime
    // moves, which bounds the stored candles that were its own (the block's windows are summed into the slot).
    windowSlotOf(v, p, this.slotPool);
    const row = this.blockOf(p);

    // Reserves: a Sync in the same tx already holds the post-swap reserves (a pool priced by its
    // reserves, or a concentrated pool whose source states them: Uniswap v4's).
    let s = e.amount0(this.u128)!;
    const num = this.num;
    u128Into(s, num, 0);
    const amount0 = num[0]! / d0;
    const synced = v.syncBlock[p] === syncMark(block) && v.syncTx[p] === k.txIndex() && (pricedByReserves(v.poolProtocol[p]!) || block > 0);
    if (!synced) {
      this.beginReserveChange(p, block);
      this.moveReserve(p, 0, s, neg0);
    }
    s = e.amount1(this.u128)!;
    u128Into(s, num, 0);
    const amount1 = num[0]! / d1;
    if (!synced) {
      this.moveReserve(p, 1, s, neg1);
    }

    // Price of token 0 in token 1 after the swap.
    if (v.poolProtocol[p] === 1) {
      const q = e.sqrtPriceX96(this.u160)!;
      u160Into(q, num, 0);
      const sqrt = num[0]! / Q96;
      if (sqrt > 0) v.ratio[p] = ((sqrt * sqrt) * d0) / d1;
    } else {
      setReserveRatio(v, p);
    }

    const base1 = this.reprice(p, true);
    const p0 = v.priceUsd0[p]!;
    const p1 = v.priceUsd1[p]!;
    const volumeUsd = base1 ? amount1 * p1 : amount0 * p0;
    const isBuy = neg0; // token 0 left the pool: the trader bought token 0
    const buyUsd = isBuy ? volumeUsd : 0;

    v.lastEventTime[p] = t;
    v.lastSwapTime[p] = t;
    v.lastSwapPrice0[p] = p0;
    this.sweepSet.add(p);
    this.passed(p);
    v.txnsTotal[p] = v.txnsTotal[p]! + 1;

    const fig = this.swapUsd;
    fig[0] = p0;
    fig[1] = p1;
    fig[2] = volumeUsd;
    fig[3] = buyUsd;
    this.updateCandles(p, row, isBuy, sink);
    this.updateWindows(p, row, isBuy);

    this.seqPool(p);
    this.index?.markDirty(p);

    const tk0 = v.poolToken0[p]!;
    const tk1 = v.poolToken1[p]!;
    this.updateSecondCandle(tk0, 0);
    this.updateSecondCandle(tk1, 1);
    if ((v.watchPool[p]! | v.watchToken[tk0]! | v.watchToken[tk1]!) !== 0) (this.feed ??= []).push(feedSwap(e, k, p, this.u128, p0, p1, volumeUsd));

    if (sink !== null && t >= this.transactionsSince) {
      const u = this.usd;
      u.price0Usd = p0;
      u.price1Usd = p1;
      u.volumeUsd = volumeUsd;
      u.ratio = v.ratio[p]!;
      sink.transaction(0, p, e, k, u);
    }
  }

  /**
   * Offers pool p as the route of each of its tokens (priced through the other), then derives the
   * pool's USD prices and liquidity from its tokens' routed prices (state/exact-price.ts). `swapped`:
   * p swaps in this event (it is fresh). Returns true when token 1 is the pool's base (the side whose
   * USD price is not taken from p).
   */
  private reprice(p: number, swapped: boolean): boolean {
    const v = this.v;
    const ratio = v.ratio[p]!;
    const t0 = v.poolToken0[p]!;
    const t1 = v.poolToken1[p]!;
    // Token 0's routed price, once token 0's route is settled: token 1's route never changes it (a
    // route through p is not offered to token 1 while token 0 is routed through p, nor one through
    // token 0 while token 0's route passes token 1). Each route is walked at most once: a token
    // routed through p is priced from its counterpart's walk (priceThroughRoute, the same digits).
    // Prices cross calls in arrays, not as arguments or results (a number crossing a call is boxed).
    const prices = this.prices;
    const offer = this.offer;
    let price0: number;
    let price1: number;
    if (!(ratio > 0)) {
      routedPriceInto(v, t0, prices, 0);
      routedPriceInto(v, t1, prices, 1);
      price0 = prices[0]!;
      price1 = prices[1]!;
    } else if (v.tokenRoutePool[t1] === p + 1) {
      // Token 1 follows token 0 through p; its route stays p.
      routedPriceInto(v, t0, prices, 0);
      price0 = prices[0]!;
      const hops0 = lastWalkedHops();
      if (price0 > 0) {
        offer[0] = price0 / ratio;
        reserveInto(v, p, 0, offer, 1);
        offer[1] = 2 * offer[1]! * price0;
        this.offerRoute(t1, t0, p, swapped);
      }
      prices[0] = price0;
      priceThroughRoute(v, t1, p, prices, 1, hops0);
      price1 = prices[1]!;
    } else {
      routedPriceInto(v, t1, prices, 1);
      price1 = prices[1]!;
      const hops1 = lastWalkedHops();
      if (price1 > 0) {
        offer[0] = ratio * price1;
        reserveInto(v, p, 1, offer, 1);
        offer[1] = 2 * offer[1]! * price1;
        this.offerRoute(t0, t1, p, swapped);
      }
      if (v.tokenRoutePool[t0] === p + 1) {
        prices[1] = price1;
        priceThroughRoute(v, t0, p, prices, 0, hops1);
        price0 = prices[0]!;
      } else {
        // Token 1's route does not pass token 0's route change (there was none), so price1 stands
        // unless token 1 now takes p.
        routedPriceInto(v, t0, prices, 0);
        price0 = prices[0]!;
        const hops0 = lastWalkedHops();
        if (price0 > 0) {
          offer[0] = price0 / ratio;
          reserveInto(v, p, 0, offer, 1);
        offer[1] = 2 * offer[1]! * price0;
          this.offerRoute(t1, t0, p, swapped);
          if (v.tokenRoutePool[t1] === p + 1) {
            prices[0] = price0;
            priceThroughRoute(v, t1, p, prices, 1, hops0);
            price1 = prices[1]!;
          }
        }
      }
    }
    this.tokenPrices[0] = price0;
    this.tokenPrices[1] = price1;
    const b1 = poolBase1(v, p);
    prices[0] = price0;
    prices[1] = price1;
    const base1 = poolPricesFrom(v, p, b1, prices);
    v.priceUsd0[p] = prices[0]!;
    v.priceUsd1[p] = prices[1]!;
    v.liquidityUsd[p] = prices[2]!;
    return base1;
  }

  /** True when pool p, weighed at the event's time, has neither swapped nor been created within ROUTE_STALE_AFTER_S. */
  private stalePool(p: number): boolean {
    const v = this.v;
    const t = this.at[0]!;
    const last = v.lastSwapTime[p]! > v.poolCreatedAt[p]! ? v.lastSwapTime[p]! : v.poolCreatedAt[p]!;
    return t - last > ROUTE_STALE_AFTER_S;
  }

  /**
   * Pool p offers USD price `offer[0]` for token `tk` through counterpart `via`, with `offer[1]` of
   * USD liquidity on this hop. Its route weighs the weakest of this hop and via's own route; a fresh route (its
   * pool swapped within ROUTE_STALE_AFTER_S, at least MIN_ROUTE_LIQUIDITY_USD on its weakest hop)
   * wins over a stale one, then the one weighing more. The route p already is keeps its place and
   * takes the new figures. A route that would pass through tk, or not reach a reference stablecoin
   * within MAX_ROUTE_HOPS, is never taken.
   */
  private offerRoute(tk: number, via: number, p: number, swapped: boolean): void {
    const v = this.v;
    const price = this.offer[0]!;
    const hopLiquidityUsd = this.offer[1]!;
    if (!routeAllowed(v.tokenRole[tk]!, v.tokenRole[via]!) || !(price > 0) || !Number.isFinite(price)) return;
    const viaWeakest = v.tokenRole[via] === 0 ? Infinity : v.tokenRouteLiquidityUsd[via]!;
    const weakest = hopLiquidityUsd < viaWeakest ? hopLiquidityUsd : viaWeakest;
    const current = v.tokenRoutePool[tk]! - 1;
    if (current !== p) {
      if (current >= 0) {
        const fresh = (swapped || !this.stalePool(p)) && weakest >= MIN_ROUTE_LIQUIDITY_USD;
        const held = v.tokenRouteLiquidityUsd[tk]!;
        const currentFresh = !this.stalePool(current) && held >= MIN_ROUTE_LIQUIDITY_USD;
        if (fresh !== currentFresh ? !fresh : weakest <= held) return;
      }
      // Checked last, and only for a new route: the one in force was checked when it was taken, and
      // no route taken since can pass through tk (so the graph has stayed free of cycles).
      if (!routeReaches(v, via, tk, MAX_ROUTE_HOPS - 1)) return;
    }
    this.seqToken(tk);
    v.tokenPriceUsd[tk] = price;
    v.tokenRouteLiquidityUsd[tk] = weakest;
    v.tokenRoutePool[tk] = p + 1;
    v.tokenPriceTime[tk] = this.at[0]!;
    this.seqToken(tk);
  }

  /**
   * Pool p's ring block, taken now when it holds none: its newest candles come back from LMDB, so
   * its rings read exactly as if it had kept them. Called inside p's seqlock.
   */
  private blockOf(p: number): number {
    const v = this.v;
    const held = v.poolBlock[p]!;
    if (held !== 0) return held - 1;
    let b = take(this.ringPool, p);
    if (b < 0 && this.onBlocksExhausted !== null) {
      this.onBlocksExhausted();
      b = take(this.ringPool, p);
    }
    if (b < 0) throw new RangeError(`all ${v.blockCount} ring blocks are in use: raise the ring block capacity`);
    // Its candles are numbered from the stored ones reloaded (views.ts ringOpened); a pool that never
    // swapped has none. Each interval's newest candle, at least, was stored when it let the block go,
    // and those still open then are taken as its version for its swap count kept them (store/parked.ts).
    const swapped = v.lastSwapTime[p]! !== 0;
    const parked = swapped ? this.stored?.parked?.(p, v.txnsTotal[p]!) : undefined;
    for (let i = 0; i < INTERVALS.length; i++) {
      const n = swapped && this.stored !== null ? reloadNewest(this.stored, p, i, newestCandleOpen(v, p, i), v.rings[i]!, b, parked) : 0;
      if (swapped && n === 0) this.reloadMisses++;
      v.ringOpened[ringOpenedAt(b, i)] = n;
    }
    if (swapped) this.reloads++;
    v.poolBlock[p] = b + 1;
    // The block's window state, as the pool's figures stand: re-summed from the candles just loaded
    // as of the same minute (a quiet pool's figures are those sums), none before its first swap.
    this.clearBlockWindows(b);
    for (let w = 0; w < WINDOW_BASES.length; w++) {
      const asOf = windowAsOf(v, w, p);
      if (asOf === 0) continue;
      this.resumWindows(p, w, asOf);
      // Windows whose figures it went quiet with (swaps added up since their last re-sum) continue from those.
      if (parked !== undefined && parkedWindows(parked, w, asOf, this.sums, this.stored!, p)) this.setBlockWindows(p, b, w);
    }
    return b;
  }

  /** The figures of the windows on base `base` of pool p (block b) from this.sums, published to its row. */
  private setBlockWindows(p: number, b: number, base: number): void {
    const o = b * WINDOW_COUNT;
    const windows = WINDOW_BASES[base]!.windows;
    for (let j = 0; j < windows.length; j++) this.sumsToBlock(o, windows[j]!);
    this.publishBlock(p, b, base);
  }

  /** Window w's figures from this.sums into the block whose window state starts at `o`. */
  private sumsToBlock(o: number, w: number): void {
    const v = this.v;
    const s = this.sums;
    v.blockWinVolumeUsd[o + w] = s.volumeUsd[w]!;
    v.blockWinBuyVolumeUsd[o + w] = s.buyVolumeUsd[w]!;
    v.blockWinTxns[o + w] = s.txns[w]!;
    v.blockWinBuys[o + w] = s.buys[w]!;
    v.blockWinRefPrice[o + w] = s.refPrice[w]!;
    v.blockWinRefPrice1[o + w] = s.refPrice1[w]!;
  }

  private clearBlockWindows(b: number): void {
    const v = this.v;
    const from = b * WINDOW_COUNT;
    const to = from + WINDOW_COUNT;
    for (const col of [v.blockWinVolumeUsd, v.blockWinBuyVolumeUsd, v.blockWinTxns, v.blockWinBuys, v.blockWinPriceChange, v.blockWinRefPrice, v.blockWinRefPrice1]) col.fill(0, from, to);
    for (const col of [v.blockLeaveVolumeUsd, v.blockLeaveBuyVolumeUsd, v.blockLeaveTxns, v.blockLeaveBuys, v.blockLeaveClose0, v.blockLeaveClose1]) col.fill(0, from, to);
    v.blockLeaveTime.fill(Infinity, from, to);
  }

  /**
   * Pool p's candles of every interval (its ring block `row`) take a swap at time t: a new candle
   * opens where the newest one is older than t's candle, else the newest takes the swap in (a
   * timestamp that went backwards is folded into the newest candle). Where each interval stands is
   * read first for all of them (independent reads, in flight together), then each is written.
   */
  private updateCandles(p: number, row: number, isBuy: boolean, sink: ShardSink | null): void {
    const t = this.at[0]!;
    const fig = this.swapUsd;
    const p0 = fig[0]!;
    const p1 = fig[1]!;
    const volumeUsd = fig[2]!;
    const buyUsd = fig[3]!;
    const rings = this.v.rings;
    const newest = this.newestSlot;
    // The block's counters of every interval, side by side (one cache line).
    const opened = this.v.ringOpened;
    const at = row * RING_OPENED_STRIDE;
    for (let i = 0; i < rings.length; i++) {
      const r = rings[i]!;
      const R = r.slots;
      const n = opened[at + i]!;
      const last = row * R + ((n - 1) % R);
      newest[i] = n === 0 || r.words[last * CANDLE_U32_WORDS + CandleU32.time]! < t - (t % r.seconds) ? -1 : last;
    }
    for (let i = 0; i < rings.length; i++) {
      const r = rings[i]!;
      const last = newest[i]!;
      const f = r.cells;
      const u = r.words;
      if (last < 0) {
        const R = r.slots;
        const n = opened[at + i]!;
        const slot = row * R + (n % R);
        if (n >= R && sink !== null) sink.candleEvicted(p, i, r, slot);
        // A candle a pool going quiet may have stored while open goes to the store again as it closes.
        if (n > 0 && sink !== null && STORED_AT_CLOSE[i]!) sink.candleEvicted(p, i, r, row * R + ((n - 1) % R));
        opened[at + i] = n + 1;
        const c = slot * CANDLE_WORDS;
        const w = slot * CANDLE_U32_WORDS;
        f[c + CandleF64.open0] = p0;
        f[c + CandleF64.high0] = p0;
        f[c + CandleF64.low0] = p0;
        f[c + CandleF64.close0] = p0;
        f[c + CandleF64.open1] = p1;
        f[c + CandleF64.high1] = p1;
        f[c + CandleF64.low1] = p1;
        f[c + CandleF64.close1] = p1;
        f[c + CandleF64.volumeUsd] = volumeUsd;
        f[c + CandleF64.buyVolumeUsd] = buyUsd;
        u[w + CandleU32.time] = t - (t % r.seconds);
        u[w + CandleU32.txns] = 1;
        u[w + CandleU32.buys] = isBuy ? 1 : 0;
        continue;
      }
      const c = last * CANDLE_WORDS;
      const w = last * CANDLE_U32_WORDS;
      if (p0 > f[c + CandleF64.high0]!) f[c + CandleF64.high0] = p0;
      if (p0 < f[c + CandleF64.low0]!) f[c + CandleF64.low0] = p0;
      f[c + CandleF64.close0] = p0;
      if (p1 > f[c + CandleF64.high1]!) f[c + CandleF64.high1] = p1;
      if (p1 < f[c + CandleF64.low1]!) f[c + CandleF64.low1] = p1;
      f[c + CandleF64.close1] = p1;
      f[c + CandleF64.volumeUsd] = f[c + CandleF64.volumeUsd]! + volumeUsd;
      f[c + CandleF64.buyVolumeUsd] = f[c + CandleF64.buyVolumeUsd]! + buyUsd;
      u[w + CandleU32.txns] = u[w + CandleU32.txns]! + 1;
      if (isBuy) u[w + CandleU32.buys] = u[w + CandleU32.buys]! + 1;
    }
  }

  /**
   * Pool p (holding ring block `row`) swapped at t: its windows are brought to t's minute (re-summed
   * when their anchor moved, which takes the swap in from the ring, else the candles that left them
   * taken out), then take the swap in.
   */
  private updateWindows(p: number, row: number, isBuy: boolean): void {
    const v = this.v;
    const volumeUsd = this.swapUsd[2]!;
    const buyUsd = this.swapUsd[3]!;
    const t0 = this.at[1]!;
    // Where each base's windows stand, read first for all of them (independent reads, in flight together).
    const asOfs = this.asOfs;
    // A pool holding a ring block holds a window slot (views.ts poolWindowSlot).
    const slot = v.poolWindowSlot[p]! - 1;
    for (let b = 0; b < WINDOW_BASES.length; b++) asOfs[b] = v.winAsOf[b]![slot]!;
    const o = row * WINDOW_COUNT;
    for (let b = 0; b < WINDOW_BASES.length; b++) {
      const { windows } = WINDOW_BASES[b]!;
      const asOf = asOfs[b]!;
      // A timestamp that went backwards is folded into the newest candle, and the windows stay where they are.
      if (this.windowsTo(p, b, t0 > asOf ? t0 : asOf, false)) continue;
      for (let j = 0; j < windows.length; j++) {
        const i = o + windows[j]!;
        v.blockWinVolumeUsd[i] = v.blockWinVolumeUsd[i]! + volumeUsd;
        v.blockWinBuyVolumeUsd[i] = v.blockWinBuyVolumeUsd[i]! + buyUsd;
        v.blockWinTxns[i] = v.blockWinTxns[i]! + 1;
        if (isBuy) v.blockWinBuys[i] = v.blockWinBuys[i]! + 1;
      }
      const vol = VOLUME_ROWS_OF_BASE[b]!;
      for (let j = 0; j < vol.length; j++) v.winVolumeUsd[vol[j]!]![slot] = v.blockWinVolumeUsd[o + vol[j]!]!;
      const txns = TXNS_ROWS_OF_BASE[b]!;
      for (let j = 0; j < txns.length; j++) v.winTxns[txns[j]!]![slot] = v.blockWinTxns[o + txns[j]!]!;
    }
    this.updatePriceChanges(p);
  }

  /**
   * Brings the windows on base b of pool p, which holds a ring block, to minute m: re-summed when
   * their anchor moved (or were never summed; returns true), else the one-minute candles that left
   * them since taken out. Called inside p's seqlock. `publish` false: the caller writes the row
   * figures and price changes itself next (a swap), unless the windows were re-summed.
   */
  private windowsTo(p: number, b: number, m: number, publish: boolean): boolean {
    const v = this.v;
    // It holds a ring block, so a window slot.
    const slot = v.poolWindowSlot[p]! - 1;
    const asOf = v.winAsOf[b]![slot]!;
    if (asOf === m) return false;
    const seconds = v.rings[WINDOW_BASES[b]!.base]!.seconds;
    if (asOf === 0 || windowAnchor(asOf, seconds) !== windowAnchor(m, seconds)) {
      this.resumWindows(p, b, m);
      return true;
    }
    const row = v.poolBlock[p]! - 1;
    this.leaveUntil(p, row, b, m);
    if (publish) this.publishBlock(p, row, b);
    v.winAsOf[b]![slot] = m;
    return false;
  }

  /**
   * Takes out of pool p's windows on base b (its block `row`) every one-minute candle that left them
   * as of minute m, oldest first, each found when the one before it left (findLeaving).
   */
  private leaveUntil(p: number, row: number, b: number, m: number): void {
    const v = this.v;
    const seconds = v.rings[WINDOW_BASES[b]!.base]!.seconds;
    if (seconds === MINUTE_S) return; // a one-minute base candle leaves with the anchor
    const A = windowAnchor(m, seconds);
    const windows = WINDOW_BASES[b]!.windows;
    const c = this.leaving;
    for (let j = 0; j < windows.length; j++) {
      const w = windows[j]!;
      const W = WINDOWS[w]!.seconds;
      const S = m + MINUTE_S - W;
      const i = row * WINDOW_COUNT + w;
      while (v.blockLeaveTime[i]! < S) {
        c.time = v.blockLeaveTime[i]!;
        c.volumeUsd = v.blockLeaveVolumeUsd[i]!;
        c.buyVolumeUsd = v.blockLeaveBuyVolumeUsd[i]!;
        c.txns = v.blockLeaveTxns[i]!;
        c.buys = v.blockLeaveBuys[i]!;
        c.close0 = v.blockLeaveClose0[i]!;
        c.close1 = v.blockLeaveClose1[i]!;
        leaveCandle(v.blockWinVolumeUsd, v.blockWinBuyVolumeUsd, v.blockWinTxns, v.blockWinBuys, v.blockWinRefPrice, v.blockWinRefPrice1, i, c);
        this.findLeaving(p, row, i, c.time + MINUTE_S, A - W + seconds);
      }
    }
  }

  /**
   * Sets window slot i of pool p (block `row`) to leave next the first one-minute candle of p opened
   * in [from, to): from its ring when the ring reaches back to `from`, else the candles waiting for
   * the store or the store (older than the ring), else the ring's.
   */
  private findLeaving(p: number, row: number, i: number, from: number, to: number): void {
    const v = this.v;
    const r = v.rings[0]!;
    const R = r.slots;
    const n = v.ringOpened[ringOpenedAt(row, 0)]!;
    const kept = n < R ? n : R;
    let ringFirst = -1;
    let ringOldest = Infinity;
    for (let k = n - kept; k < n; k++) {
      const slot = row * R + (k % R);
      const time = r.words[slot * CANDLE_U32_WORDS + CandleU32.time]!;
      if (ringOldest === Infinity) ringOldest = time;
      if (time >= to) break;
      if (time >= from) {
        ringFirst = slot;
        break;
      }
    }
    const f = this.found;
    let got = false;
    const end = to < ringOldest ? to : ringOldest;
    if (n > R && from < end) {
      if (this.stored !== null) got = this.stored.firstMinute(p, from, end, f);
      else this.reloadMisses++;
    }
    if (got) {
      v.blockLeaveTime[i] = f.time;
      v.blockLeaveVolumeUsd[i] = f.volumeUsd;
      v.blockLeaveBuyVolumeUsd[i] = f.buyVolumeUsd;
      v.blockLeaveTxns[i] = f.txns;
      v.blockLeaveBuys[i] = f.buys;
      v.blockLeaveClose0[i] = f.close0;
      v.blockLeaveClose1[i] = f.close1;
    } else if (ringFirst >= 0) {
      const c = ringFirst * CANDLE_WORDS;
      const u = ringFirst * CANDLE_U32_WORDS;
      v.blockLeaveTime[i] = r.words[u + CandleU32.time]!;
      v.blockLeaveVolumeUsd[i] = r.cells[c + CandleF64.volumeUsd]!;
      v.blockLeaveBuyVolumeUsd[i] = r.cells[c + CandleF64.buyVolumeUsd]!;
      v.blockLeaveTxns[i] = r.words[u + CandleU32.txns]!;
      v.blockLeaveBuys[i] = r.words[u + CandleU32.buys]!;
      v.blockLeaveClose0[i] = r.cells[c + CandleF64.close0]!;
      v.blockLeaveClose1[i] = r.cells[c + CandleF64.close1]!;
    } else v.blockLeaveTime[i] = Infinity;
  }

  /** Pool p's row figures and price changes of the windows on base b, from its block `row`. */
  private publishBlock(p: number, row: number, b: number): void {
    const v = this.v;
    const price = v.priceUsd0[p]!;
    const o = row * WINDOW_COUNT;
    const windows = WINDOW_BASES[b]!.windows;
    for (let j = 0; j < windows.length; j++) v.blockWinPriceChange[o + windows[j]!] = priceChange(price, v.blockWinRefPrice[o + windows[j]!]!);
    const rows = ROW_OF_BASE[b]!;
    const slot = v.poolWindowSlot[p]! - 1;
    for (let j = 0; j < rows.length; j++) {
      const { figure, w } = rows[j]!;
      const value = figure === 'priceChange' ? v.blockWinPriceChange[o + w]! : figure === 'volumeUsd' ? v.blockWinVolumeUsd[o + w]! : v.blockWinTxns[o + w]!;
      const col = v.rowWindow[figure][w]!;
      if (!Object.is(col[slot], value)) this.windowsMoved = true;
      col[slot] = value;
    }
  }

  /**
   * Price changes follow every move of the price (swaps, syncs, liquidity changes): from the reference
   * prices in the pool's ring block, or, for a pool without one, from its stored candles summed again
   * as of the minute its figures are as of (which gives the figures it has, and the references).
   */
  private updatePriceChanges(p: number): void {
    const v = this.v;
    const p0 = v.priceUsd0[p]!;
    const held = v.poolBlock[p]!;
    if (held === 0) {
      // Without a window slot its windows are empty: its price changes follow the price as read (window-slots.ts).
      const slot = v.poolWindowSlot[p]! - 1;
      if (slot < 0) return;
      for (let b = 0; b < WINDOW_BASES.length; b++) {
        const asOf = v.winAsOf[b]![slot]!;
        if (asOf !== 0) this.resumWindows(p, b, asOf);
      }
      return;
    }
    const o = (held - 1) * WINDOW_COUNT;
    const slot = v.poolWindowSlot[p]! - 1;
    for (let w = 0; w < WINDOW_COUNT; w++) {
      const change = priceChange(p0, v.blockWinRefPrice[o + w]!);
      v.blockWinPriceChange[o + w] = change;
      const row = v.winPriceChange[w];
      if (row !== undefined) row[slot] = change;
    }
  }

  /**
   * Re-sums the windows on base `b` for pool p as of minute m (state/windows.ts): from its ring block
   * (then the one-minute candles that already left each window are found and taken out, as they would
   * have been one by one), or, for a pool without one, from its newest stored candles (the same
   * candles its ring would hold, summed in the same order, and the same one-minute candles taken
   * out in the same order, so the figures are the same to the last digit). A pool with a block keeps
   * them all in it; every pool keeps the row's.
   */
  resumWindows(p: number, b: number, m: number): void {
    const v = this.v;
    const base = WINDOW_BASES[b]!.base;
    const held = v.poolBlock[p]!;
    const s = this.sums;
    const windows = WINDOW_BASES[b]!.windows;
    if (held !== 0) {
      const row = held - 1;
      const r = v.rings[base]!;
      const n = v.ringOpened[ringOpenedAt(row, base)]!;
      sumWindows(r, row, n, m, b, s);
      const o = row * WINDOW_COUNT;
      const A = windowAnchor(m, r.seconds);
      for (let j = 0; j < windows.length; j++) {
        const w = windows[j]!;
        this.sumsToBlock(o, w);
        v.blockLeaveTime[o + w] = Infinity;
        // The first one-minute candle of the base candle the window starts in, when it is in the window.
        const start = A - WINDOWS[w]!.seconds;
        if (r.seconds > MINUTE_S && s.txns[w]! > 0 && this.baseCandleAt(r, row, n, start)) this.findLeaving(p, row, o + w, start, start + r.seconds);
      }
      this.leaveUntil(p, row, b, m);
      this.publishBlock(p, row, b);
      // A pool holding a ring block holds a window slot.
      v.winAsOf[b]![v.poolWindowSlot[p]! - 1] = m;
      return;
    }
    // Without a block: its newest stored candles, numbered as a block reloading them would number them.
    const r = this.scratch[base]!;
    const swapped = v.lastSwapTime[p]! !== 0;
    const parked = swapped ? this.stored?.parked?.(p, v.txnsTotal[p]!) : undefined;
    const n = swapped && this.stored !== null ? reloadNewest(this.stored, p, base, newestCandleOpen(v, p, base), r, 0, parked) : 0;
    if (swapped && n === 0) this.reloadMisses++;
    let next = sumWindows(r, 0, n, m, b, s, this.stored, p, minuteOf(v.lastSwapTime[p]!));
    // Figures it went quiet with before their re-sum (store/parked.ts) are its own until then, and that re-sum changes them.
    if (this.stored !== null && parkedWindows(parked, b, m, s, this.stored, p)) next = Math.min(next, anchorMoves(m, r.seconds));
    const price = v.priceUsd0[p]!;
    const rows = ROW_OF_BASE[b]!;
    const slot = windowSlotOf(v, p, this.slotPool);
    for (let j = 0; j < rows.length; j++) {
      const { figure, w } = rows[j]!;
      const value = figure === 'priceChange' ? priceChange(price, s.refPrice[w]!) : s[figure][w]!;
      const col = v.rowWindow[figure][w]!;
      if (!Object.is(col[slot], value)) this.windowsMoved = true;
      col[slot] = value;
    }
    v.winAsOf[b]![slot] = m;
    v.winNextChange[b]![slot] = next === Infinity ? NEVER_CHANGES : next;
  }

  /** True when ring r row `row` (n candles ever opened) holds a candle opened at `time`. */
  private baseCandleAt(r: CandleRing, row: number, n: number, time: number): boolean {
    const R = r.slots;
    const kept = n < R ? n : R;
    for (let k = 0; k < kept; k++) {
      const t = r.words[(row * R + ((n - 1 - k) % R)) * CANDLE_U32_WORDS + CandleU32.time]!;
      if (t === time) return true;
      if (t < time) return false;
    }
    return false;
  }

  /**
   * The minute at which the window figures on base b of pool p (holding a ring block, about to give
   * it back) next change with no new candle (windows.ts): kept as its `winNextChange` once quiet.
   */
  nextWindowChange(p: number, b: number): number {
    const v = this.v;
    const base = WINDOW_BASES[b]!.base;
    const row = v.poolBlock[p]! - 1;
    const asOf = windowAsOf(v, b, p);
    const r = v.rings[base]!;
    let next = sumWindows(r, row, v.ringOpened[ringOpenedAt(row, base)]!, asOf, b, this.sums, this.stored, p, minuteOf(v.lastSwapTime[p]!));
    // Figures added to since their last re-sum (the pool keeps them: store/parked.ts) change at the next re-sum too.
    if (!resummedSinceSwap(asOf, v.lastSwapTime[p]!, r.seconds)) next = Math.min(next, anchorMoves(asOf, r.seconds));
    return next === Infinity ? NEVER_CHANGES : next;
  }

  /**
   * True when re-summing the windows on base `b` of pool p (which holds no ring block, so its
   * candles no longer change) at minute `current` gives the figures it has: no one-minute candle
   * leaves one of its windows (nor an anchor moves past a candle) before `current`, or none held one already (also when that time is not known,
   * after a start); the price changes follow the price as it moves. A quiet pool's windows read the
   * store only when a candle leaves one of them.
   */
  private unchanged(p: number, b: number, current: number): boolean {
    const v = this.v;
    const slot = v.poolWindowSlot[p]! - 1;
    return (slot >= 0 && current < v.winNextChange[b]![slot]!) || windowsEmpty(b, windowAsOf(v, b, p), v.lastSwapTime[p]!);
  }

  /**
   * Gives pool p's window slot back when every window of it is empty and can no longer change until
   * it swaps, and it holds no ring block (window-slots.ts). Returns true when it did.
   */
  releaseWindowSlot(p: number): boolean {
    const v = this.v;
    if (v.poolWindowSlot[p] === 0 || v.poolBlock[p] !== 0 || windowsMayMove(v, p)) return false;
    this.seqPool(p);
    const released = releaseWindowSlot(v, p, this.slotPool);
    this.seqPool(p);
    if (released) this.slotsReleased++;
    return released;
  }

  /** Window slots given back since the thread started. */
  slotsReleased = 0;

  /** Brings the windows of pool p up to the chain clock (for pools with no event since). */
  refreshWindows(p: number, now: number): boolean {
    const v = this.v;
    let changed = false;
    this.windowsMoved = false;
    const m = minuteOf(now);
    const quiet = v.poolBlock[p] === 0;
    const slot = v.poolWindowSlot[p]! - 1;
    for (let b = 0; b < WINDOW_BASES.length; b++) {
      // Without a slot its windows are empty or never summed: asOf is then 0 or `empty` below.
      const asOf = slot >= 0 ? v.winAsOf[b]![slot]! : quietAsOf(v, b, p);
      // Windows on this base that are empty stay as of the minute they became so (windowsEmptyFrom):
      // the row is not written again until the pool swaps, whichever minute the sweep reached it.
      const empty = windowsEmptyFrom(b, v.lastSwapTime[p]!);
      if (asOf === 0 || asOf === empty || (asOf >= m && asOf < empty)) continue;
      if (!changed) this.seqPool(p);
      changed = true;
      const to = m < empty ? m : empty;
      if (!quiet) this.windowsTo(p, b, to, true);
      else if (asOf > empty || this.unchanged(p, b, to)) v.winAsOf[b]![slot] = to;
      else this.resumWindows(p, b, to);
    }
    if (changed) {
      this.seqPool(p);
      // Re-summing an idle pool's windows mostly lands on the same figures: search need not know.
      if (this.windowsMoved) this.index?.markDirty(p);
    }
    return changed;
  }

  /** Token tk, the swapping pool's token `side`, has its 1 s candle take the swap at its routed USD price. */
  private updateSecondCandle(tk: number, side: 0 | 1): void {
    const v = this.v;
    const t = this.at[0]!;
    const price = this.tokenPrices[side]!;
    const volumeUsd = this.swapUsd[2]!;
    if (!(price > 0)) return;
    const n = v.secOpened[tk]!;
    let b = v.tokenSecondBlock[tk]! - 1;
    if (b < 0) {
      // A token that was quiet takes a second block; its earlier seconds are gone with the old one.
      b = take(this.secondPool, tk);
      if (b < 0) {
        this.secondsDropped++;
        return;
      }
      v.secBase[b] = n;
    }
    this.seqToken(tk);
    v.tokenSecondBlock[tk] = b + 1;
    const f = v.secCells;
    const u = v.secWords;
    const last = b * TOKEN_SECOND_SLOTS + ((n - 1) % TOKEN_SECOND_SLOTS);
    if (n === v.secBase[b] || u[last * SECOND_U32_WORDS + SecondU32.time]! < t) {
      const slot = b * TOKEN_SECOND_SLOTS + (n % TOKEN_SECOND_SLOTS);
      const c = slot * SECOND_WORDS;
      const w = slot * SECOND_U32_WORDS;
      v.secOpened[tk] = n + 1;
      u[w + SecondU32.time] = t;
      f[c + SecondF64.open] = price;
      f[c + SecondF64.high] = price;
      f[c + SecondF64.low] = price;
      f[c + SecondF64.close] = price;
      f[c + SecondF64.priceSum] = price;
      f[c + SecondF64.volumeUsd] = volumeUsd;
      u[w + SecondU32.txns] = 1;
    } else {
      const c = last * SECOND_WORDS;
      const w = last * SECOND_U32_WORDS;
      if (price > f[c + SecondF64.high]!) f[c + SecondF64.high] = price;
      if (price < f[c + SecondF64.low]!) f[c + SecondF64.low] = price;
      f[c + SecondF64.close] = price;
      f[c + SecondF64.priceSum] = f[c + SecondF64.priceSum]! + price;
      f[c + SecondF64.volumeUsd] = f[c + SecondF64.volumeUsd]! + volumeUsd;
      u[w + SecondU32.txns] = u[w + SecondU32.txns]! + 1;
    }
    this.seqToken(tk);
  }
}
