/**
 * Rolling windows summed from candles: the one implementation the shard writer re-sums a pool's
 * windows with (from its ring block, or from its stored candles when it has none) and the reader
 * fills a quiet pool's other window figures with when they are read (read.ts). Summing the same
 * candles in the same order gives the same figures to the last digit, wherever they come from.
 *
 * The rule (layout.ts), at one-minute resolution: window w (W seconds) as of minute m (the open of
 * the current minute) covers the one-minute candles opened in [S, m], S = m + 60 - W. It is summed
 * as the candles of its base interval B opened in [A - W, m], A = floor_B(m + 60) (the window's
 * anchor: it moves once per B, at the last minute of a base candle), minus the one-minute candles
 * of the base candle A - W opened before S, which have already left the window: those are
 * subtracted one at a time, oldest first (`leaveCandle`), by the writer as they leave (apply.ts)
 * and here when a pool's windows are summed from its stored candles. Its reference price is the
 * close of the newest one-minute candle opened before S: the newest of those that left, else the
 * close of the newest base candle opened before A - W, else the open of the oldest candle in it.
 */
import { INTERVAL_SECONDS, WINDOWS, WINDOW_BASES, WINDOW_COUNT } from './layout.js';
import { CANDLE_U32_WORDS, CANDLE_WORDS, CandleF64, CandleU32, RING_FIELDS, setCandleValue } from './candle-record.js';
import { PARKED_HEAD, PARKED_STRIDE, PARKED_WINDOW_FIGURES, parkedCandlesEnd, parkedWindowsAt } from '../store/parked.js';
import type { CandleRing } from './views.js';

/** Seconds of the windows' resolution: a window moves on by one-minute candles. */
export const MINUTE_S = 60;

/** A one-minute candle leaving a window: what is subtracted, and its closes (the new reference prices). */
export interface LeavingCandle {
  time: number;
  volumeUsd: number;
  buyVolumeUsd: number;
  txns: number;
  buys: number;
  close0: number;
  close1: number;
}

export function createLeavingCandle(): LeavingCandle {
  return { time: 0, volumeUsd: 0, buyVolumeUsd: 0, txns: 0, buys: 0, close0: 0, close1: 0 };
}

/**
 * Takes candle `c` out of the window sums at index i of the given columns (a ring block's window
 * columns or a WindowSums): counts exactly, volumes clamped to exactly 0 once no swap is left, and
 * the candle's closes become the reference prices (it is the newest candle opened before the window).
 */
export function leaveCandle(
  volumeUsd: Float64Array,
  buyVolumeUsd: Float64Array,
  txns: Float64Array,
  buys: Float64Array,
  refPrice: Float64Array,
  refPrice1: Float64Array,
  i: number,
  c: LeavingCandle,
): void {
  const t = txns[i]! - c.txns;
  const b = buys[i]! - c.buys;
  txns[i] = t;
  buys[i] = b;
  const vol = volumeUsd[i]! - c.volumeUsd;
  volumeUsd[i] = t > 0 && vol > 0 ? vol : 0;
  const buyVol = buyVolumeUsd[i]! - c.buyVolumeUsd;
  buyVolumeUsd[i] = b > 0 && buyVol > 0 ? buyVol : 0;
  refPrice[i] = c.close0;
  refPrice1[i] = c.close1;
}

/** The anchor of windows on base interval `baseSeconds` as of minute m: floor_B(m + 60) (module comment). */
export function windowAnchor(m: number, baseSeconds: number): number {
  const t = m + MINUTE_S;
  return t - (t % baseSeconds);
}

/** Open of the minute time t falls in. */
export function minuteOf(t: number): number {
  return t - (t % MINUTE_S);
}

export interface StoredCandles {
  /**
   * Pool p's newest `count` stored candles of `interval` opening at or before `upTo`, oldest first,
   * into `ring` row `row` at the slots of candles opened - count .. opened - 1 (slot k % slots).
   * Returns how many were found. (The store may hold later candles: a replay behind a run that went further.)
   */
  loadNewest(pool: number, interval: number, count: number, opened: number, upTo: number, ring: CandleRing, row: number): number;
  /** Pool p's version of open candles for swap count `swaps` (store/parked.ts), where the store keeps them. */
  parked?(pool: number, swaps: number): readonly number[] | undefined;
  /**
   * Pool p's stored one-minute candles opened in [from, to), oldest first, each handed to `visit`
   * (the same object, refilled), until it returns false.
   */
  minutes(pool: number, from: number, to: number, visit: (c: LeavingCandle) => boolean): void;
  /** The first of those (into `out`): false when there is none. */
  firstMinute(pool: number, from: number, to: number, out: LeavingCandle): boolean;
}

/** `winNextChange` of a quiet pool none of whose windows on that base holds a candle: its figures there never change. */
export const NEVER_CHANGES = 0xffff_ffff;

/** Sums of one pool's windows, per window (layout WINDOWS order); sumWindows fills those of one base. */
export interface WindowSums {
  readonly volumeUsd: Float64Array;
  readonly buyVolumeUsd: Float64Array;
  readonly txns: Float64Array;
  readonly buys: Float64Array;
  /** Reference USD prices of token 0 and token 1 (0: none). */
  readonly refPrice: Float64Array;
  readonly refPrice1: Float64Array;
}

