/**
 * Consistent readers over the seqlocks of the shared views (see views.ts): each copies what it
 * needs into an output object the caller owns and reuses, retrying while the version word is odd
 * or changed under the copy. Readers never write shared memory and allocate nothing per call.
 *
 * A writer holds a lock for about a microsecond, but may update one hot pool many times in a row;
 * a reader keeps retrying for up to READ_TIMEOUT_MS and then gives up (returns false), so a writer
 * that died inside an update cannot hang the reading thread.
 */
import { ROW_WINDOW_FIGURES, ROW_WINDOWS, type RowWindowFigure } from '../search/figures.js';
import { INTERVALS, INTERVAL_SECONDS, RING_SLOTS, Win, WINDOW_BASES, WINDOW_COUNT } from './layout.js';
import { poolPricesUsd, priceVersion, routedPriceTime, routedPriceUsd } from './exact-price.js';
import { ringOpenedAt, type CandleRing, type EngineViews } from './views.js';
import { CANDLE_U32_WORDS, CANDLE_WORDS, CandleF64, CandleU32, wordsOf as candleWords } from './candle-record.js';
import { awaitBlockRows } from './ring-blocks.js';
import { poolReserve } from './reserve-price.js';
import { quietPriceChange, windowAsOf } from './window-slots.js';
import { candleOpen, createWindowSums, minuteOf, parkedWindows, priceChange, reloadNewest, sumWindows, windowsEmpty, type StoredCandles } from './windows.js';

/** Time after which a read that never saw a stable version is abandoned. */
export const READ_TIMEOUT_MS = 20;
/** Attempts between two looks at the clock, minus one (an odd-version spin is ~10 ns, a copy ~0.2 µs). */
const CLOCK_CHECK_MASK = 1023;

/** The read's deadline (ms, performance clock), set at the first look; -1 once it has passed. */
function nextDeadline(deadline: number): number {
  const now = performance.now();
  if (deadline === 0) return now + READ_TIMEOUT_MS;
  return now > deadline ? -1 : deadline;
}

/**
 * Runs copy(views, i, out) until one run fell between two reads of seqs[i] that saw the same even
 * version; returns that version, or -1 when none did within READ_TIMEOUT_MS.
 */
export function readStable<O>(seqs: Int32Array, views: EngineViews, i: number, out: O, copy: (v: EngineViews, i: number, out: O) => void): number {
  let deadline = 0;
  for (let attempt = 0; ; attempt++) {
    if ((attempt & CLOCK_CHECK_MASK) === CLOCK_CHECK_MASK && (deadline = nextDeadline(deadline)) < 0) return -1;
    const s = Atomics.load(seqs, i);
    if ((s & 1) !== 0) continue;
    copy(views, i, out);
    if (Atomics.load(seqs, i) === s) return s;
  }
}

/** Longest candle ring of any interval: the capacity a RingCandles needs. */
export const MAX_RING_SLOTS = Math.max(...RING_SLOTS);

/** Every dynamic field of one pool, as of version `seq` (even). */
export interface PoolState {
  seq: number;
  lastEventTime: number;
  lastSwapTime: number;
  /** Token 0 priced in token 1, decimals applied. */
  ratio: number;
  priceUsd0: number;
  priceUsd1: number;
  /** Reserves with decimals applied. */
  reserve0: number;
  reserve1: number;
  /** Raw reserves: reserve0 words 0..3 then reserve1 words 0..3 (little-endian u32). */
  readonly reserveRaw: Uint32Array;
  reserveBlock: number;
  reserveTime: number;
  liquidityUsd: number;
  txnsTotal: number;
  /**
   * Per window, in layout WINDOWS order. Figures readPool was not asked for (PoolFigures) are NaN for
   * a pool without a ring block (the row's are always there).
   */
  readonly winVolumeUsd: Float64Array;
  readonly winBuyVolumeUsd: Float64Array;
  readonly winTxns: Float64Array;
  readonly winBuys: Float64Array;
  /** Token 0's USD price change in percent. */
  readonly winPriceChange: Float64Array;
  /** Reference USD prices of token 0 and token 1 (layout.ts). */
  readonly winRefPrice: Float64Array;
  readonly winRefPrice1: Float64Array;
  /** Token 1's USD price change in percent, by the same window rule; filled only when requested. */
  readonly winPriceChange1: Float64Array;
  /** Per window base (WINDOW_BASES order): the minute (open time) the sums are as of. */
  readonly winAsOf: Float64Array;
  /** The pool's ring block at the copy, -1 none. */
  block: number;
}

