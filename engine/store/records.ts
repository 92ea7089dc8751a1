/**
 * Binary forms of the two record kinds that make most of the store: transactions and candle chunks.
 * Each is an lmdb-js value encoder, so the databases keep handing out the same positional arrays
 * (TxRecord, flat candle chunks) while the file holds bytes instead of msgpack:
 *
 *  - hashes and addresses as their bytes (`0x` + lower-case hex, or base58), not as text;
 *  - amounts as sign and magnitude bytes, not as decimal strings;
 *  - candle times as deltas, prices that repeat (high = open, close = low, open = the previous
 *    close, ...) as a flag instead of another float64; counts as varints.
 *
 * Invariant: decode(encode(x)) equals what the msgpack form read back, field for field and every
 * float64 bit (msgpack writes -0 as the integer 0, and so does this form), so every answer built
 * from a record is byte for byte what it was. A record the binary form cannot
 * hold exactly (text of another shape, a non-canonical amount, a fraction where a count belongs) is
 * written as msgpack, as before this form existed. Binary records begin with 0xc1, a byte msgpack
 * never uses; anything else is msgpack, which is how a store written before them reads back.
 */
import { pack, unpack } from 'msgpackr';
import { CANDLE_FIELDS, REFERENCE_TXNS } from './candles.js';
import type { TxRecord } from './store.js';

/** First byte of a binary record (never used by msgpack), then its kind. */
const BINARY_MARK = 0xc1;
const KIND_TX = 1;
const KIND_CANDLES = 2;

/**
 * Text tags: 0 = UTF-8 with a varint length; 1..127 = `0x` + hex of that many bytes; 128..255 =
 * (tag - 128) base58 digits, 6 bits each (a Solana signature's 88 digits in 66 bytes against the 64
 * of its number: linear time, where converting to the number is quadratic and 10 times slower).
 */
const TEXT_UTF8 = 0;
const TEXT_HEX_MAX_BYTES = 127;
const TEXT_BASE58 = 128;
const TEXT_BASE58_MAX_DIGITS = 127;
const LOWER_HEX = /^0x(?:[0-9a-f]{2})+$/;
const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Char code -> base58 digit value, 255 for a character outside the alphabet. */
const BASE58_VALUE = Uint8Array.from({ length: 128 }, (_, c) => {
  const v = BASE58_ALPHABET.indexOf(String.fromCharCode(c));
  return v < 0 ? 255 : v;
});
const BASE58_CODES = Uint8Array.from(BASE58_ALPHABET, (ch) => ch.charCodeAt(0));

/** Byte -> its value as a lower-case hex digit, 255 for any other byte. */
const HEX_DIGIT = Uint8Array.from({ length: 256 }, (_, c) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : 255));

/** Bytes of a u32 without its zero bytes above the highest one (0 for 0). */
function u32Bytes(w: number): number {
  return w === 0 ? 0 : w < 0x100 ? 1 : w < 0x10000 ? 2 : w < 0x1000000 ? 3 : 4;
}

/** Bytes holding `digits` base58 digits at 6 bits each. */
function base58Bytes(digits: number): number {
  return Math.ceil((digits * 6) / 8);
}

/** Thrown inside an encoder when a value has no exact binary form: the record falls back to msgpack. */
class NoBinaryForm extends Error {}

/** A growable byte buffer with the writes the records need (little-endian). */
class Writer {
  bytes = new Uint8Array(512);
  view = new DataView(this.bytes.buffer);
  at = 0;

  reset(): this {
    this.at = 0;
    return this;
  }

  private room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  u8(x: number): void {
    this.room(1);
    this.bytes[this.at++] = x;
  }

  u16(x: number): void {
    this.room(2);
    this.view.setUint16(this.at, x, true);
    this.at += 2;
  }

  /** A float64; -0 as 0, as msgpack has it. */
  f64(x: number): void {
    this.room(8);
    this.view.setFloat64(this.at, x === 0 ? 0 : x, true);
    this.at += 8;
  }

