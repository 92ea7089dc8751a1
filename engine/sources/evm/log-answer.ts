/**
 * An `eth_getLogs` answer read straight from the response bytes: the logs' fields are cut out of
 * the buffer as they are, without turning the whole answer (megabytes while backfilling) into one
 * string first and parsing that. Only the shape nodes send is read here: an object whose `result`
 * is an array of flat log objects of ASCII strings without escapes, string arrays, booleans and
 * numbers. Anything else (an error answer, `null` fields of pending logs, escapes, nested objects,
 * non-ASCII bytes, a missing field) returns null, and the caller parses the answer as JSON.
 */
import { isAscii } from 'node:buffer';
import { hexNumber, type RpcLog } from './words.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** The log fields kept, by key; the bit each sets in a log's `seen` mask. */
const FIELDS = ['address', 'topics', 'data', 'blockNumber', 'blockHash', 'transactionHash', 'transactionIndex', 'logIndex', 'removed', 'blockTimestamp'] as const;
const KEYS = FIELDS.map((f) => Buffer.from(f, 'latin1'));
/** Every field but `removed` (absent: not removed) and `blockTimestamp` (which not every node sends) must be there. */
const REQUIRED = (1 << FIELDS.length) - 1 - (1 << FIELDS.indexOf('removed')) - (1 << FIELDS.indexOf('blockTimestamp'));
const RESULT = Buffer.from('result', 'latin1');

/** Fields whose strings are kept to be given again when the next log repeats them (Reader.repeated): slots. */
const SLOT_ADDRESS = 0;
const SLOT_BLOCK_NUMBER = 1;
const SLOT_BLOCK_HASH = 2;
const SLOT_TX_HASH = 3;
const SLOT_TX_INDEX = 4;
const SLOT_BLOCK_TIME = 5;
/** Topic i (an EVM log has at most four) in slot SLOT_TOPIC + i. */
const SLOT_TOPIC = 6;
const MAX_TOPICS = 4;
const SLOTS = SLOT_TOPIC + MAX_TOPICS;

/**
 * A log read from an answer's bytes. Its `data` and `logIndex` stay in those bytes until asked for:
 * the families read their data words from there (words.ts: logWord, logSigned, logInt) and the
 * follower the index as a number, so most logs never get either string. Invariant: `bytes` is the
 * answer the log was read from, never written to; [dataStart, dataEnd) holds the data's text
 * (`0x` and hex digits as sent), and `index` is the log index that text [indexStart, indexEnd) spells.
 */
export class AnswerLog implements RpcLog {
  address = '';
  topics: string[] = [];
  blockNumber = '';
  blockHash = '';
  transactionHash = '';
  transactionIndex = '';
  removed = false;
  blockTimestamp: string | undefined = undefined;
  readonly bytes: Buffer;
  dataStart = 0;
  dataEnd = 0;
  indexStart = 0;
  indexEnd = 0;
  /** The log index as a number (hexNumber of its text). */
  index = 0;
  private dataText: string | undefined = undefined;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  get data(): string {
    return (this.dataText ??= (this.bytes as Bytes).latin1Slice(this.dataStart, this.dataEnd));
  }

  get logIndex(): string {
    return (this.bytes as Bytes).latin1Slice(this.indexStart, this.indexEnd);
  }
}

/** Reads an answer; null when it is not one this reader takes (the caller parses it as JSON then). */
export function readLogAnswer(b: Buffer): { result: RpcLog[] } | null {
  // No escapes and no bytes beyond ASCII: every string is its bytes as they are.
  if (!isAscii(b) || b.indexOf(BACKSLASH) >= 0) return null;
  const r = new Reader(b);
  try {
    return r.answer();
  } catch (err) {
    if (err === UNREAD) return null;
    throw err;
  }
}

/**
 * The logs of one `eth_getLogs` answer, read when they are asked for. A page read ahead of the steps
 * that use it holds the answer's bytes only; its log objects are made when its step is decoded, so
 * the young generation does not carry (and copy, and promote) the logs of the steps read ahead.
 */
export interface LogPage {
  /** The page's logs in the node's order; each call reads them again (a page is read once). */
  logs(): RpcLog[];
}