export function createPoolState(): PoolState {
  return {
    seq: 0,
    lastEventTime: 0,
    lastSwapTime: 0,
    ratio: 0,
    priceUsd0: 0,
    priceUsd1: 0,
    reserve0: 0,
    reserve1: 0,
    reserveRaw: new Uint32Array(8),
    reserveBlock: 0,
    reserveTime: 0,
    liquidityUsd: 0,
    txnsTotal: 0,
    winVolumeUsd: new Float64Array(WINDOW_COUNT),
    winBuyVolumeUsd: new Float64Array(WINDOW_COUNT),
    winTxns: new Float64Array(WINDOW_COUNT),
    winBuys: new Float64Array(WINDOW_COUNT),
    winPriceChange: new Float64Array(WINDOW_COUNT),
    winRefPrice: new Float64Array(WINDOW_COUNT),
    winRefPrice1: new Float64Array(WINDOW_COUNT),
    winPriceChange1: new Float64Array(WINDOW_COUNT),
    winAsOf: new Float64Array(WINDOW_BASES.length),
    block: -1,
  };
}

/** The PoolState array of each row window figure. */
const STATE_FIELD = { volumeUsd: 'winVolumeUsd', txns: 'winTxns', priceChange: 'winPriceChange' } as const satisfies Record<RowWindowFigure, keyof PoolState>;

/** Readers of `views` on this thread find the candles of pools without a ring block in `stored` (the store the shards write them to). */
export function useStoredCandles(views: EngineViews, stored: StoredCandles): void {
  views.storedCandles = stored;
}

/**
 * Which window figures readPool fills for a pool without a ring block, beyond the row's (whatever
 * it asks, a pool holding a block has them all): 'all' every figure; 'sums' every window's sums
 * (the stored candles are read only for bases whose windows hold one; the others' price changes are NaN);
 * 'row' only the row's (no store read).
 */
export type PoolFigures = 'all' | 'sums' | 'row';

/** Figures of a pool search row, in ROW order. */
export const ROW = {
  volumeUsd24h: 0,
  volumeUsd7d: 1,
  volumeUsd30d: 2,
  liquidityUsd: 3,
  priceUsd: 4,
  txns24h: 5,
  priceChange24h: 6,
  priceChange48h: 7,
  priceChange6h: 8,
  priceChange1h: 9,
  priceChange5m: 10,
} as const;
export const ROW_LENGTH = 11;

/** This thread's pool USD prices (poolPricesUsd; reads run one at a time per thread). */
const usdScratch = new Float64Array(3);