  /** A non-negative safe integer, 7 bits per byte. */
  varint(x: number): void {
    if (!Number.isSafeInteger(x) || x < 0) throw new NoBinaryForm();
    this.room(8);
    while (x >= 0x80) {
      this.bytes[this.at++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.bytes[this.at++] = x;
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.bytes.set(b, this.at);
    this.at += b.length;
  }

  text(s: string): void {
    if (s.length >= 4 && s.length <= 2 + 2 * TEXT_HEX_MAX_BYTES && LOWER_HEX.test(s)) {
      this.u8((s.length - 2) / 2);
      this.room(s.length);
      this.at += Buffer.from(this.bytes.buffer, this.bytes.byteOffset).write(s.slice(2), this.at, 'hex');
      return;
    }
    if (s.length > 0 && s.length <= TEXT_BASE58_MAX_DIGITS && this.base58(s)) return;
    const b = Buffer.from(s, 'utf8');
    this.u8(TEXT_UTF8);
    this.varint(b.length);
    this.raw(b);
  }

  /** Writes `s` as 6-bit base58 digits when every character is one; false (nothing written) otherwise. */
  private base58(s: string): boolean {
    const n = s.length;
    this.room(1 + base58Bytes(n));
    const start = this.at;
    const b = this.bytes;
    b[start] = TEXT_BASE58 + n;
    let at = start + 1;
    let acc = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      const v = c < 128 ? BASE58_VALUE[c]! : 255;
      if (v === 255) return false;
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        b[at++] = (acc >> bits) & 0xff;
      }
    }
    if (bits > 0) b[at++] = (acc << (8 - bits)) & 0xff;
    this.at = at;
    return true;
  }

  /** A signed integer in canonical decimal text, as a sign bit and byte count then the magnitude (little-endian). */
  decimal(s: string): void {
    let v: bigint;
    try {
      v = BigInt(s);
    } catch {
      throw new NoBinaryForm();
    }
    if (v.toString() !== s) throw new NoBinaryForm();
    const negative = v < 0n;
    let m = negative ? -v : v;
    // Whole 64-bit words while they fit, then the bytes of what is left (no leading zero bytes).
    const start = this.at;
    this.u8(0);
    let n = 0;
    while (m > 0xffffffffffffffffn) {
      this.room(8);
      this.view.setBigUint64(this.at, BigInt.asUintN(64, m), true);
      this.at += 8;
      n += 8;
      m >>= 64n;
    }
    let low = Number(m & 0xffffffffn);
    let high = Number(m >> 32n);
    while (low > 0 || high > 0) {
      this.u8(low & 0xff);
      low = (low >>> 8) | ((high & 0xff) << 24);
      low >>>= 0;
      high >>>= 8;
      n++;
    }
    if (n > 0x7f) throw new NoBinaryForm();
    this.bytes[start] = (negative ? 0x80 : 0) | n;
  }

  /**
   * text(s) of a string given as its ASCII bytes, when it is `0x` and lower-case hex (the text of
   * an EVM hash or address); false, with nothing written, for any other text.
   */
  hexBytes(s: Uint8Array): boolean {
    const n = s.length;
    if (n < 4 || n > 2 + 2 * TEXT_HEX_MAX_BYTES || (n & 1) !== 0 || s[0] !== 0x30 || s[1] !== 0x78) return false;
    this.room(1 + (n - 2) / 2);
    const b = this.bytes;
    let at = this.at;
    b[at++] = (n - 2) / 2;
    for (let i = 2; i < n; i += 2) {
      const hi = HEX_DIGIT[s[i]!]!;
      const lo = HEX_DIGIT[s[i + 1]!]!;
      if ((hi | lo) > 15) return false;
      b[at++] = (hi << 4) | lo;
    }
    this.at = at;
    return true;
  }

