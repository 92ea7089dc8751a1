/**
 * Sealed candles in LMDB, stored in chunks: key [pool, interval, chunk start] holds the candles of
 * that pool and interval opening in [chunk start, chunk start + CANDLES_PER_CHUNK intervals), in
 * time order, as a flat array of CANDLE_FIELDS numbers per candle: open time, then CandleRecord.
 * One entry per chunk instead of one per candle keeps writes and the file small.
 *
 * A candle of a coarser interval equal number for number to a stored candle of a finer interval
 * inside its span (most often: all its swaps fell in one minute) is stored as a reference to it
 * (txns REFERENCE_TXNS, the finer candle's open time and interval in the first two price fields,
 * every other field 0), and the readers here hand out that candle's record. Only putChunks writes
 * references, and only to a candle it read back equal that is not a reference at that moment; a sealed
 * candle never changes afterwards, and a rollback that keeps a coarse candle keeps every finer one
 * inside it (ingest/rollback.ts cuts each interval at the same instant), so a reference always
 * finds its candle.
 */
import { INTERVALS, INTERVAL_SECONDS } from '../state/layout.js';
import type { LeavingCandle } from '../state/windows.js';
import type { CandleRecord, Store } from './store.js';

export const CANDLES_PER_CHUNK = 64;
/** Numbers per stored candle: open time + the 12 CandleRecord fields. */
export const CANDLE_FIELDS = 13;
/** The txns field of a reference candle (a real candle's count is never negative). */
export const REFERENCE_TXNS = -1;
/** Field offsets within a stored candle. */
const F_REFERENCE = 1;
const F_REFERENCE_INTERVAL = 2;
const F_CLOSE0 = 4;
const F_CLOSE1 = 8;
const F_VOLUME = 9;
const F_BUY_VOLUME = 10;
const F_TXNS = 11;
const F_BUYS = 12;

/** The candle at offset `at` of a flat candle array (this file's layout) as a one-minute candle leaving a window, into `out`. */
export function leavingCandleAt(data: ArrayLike<number>, at: number, out: LeavingCandle): void {
  out.time = data[at]!;
  out.close0 = data[at + F_CLOSE0]!;
  out.close1 = data[at + F_CLOSE1]!;
  out.volumeUsd = data[at + F_VOLUME]!;
  out.buyVolumeUsd = data[at + F_BUY_VOLUME]!;
  out.txns = data[at + F_TXNS]!;
  out.buys = data[at + F_BUYS]!;
}

const MINUTE = 0; // index of 1m in INTERVALS

export type CandleChunkKey = [pool: number, interval: number, chunkStart: number];

/** Open time of the chunk holding a candle of `interval` that opens at `time`. */
export function chunkStart(interval: number, time: number): number {
  const span = CANDLES_PER_CHUNK * INTERVAL_SECONDS[interval]!;
  return time - (time % span);
}

/** Union of two chunks by open time; a candle in `added` replaces one with the same time. */
export function mergeChunk(existing: readonly number[] | undefined, added: readonly number[]): number[] {
  if (!existing || existing.length === 0) return added.slice();
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < existing.length || j < added.length) {
    const te = i < existing.length ? existing[i]! : Infinity;
    const ta = j < added.length ? added[j]! : Infinity;
    if (ta <= te) {
      for (let k = 0; k < CANDLE_FIELDS; k++) out.push(added[j + k]!);
      j += CANDLE_FIELDS;
      if (te === ta) i += CANDLE_FIELDS;
    } else {
      for (let k = 0; k < CANDLE_FIELDS; k++) out.push(existing[i + k]!);
      i += CANDLE_FIELDS;
    }
  }
  return out;
}

export interface StoredCandle {
  readonly time: number;
  readonly record: CandleRecord;
}

/** Whether two numbers read back the same from the store: NaN is NaN, -0 is 0. */
function same(a: number, b: number): boolean {
  return a === b || (a !== a && b !== b);
}

/** Index in `chunk` of the candle opening at `time`, or -1. */
function candleAt(chunk: readonly number[], time: number): number {
  for (let at = 0; at < chunk.length; at += CANDLE_FIELDS) if (chunk[at] === time) return at;
  return -1;
}

