/**
 * ABI words and log fields read by hand: the hot path of decoding (every log goes through these), so
 * no ABI library; the families' decoders (families/*) and the token reader use them.
 */

/** A log as `eth_getLogs` returns it. */
export interface RpcLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly blockNumber: string;
  readonly blockHash: string;
  readonly transactionHash: string;
  readonly transactionIndex: string;
  readonly logIndex: string;
  readonly removed?: boolean;
  /** The block's time, which some nodes send with each log (anvil, geth since 1.16, Erigon, Besu): saves reading the block's header. */
  readonly blockTimestamp?: string;
}

/**
 * Where a log read from an answer's bytes keeps its data (log-answer.ts, AnswerLog): the words below
 * are read from these bytes, without the data's string.
 */
export interface LogBytes {
  readonly bytes: Buffer;
  /** The data's text (`0x` and hex digits) is bytes [dataStart, dataEnd). */
  readonly dataStart: number;
  readonly dataEnd: number;
  /** The log index as a number. */
  readonly index: number;
}

const TWO_256 = 1n << 256n;
const TWO_255 = 1n << 255n;

/** The i-th 32-byte word of ABI data as an unsigned integer. */
export function word(data: string, i: number): bigint {
  const start = 2 + i * 64;
  const hex = data.slice(start, start + 64);
  if (hex.length !== 64) throw new Error(`ABI data too short for word ${i}`);
  return BigInt(`0x${hex}`);
}

/** Two's-complement reading of a 256-bit word (int256, int24, ... are sign-extended to 256 bits). */
export function signed(w: bigint): bigint {
  return w >= TWO_255 ? w - TWO_256 : w;
}

/** The address held in the low 20 bytes of a topic or word, lowercase. */
export function topicAddress(topic: string): string {
  return `0x${topic.slice(-40).toLowerCase()}`;
}

export function wordAddress(data: string, i: number): string {
  return topicAddress(data.slice(2 + i * 64, 2 + (i + 1) * 64));
}

export function hexNumber(hex: string): number {
  // A digit loop for the short quantities nodes send (block numbers, indexes): about twice as fast
  // as parseInt here, where every log carries several; anything unusual goes to parseInt.
  const n = hex.length;
  if (n > 2 && n <= 15 && hex.charCodeAt(0) === 48 && (hex.charCodeAt(1) | 32) === 120) {
    let v = 0;
    for (let i = 2; i < n; i++) {
      const c = hex.charCodeAt(i) | 32;
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) return Number.parseInt(hex, 16);
      v = v * 16 + d;
    }
    return v;
  }
  return Number.parseInt(hex, 16);
}

/** The log index of a log as a number. */
export function logIndexOf(l: RpcLog): number {
  const index = (l as Partial<LogBytes>).index;
  return index !== undefined ? index : hexNumber(l.logIndex);
}

/** Hex digits [j, end) of `b` as a number (at most 13 digits), -1 when one is no hex digit; `flip` reads each digit as 15 minus it. */
function digits(b: Buffer, j: number, end: number, flip: number): number {
  let v = 0;
  for (; j < end; j++) {
    const c = b[j]!;
    const lower = c | 32;
    const d = c >= 48 && c <= 57 ? c - 48 : lower >= 97 && lower <= 102 ? lower - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + (d ^ flip);
  }
  return v;
}

/** The bounds of the i-th data word's 64 hex digits in the log's bytes, or -1 when the data is too short. */
function wordStart(l: LogBytes, i: number): number {
  const start = l.dataStart + 2 + 64 * i;
  return start + 64 <= l.dataEnd ? start : -1;
}

// Scratch for making a bigint of up to 64 bits in one allocation: two u32 words written, read back as
// one little-endian u64 (as events/codec.ts splits them). Only hex64 uses it, synchronously.
const scratch64 = new BigUint64Array(1);
const scratch32 = new Uint32Array(scratch64.buffer);
const TWO_32 = 2 ** 32;