  /**
   * decimal() of the amount whose magnitude is the little-endian u32 words w0..w3 and whose sign is
   * `negative` (the decimal text of that bigint), written without making the text or the bigint: its
   * magnitude's little-endian bytes without the zero bytes above the highest one.
   */
  magnitude(w0: number, w1: number, w2: number, w3: number, negative: boolean): void {
    this.room(17);
    const n = w3 !== 0 ? 12 + u32Bytes(w3) : w2 !== 0 ? 8 + u32Bytes(w2) : w1 !== 0 ? 4 + u32Bytes(w1) : u32Bytes(w0);
    const b = this.bytes;
    const start = this.at;
    b[start] = (negative && n > 0 ? 0x80 : 0) | n;
    for (let i = 0; i < n; i++) {
      const w = i < 4 ? w0 : i < 8 ? w1 : i < 12 ? w2 : w3;
      b[start + 1 + i] = (w >>> ((i & 3) * 8)) & 0xff;
    }
    this.at = start + 1 + n;
  }

  /** The bytes written so far, as they are (no copy); the writer starts a fresh buffer of the same size. */
  take(): Buffer {
    const out = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.at);
    this.bytes = new Uint8Array(this.bytes.length);
    this.view = new DataView(this.bytes.buffer);
    this.at = 0;
    return out;
  }

  get length(): number {
    return this.at;
  }

  /** A copy of what was written (lmdb keeps the buffer it is given only until the put returns, but a copy is cheap). */
  done(): Buffer {
    return Buffer.from(this.bytes.subarray(0, this.at));
  }
}

class Reader {
  private readonly view: DataView;
  at = 2;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  u8(): number {
    return this.bytes[this.at++]!;
  }

  u16(): number {
    const x = this.view.getUint16(this.at, true);
    this.at += 2;
    return x;
  }

  f64(): number {
    const x = this.view.getFloat64(this.at, true);
    this.at += 8;
    return x;
  }

  varint(): number {
    let x = 0;
    let scale = 1;
    for (;;) {
      const b = this.bytes[this.at++]!;
      x += (b & 0x7f) * scale;
      if (b < 0x80) return x;
      scale *= 0x80;
    }
  }

  text(): string {
    const tag = this.u8();
    if (tag === TEXT_UTF8) {
      const n = this.varint();
      const s = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.at, n).toString('utf8');
      this.at += n;
      return s;
    }
    if (tag < TEXT_BASE58) {
      const s = `0x${Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.at, tag).toString('hex')}`;
      this.at += tag;
      return s;
    }
    const n = tag - TEXT_BASE58;
    const out = Buffer.allocUnsafe(n);
    const b = this.bytes;
    let at = this.at;
    let acc = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) {
      if (bits < 6) {
        acc = ((acc & 0xff) << 8) | b[at++]!;
        bits += 8;
      }
      bits -= 6;
      out[i] = BASE58_CODES[(acc >> bits) & 63]!;
    }
    this.at += base58Bytes(n);
    return out.toString('latin1');
  }

  decimal(): string {
    const head = this.u8();
    const n = head & 0x7f;
    let m: bigint | number;
    if (n <= 6) {
      // Under 2^48: a double holds it exactly, and its text is the same as the bigint's.
      m = 0;
      for (let i = n - 1; i >= 0; i--) m = m * 256 + this.bytes[this.at + i]!;
    } else {
      m = 0n;
      let i = n;
      for (; i % 8 !== 0; i--) m = (m << 8n) | BigInt(this.bytes[this.at + i - 1]!);
      for (; i > 0; i -= 8) m = (m << 64n) | this.view.getBigUint64(this.at + i - 8, true);
    }
    this.at += n;
    return head & 0x80 && n > 0 ? `-${m}` : `${m}`;
  }
}

const writer = new Writer();

/** Whether two numbers read back the same from msgpack: NaN is NaN, -0 is 0. */
function same(a: number, b: number | undefined): boolean {
  return a === b || (a !== a && b !== b);
}

