/**
 * Catalog exports of version 1, as snapshots written before version 2 keep them, converted into this
 * version's sections when such a snapshot loads (a start whose log is pruned behind its snapshots has
 * nothing else to start from). What version 2 changed:
 *  - an address kept as a heap text (not EVM bytes): version 1 held its heap offset in a part of its
 *    own per row (`poolAddrRef`, `tokenAddrRef`); version 2 in the row's first 4 address bytes, with
 *    the state flag ADDRESS_IN_HEAP;
 *  - a token's total supply: version 1 its decimal digits as a text, version 2 encodeSupply's bytes;
 *  - `tokenAddedAt`: f64, now u32 (block timestamps, whole seconds);
 *  - a chain's pools: version 1 linked them (`poolNextInChain`, `chainFirstPool`, `chainLastPool`),
 *    version 2 walks its id blocks: the links are left out;
 *  - address tables: a version 1 slot holds id + 1 without a tag, as a table of 31 id bits does:
 *    adopted as such, which places every id again with its tag.
 * The heap is written anew: per known token its name, symbol and supply, per address kept as text
 * that text (readers find texts by offset only, so the order is free).
 */
import { EVM_ADDRESS_BYTES } from './address.js';
import { CATALOG_EXPORT_VERSION, encodeSupply, leb128Length, writeLeb128, type CatalogMeta, type CatalogSectionReader } from './catalog.js';
import { ADDRESS_IN_HEAP, Count, PoolState, TokenState } from './parts.js';

/** The parts of version 1 as a snapshot's table hash covers them: name, bytes per element, scope, stride. */
export const PARTS_V1: readonly (readonly [string, number, string, number])[] = [
  ['poolAddr', 1, 'pool', 20],
  ['poolAddrRef', 4, 'pool', 1],
  ['poolState', 1, 'pool', 1],
  ['poolNextInChain', 4, 'pool', 1],
  ['poolNextOf0', 4, 'pool', 1],
  ['poolNextOf1', 4, 'pool', 1],
  ['tokenAddr', 1, 'token', 20],
  ['tokenAddrRef', 4, 'token', 1],
  ['tokenState', 1, 'token', 1],
  ['tokenText', 4, 'token', 1],
  ['tokenAddedAt', 8, 'token', 1],
  ['tokenFirstPool', 4, 'token', 1],
  ['tokenLastPool', 4, 'token', 1],
  ['tokenPoolCount', 4, 'token', 1],
  ['chainFirstPool', 4, 'chain', 1],
  ['chainLastPool', 4, 'chain', 1],
  ['chainPoolCount', 4, 'chain', 1],
  ['heap', 1, 'heap', 1],
  ['counts', 4, 'fixed', 8],
];

export const CATALOG_V1 = 1;

/** Version 1 sections version 2 has no part for. */
const LEFT_OUT = new Set(['poolAddrRef', 'tokenAddrRef', 'poolNextInChain', 'chainFirstPool', 'chainLastPool']);

/** A version 1 export as version 2: its meta, and a reader of its sections (`converted` ones in memory, the others read through). */
export interface ConvertedCatalog {
  readonly meta: CatalogMeta;
  readonly sections: CatalogSectionReader;
  /** Sections made here (the rest are the file's as they are). */
  readonly converted: ReadonlySet<string>;
}