/** A page whose logs are already objects (an answer JSON.parse read). */
export function listPage(logs: RpcLog[]): LogPage {
  return { logs: () => logs };
}

/**
 * An answer's `result` array, read when asked for. Invariant: `bytes` is an answer of ASCII without
 * escapes whose last member is `"result"`, an array starting at byte `start` and closed by the `]` at
 * byte `end`, followed only by white space and the answer's closing brace (readLogPage checked it).
 */
class AnswerPage implements LogPage {
  constructor(
    private readonly bytes: Buffer,
    private readonly start: number,
    private readonly end: number,
  ) {}

  logs(): RpcLog[] {
    const r = new Reader(this.bytes);
    try {
      return r.logsAt(this.start, this.end);
    } catch (err) {
      if (err !== UNREAD) throw err;
    }
    // A log of another shape (null fields, nested values): the whole answer parsed as JSON, as
    // readLogAnswer's caller does with an answer it does not take.
    let answer: { result?: unknown };
    try {
      answer = JSON.parse(this.bytes.toString('latin1')) as { result?: unknown };
    } catch {
      throw new Error('eth_getLogs: answer is not JSON');
    }
    if (!Array.isArray(answer.result)) throw new Error('eth_getLogs: result is not a list of logs');
    return answer.result as RpcLog[];
  }
}

/**
 * An answer whose logs are left in its bytes until asked for (LogPage): one whose last member is
 * its `result` array (the order nodes send), after members that are plain values (`jsonrpc`, `id`).
 * Null for any other answer (an error, escapes, non-ASCII text, `result` not last): the caller reads
 * those as it reads any answer (readLogAnswer, then JSON.parse).
 */
export function readLogPage(b: Buffer): LogPage | null {
  if (!isAscii(b) || b.indexOf(BACKSLASH) >= 0) return null;
  const r = new Reader(b);
  try {
    return r.page();
  } catch (err) {
    if (err === UNREAD) return null;
    throw err;
  }
}

/** Thrown (once, preallocated) when the answer is not of the shape read here. */
const UNREAD = new Error('not a plain eth_getLogs answer');

/** JSON white space. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Node's latin1Slice (Buffer#toString('latin1', ...) without its argument checks), which typings do not declare. */
type Bytes = Buffer & { latin1Slice(start: number, end: number): string };

class Reader {
  private readonly b: Bytes;
  private i = 0;
  /** The bounds of the last key read. */
  private k0 = 0;
  private k1 = 0;
  /**
   * Per repeated field (SLOTS), the string read last and its bytes' bounds: a log's address, block,
   * transaction and topics mostly repeat the log's before it (a block's logs, a transaction's, a
   * pool's), and a field whose bytes are the same is given the same string instead of a new one.
   * Slot + SLOTS keeps the one before the last (see repeated).
   */
  private readonly lastStart = new Int32Array(2 * SLOTS);
  private readonly lastEnd = new Int32Array(2 * SLOTS);
  private readonly lastText: string[] = new Array<string>(2 * SLOTS).fill('');
  constructor(b: Buffer) {
    this.b = b as Bytes;
  }

  answer(): { result: RpcLog[] } | null {
    this.expect(OPEN_OBJECT);
    let result: RpcLog[] | null = null;
    if (this.peek() === CLOSE_OBJECT) throw UNREAD;
    for (;;) {
      this.key();
      if (this.keyIs(RESULT)) {
        if (this.peek() !== OPEN_ARRAY) throw UNREAD;
        result = this.logs();
      } else this.scalar();
      const c = this.next();
      if (c === CLOSE_OBJECT) break;
      if (c !== COMMA) throw UNREAD;
    }
    if (this.peek() !== -1 || result === null) throw UNREAD;
    return { result };
  }

  /** The members before `result` (plain values), then `result`'s array, which must close the answer: left unread. */
  page(): LogPage | null {
    this.expect(OPEN_OBJECT);
    if (this.peek() === CLOSE_OBJECT) return null;
    for (;;) {
      this.key();
      if (this.keyIs(RESULT)) break;
      this.scalar();
      if (this.next() !== COMMA) return null;
    }
    if (this.peek() !== OPEN_ARRAY) return null;
    const start = this.i;
    // The answer's last byte that is not white space closes it, and the one before that closes the array.
    const b = this.b;
    let end = b.length - 1;
    while (end > start && isSpace(b[end]!)) end--;
    if (b[end] !== CLOSE_OBJECT) return null;
    end--;
    while (end > start && isSpace(b[end]!)) end--;
    if (b[end] !== CLOSE_ARRAY) return null;
    return new AnswerPage(b, start, end);
  }

