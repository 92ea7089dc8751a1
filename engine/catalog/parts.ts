/**
 * The catalog's typed arrays, declared once: allocation, attaching on another thread, growth and
 * the export sections all derive from PARTS. Every part is written by the catalog's writer (ingest,
 * on the main thread) and may be read from any thread: a row is complete before the id is published
 * (its state byte, the lists, the counts), and the writer never rewrites a published address or text.
 */

/** What one element of a part belongs to, and so how many rows it has. */
export type PartScope = 'pool' | 'token' | 'chain' | 'heap' | 'fixed';

type PartCtor = Uint8ArrayConstructor | Uint16ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor | Float64ArrayConstructor;

export interface PartSpec {
  readonly name: PartName;
  readonly ctor: PartCtor;
  readonly scope: PartScope;
  /** Elements per row (the length of a `fixed` part). */
  readonly stride: number;
  /**
   * Rows below the bound (heap: bytes below HeapUsed) are written once, when their id (or text) is
   * made, and never again while the process runs (a rollback changes state bytes and links only):
   * an export may hand them out as views of the shared memory instead of copies.
   */
  readonly appendOnly: boolean;
}

/** The parts, with what an element means. Lists are linked through ids plus one: 0 ends a list. */
export const PARTS = [
  // Pool p's address: the 20 bytes of its EVM address, or (flag AddressInHeap of its state) the heap
  // offset of its exact text in the first 4 bytes (little-endian).
  { name: 'poolAddr', ctor: Uint8Array, scope: 'pool', stride: 20, appendOnly: true },
  // PoolState of pool p, with its flags.
  { name: 'poolState', ctor: Uint8Array, scope: 'pool', stride: 1, appendOnly: false },
  // The next pool of p's token 0, and of its token 1, in creation order (id + 1; 0 at the end).
  { name: 'poolNextOf0', ctor: Int32Array, scope: 'pool', stride: 1, appendOnly: false },
  { name: 'poolNextOf1', ctor: Int32Array, scope: 'pool', stride: 1, appendOnly: false },
  // Token t's address, as for pools.
  { name: 'tokenAddr', ctor: Uint8Array, scope: 'token', stride: 20, appendOnly: true },
  // TokenState of token t (its state and flags).
  { name: 'tokenState', ctor: Uint8Array, scope: 'token', stride: 1, appendOnly: false },
  // Heap offset of token t's name, symbol and total supply, one after the other (the supply as catalog.ts encodeSupply keeps it).
  { name: 'tokenText', ctor: Uint32Array, scope: 'token', stride: 1, appendOnly: true },
  // Unix seconds (a block timestamp: whole, u32) when token t was first seen.
  { name: 'tokenAddedAt', ctor: Uint32Array, scope: 'token', stride: 1, appendOnly: true },
  // First and last pool of token t (id + 1; 0: none) and how many pools it has.
  { name: 'tokenFirstPool', ctor: Int32Array, scope: 'token', stride: 1, appendOnly: false },
  { name: 'tokenLastPool', ctor: Int32Array, scope: 'token', stride: 1, appendOnly: false },
  { name: 'tokenPoolCount', ctor: Int32Array, scope: 'token', stride: 1, appendOnly: false },
  // How many live pools chain c has (its pools are the ids of its id blocks: catalog.ts chainPoolFrom).
  { name: 'chainPoolCount', ctor: Int32Array, scope: 'chain', stride: 1, appendOnly: false },
  // Texts: each a LEB128 length, then that many UTF-8 bytes. Offset 0 is never a text.
  { name: 'heap', ctor: Uint8Array, scope: 'heap', stride: 1, appendOnly: true },
  // Count words (Count): published with Atomics after the rows they announce are written.
  { name: 'counts', ctor: Uint32Array, scope: 'fixed', stride: 8, appendOnly: false },
] as const satisfies readonly { name: string; ctor: PartCtor; scope: PartScope; stride: number; appendOnly: boolean }[];

export type PartName = (typeof PARTS)[number]['name'];

/** Words of the `counts` part. */
export const enum Count {
  /** One past the highest pool id handed out (ids below may be gaps). */
  PoolBound = 0,
  TokenBound = 1,
  /** Pools and tokens live (created, not taken out by a rollback). */
  Pools = 2,
  Tokens = 3,
  /** Bytes of the heap in use. */
  HeapUsed = 4,
  /** Rows allocated for pools, for tokens, and heap bytes: a reader re-views its arrays when they grew. */
  PoolRows = 5,
  TokenRows = 6,
  HeapBytes = 7,
}

export const enum PoolState {
  None = 0,
  Live = 1,
  /** Taken out of every lookup by a rollback; the address stays readable for holders of the id. */
  Removed = 2,
  /** The bits above: None, Live or Removed. */
  Mask = 3,
}

/** Flag of a pool's and a token's state: its address is a heap text, not EVM bytes (parts poolAddr, tokenAddr). */
export const ADDRESS_IN_HEAP = 8;

export const enum TokenState {
  None = 0,
  Live = 1,
  Removed = 2,
  /** The bits above: None, Live or Removed. */
  Mask = 3,
  /** Flag: the name or symbol holds non-ASCII text (search folds its case through a decoded string). */
  NonAscii = 4,
  // 8: ADDRESS_IN_HEAP (above).
}

export type PartArrays = { -readonly [K in PartName]: InstanceType<Extract<(typeof PARTS)[number], { name: K }>['ctor']> };