function isBinary(b: Uint8Array, kind: number): boolean {
  return b.length >= 2 && b[0] === BINARY_MARK && b[1] === kind;
}

/**
 * Transaction record: mark, kind, then `kind | recipient-is-sender << 2`, the hash, sender and
 * (unless it is the sender) recipient as text, the two amounts, four float64 (prices, volume,
 * ratio) and the time as a varint.
 */
export function encodeTx(r: TxRecord): Buffer {
  try {
    const [kind, hash, sender, recipient, a0, a1, p0, p1, vol, ratio, time] = r;
    if (r.length !== 11 || (kind !== 0 && kind !== 1 && kind !== 2)) throw new NoBinaryForm();
    if (typeof hash !== 'string' || typeof sender !== 'string' || typeof recipient !== 'string') throw new NoBinaryForm();
    if (typeof a0 !== 'string' || typeof a1 !== 'string') throw new NoBinaryForm();
    if (typeof p0 !== 'number' || typeof p1 !== 'number' || typeof vol !== 'number' || typeof ratio !== 'number' || typeof time !== 'number') throw new NoBinaryForm();
    const w = writer.reset();
    w.u8(BINARY_MARK);
    w.u8(KIND_TX);
    const same = sender === recipient;
    w.u8(kind | (same ? 4 : 0));
    w.text(hash);
    w.text(sender);
    if (!same) w.text(recipient);
    w.decimal(a0);
    w.decimal(a1);
    w.f64(p0);
    w.f64(p1);
    w.f64(vol);
    w.f64(ratio);
    w.varint(time);
    return w.done();
  } catch (err) {
    if (err instanceof NoBinaryForm) return pack(r);
    throw err;
  }
}

export function decodeTx(b: Uint8Array): TxRecord {
  if (!isBinary(b, KIND_TX)) return unpack(b) as TxRecord;
  const r = new Reader(b);
  const head = r.u8();
  const hash = r.text();
  const sender = r.text();
  const recipient = head & 4 ? sender : r.text();
  return [head & 3, hash, sender, recipient, r.decimal(), r.decimal(), r.f64(), r.f64(), r.f64(), r.f64(), r.varint()];
}

// Candle flags (per candle, 12 bits): for each token t (0, then 1, TOKEN_BITS apart) whether open
// is the previous candle's close, high and low are the open, close is the open, high or low; then
// the buy volume as a literal, zero, or the whole volume.
const OPEN_IS_PREV_CLOSE = 1;
const HIGH_IS_OPEN = 2;
const LOW_IS_OPEN = 4;
const CLOSE_SHIFT = 3; // 2 bits: 0 literal, 1 open, 2 high, 3 low
const TOKEN_BITS = 5;
const BUY_SHIFT = 10; // 2 bits: 0 literal, 1 zero, 2 the whole volume
/** Flags of a reference candle (no literal candle sets bit 15) with the interval it refers to in the low bits, then the offset in minutes as a varint. */
const REFERENCE = 0x8000;
const MINUTE_SECONDS = 60;

/** Candle fields within a stored candle (candles.ts): open time, o h l c of token 0, of token 1, volumes, counts. */
const F_TIME = 0;
const F_OPEN = [1, 5] as const;
const F_VOLUME = 9;
const F_BUY_VOLUME = 10;
const F_TXNS = 11;
const F_BUYS = 12;
/** In a reference candle: the open time and the interval of the candle it stands for. */
const F_REFERENCE = 1;
const F_REFERENCE_INTERVAL = 2;

/**
 * Candle chunk: mark, kind, the candle count, then per candle its open time (a delta from the
 * previous candle's, the first one whole), the flags, txns and buys as varints, and the float64
 * fields the flags do not cover; a reference candle (candles.ts) is its time, REFERENCE with the
 * interval of the candle it stands for, and that candle's offset in minutes.
 */