/**
 * Chunks read (or, in putChunks, written) so far by one reader or one write, by chunkId: null for
 * none stored. A write finds the finer candles it refers to mostly in chunks it wrote a moment before.
 */
type ChunkCache = Map<number, number[] | null>;

/** Chunk starts of an interval are multiples of its span, fewer than this per interval (to the year 2200). */
const CHUNKS_PER_INTERVAL = 2 ** 22;

/** One number per [pool, interval, chunk start] (exact below 2^53: pools below 2^27). */
function chunkId(p: number, interval: number, start: number): number {
  return (p * INTERVALS.length + interval) * CHUNKS_PER_INTERVAL + start / (CANDLES_PER_CHUNK * INTERVAL_SECONDS[interval]!);
}

function cachedChunk(store: Store, p: number, interval: number, start: number, cache: ChunkCache): number[] | undefined {
  const id = chunkId(p, interval, start);
  let chunk = cache.get(id);
  if (chunk === undefined) {
    chunk = store.candles.get([p, interval, start]) ?? null;
    cache.set(id, chunk);
  }
  return chunk ?? undefined;
}

/** A stored candle that is not a reference: its chunk and offset there, its interval (time is chunk[at]). */
interface Resolved {
  chunk: readonly number[];
  at: number;
  interval: number;
}

/**
 * The candle a stored candle stands for: itself, or the finer candle it refers to. A reference may
 * lead to a candle that became a reference itself when it was rewritten (a replay rewrites with
 * references a candle first stored whole): it is followed on, each step to a finer interval, so the
 * walk ends within INTERVALS.length steps. `interval` is that of the candle at `at` of `chunk`.
 */
function resolve(store: Store, p: number, chunk: readonly number[], at: number, interval: number, cache: ChunkCache, out: Resolved): Resolved {
  let c = chunk;
  let m = at;
  let finerThan = interval;
  while (c[m + F_TXNS] === REFERENCE_TXNS) {
    const time = c[m + F_REFERENCE]!;
    const to = c[m + F_REFERENCE_INTERVAL]!;
    const target = to < finerThan ? cachedChunk(store, p, to, chunkStart(to, time), cache) : undefined;
    const found = target === undefined ? -1 : candleAt(target, time);
    if (found < 0) throw new Error(`candle store: pool ${p} refers to a ${INTERVALS[to] ?? to} candle at ${time} that is not stored`);
    c = target!;
    m = found;
    finerThan = to;
  }
  out.chunk = c;
  out.at = m;
  out.interval = finerThan;
  return out;
}

/** The record a stored candle (of `interval`) stands for: its own fields, or those of the candle it refers to. */
function recordAt(store: Store, p: number, chunk: readonly number[], at: number, interval: number, cache: ChunkCache): CandleRecord {
  const r = resolve(store, p, chunk, at, interval, cache, { chunk, at, interval });
  return r.chunk.slice(r.at + 1, r.at + CANDLE_FIELDS);
}

/** Stored candles of pool p and `interval` opening in [from, to], oldest first (newest first with `reverse`). */
export function* storedCandles(store: Store, p: number, interval: number, from: number, to: number, reverse = false): Generator<StoredCandle> {
  if (to < from) return;
  const first = chunkStart(interval, from);
  const chunks = reverse
    ? store.candles.getRange({ start: [p, interval, to], end: [p, interval, first - 1], reverse: true })
    : store.candles.getRange({ start: [p, interval, first], end: [p, interval, to + 1] });
  const cache: ChunkCache = new Map();
  for (const { value } of chunks) {
    const n = value.length / CANDLE_FIELDS;
    for (let c = 0; c < n; c++) {
      const at = (reverse ? n - 1 - c : c) * CANDLE_FIELDS;
      const time = value[at]!;
      if (time < from || time > to) continue;
      yield { time, record: recordAt(store, p, value, at, interval, cache) };
    }
  }
}

/** Every stored candle as [pool, interval, time] -> record (tools and tests). */
export function* allStoredCandles(store: Store): Generator<{ key: [number, number, number]; record: CandleRecord }> {
  for (const { key, value } of store.candles.getRange()) {
    const cache: ChunkCache = new Map();
    for (let at = 0; at < value.length; at += CANDLE_FIELDS) yield { key: [key[0], key[1], value[at]!], record: recordAt(store, key[0], value, at, key[1], cache) };
  }
}

