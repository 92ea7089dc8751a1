/**
 * A candle as the rings hold it: one fixed record per candle, its fields side by side, so a swap's
 * update of one interval's newest candle touches at most two cache lines.
 *
 * Record layout (CANDLE_WORDS f64 words, 96 bytes): the f64 fields at their f64 word (CandleF64),
 * then the u32 fields packed two to a word, at their u32 word of the record (CandleU32).
 * Invariant: candle k of ring block b sits at record b * slots + (k % slots); its f64 field F at f64
 * element record * CANDLE_WORDS + F, its u32 field U at u32 element record * 2 * CANDLE_WORDS + U of
 * the same memory; records start at multiples of 32 bytes, so one spans at most two 64-byte lines.
 */

/** f64 words of a candle record. */
export const enum CandleF64 {
  open0 = 0,
  high0 = 1,
  low0 = 2,
  close0 = 3,
  open1 = 4,
  high1 = 5,
  low1 = 6,
  close1 = 7,
  volumeUsd = 8,
  buyVolumeUsd = 9,
  /** f64 fields there are. */
  count = 10,
}

/** u32 words of a candle record (after the f64 words, two to an f64 word). */
export const enum CandleU32 {
  time = CandleF64.count * 2,
  txns = CandleF64.count * 2 + 1,
  buys = CandleF64.count * 2 + 2,
  /** One past the last u32 field. */
  end = CandleF64.count * 2 + 3,
}

/** f64 words per candle record (the u32 fields rounded up to a whole f64 word). */
export const CANDLE_WORDS = (CandleU32.end + 1) >>> 1;
/** u32 words per candle record. */
export const CANDLE_U32_WORDS = CANDLE_WORDS * 2;

export type CandleFieldName = 'time' | 'open0' | 'high0' | 'low0' | 'close0' | 'open1' | 'high1' | 'low1' | 'close1' | 'volumeUsd' | 'buyVolumeUsd' | 'txns' | 'buys';

/** One field of the record: its name, type and word (f64 word for f64 fields, u32 word for u32 fields). */
export interface CandleField {
  readonly name: CandleFieldName;
  readonly type: 'f64' | 'u32';
  readonly word: number;
}

/**
 * Every field of a candle, in the order candles are stored and were once kept as columns of their
 * own (`ring.<iv>.<name>`, older snapshots): the one list the rest derives from.
 */
export const RING_FIELDS: readonly CandleField[] = [
  { name: 'time', type: 'u32', word: CandleU32.time },
  { name: 'open0', type: 'f64', word: CandleF64.open0 },
  { name: 'high0', type: 'f64', word: CandleF64.high0 },
  { name: 'low0', type: 'f64', word: CandleF64.low0 },
  { name: 'close0', type: 'f64', word: CandleF64.close0 },
  { name: 'open1', type: 'f64', word: CandleF64.open1 },
  { name: 'high1', type: 'f64', word: CandleF64.high1 },
  { name: 'low1', type: 'f64', word: CandleF64.low1 },
  { name: 'close1', type: 'f64', word: CandleF64.close1 },
  { name: 'volumeUsd', type: 'f64', word: CandleF64.volumeUsd },
  { name: 'buyVolumeUsd', type: 'f64', word: CandleF64.buyVolumeUsd },
  { name: 'txns', type: 'u32', word: CandleU32.txns },
  { name: 'buys', type: 'u32', word: CandleU32.buys },
];

// The list and the record agree: every word used once, f64 words below the u32 ones.
{
  const used = new Set<number>();
  for (const f of RING_FIELDS) {
    const u32 = f.type === 'f64' ? [f.word * 2, f.word * 2 + 1] : [f.word];
    for (const w of u32) {
      if (used.has(w) || w >= CANDLE_U32_WORDS) throw new Error(`candle field ${f.name}: word ${w} taken or out of the record`);
      used.add(w);
    }
  }
  if (used.size !== CandleU32.end) throw new Error('candle record: fields and words do not agree');
}

/** A candle field's name to its entry. */
export const CANDLE_FIELD: Readonly<Record<CandleFieldName, CandleField>> = Object.fromEntries(RING_FIELDS.map((f) => [f.name, f])) as Record<CandleFieldName, CandleField>;

/** The candle records of one interval: f64 and u32 views of the same memory. */
export interface CandleRecords {
  /** f64 view: field F of record s at `s * CANDLE_WORDS + F`. */
  readonly cells: Float64Array;
  /** u32 view of the same memory: field U of record s at `s * CANDLE_U32_WORDS + U`. */
  readonly words: Uint32Array;
}

/** The u32 view of an f64 record column (the same memory). */
export function wordsOf(cells: Float64Array): Uint32Array {
  return new Uint32Array(cells.buffer, cells.byteOffset, cells.length * 2);
}

/** Field `f` of record `slot` (cold paths: tools, tests, conversions). */
export function candleValue(r: CandleRecords, slot: number, f: CandleField | CandleFieldName): number {
  const field = typeof f === 'string' ? CANDLE_FIELD[f] : f;
  return field.type === 'f64' ? r.cells[slot * CANDLE_WORDS + field.word]! : r.words[slot * CANDLE_U32_WORDS + field.word]!;
}

/** Sets field `f` of record `slot` (cold paths: tools, tests, conversions). */
export function setCandleValue(r: CandleRecords, slot: number, f: CandleField | CandleFieldName, value: number): void {
  const field = typeof f === 'string' ? CANDLE_FIELD[f] : f;
  if (field.type === 'f64') r.cells[slot * CANDLE_WORDS + field.word] = value;
  else r.words[slot * CANDLE_U32_WORDS + field.word] = value;
}

/**
 * A token's 1 s candle as its second block holds it: one record per second, its fields side by
 * side, so a swap's update of a token's newest second touches one cache line instead of eight.
 * Record layout (SECOND_WORDS f64 words, 64 bytes): the f64 fields at their f64 word (SecondF64),
 * then the u32 fields at their u32 word of the record (SecondU32), the rest zero.
 * Invariant: second k of second block b sits at record b * TOKEN_SECOND_SLOTS + (k % TOKEN_SECOND_SLOTS);
 * its f64 field F at f64 element record * SECOND_WORDS + F, its u32 field U at u32 element
 * record * SECOND_U32_WORDS + U of the same memory; records start at multiples of 64 bytes (one line each).
 */
export const enum SecondF64 {
  open = 0,
  high = 1,
  low = 2,
  close = 3,
  priceSum = 4,
  volumeUsd = 5,
  /** f64 fields there are. */
  count = 6,
}

/** u32 words of a second record (after the f64 words, two to an f64 word). */
export const enum SecondU32 {
  time = SecondF64.count * 2,
  txns = SecondF64.count * 2 + 1,
  /** One past the last u32 field. */
  end = SecondF64.count * 2 + 2,
}

/** f64 words per second record: the fields rounded up to a 64-byte line. */
export const SECOND_WORDS = 8;
/** u32 words per second record. */
export const SECOND_U32_WORDS = SECOND_WORDS * 2;
if (SecondU32.end > SECOND_U32_WORDS) throw new Error('second record: the fields do not fit the record');