export function encodeCandles(chunk: readonly number[]): Buffer {
  try {
    if (chunk.length % CANDLE_FIELDS !== 0) throw new NoBinaryForm();
    const w = writer.reset();
    w.u8(BINARY_MARK);
    w.u8(KIND_CANDLES);
    w.varint(chunk.length / CANDLE_FIELDS);
    let prevTime = 0;
    for (let at = 0; at < chunk.length; at += CANDLE_FIELDS) {
      const time = chunk[at + F_TIME]!;
      w.varint(time - prevTime);
      prevTime = time;
      if (chunk[at + F_TXNS] === REFERENCE_TXNS) {
        // The minute's candle it equals, in minutes from its own open (candles.ts).
        const interval = chunk[at + F_REFERENCE_INTERVAL]!;
        if (!Number.isInteger(interval) || interval < 0 || interval >= REFERENCE) throw new NoBinaryForm();
        w.u16(REFERENCE | interval);
        w.varint((chunk[at + F_REFERENCE]! - time) / MINUTE_SECONDS);
        continue;
      }
      let flags = 0;
      for (let t = 0; t < 2; t++) {
        const o = at + F_OPEN[t]!;
        const [open, high, low, close] = [chunk[o]!, chunk[o + 1]!, chunk[o + 2]!, chunk[o + 3]!];
        let f = 0;
        if (at > 0 && same(open, chunk[o - CANDLE_FIELDS + 3])) f |= OPEN_IS_PREV_CLOSE;
        if (same(high, open)) f |= HIGH_IS_OPEN;
        if (same(low, open)) f |= LOW_IS_OPEN;
        f |= (same(close, open) ? 1 : same(close, high) ? 2 : same(close, low) ? 3 : 0) << CLOSE_SHIFT;
        flags |= f << (t * TOKEN_BITS);
      }
      const volume = chunk[at + F_VOLUME]!;
      const buyVolume = chunk[at + F_BUY_VOLUME]!;
      flags |= (buyVolume === 0 ? 1 : same(buyVolume, volume) ? 2 : 0) << BUY_SHIFT;
      w.u16(flags);
      w.varint(chunk[at + F_TXNS]!);
      w.varint(chunk[at + F_BUYS]!);
      for (let t = 0; t < 2; t++) {
        const o = at + F_OPEN[t]!;
        const f = flags >> (t * TOKEN_BITS);
        if (!(f & OPEN_IS_PREV_CLOSE)) w.f64(chunk[o]!);
        if (!(f & HIGH_IS_OPEN)) w.f64(chunk[o + 1]!);
        if (!(f & LOW_IS_OPEN)) w.f64(chunk[o + 2]!);
        if (((f >> CLOSE_SHIFT) & 3) === 0) w.f64(chunk[o + 3]!);
      }
      w.f64(volume);
      if (((flags >> BUY_SHIFT) & 3) === 0) w.f64(buyVolume);
    }
    return w.done();
  } catch (err) {
    if (err instanceof NoBinaryForm) return pack(chunk);
    throw err;
  }
}