function copyRow(v: EngineViews, p: number, out: Float64Array): void {
  const s = v.poolWindowSlot[p]! - 1;
  // A pool without a window slot: its windows are empty, its price changes against its last swap's price (window-slots.ts).
  const change = s >= 0 ? 0 : quietPriceChange(v, p);
  out[ROW.volumeUsd24h] = s >= 0 ? v.winVolumeUsd[Win.H24]![s]! : 0;
  out[ROW.volumeUsd7d] = s >= 0 ? v.winVolumeUsd[Win.D7]![s]! : 0;
  out[ROW.volumeUsd30d] = s >= 0 ? v.winVolumeUsd[Win.D30]![s]! : 0;
  // A search row keeps the figures of the pool's last event: the rank index orders by those.
  out[ROW.liquidityUsd] = v.liquidityUsd[p]!;
  out[ROW.priceUsd] = v.priceUsd0[p]!;
  out[ROW.txns24h] = s >= 0 ? v.winTxns[Win.H24]![s]! : 0;
  out[ROW.priceChange24h] = s >= 0 ? v.winPriceChange[Win.H24]![s]! : change;
  out[ROW.priceChange48h] = s >= 0 ? v.winPriceChange[Win.H48]![s]! : change;
  out[ROW.priceChange6h] = s >= 0 ? v.winPriceChange[Win.H6]![s]! : change;
  out[ROW.priceChange1h] = s >= 0 ? v.winPriceChange[Win.H1]![s]! : change;
  out[ROW.priceChange5m] = s >= 0 ? v.winPriceChange[Win.M5]![s]! : change;
}

/** The figures of a search row of pool p (ROW order, ROW_LENGTH long), consistently: returns their version, -1 as readPool's false. */
export function readPoolRow(views: EngineViews, p: number, out: Float64Array): number {
  return readStable(views.poolSeq, views, p, out, copyRow);
}

/**
 * Copies pool p's dynamic state into `out`: its row consistently, its window figures from its ring
 * block (in the same copy) or, for a pool without one, the rest of them summed from its stored
 * candles as of the minute its row is as of (state/windows.ts, as the writer sums them: they
 * never change while it holds no block). With `token1Changes`, also token 1's price change per
 * window (the rule of layout.ts, as the writer applies it to token 0). Returns false when no
 * consistent copy was obtained.
 */
export function readPool(views: EngineViews, p: number, out: PoolState, token1Changes = false, figures: PoolFigures = 'all'): boolean {
  const s = readStable(views.poolSeq, views, p, out, copyPool);
  if (s < 0) return false;
  out.seq = s;
  if (out.block < 0) fillQuiet(views, p, out, token1Changes ? 'all' : figures);
  // With every reference price at hand (a hot pool's block, or all its stored candles summed), the
  // price changes compare the price as it stands now, which follows the tokens' routes; the row's
  // alone (search) are as of the pool's last event.
  if (out.block >= 0 || figures === 'all' || token1Changes) {
    for (let w = 0; w < WINDOW_COUNT; w++) {
      const ref = out.winRefPrice[w]!;
      if (ref > 0) out.winPriceChange[w] = priceChange(out.priceUsd0, ref);
    }
  }
  if (token1Changes) for (let w = 0; w < WINDOW_COUNT; w++) out.winPriceChange1[w] = priceChange(out.priceUsd1, out.winRefPrice1[w]!);
  return true;
}