/** Converts a version 1 export (`meta`, sections read from `file`) into version 2. */
export function convertCatalogV1(meta: CatalogMeta, file: CatalogSectionReader): ConvertedCatalog {
  if (meta.version !== CATALOG_V1) throw new Error(`catalog export version ${meta.version} is not ${CATALOG_V1}`);
  const read = (name: string): Uint8Array => {
    const into = new Uint8Array(file.bytes(name));
    file.read(name, into);
    return into;
  };
  const u32 = (b: Uint8Array) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const countBytes = read('counts');
  const counts = u32(countBytes);
  const poolBound = counts[Count.PoolBound]!;
  const tokenBound = counts[Count.TokenBound]!;
  const poolAddr = read('poolAddr');
  const poolAddrRef = u32(read('poolAddrRef'));
  const poolState = read('poolState');
  const tokenAddr = read('tokenAddr');
  const tokenAddrRef = u32(read('tokenAddrRef'));
  const tokenState = read('tokenState');
  const tokenText = u32(read('tokenText'));
  const addedAtBytes = read('tokenAddedAt');
  const addedAt = new Float64Array(addedAtBytes.buffer, addedAtBytes.byteOffset, addedAtBytes.byteLength / 8);
  const old = read('heap');
  if (poolAddr.length < poolBound * EVM_ADDRESS_BYTES || tokenText.length < tokenBound || addedAt.length < tokenBound) throw new Error('catalog export version 1: parts shorter than its id bounds');

  const heap = new HeapWriter(old.length);
  const addedAtNow = new Uint32Array(tokenBound);
  /** Puts row `id`'s address text (version 1: at heap offset `ref`) into the new heap and its offset into the row's address bytes. */
  const moveAddress = (bytes: Uint8Array, state: Uint8Array, id: number, ref: number) => {
    const [from0, end0] = textSpan(old, ref);
    const at = heap.append(old.subarray(from0, end0));
    const from = id * EVM_ADDRESS_BYTES;
    bytes.fill(0, from, from + EVM_ADDRESS_BYTES);
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(from, at, true);
    state[id] = state[id]! | ADDRESS_IN_HEAP;
  };
  for (let t = 0; t < tokenBound; t++) {
    if ((tokenState[t]! & TokenState.Mask) === TokenState.None) continue;
    // Name, symbol and supply, one after the other.
    const [nameFrom, nameEnd] = textSpan(old, tokenText[t]!);
    const [symbolFrom, symbolEnd] = textSpan(old, nameEnd);
    const [supplyFrom, supplyEnd] = textSpan(old, symbolEnd);
    tokenText[t] = heap.append(old.subarray(nameFrom, nameEnd));
    heap.append(old.subarray(symbolFrom, symbolEnd));
    heap.append(encodeSupply(Buffer.from(old.buffer, old.byteOffset + supplyFrom, supplyEnd - supplyFrom).toString('utf8')));
    const at = addedAt[t]!;
    addedAtNow[t] = at;
    if (addedAtNow[t] !== at) throw new Error(`catalog export version 1: token ${t} first seen at ${at}, not a whole u32 second`);
    if (tokenAddrRef[t] !== 0) moveAddress(tokenAddr, tokenState, t, tokenAddrRef[t]!);
  }
  for (let p = 0; p < poolBound; p++) {
    if ((poolState[p]! & PoolState.Mask) === PoolState.None) continue;
    if (poolAddrRef[p] !== 0) moveAddress(poolAddr, poolState, p, poolAddrRef[p]!);
  }
  counts[Count.HeapUsed] = heap.used;

  const converted = new Map<string, Uint8Array>([
    ['counts', countBytes],
    ['poolAddr', poolAddr],
    ['poolState', poolState],
    ['tokenAddr', tokenAddr],
    ['tokenState', tokenState],
    ['tokenText', new Uint8Array(tokenText.buffer, tokenText.byteOffset, tokenText.byteLength)],
    ['tokenAddedAt', new Uint8Array(addedAtNow.buffer)],
    ['heap', heap.bytes()],
  ]);
  return {
    // Version 1 slots are tagless ids + 1: a table of 31 id bits (catalog.ts AddressTable.adopt places them again).
    meta: { ...meta, version: CATALOG_EXPORT_VERSION, poolSlotIdBits: 31, tokenSlotIdBits: 31 },
    converted: new Set(converted.keys()),
    sections: {
      has: (name) => converted.has(name) || (!LEFT_OUT.has(name) && file.has(name)),
      bytes: (name) => converted.get(name)?.byteLength ?? file.bytes(name),
      read: (name, into) => {
        const b = converted.get(name);
        if (b === undefined) file.read(name, into);
        else into.set(b);
      },
    },
  };
}

/** Where the bytes of the heap text at `at` (a LEB128 length, then the bytes) start and end. */
function textSpan(heap: Uint8Array, at: number): [number, number] {
  let n = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    if (i >= heap.length) throw new Error(`catalog export version 1: heap text at ${at} runs past the heap`);
    const b = heap[i++]!;
    n += (b & 127) * 2 ** shift;
    if (b < 128) break;
    shift += 7;
  }
  if (i + n > heap.length) throw new Error(`catalog export version 1: heap text at ${at} runs past the heap`);
  return [i, i + n];
}

/** A heap written from offset 1 (offset 0 is never a text): texts behind their LEB128 lengths. */
class HeapWriter {
  private buf: Uint8Array;
  used = 1;
  constructor(bytes: number) {
    this.buf = new Uint8Array(Math.max(16, bytes));
  }

  append(text: Uint8Array): number {
    const at = this.used;
    const lengthBytes = leb128Length(text.length);
    const need = at + lengthBytes + text.length;
    if (need > this.buf.length) {
      const grown = new Uint8Array(Math.max(need, 2 * this.buf.length));
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
    }
    writeLeb128(this.buf, at, text.length);
    this.buf.set(text, at + lengthBytes);
    this.used = need;
    return at;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }
}