export function createWindowSums(): WindowSums {
  const f = () => new Float64Array(WINDOW_COUNT);
  return { volumeUsd: f(), buyVolumeUsd: f(), txns: f(), buys: f(), refPrice: f(), refPrice1: f() };
}

/** Percent change of `price` against reference `ref` (0 without a reference). */
export function priceChange(price: number, ref: number): number {
  return ref > 0 ? (price / ref - 1) * 100 : 0;
}

/** Per window base (WINDOW_BASES order): its longest window, in seconds. */
const LONGEST_WINDOW_S: readonly number[] = WINDOW_BASES.map(({ windows }) => Math.max(...windows.map((w) => WINDOWS[w]!.seconds)));

/**
 * True when, as of minute `asOf`, no window on base b holds a candle of a pool whose last swap was
 * at `lastSwapTime`: its newest one-minute candle left the longest window. Its sums there are zero
 * and stay so, its references are its newest candle's closes, until it swaps again (no candle need be read).
 */
export function windowsEmpty(b: number, asOf: number, lastSwapTime: number): boolean {
  return asOf >= windowsEmptyFrom(b, lastSwapTime);
}

/**
 * The first minute as of which no window on base b holds a candle of a pool whose last swap was at
 * `lastSwapTime`. A pool without a ring block keeps its windows as of this minute from then on (not
 * as of every later one: its row is not written again until it swaps), whatever moment a sweep
 * reached it: its figures are the same as of any later minute.
 */
export function windowsEmptyFrom(b: number, lastSwapTime: number): number {
  return minuteOf(lastSwapTime) + LONGEST_WINDOW_S[b]!;
}

/** Open time of the candle of `interval` that time `t` falls in. */
export function candleOpen(t: number, interval: number): number {
  return t - (t % INTERVAL_SECONDS[interval]!);
}

/**
 * Sums the windows on base `b` as of minute m from ring `r` row `row` (the base interval's candles:
 * it holds the newest min(n, slots) of the n ever opened) and writes them into `out` (module
 * comment). With `minutes`, the one-minute candles of pool `pool` that left each window are
 * subtracted from it, oldest first (none opened after `newestMinute`, the pool's newest); without (a ring block's windows: the writer takes them out
 * itself, as they leave) the sums are the base candles' and the references theirs.
 * Returns the minute at which, with no new candle, the figures next change (Infinity: never): a
 * one-minute candle leaves a window, or its anchor moves past a base candle in it.
 */
export function sumWindows(
  r: CandleRing,
  row: number,
  n: number,
  m: number,
  b: number,
  out: WindowSums,
  minutes: StoredCandles | null = null,
  pool = 0,
  newestMinute = Infinity,
): number {
  const windows = WINDOW_BASES[b]!.windows;
  const R = r.slots;
  const B = r.seconds;
  const A = windowAnchor(m, B);
  const kept = n < R ? n : R;
  let next = Infinity;
  for (let j = 0; j < windows.length; j++) {
    const w = windows[j]!;
    const W = WINDOWS[w]!.seconds;
    const start = A - W;
    let oldest = Infinity;
    let vol = 0;
    let buyVol = 0;
    let txns = 0;
    let buys = 0;
    let ref = 0;
    let ref1 = 0;
    for (let k = 0; k < kept; k++) {
      const slot = row * R + ((n - 1 - k) % R);
      const c = slot * CANDLE_WORDS;
      const u = slot * CANDLE_U32_WORDS;
      const time = r.words[u + CandleU32.time]!;
      if (time < start) {
        ref = r.cells[c + CandleF64.close0]!;
        ref1 = r.cells[c + CandleF64.close1]!;
        break;
      }
      if (time <= m) {
        vol += r.cells[c + CandleF64.volumeUsd]!;
        buyVol += r.cells[c + CandleF64.buyVolumeUsd]!;
        txns += r.words[u + CandleU32.txns]!;
        buys += r.words[u + CandleU32.buys]!;
        // Until an older candle is found: the open of the oldest in the window.
        ref = r.cells[c + CandleF64.open0]!;
        ref1 = r.cells[c + CandleF64.open1]!;
        oldest = time;
      }
    }
    out.volumeUsd[w] = vol;
    out.buyVolumeUsd[w] = buyVol;
    out.txns[w] = txns;
    out.buys[w] = buys;
    out.refPrice[w] = ref;
    out.refPrice1[w] = ref1;
    let leaves: number;
    if (oldest === Infinity) leaves = Infinity;
    else if (oldest === start) {
      // The base candle the window starts in: its one-minute candles leave one by one, and it is gone when the anchor moves.
      leaves = A + B - MINUTE_S;
      if (B > MINUTE_S && minutes !== null) {
        const S = m + MINUTE_S - W;
        let first = Infinity;
        const to = start + B < newestMinute + MINUTE_S ? start + B : newestMinute + MINUTE_S;
        minutes.minutes(pool, start, to, (c) => {
          if (c.time >= S) {
            first = c.time + W;
            return false;
          }
          leaveCandle(out.volumeUsd, out.buyVolumeUsd, out.txns, out.buys, out.refPrice, out.refPrice1, w, c);
          return true;
        });
        if (first < leaves) leaves = first;
      }
    } else leaves = oldest + W - MINUTE_S; // the anchor reaches it: from then on its minutes leave
    if (leaves < next) next = leaves;
  }
  return next;
}