function copyPool(v: EngineViews, p: number, out: PoolState): void {
  out.lastEventTime = v.lastEventTime[p]!;
  out.lastSwapTime = v.lastSwapTime[p]!;
  out.ratio = v.ratio[p]!;
  // USD figures as the tokens' routes stand now (they follow the market between the pool's events).
  poolPricesUsd(v, p, usdScratch);
  out.priceUsd0 = usdScratch[0]!;
  out.priceUsd1 = usdScratch[1]!;
  out.reserve0 = poolReserve(v, p, 0);
  out.reserve1 = poolReserve(v, p, 1);
  const o = p * 8;
  for (let k = 0; k < 8; k++) out.reserveRaw[k] = v.reserveRaw[o + k]!;
  out.reserveBlock = v.reserveBlock[p]!;
  out.reserveTime = v.reserveTime[p]!;
  out.liquidityUsd = usdScratch[2]!;
  out.txnsTotal = v.txnsTotal[p]!;
  for (let b = 0; b < WINDOW_BASES.length; b++) out.winAsOf[b] = windowAsOf(v, b, p);
  const block = v.poolBlock[p]! - 1;
  out.block = block;
  if (block < 0) {
    const s = v.poolWindowSlot[p]! - 1;
    if (s >= 0) for (const f of ROW_WINDOW_FIGURES) for (const w of ROW_WINDOWS[f]) out[STATE_FIELD[f]][w] = v.rowWindow[f][w]![s]!;
    else {
      // No window slot: every window empty, price changes against the last swap's price (window-slots.ts).
      const change = quietPriceChange(v, p);
      for (const f of ROW_WINDOW_FIGURES) for (const w of ROW_WINDOWS[f]) out[STATE_FIELD[f]][w] = f === 'priceChange' ? change : 0;
    }
    return;
  }
  awaitBlockRows(v);
  const b = block * WINDOW_COUNT;
  for (let w = 0; w < WINDOW_COUNT; w++) {
    out.winVolumeUsd[w] = v.blockWinVolumeUsd[b + w]!;
    out.winBuyVolumeUsd[w] = v.blockWinBuyVolumeUsd[b + w]!;
    out.winTxns[w] = v.blockWinTxns[b + w]!;
    out.winBuys[w] = v.blockWinBuys[b + w]!;
    out.winPriceChange[w] = v.blockWinPriceChange[b + w]!;
    out.winRefPrice[w] = v.blockWinRefPrice[b + w]!;
    out.winRefPrice1[w] = v.blockWinRefPrice1[b + w]!;
  }
}

/** Whether window w's figure `f` is in the pool row. */
const IN_ROW: readonly Readonly<Record<RowWindowFigure, boolean>>[] = Array.from({ length: WINDOW_COUNT }, (_, w) =>
  Object.fromEntries(ROW_WINDOW_FIGURES.map((f) => [f, ROW_WINDOWS[f].includes(w)])) as Record<RowWindowFigure, boolean>,
);

/** This thread's scratch for summing quiet pools' stored candles (reads run one at a time per thread). */
let quietScratch: { readonly rings: CandleRing[]; readonly sums: ReturnType<typeof createWindowSums> } | null = null;

/**
 * The window figures of a pool without a ring block beyond its row's: its stored candles summed as
 * of the row's minute (base candles less the one-minute candles that left; they are the candles it
 * had when it let its block go, its open ones as the version for its swap count keeps them, which a
 * later swap would change only under a new count), or the window figures that version keeps, less
 * the one-minute candles that left since (state/windows.ts parkedWindows).
 */
function fillQuiet(v: EngineViews, p: number, out: PoolState, figures: PoolFigures): void {
  quietScratch ??= { rings: createScratchRings(), sums: createWindowSums() };
  const { rings, sums } = quietScratch;
  let version: readonly number[] | null | undefined;
  for (let b = 0; b < WINDOW_BASES.length; b++) {
    const { base, windows } = WINDOW_BASES[b]!;
    const asOf = out.winAsOf[b]!;
    // Never swapped: every figure is zero. Otherwise the candles are read unless only the row is
    // asked for, or only sums and no window on this base holds a candle (they are zero).
    const none = asOf === 0 || out.lastSwapTime === 0;
    const read = !none && (figures === 'all' || (figures === 'sums' && !windowsEmpty(b, asOf, out.lastSwapTime)));
    if (read) {
      const stored = v.storedCandles;
      if (stored === null) throw new Error('a pool without a ring block is read, but no stored candles were given (useStoredCandles)');
      // What it went quiet with, open candles and windows not re-summed since (store/parked.ts).
      version ??= stored.parked?.(p, out.txnsTotal) ?? null;
      const n = reloadNewest(stored, p, base, candleOpen(out.lastSwapTime, base), rings[base]!, 0, version ?? undefined);
      sumWindows(rings[base]!, 0, n, asOf, b, sums, stored, p, minuteOf(out.lastSwapTime));
      parkedWindows(version ?? undefined, b, asOf, sums, stored, p);
    }
    const notSummed = none ? 0 : NaN;
    const emptySum = none || figures === 'sums' ? 0 : NaN;
    for (let j = 0; j < windows.length; j++) {
      const w = windows[j]!;
      const row = IN_ROW[w]!;
      const ref = read ? sums.refPrice[w]! : notSummed;
      if (!row.volumeUsd) out.winVolumeUsd[w] = read ? sums.volumeUsd[w]! : emptySum;
      if (!row.txns) out.winTxns[w] = read ? sums.txns[w]! : emptySum;
      if (!row.priceChange) out.winPriceChange[w] = read ? priceChange(v.priceUsd0[p]!, ref) : notSummed;
      out.winBuyVolumeUsd[w] = read ? sums.buyVolumeUsd[w]! : emptySum;
      out.winBuys[w] = read ? sums.buys[w]! : emptySum;
      out.winRefPrice[w] = ref;
      out.winRefPrice1[w] = read ? sums.refPrice1[w]! : notSummed;
    }
  }
}