export interface ChunkWrite {
  readonly pool: number;
  readonly interval: number;
  readonly start: number;
  /** Candles as the rings hold them (no references), merged into what is stored. */
  readonly data: readonly number[];
}

/**
 * Writes chunks of candles, merged with what is stored; call inside a write transaction. Finer
 * intervals go first; then each candle of a coarser interval that equals a stored candle of a finer
 * interval inside its span (one-minute candles tried first) is written as a reference to it.
 */
export function putChunks(store: Store, chunks: readonly ChunkWrite[]): void {
  const cache: ChunkCache = new Map();
  const ordered = [...chunks].sort((a, b) => a.interval - b.interval);
  for (const c of ordered) {
    let data: number[] | null = null;
    if (c.interval !== MINUTE) {
      for (let at = 0; at < c.data.length; at += CANDLE_FIELDS) {
        const found = equalFinerCandle(store, c, at, cache);
        if (found === null) continue;
        data ??= c.data.slice();
        data.fill(0, at + 1, at + CANDLE_FIELDS);
        data[at + F_REFERENCE] = found.time;
        data[at + F_REFERENCE_INTERVAL] = found.interval;
        data[at + F_TXNS] = REFERENCE_TXNS;
      }
    }
    const merged = mergeChunk(cachedChunk(store, c.pool, c.interval, c.start, cache), data ?? c.data);
    store.candles.put([c.pool, c.interval, c.start], merged);
    // What later chunks of this call compare with is what is now stored (the same numbers as read back:
    // the encoding keeps every number but the sign of a zero, which `same` does not tell apart).
    cache.set(chunkId(c.pool, c.interval, c.start), merged);
  }
}

/**
 * A stored candle of a finer interval inside the span of the candle at `at` of `c`, equal to it field
 * for field and not a reference itself, or null.
 *
 * The finer intervals are searched coarsest first. A finer candle equal to c holds every swap of c,
 * so a stored candle inside c's span that is not equal to it (a sealed candle with fewer swaps)
 * holds no candle equal to it either: the candles inside it, and chunks whose part of the span lies
 * inside such candles, are passed over. Where the coarser intervals' candles are stored (a day's
 * 12 hour candles), one chunk read settles the search.
 */
function equalFinerCandle(store: Store, c: ChunkWrite, at: number, cache: ChunkCache): { time: number; interval: number } | null {
  const from = c.data[at]!;
  const to = from + INTERVAL_SECONDS[c.interval]!;
  const txns = c.data[at + F_TXNS]!;
  if (!(txns > 0)) return null;
  const r: Resolved = { chunk: c.data, at: 0, interval: 0 };
  /** [start, end) pairs of the span that hold no equal candle: stored candles found unequal. */
  const passed: number[] = [];
  const isPassed = (a: number, b: number) => {
    for (let k = 0; k < passed.length; k += 2) if (a >= passed[k]! && b <= passed[k + 1]!) return true;
    return false;
  };
  for (let interval = c.interval - 1; interval >= MINUTE; interval--) {
    const seconds = INTERVAL_SECONDS[interval]!;
    const span = CANDLES_PER_CHUNK * seconds;
    for (let start = chunkStart(interval, from); start < to; start += span) {
      if (isPassed(Math.max(start, from), Math.min(start + span, to))) continue;
      const chunk = cachedChunk(store, c.pool, interval, start, cache);
      if (chunk === undefined) continue;
      for (let m = 0; m < chunk.length; m += CANDLE_FIELDS) {
        const time = chunk[m]!;
        const end = time + seconds;
        if (time < from || end > to || isPassed(time, end)) continue;
        const t = chunk[m + F_TXNS];
        if (t === txns || t === REFERENCE_TXNS) {
          resolve(store, c.pool, chunk, m, interval, cache, r);
          let equal = true;
          for (let f = 1; f < CANDLE_FIELDS && equal; f++) equal = same(r.chunk[r.at + f]!, c.data[at + f]!);
          if (equal) return { time: r.chunk[r.at]!, interval: r.interval };
        }
        // Runs of candles of one interval come in time order: one pair for the run.
        if (passed.length > 0 && passed[passed.length - 1] === time) passed[passed.length - 1] = end;
        else passed.push(time, end);
      }
    }
  }
  return null;
}
