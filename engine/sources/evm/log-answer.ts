/**
 * An `eth_getLogs` answer read straight from the response bytes: the logs' fields are cut out of
 * the buffer as they are, without turning the whole answer (megabytes while backfilling) into one
 * string first and parsing that. Only the shape nodes send is read here: an object whose `result`
 * is an array of flat log objects of ASCII strings without escapes, string arrays, booleans and
 * numbers. Anything else (an error answer, `null` fields of pending logs, escapes, nested objects,
 * non-ASCII bytes, a missing field) returns null, and the caller parses the answer as JSON.
 */
import { isAscii } from 'node:buffer';
import type { RpcLog } from './words.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** The log fields kept, by key; the bit each sets in a log's `seen` mask. */
const FIELDS = ['address', 'topics', 'data', 'blockNumber', 'blockHash', 'transactionHash', 'transactionIndex', 'logIndex', 'removed'] as const;
const KEYS = FIELDS.map((f) => Buffer.from(f, 'latin1'));
/** Every field but `removed` (absent: not removed) must be there. */
const REQUIRED = (1 << FIELDS.length) - 1 - (1 << FIELDS.indexOf('removed'));
const RESULT = Buffer.from('result', 'latin1');

/** Fields whose strings are kept to be given again when the next log repeats them (Reader.repeated): slots. */
const SLOT_ADDRESS = 0;
const SLOT_BLOCK_NUMBER = 1;
const SLOT_BLOCK_HASH = 2;
const SLOT_TX_HASH = 3;
const SLOT_TX_INDEX = 4;
/** Topic i (an EVM log has at most four) in slot SLOT_TOPIC + i. */
const SLOT_TOPIC = 5;
const MAX_TOPICS = 4;
const SLOTS = SLOT_TOPIC + MAX_TOPICS;

/** A log under construction: the fields in the order of FIELDS. */
class Log implements RpcLog {
  address = '';
  topics: string[] = [];
  data = '';
  blockNumber = '';
  blockHash = '';
  transactionHash = '';
  transactionIndex = '';
  logIndex = '';
  removed = false;
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

/** Thrown (once, preallocated) when the answer is not of the shape read here. */
const UNREAD = new Error('not a plain eth_getLogs answer');

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
   */
  private readonly lastStart = new Int32Array(SLOTS);
  private readonly lastEnd = new Int32Array(SLOTS);
  private readonly lastText: string[] = new Array<string>(SLOTS).fill('');
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
    const l = new Log();
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
          l.data = this.string();
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
          l.logIndex = this.string();
          break;
        case 8:
          if (c !== 0x74 && c !== 0x66) throw UNREAD; // true, false
          l.removed = this.scalar() === true;
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
    if (this.next() !== QUOTE) throw UNREAD;
    const start = this.i;
    const end = this.stringEnd();
    this.i = end + 1;
    return this.b.latin1Slice(start, end);
  }

  /** A string of a field that mostly repeats: the last one of `slot` when its bytes are the same. */
  private repeated(slot: number): string {
    if (this.next() !== QUOTE) throw UNREAD;
    const start = this.i;
    const end = this.stringEnd();
    this.i = end + 1;
    const lastStart = this.lastStart[slot]!;
    if (end - start === this.lastEnd[slot]! - lastStart) {
      const b = this.b;
      let j = end - start - 1;
      // From the end: hashes and numbers differ in their last digits first.
      while (j >= 0 && b[start + j] === b[lastStart + j]) j--;
      if (j < 0) return this.lastText[slot]!;
    }
    const text = this.b.latin1Slice(start, end);
    this.lastStart[slot] = start;
    this.lastEnd[slot] = end;
    this.lastText[slot] = text;
    return text;
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
    for (; i < b.length; i++) {
      const c = b[i]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    }
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