/** Private one-row candle rings, one per interval, in the shape of the shared ones (a quiet pool's stored candles, re-summed). */
export function createScratchRings(): CandleRing[] {
  return INTERVALS.map((_, i) => {
    const slots = RING_SLOTS[i]!;
    const cells = new Float64Array(slots * CANDLE_WORDS);
    return { seconds: INTERVAL_SECONDS[i]!, slots, cells, words: candleWords(cells) };
  });
}

/** A token's USD price and the route it came from, as of version `seq` (even). */
export interface TokenPriceState {
  seq: number;
  /** USD price through the route as it stands (state/exact-price.ts). */
  priceUsd: number;
  /** USD liquidity on the route's weakest hop. */
  routeLiquidityUsd: number;
  /** Pool id + 1 of the route (0: none). */
  routePool: number;
  /** Unix seconds of the newest event that moved the price, down the route. */
  priceTime: number;
}

export function createTokenPriceState(): TokenPriceState {
  return { seq: 0, priceUsd: 0, routeLiquidityUsd: 0, routePool: 0, priceTime: 0 };
}

/**
 * Copies token t's price fields into `out`; false when no consistent copy was obtained. `seq` is the
 * price's version (exact-price.ts priceVersion): it moves when anything down the route does.
 */
export function readTokenPrice(views: EngineViews, t: number, out: TokenPriceState): boolean {
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const s = priceVersion(views, t);
    if (s < 0) continue;
    out.priceUsd = routedPriceUsd(views, t);
    out.routeLiquidityUsd = views.tokenRouteLiquidityUsd[t]!;
    out.routePool = views.tokenRoutePool[t]!;
    out.priceTime = routedPriceTime(views, t);
    if (priceVersion(views, t) !== s) continue;
    out.seq = s;
    return true;
  }
  return false;
}

/** Candles copied out of one ring, oldest first; arrays hold MAX_RING_SLOTS entries, `count` are valid. */
export interface RingCandles {
  seq: number;
  /** The request readRing copies for: interval index and open-time range. */
  interval: number;
  fromTime: number;
  toTime: number;
  count: number;
  /**
   * The count the ring block's candles are numbered by (views.ts ringOpened; 0 without a block): it
   * holds the newest min(opened, slots), and opened > slots when older ones may be in LMDB.
   */
  opened: number;
  slots: number;
  /**
   * Open time of the oldest candle still in the ring, in range or not (0 when none); every older
   * candle is in LMDB. A pool without a ring block has every candle there: its newest one's open + 1.
   */
  oldestTime: number;
  readonly time: Float64Array;
  readonly open0: Float64Array;
  readonly high0: Float64Array;
  readonly low0: Float64Array;
  readonly close0: Float64Array;
  readonly open1: Float64Array;
  readonly high1: Float64Array;
  readonly low1: Float64Array;
  readonly close1: Float64Array;
  readonly volumeUsd: Float64Array;
  readonly buyVolumeUsd: Float64Array;
  readonly txns: Float64Array;
  readonly buys: Float64Array;
}