  /** The logs of the array opening at `start`, which must close at `end` (else UNREAD). */
  logsAt(start: number, end: number): RpcLog[] {
    this.i = start;
    const out = this.logs();
    if (this.i !== end + 1) throw UNREAD;
    return out;
  }

  private logs(): RpcLog[] {
    this.expect(OPEN_ARRAY);
    const out: RpcLog[] = [];
    if (this.peek() === CLOSE_ARRAY) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.log());
      const c = this.next();
      if (c === CLOSE_ARRAY) return out;
      if (c !== COMMA) throw UNREAD;
    }
  }

  private log(): RpcLog {
    this.expect(OPEN_OBJECT);
    const l = new AnswerLog(this.b);
    let seen = 0;
    if (this.peek() === CLOSE_OBJECT) throw UNREAD;
    for (;;) {
      this.key();
      const f = this.field();
      const c = this.peek();
      switch (f) {
        case 0:
          l.address = this.repeated(SLOT_ADDRESS);
          break;
        case 1:
          l.topics = this.strings();
          break;
        case 2:
          l.dataStart = this.stringStart();
          l.dataEnd = this.i - 1;
          break;
        case 3:
          l.blockNumber = this.repeated(SLOT_BLOCK_NUMBER);
          break;
        case 4:
          l.blockHash = this.repeated(SLOT_BLOCK_HASH);
          break;
        case 5:
          l.transactionHash = this.repeated(SLOT_TX_HASH);
          break;
        case 6:
          l.transactionIndex = this.repeated(SLOT_TX_INDEX);
          break;
        case 7:
          l.indexStart = this.stringStart();
          l.indexEnd = this.i - 1;
          l.index = this.quantity(l.indexStart, l.indexEnd);
          break;
        case 8:
          if (c !== 0x74 && c !== 0x66) throw UNREAD; // true, false
          l.removed = this.scalar() === true;
          break;
        case 9:
          l.blockTimestamp = this.repeated(SLOT_BLOCK_TIME);
          break;
        default:
          this.scalar();
      }
      if (f >= 0) seen |= 1 << f;
      const n = this.next();
      if (n === CLOSE_OBJECT) break;
      if (n !== COMMA) throw UNREAD;
    }
    if ((seen & REQUIRED) !== REQUIRED) throw UNREAD;
    return l;
  }

  /** The index in FIELDS of the last key read, -1 for another key. */
  private field(): number {
    for (let f = 0; f < KEYS.length; f++) if (this.keyIs(KEYS[f]!)) return f;
    return -1;
  }

  private keyIs(key: Buffer): boolean {
    const k0 = this.k0;
    if (this.k1 - k0 !== key.length) return false;
    const b = this.b;
    for (let j = 0; j < key.length; j++) if (b[k0 + j] !== key[j]) return false;
    return true;
  }

  /** A key and its colon (its bounds kept in k0, k1). */
  private key(): void {
    if (this.next() !== QUOTE) throw UNREAD;
    this.k0 = this.i;
    this.k1 = this.stringEnd();
    this.i = this.k1 + 1;
    if (this.next() !== COLON) throw UNREAD;
  }

  /** The index of the quote closing the string that starts at i (the answer holds no escapes). */
  private stringEnd(): number {
    const end = this.b.indexOf(QUOTE, this.i);
    if (end < 0) throw UNREAD;
    return end;
  }

  private string(): string {
    const start = this.stringStart();
    return this.b.latin1Slice(start, this.i - 1);
  }

  /** The number a quantity's text spells (`0x` and up to 13 hex digits read here, anything else by hexNumber). */
  private quantity(start: number, end: number): number {
    const b = this.b;
    if (end - start < 3 || end - start > 15 || b[start] !== 0x30 || (b[start + 1]! | 32) !== 0x78) return hexNumber(b.latin1Slice(start, end));
    let v = 0;
    for (let j = start + 2; j < end; j++) {
      const c = b[j]! | 32;
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) return hexNumber(b.latin1Slice(start, end));
      v = v * 16 + d;
    }
    return v;
  }

  /** Skips a string, returning where its text starts (it ends before the quote at i - 1). */
  private stringStart(): number {
    if (this.next() !== QUOTE) throw UNREAD;
    const start = this.i;
    this.i = this.stringEnd() + 1;
    return start;
  }

  /**
   * A string of a field that mostly repeats: the last one of `slot` when its bytes are the same, or
   * the one before it (fields that alternate: a Balancer swap's tokens in and out, two pools' logs in turn).
   */
  private repeated(slot: number): string {
    const start = this.stringStart();
    const end = this.i - 1;
    if (this.same(start, end, slot)) return this.lastText[slot]!;
    const before = slot + SLOTS;
    const text = this.same(start, end, before) ? this.lastText[before]! : this.b.latin1Slice(start, end);
    // The last one becomes the one before.
    this.lastStart[before] = this.lastStart[slot]!;
    this.lastEnd[before] = this.lastEnd[slot]!;
    this.lastText[before] = this.lastText[slot]!;
    this.lastStart[slot] = start;
    this.lastEnd[slot] = end;
    this.lastText[slot] = text;
    return text;
  }

  /** Whether the string at [start, end) has the bytes of the one kept in `slot`. */
  private same(start: number, end: number, slot: number): boolean {
    const lastStart = this.lastStart[slot]!;
    if (end - start !== this.lastEnd[slot]! - lastStart) return false;
    const b = this.b;
    let j = end - start - 1;
    // From the end: hashes and numbers differ in their last digits first.
    while (j >= 0 && b[start + j] === b[lastStart + j]) j--;
    return j < 0;
  }

  private strings(): string[] {
    this.expect(OPEN_ARRAY);
    const out: string[] = [];
    if (this.peek() === CLOSE_ARRAY) {
      this.i++;
      return out;
    }
    for (;;) {
      // Topics: the event's signature, and indexed fields that repeat (a router, a pool's sender).
      const n = out.length;
      out.push(n < MAX_TOPICS ? this.repeated(SLOT_TOPIC + n) : this.string());
      const c = this.next();
      if (c === CLOSE_ARRAY) return out;
      if (c !== COMMA) throw UNREAD;
    }
  }

  /** A string, number, true, false or null (skipped; booleans returned); anything else is not read here. */
  private scalar(): boolean | null {
    const c = this.peek();
    if (c === QUOTE) {
      this.i++;
      this.i = this.stringEnd() + 1;
      return null;
    }
    const b = this.b;
    if (c === 0x74 && b[this.i + 1] === 0x72 && b[this.i + 2] === 0x75 && b[this.i + 3] === 0x65) {
      this.i += 4;
      return true;
    }
    if (c === 0x66 && b[this.i + 1] === 0x61 && b[this.i + 2] === 0x6c && b[this.i + 3] === 0x73 && b[this.i + 4] === 0x65) {
      this.i += 5;
      return false;
    }
    if (c === 0x6e && b[this.i + 1] === 0x75 && b[this.i + 2] === 0x6c && b[this.i + 3] === 0x6c) {
      this.i += 4;
      return null;
    }
    // A number: sign, digits, fraction, exponent.
    const start = this.i;
    let j = start;
    for (; j < b.length; j++) {
      const d = b[j]!;
      if (!((d >= 0x30 && d <= 0x39) || d === 0x2d || d === 0x2b || d === 0x2e || d === 0x65 || d === 0x45)) break;
    }
    if (j === start) throw UNREAD;
    this.i = j;
    return null;
  }

  private skipSpace(): void {
    const b = this.b;
    let i = this.i;
    while (i < b.length && isSpace(b[i]!)) i++;
    this.i = i;
  }

  /** The next byte that is not white space, without taking it; -1 at the end. */
  private peek(): number {
    this.skipSpace();
    return this.i < this.b.length ? this.b[this.i]! : -1;
  }

  /** Takes the next byte that is not white space; -1 at the end. */
  private next(): number {
    this.skipSpace();
    return this.i < this.b.length ? this.b[this.i++]! : -1;
  }

  private expect(c: number): void {
    if (this.next() !== c) throw UNREAD;
  }
}