/** Hex digits [j, end) (at most 16; each 15 minus it with `flip` 15) plus `add` (0 or 1) as a bigint; -1n when a digit is no hex digit. */
function hex64(b: Buffer, j: number, end: number, flip: number, add: number): bigint {
  const mid = Math.max(j, end - 8);
  const high = digits(b, j, mid, flip);
  let low = digits(b, mid, end, flip);
  if (high < 0 || low < 0) return -1n;
  let carry = 0;
  low += add;
  if (low === TWO_32) {
    low = 0;
    carry = 1;
  }
  // All 64 bits set plus one: 2^64.
  if (high + carry === TWO_32) return 1n << 64n;
  scratch32[0] = low;
  scratch32[1] = high + carry;
  return scratch64[0]!;
}

/** Hex digits [j, end) as an unsigned integer: from u64 halves up to 32 digits, else through BigInt's own parse; -1n when a digit is no hex digit. */
function hexInteger(b: Buffer, j: number, end: number): bigint {
  const n = end - j;
  if (n <= 16) return hex64(b, j, end, 0, 0);
  if (n <= 32) {
    const high = hex64(b, j, end - 16, 0, 0);
    const low = hex64(b, end - 16, end, 0, 0);
    return high < 0n || low < 0n ? -1n : (high << 64n) | low;
  }
  for (let k = j; k < end; k++) if (digits(b, k, k + 1, 0) < 0) return -1n;
  return BigInt(`0x${b.toString('latin1', j, end)}`);
}

/** The i-th data word of a log as an unsigned integer: `word(l.data, i)`, read from the answer's bytes when the log has them. */
export function logWord(l: RpcLog, i: number): bigint {
  const lb = l as RpcLog & Partial<LogBytes>;
  if (lb.bytes === undefined) return word(l.data, i);
  const start = wordStart(lb as LogBytes, i);
  if (start < 0) return word(l.data, i);
  const b = lb.bytes;
  const end = start + 64;
  let j = start;
  while (j < end && b[j] === 0x30) j++;
  const v = hexInteger(b, j, end);
  // A digit that is none: the string reading throws as it always did.
  return v < 0n ? word(l.data, i) : v;
}

/** The i-th data word of a log as a two's-complement integer: `signed(word(l.data, i))`, from the answer's bytes when the log has them. */
export function logSigned(l: RpcLog, i: number): bigint {
  const lb = l as RpcLog & Partial<LogBytes>;
  if (lb.bytes === undefined) return signed(word(l.data, i));
  const start = wordStart(lb as LogBytes, i);
  if (start < 0) return signed(word(l.data, i));
  const b = lb.bytes;
  // A first digit below 8: not negative.
  const first = b[start]!;
  if (first >= 48 && first <= 55) return logWord(l, i);
  // Negative: minus (the complement plus one), the complement read digit by digit after the leading f digits.
  const end = start + 64;
  let j = start;
  while (j < end && (b[j]! | 32) === 102) j++;
  if (end - j <= 16) {
    const magnitude = hex64(b, j, end, 15, 1);
    if (magnitude >= 0n) return -magnitude;
  }
  return signed(word(l.data, i));
}

/** The i-th data word of a log as a signed number, for small integers (ticks): `Number(signed(word(l.data, i)))`. */
export function logInt(l: RpcLog, i: number): number {
  const lb = l as RpcLog & Partial<LogBytes>;
  if (lb.bytes !== undefined) {
    const start = wordStart(lb as LogBytes, i);
    if (start >= 0) {
      const b = lb.bytes;
      const end = start + 64;
      const pad = b[start] === 48 ? 48 : (b[start]! | 32) === 102 ? 102 : 0;
      if (pad !== 0) {
        // 51 leading digits all 0 (or all f) and the last 13 a number of 48 bits or less: exact.
        let j = start;
        if (pad === 48) while (j < end - 13 && b[j] === 48) j++;
        else while (j < end - 13 && (b[j]! | 32) === 102) j++;
        if (j === end - 13) {
          const v = digits(b, j, end, pad === 48 ? 0 : 15);
          if (v >= 0 && v < 2 ** 48) return pad === 48 ? v : -(v + 1);
        }
      }
    }
  }
  return Number(signed(word(l.data, i)));
}