export function createRingCandles(): RingCandles {
  const a = () => new Float64Array(MAX_RING_SLOTS);
  return {
    seq: 0,
    interval: 0,
    fromTime: 0,
    toTime: 0,
    count: 0,
    opened: 0,
    slots: 0,
    oldestTime: 0,
    time: a(),
    open0: a(),
    high0: a(),
    low0: a(),
    close0: a(),
    open1: a(),
    high1: a(),
    low1: a(),
    close1: a(),
    volumeUsd: a(),
    buyVolumeUsd: a(),
    txns: a(),
    buys: a(),
  };
}

/**
 * Copies the candles of pool p and interval `intervalIndex` whose open time is in
 * [fromTime, toTime] into `out`, oldest first, with the ring's retention facts.
 * Returns false when no consistent copy was obtained.
 */
export function readRing(views: EngineViews, p: number, intervalIndex: number, fromTime: number, toTime: number, out: RingCandles): boolean {
  if (views.rings[intervalIndex] === undefined) throw new RangeError(`interval index ${intervalIndex} out of range`);
  out.interval = intervalIndex;
  out.fromTime = fromTime;
  out.toTime = toTime;
  const s = readStable(views.poolSeq, views, p, out, copyRing);
  if (s < 0) return false;
  out.seq = s;
  return true;
}

/**
 * Open time of pool p's newest candle of `interval`: the one its last swap went into (a chain's
 * swaps come in time order). The store may hold later ones only when a replay runs behind a run
 * that went further; they are not the pool's yet.
 */
export function newestCandleOpen(v: EngineViews, p: number, interval: number): number {
  return candleOpen(v.lastSwapTime[p]!, interval);
}

function copyRing(v: EngineViews, p: number, out: RingCandles): void {
  const r = v.rings[out.interval]!;
  const R = r.slots;
  const row = v.poolBlock[p]! - 1;
  out.slots = R;
  if (row < 0) {
    // Every candle is in LMDB, up to the newest one (none before its first swap).
    out.opened = 0;
    out.count = 0;
    out.oldestTime = v.lastSwapTime[p]! !== 0 ? newestCandleOpen(v, p, out.interval) + 1 : 0;
    return;
  }
  awaitBlockRows(v);
  const n = v.ringOpened[ringOpenedAt(row, out.interval)]!;
  out.opened = n;
  const first = n > R ? n - R : 0;
  let count = 0;
  for (let k = first; k < n; k++) {
    const slot = row * R + (k % R);
    const c = slot * CANDLE_WORDS;
    const u = slot * CANDLE_U32_WORDS;
    const time = r.words[u + CandleU32.time]!;
    if (time < out.fromTime) continue;
    if (time > out.toTime) break;
    out.time[count] = time;
    out.open0[count] = r.cells[c + CandleF64.open0]!;
    out.high0[count] = r.cells[c + CandleF64.high0]!;
    out.low0[count] = r.cells[c + CandleF64.low0]!;
    out.close0[count] = r.cells[c + CandleF64.close0]!;
    out.open1[count] = r.cells[c + CandleF64.open1]!;
    out.high1[count] = r.cells[c + CandleF64.high1]!;
    out.low1[count] = r.cells[c + CandleF64.low1]!;
    out.close1[count] = r.cells[c + CandleF64.close1]!;
    out.volumeUsd[count] = r.cells[c + CandleF64.volumeUsd]!;
    out.buyVolumeUsd[count] = r.cells[c + CandleF64.buyVolumeUsd]!;
    out.txns[count] = r.words[u + CandleU32.txns]!;
    out.buys[count] = r.words[u + CandleU32.buys]!;
    count++;
  }
  out.count = count;
  out.oldestTime = n > 0 ? r.words[(row * R + (first % R)) * CANDLE_U32_WORDS + CandleU32.time]! : 0;
}