/**
 * Loads pool p's newest stored candles of `interval` (as many as ring r's slots, none opening after
 * `upTo`) into row `row` of r, and returns the count n they are numbered by (views.ts ringOpened:
 * candles k in [n - min(n, slots), n) at slot k % slots): the number found, or 2 x slots when they
 * fill the ring (older ones may be stored, and n > slots says so). With `parked` (the version of the
 * pool's open candles for its swap count, store/parked.ts), its candle of `interval` opening at
 * `upTo` is the newest, as it stood then: the store may hold it with later swaps in (a replay behind
 * a run that went further), or not at all (a rollback cut it).
 */
export function reloadNewest(stored: StoredCandles, p: number, interval: number, upTo: number, r: CandleRing, row: number, parked?: readonly number[]): number {
  const R = r.slots;
  const got = stored.loadNewest(p, interval, R, R, upTo, r, row);
  let n = got === R ? 2 * R : got;
  // Found at slots R - got .. R - 1 (oldest first): moved down to 0 .. got - 1, candles 0 .. got - 1.
  if (got > 0 && got < R) r.cells.copyWithin((row * R) * CANDLE_WORDS, (row * R + R - got) * CANDLE_WORDS, (row * R + R) * CANDLE_WORDS);
  if (parked === undefined) return n;
  const end = parkedCandlesEnd(parked);
  for (let at = PARKED_HEAD; at < end; at += PARKED_STRIDE) {
    if (parked[at] !== interval || parked[at + 1] !== upTo) continue;
    // The newest loaded candle when it is this one, else a candle after it (n + 1 candles).
    let slot = row * R + ((n + R - 1) % R);
    if (n === 0 || r.words[slot * CANDLE_U32_WORDS + CandleU32.time] !== upTo) slot = row * R + (n++ % R);
    for (let k = 0; k < RING_FIELDS.length; k++) setCandleValue(r, slot, RING_FIELDS[k]!, parked[at + 1 + k]!);
  }
  return n;
}

/**
 * True when windows on a base of `B` seconds, as of minute `asOf`, were re-summed since the last swap
 * (at `lastSwapTime`) was added to them: their anchor moved after it. Only such figures are a sum of
 * the candles; others keep the rounding of the swaps added one by one (store/parked.ts keeps them).
 */
export function resummedSinceSwap(asOf: number, lastSwapTime: number, B: number): boolean {
  return windowAnchor(asOf, B) > windowAnchor(minuteOf(lastSwapTime), B);
}

/** The first minute after `m` at which the anchor of windows on a base of `B` seconds moves (they are re-summed then). */
export function anchorMoves(m: number, B: number): number {
  return windowAnchor(m, B) + B - MINUTE_S;
}

/**
 * The figures of the windows on base b of a pool whose version of open state (store/parked.ts,
 * `version`) keeps them, as of minute m, into `out`: the kept figures less the one-minute candles
 * that left each window since, oldest first, as a ring block takes them out one by one (apply.ts
 * leaveUntil), so to the last digit what a pool that kept its block holds. False, `out` untouched,
 * when the version keeps none for b or the windows' anchor moved since (their figures are then a
 * re-sum of the candles, which sumWindows gives).
 */
export function parkedWindows(version: readonly number[] | undefined, b: number, m: number, out: WindowSums, minutes: StoredCandles, pool: number): boolean {
  if (version === undefined) return false;
  const at = parkedWindowsAt(version, b);
  if (at < 0) return false;
  const asOf = version[at + 1]!;
  const { base, windows } = WINDOW_BASES[b]!;
  const B = INTERVAL_SECONDS[base]!;
  const A = windowAnchor(m, B);
  if (m < asOf || windowAnchor(asOf, B) !== A) return false;
  let f = at + 2;
  for (let j = 0; j < windows.length; j++) {
    const w = windows[j]!;
    for (let k = 0; k < PARKED_WINDOW_FIGURES.length; k++) out[PARKED_WINDOW_FIGURES[k]!][w] = version[f++]!;
    // A one-minute base candle leaves with the anchor; those of a longer one leave a minute at a time.
    if (B === MINUTE_S) continue;
    const W = WINDOWS[w]!.seconds;
    const start = A - W;
    const from = asOf + MINUTE_S - W; // the window's start at the kept minute: candles before it had left
    const S = m + MINUTE_S - W;
    const to = S < start + B ? S : start + B;
    if (to > from) {
      minutes.minutes(pool, from > start ? from : start, to, (c) => {
        leaveCandle(out.volumeUsd, out.buyVolumeUsd, out.txns, out.buys, out.refPrice, out.refPrice1, w, c);
        return true;
      });
    }
  }
  return true;
}