export function decodeCandles(b: Uint8Array): number[] {
  if (!isBinary(b, KIND_CANDLES)) return unpack(b) as number[];
  const r = new Reader(b);
  const n = r.varint();
  const out = new Array<number>(n * CANDLE_FIELDS);
  let time = 0;
  for (let c = 0; c < n; c++) {
    const at = c * CANDLE_FIELDS;
    time += r.varint();
    out[at + F_TIME] = time;
    const flags = r.u16();
    if (flags & REFERENCE) {
      out.fill(0, at + 1, at + CANDLE_FIELDS);
      out[at + F_REFERENCE] = time + r.varint() * MINUTE_SECONDS;
      out[at + F_REFERENCE_INTERVAL] = flags & ~REFERENCE;
      out[at + F_TXNS] = REFERENCE_TXNS;
      continue;
    }
    out[at + F_TXNS] = r.varint();
    out[at + F_BUYS] = r.varint();
    for (let t = 0; t < 2; t++) {
      const o = at + F_OPEN[t]!;
      const f = flags >> (t * TOKEN_BITS);
      const open = f & OPEN_IS_PREV_CLOSE ? out[o - CANDLE_FIELDS + 3]! : r.f64();
      const high = f & HIGH_IS_OPEN ? open : r.f64();
      const low = f & LOW_IS_OPEN ? open : r.f64();
      const closeFrom = (f >> CLOSE_SHIFT) & 3;
      out[o] = open;
      out[o + 1] = high;
      out[o + 2] = low;
      out[o + 3] = closeFrom === 0 ? r.f64() : closeFrom === 1 ? open : closeFrom === 2 ? high : low;
    }
    const volume = r.f64();
    out[at + F_VOLUME] = volume;
    const buyFrom = (flags >> BUY_SHIFT) & 3;
    out[at + F_BUY_VOLUME] = buyFrom === 0 ? r.f64() : buyFrom === 1 ? 0 : volume;
  }
  return out;
}

/** lmdb-js value encoders (the `encoder` option of a database). */
/**
 * Transaction records written as they are met (a shard's swaps, mints and burns) into one buffer,
 * each byte for byte what encodeTx writes for the same record, then handed to the store as slices of
 * it (txEncoder passes bytes through). `swap` writes a record from the parts a log batch holds, with
 * no string or bigint made; a record it cannot write that way goes through encodeTx (`record`).
 */
export class TxRecordBytes {
  private readonly w = new Writer();

  /**
   * The record [kind, hash, sender, recipient, amount0, amount1, p0, p1, vol, ratio, time] where the
   * texts are ASCII bytes and each amount the u32 words of its magnitude with its sign; false, with
   * nothing written, when a text is not `0x` and lower-case hex or the time is no varint.
   */
  swap(kind: 0 | 1 | 2, hash: Uint8Array, sender: Uint8Array, recipient: Uint8Array, a0: U128Words, negative0: boolean, a1: U128Words, negative1: boolean, p0: number, p1: number, vol: number, ratio: number, time: number): boolean {
    if (!Number.isSafeInteger(time) || time < 0) return false;
    const w = this.w;
    const start = w.at;
    const same = equalBytes(sender, recipient);
    w.u8(BINARY_MARK);
    w.u8(KIND_TX);
    w.u8(kind | (same ? 4 : 0));
    if (!w.hexBytes(hash) || !w.hexBytes(sender) || (!same && !w.hexBytes(recipient))) {
      w.at = start;
      return false;
    }
    w.magnitude(a0.w0(), a0.w1(), a0.w2(), a0.w3(), negative0);
    w.magnitude(a1.w0(), a1.w1(), a1.w2(), a1.w3(), negative1);
    w.f64(p0);
    w.f64(p1);
    w.f64(vol);
    w.f64(ratio);
    w.varint(time);
    return true;
  }

  /** Writes encodeTx(r). */
  record(r: TxRecord): void {
    this.w.raw(encodeTx(r));
  }

  /** The end of the last record written, in the buffer `take` returns. */
  get end(): number {
    return this.w.length;
  }

  /** The records written so far; the next ones go to a fresh buffer. */
  take(): Buffer {
    return this.w.take();
  }
}

/** The four little-endian u32 words of a 128-bit magnitude (a log batch's U128). */
export interface U128Words {
  w0(): number;
  w1(): number;
  w2(): number;
  w3(): number;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Records as TxRecord arrays, or already encoded (TxRecordBytes) and passed through. */
export const txEncoder = { encode: (r: TxRecord | Uint8Array): Uint8Array => (r instanceof Uint8Array ? r : encodeTx(r)), decode: decodeTx };
export const candleEncoder = { encode: encodeCandles, decode: decodeCandles };
