/**
 * The catalog: networks, DEXes, and every pool and token under a dense id, held compactly. Ingest
 * assigns a pool or token id the first time it sees the address, writes the static shared-memory
 * columns of the engine views, and keeps here what the views do not hold: addresses as bytes,
 * names, symbols and supplies in a UTF-8 heap, the pools of each chain and of each token as linked
 * id lists, and address -> id tables (open addressing). Records persist in LMDB with the batch that
 * created them, so ids are stable across restarts; `export` and `Catalog.import` move the whole
 * catalog as a few byte sections instead (a snapshot keeps them: a start `restore`s them, then
 * `loadSince` reads only the records made after).
 *
 * The arrays (parts.ts) live in growable SharedArrayBuffers: any thread can `attach` and read by id.
 * The address tables are the writer's own (plain typed arrays): look addresses up on its thread.
 */
import { PoolProtocol, type NetworkInfo, type PoolCreated, type TokenInfo } from '../events/model.js';
import { poolWeight, setPoolWeights } from '../state/reserve-price.js';
import type { EngineViews } from '../state/views.js';
import type { DexRecord, NetworkRecord, PoolRecord, Store, TokenRecord } from '../store/store.js';
import { AddressKey, EVM_ADDRESS_BYTES, KeyKind, chainHash, hashBytes, hexPrefixMatch, normalizeAddress } from './address.js';
import { ADDRESS_IN_HEAP, Count, PARTS, PoolState, TokenState, type PartArrays, type PartName, type PartSpec } from './parts.js';
import { adviseGrowableHugePages } from '../memory.js';

export { normalizeAddress } from './address.js';

export class CapacityError extends Error {
  override readonly name = 'CapacityError';
}

export interface NetworkEntry extends NetworkRecord {
  readonly dexes: DexRecord[];
}

/**
 * Ids are handed out in per-chain blocks of ID_BLOCK consecutive ids, so the pools (and tokens) that
 * share a cache line of any per-pool column belong to one chain and thus one writer thread: no two
 * shards ever write the same cache line. Ids are therefore dense per block, with gaps between. Within
 * a chain, ids grow in creation order (a chain's lists are in id order).
 */
export const ID_BLOCK = 64;

/** Rows (pools, tokens) and heap bytes a new catalog starts with; parts grow by doubling up to the views' capacity. */
export const CATALOG_INITIAL_ROWS = 4096;
const HEAP_MIN_BYTES = 1024;
const HEAP_INITIAL_BYTES_PER_ROW = 16;
/** Heap offsets are 32-bit. */
const HEAP_MAX_BYTES = 2 ** 32 - 1;
/** Heap bytes reserved (address space, not memory) per pool and token of capacity. */
const HEAP_RESERVE_BYTES_PER_ROW = 256;

interface AllocatorState {
  readonly next: number;
  /** Per chain: [chain, next id, end of its open block]. */
  readonly open: readonly (readonly [number, number, number])[];
}

class BlockAllocator {
  private next = 0;
  private readonly open = new Map<number, { at: number; end: number }>();
  constructor(private readonly capacity: number, private readonly what: string) {}

  allocate(chain: number): number {
    let block = this.open.get(chain);
    if (!block || block.at >= block.end) {
      if (this.next + ID_BLOCK > this.capacity) throw new CapacityError(`${this.what} capacity ${this.capacity} reached`);
      block = { at: this.next, end: this.next + ID_BLOCK };
      this.next += ID_BLOCK;
      this.open.set(chain, block);
    }
    return block.at++;
  }

  /** Re-learns the allocation state from an id restored from the store. */
  restore(chain: number, id: number): void {
    const start = id - (id % ID_BLOCK);
    if (start + ID_BLOCK > this.next) this.next = start + ID_BLOCK;
    const block = this.open.get(chain);
    if (!block || id >= block.at || start >= block.end) this.open.set(chain, { at: id + 1, end: start + ID_BLOCK });
  }

  /** One past the highest id handed out. */
  get bound(): number {
    return this.next;
  }

  save(): AllocatorState {
    return { next: this.next, open: [...this.open].map(([c, b]) => [c, b.at, b.end] as const) };
  }

  load(s: AllocatorState): void {
    this.next = s.next;
    this.open.clear();
    for (const [c, at, end] of s.open) this.open.set(c, { at, end });
  }
}

/**
 * Address -> id, open addressing with linear probing over an Int32Array. A slot holds 0 when empty,
 * -1 for a removed entry, else id + 1 in its low `idBits` bits with a few bits of the address's hash
 * above them (the tag), so a probe compares addresses only where the tag agrees (one in 2^tagBits
 * otherwise). At most three quarters of the slots are in use (removed ones count) before it doubles.
 */
class AddressTable {
  slots: Int32Array;
  private used = 0;
  /** Bits of id + 1 (enough for the capacity), and of the tag above them (the rest of 31). */
  readonly idBits: number;
  private readonly idMask: number;
  private readonly tagShift: number;

  constructor(
    slots: number,
    capacity: number,
    private readonly hashOf: (id: number) => number,
    private readonly matches: (id: number, chain: number, key: AddressKey) => boolean,
  ) {
    this.slots = new Int32Array(slots);
    this.idBits = 32 - Math.clz32(capacity + 1);
    this.idMask = this.idBits >= 31 ? 0x7fffffff : 2 ** this.idBits - 1;
    // A tag of 31 - idBits bits (none when ids take them all): the top of a second mix of the hash, so
    // not the bits the slot index comes from.
    this.tagShift = 32 - Math.max(0, 31 - this.idBits);
  }

  /** The slot value of `id` with the hash `h`. */
  private entry(id: number, h: number): number {
    const tag = this.tagShift >= 32 ? 0 : Math.imul(h, 0x9e3779b1) >>> this.tagShift;
    return (tag * (this.idMask + 1)) + id + 1;
  }

  find(chain: number, key: AddressKey): number {
    const s = this.slots;
    const mask = s.length - 1;
    const h = chainHash(key.hash, chain);
    const want = this.entry(0, h) - 1;
    const idMask = this.idMask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = s[i]!;
      if (v === 0) return -1;
      if (v > 0 && v - (v & idMask) === want) {
        const id = (v & idMask) - 1;
        if (this.matches(id, chain, key)) return id;
      }
    }
  }

  insert(id: number): void {
    if (4 * (this.used + 1) > 3 * this.slots.length) this.rehash(2 * this.slots.length);
    this.place(this.slots, id);
    this.used++;
  }

  remove(chain: number, key: AddressKey): void {
    const id = this.find(chain, key);
    if (id < 0) return;
    const s = this.slots;
    const mask = s.length - 1;
    for (let i = chainHash(key.hash, chain) & mask; ; i = (i + 1) & mask) {
      const v = s[i]!;
      if (v === 0) return;
      if (v > 0 && (v & this.idMask) === id + 1) {
        s[i] = -1;
        return;
      }
    }
  }

  /** Slots in use: ids and removed entries. */
  get inUse(): number {
    return this.used;
  }

  /**
   * Adopts exported slots (their ids' rows must be in place), `used` of them in use (counted when not
   * given), written by a table whose ids took `idBits` bits: placed again when that is not this one's.
   */
  adopt(slots: Int32Array, used: number | undefined, idBits: number): void {
    if (idBits !== this.idBits) {
      const mask = idBits >= 31 ? 0x7fffffff : 2 ** idBits - 1;
      const ids: number[] = [];
      for (const v of slots) if (v > 0) ids.push((v & mask) - 1);
      let size = this.slots.length;
      while (4 * ids.length > 3 * size) size *= 2;
      const s = new Int32Array(size);
      for (const id of ids) this.place(s, id);
      this.slots = s;
      this.used = ids.length;
      return;
    }
    this.slots = slots;
    if (used === undefined) {
      used = 0;
      for (let i = 0; i < slots.length; i++) if (slots[i] !== 0) used++;
    }
    this.used = used;
  }

  private place(s: Int32Array, id: number): void {
    const mask = s.length - 1;
    const h = this.hashOf(id);
    let i = h & mask;
    while (s[i]! > 0) i = (i + 1) & mask;
    s[i] = this.entry(id, h);
  }

  private rehash(size: number): void {
    const old = this.slots;
    const s = new Int32Array(size);
    let used = 0;
    const idMask = this.idMask;
    for (const v of old) {
      if (v <= 0) continue;
      this.place(s, (v & idMask) - 1);
      used++;
    }
    this.slots = s;
    this.used = used;
  }
}

/** What another thread needs to read a catalog (structured-clone safe). */
export interface CatalogBuffers {
  readonly parts: Readonly<Record<PartName, SharedArrayBuffer>>;
}

/** A catalog as byte sections (copies, unless exported with shareAppendOnly). */
export interface CatalogExport {
  /** JSON-safe: networks, DEXes, id allocation, bounds. */
  readonly meta: CatalogMeta;
  readonly sections: readonly { readonly name: string; readonly bytes: Uint8Array }[];
}

/** Where `Catalog.restore` reads sections from: a section's length, and its bytes into `into` (exactly that long). */
export interface CatalogSectionReader {
  has(name: string): boolean;
  bytes(name: string): number;
  read(name: string, into: Uint8Array): void;
}

/** A restore in two steps (Catalog.restoreInto): each section read into its bytes, then `finish`. */
export interface CatalogRestore {
  readonly reads: readonly { readonly name: string; readonly into: Uint8Array }[];
  finish(): void;
}

export interface CatalogMeta {
  readonly version: number;
  readonly networks: readonly NetworkRecord[];
  readonly dexes: readonly DexRecord[];
  readonly poolIds: AllocatorState;
  readonly tokenIds: AllocatorState;
  /** Slots in use (ids and removed entries) of the address tables (absent in older exports: counted on restore). */
  readonly poolSlotsUsed?: number;
  readonly tokenSlotsUsed?: number;
  /** Bits of id + 1 in a slot of each address table (a tag of the address's hash above them). */
  readonly poolSlotIdBits: number;
  readonly tokenSlotIdBits: number;
}

/** Version of the export's meta and sections (a snapshot's format hash covers it). */
export const CATALOG_EXPORT_VERSION = 2;
const EXPORT_VERSION = CATALOG_EXPORT_VERSION;
/** A character outside ASCII (its lower case may not be the ASCII folding). */
const NON_ASCII = /[^\u0000-\u007f]/;
const VIEW_SECTION = 'view:';

/** A total supply kept as the bytes of its integer (SupplyKind.Integer), else as its text. */
const enum SupplyKind {
  /** Big-endian bytes of a decimal integer without leading zeros (none for 0): 12 bytes for 28 digits. */
  Integer = 0,
  /** UTF-8 of a text that is not such an integer, kept exactly. */
  Text = 1,
}
const DECIMAL_INTEGER = /^(?:0|[1-9][0-9]*)$/;

/** A total supply as the catalog heap holds it: a SupplyKind byte, then the integer's bytes or the text. */
export function encodeSupply(supply: string): Uint8Array {
  if (!DECIMAL_INTEGER.test(supply)) {
    const text = new TextEncoder().encode(supply);
    const out = new Uint8Array(1 + text.length);
    out[0] = SupplyKind.Text;
    out.set(text, 1);
    return out;
  }
  const hex = supply === '0' ? '' : BigInt(supply).toString(16);
  const out = new Uint8Array(1 + ((hex.length + 1) >> 1));
  out[0] = SupplyKind.Integer;
  Buffer.from(out.buffer, 1).write(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
  return out;
}

/** The text encodeSupply was given. */
export function decodeSupply(bytes: Uint8Array): string {
  if (bytes[0] === SupplyKind.Text) return Buffer.from(bytes.buffer, bytes.byteOffset + 1, bytes.length - 1).toString('utf8');
  if (bytes.length <= 1) return '0';
  return BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset + 1, bytes.length - 1).toString('hex')}`).toString();
}

/** A search text prepared once per query: lower case, and its UTF-8 bytes. */
export class SearchText {
  readonly text: string;
  readonly bytes: Uint8Array;
  constructor(lower: string) {
    this.text = lower;
    this.bytes = new TextEncoder().encode(lower);
  }
}

/** Match levels of `Catalog.*Match`: whole text, prefix, elsewhere (name and symbol only). */
export const enum TextMatch {
  None = 0,
  Substring = 1,
  Prefix = 2,
  Exact = 3,
}

export class Catalog {
  readonly networks: NetworkEntry[] = [];
  readonly dexes: DexRecord[] = [];
  private readonly networkIndex = new Map<string, number>();
  private readonly dexIndex = new Map<string, number>();
  private readonly views: EngineViews;
  private readonly sabs: Record<PartName, SharedArrayBuffer>;
  private a!: PartArrays;
  /** A Buffer over the heap, for native UTF-8 and hex slices. */
  private heapText!: Buffer;
  private poolAddrText!: Buffer;
  private tokenAddrText!: Buffer;
  /** Rows each scope's arrays are viewed at (the writer's sizes; a reader's lag until refresh). */
  private poolRows = 0;
  private tokenRows = 0;
  private heapBytes = 0;
  private readonly poolIds: BlockAllocator;
  private readonly tokenIds: BlockAllocator;
  private readonly poolTable: AddressTable | null;
  private readonly tokenTable: AddressTable | null;
  private readonly key = new AddressKey();
  private readonly probe = new AddressKey();

  /**
   * A new, empty catalog writing the static columns of `views` (the writer). `initialRows`: rows and
   * heap bytes to start with, before growth.
   */
  constructor(views: EngineViews, initialRows: number = CATALOG_INITIAL_ROWS, attach?: CatalogBuffers) {
    this.views = views;
    this.poolIds = new BlockAllocator(views.capacity.pools, 'pool');
    this.tokenIds = new BlockAllocator(views.capacity.tokens, 'token');
    if (attach) {
      this.sabs = { ...attach.parts };
      this.poolTable = this.tokenTable = null;
      this.refresh();
      return;
    }
    const pools = Math.min(views.capacity.pools, Math.max(ID_BLOCK, initialRows));
    const tokens = Math.min(views.capacity.tokens, Math.max(ID_BLOCK, initialRows));
    const heapMax = Math.min(HEAP_MAX_BYTES, Math.max(HEAP_MIN_BYTES, (views.capacity.pools + views.capacity.tokens) * HEAP_RESERVE_BYTES_PER_ROW));
    const heap = Math.min(heapMax, Math.max(HEAP_MIN_BYTES, initialRows * HEAP_INITIAL_BYTES_PER_ROW));
    const sabs = {} as Record<PartName, SharedArrayBuffer>;
    for (const p of PARTS) {
      const row = p.ctor.BYTES_PER_ELEMENT * p.stride;
      if (p.scope === 'chain') sabs[p.name] = new SharedArrayBuffer(row * views.capacity.chains);
      else if (p.scope === 'fixed') sabs[p.name] = new SharedArrayBuffer(row);
      else {
        const [rows, max] = p.scope === 'pool' ? [pools, views.capacity.pools] : p.scope === 'token' ? [tokens, views.capacity.tokens] : [heap, heapMax];
        sabs[p.name] = growableBuffer(row * rows, row * max);
      }
    }
    this.sabs = sabs;
    // Before any part is written: the large ones (addresses, texts at millions of rows) fault in 2 MiB at a time as they grow.
    adviseGrowableHugePages(Object.values(sabs) as GrowableBuffer[]);
    const counts = new Uint32Array(sabs.counts);
    counts[Count.PoolRows] = pools;
    counts[Count.TokenRows] = tokens;
    counts[Count.HeapBytes] = heap;
    // Offset 0 of the heap is never a text (a zero reference means "not in the heap").
    counts[Count.HeapUsed] = 1;
    this.refresh();
    this.poolTable = new AddressTable(
      tableSlots(pools),
      views.capacity.pools,
      (id) => this.addressHash(this.a.poolAddr, this.a.poolState, id, this.views.poolChain[id]!),
      (id, chain, key) => this.sameAddress(this.a.poolAddr, this.a.poolState, id, key) && this.views.poolChain[id] === chain,
    );
    this.tokenTable = new AddressTable(
      tableSlots(tokens),
      views.capacity.tokens,
      (id) => this.addressHash(this.a.tokenAddr, this.a.tokenState, id, this.views.tokenChain[id]!),
      (id, chain, key) => this.sameAddress(this.a.tokenAddr, this.a.tokenState, id, key) && this.views.tokenChain[id] === chain,
    );
  }

  /** A reader of the catalog `buffers` on this thread (attach `views` from the same engine). */
  static attach(buffers: CatalogBuffers, views: EngineViews, networks: readonly NetworkRecord[] = [], dexes: readonly DexRecord[] = []): Catalog {
    const c = new Catalog(views, 0, buffers);
    for (const n of networks) c.addNetwork(n);
    for (const d of dexes) c.addDex(d);
    return c;
  }

  get buffers(): CatalogBuffers {
    return { parts: this.sabs };
  }

  /** Re-views every part at the sizes the writer published (a reader calls it when an id is past its view). */
  private refresh(): void {
    const counts = new Uint32Array(this.sabs.counts);
    this.poolRows = Atomics.load(counts, Count.PoolRows);
    this.tokenRows = Atomics.load(counts, Count.TokenRows);
    this.heapBytes = Atomics.load(counts, Count.HeapBytes);
    const a = {} as Record<PartName, unknown>;
    for (const p of PARTS) {
      const rows = p.scope === 'pool' ? this.poolRows : p.scope === 'token' ? this.tokenRows : p.scope === 'heap' ? this.heapBytes : -1;
      const View = p.ctor as unknown as new (buffer: SharedArrayBuffer, offset?: number, length?: number) => unknown;
      const sab = this.sabs[p.name];
      a[p.name] = rows < 0 ? new View(sab) : new View(sab, 0, rows * p.stride);
    }
    this.a = a as PartArrays;
    this.heapText = Buffer.from(this.sabs.heap as unknown as ArrayBuffer, 0, this.heapBytes);
    this.poolAddrText = Buffer.from(this.sabs.poolAddr as unknown as ArrayBuffer, 0, this.poolRows * EVM_ADDRESS_BYTES);
    this.tokenAddrText = Buffer.from(this.sabs.tokenAddr as unknown as ArrayBuffer, 0, this.tokenRows * EVM_ADDRESS_BYTES);
  }

  /** Grows a scope's parts to hold `need` rows (heap: bytes), doubling. */
  private grow(scope: 'pool' | 'token' | 'heap', need: number): void {
    const have = scope === 'pool' ? this.poolRows : scope === 'token' ? this.tokenRows : this.heapBytes;
    if (need <= have) return;
    const max = scope === 'pool' ? this.views.capacity.pools : scope === 'token' ? this.views.capacity.tokens : (this.sabs.heap as GrowableBuffer).maxByteLength;
    if (need > max) throw new CapacityError(`catalog ${scope} capacity ${max} reached`);
    const rows = Math.min(max, Math.max(need, 2 * have));
    for (const p of PARTS as readonly PartSpec[]) if (p.scope === scope) (this.sabs[p.name] as GrowableBuffer).grow(rows * p.ctor.BYTES_PER_ELEMENT * p.stride);
    const counts = new Uint32Array(this.sabs.counts);
    Atomics.store(counts, scope === 'pool' ? Count.PoolRows : scope === 'token' ? Count.TokenRows : Count.HeapBytes, rows);
    this.refresh();
  }

  // ---- networks and DEXes ----

  networkOf(id: string): NetworkEntry | undefined {
    const i = this.networkIndex.get(id);
    return i === undefined ? undefined : this.networks[i];
  }

  dexOf(chain: number, dexId: string): DexRecord | undefined {
    const i = this.dexIndex.get(`${chain}:${dexId}`);
    return i === undefined ? undefined : this.dexes[i];
  }

  // ---- counts ----

  /** Pools live (ids have gaps: walk a chain's pools, or ids below poolBound with poolLive). */
  get poolCount(): number {
    return Atomics.load(this.a.counts, Count.Pools);
  }

  get tokenCount(): number {
    return Atomics.load(this.a.counts, Count.Tokens);
  }

  /** One past the highest pool id handed out. */
  get poolBound(): number {
    return Atomics.load(this.a.counts, Count.PoolBound);
  }

  get tokenBound(): number {
    return Atomics.load(this.a.counts, Count.TokenBound);
  }

  // ---- lookups by address (the writer's thread) ----

  /** Pool id of an address on a chain (EVM: any case), or -1. No allocation for EVM addresses. */
  poolId(chain: number, address: string): number {
    return this.poolTable!.find(chain, this.key.set(address));
  }

  tokenId(chain: number, address: string): number {
    return this.tokenTable!.find(chain, this.key.set(address));
  }

  // ---- pools by id ----

  /** Whether pool p was created (and not taken out by a rollback since). */
  poolLive(p: number): boolean {
    return p >= 0 && p < this.poolBound && this.poolStateOf(p) === PoolState.Live;
  }

  /** Whether id p names a pool at all (live, or taken out by a rollback: its address still reads). */
  poolKnown(p: number): boolean {
    return p >= 0 && p < this.poolBound && this.poolStateOf(p) !== PoolState.None;
  }

  private poolStateOf(p: number): number {
    if (p >= this.poolRows) this.refresh();
    return this.a.poolState[p]! & PoolState.Mask;
  }

  poolAddress(p: number): string {
    if (p >= this.poolRows) this.refresh();
    return this.addressText(this.poolAddrText, this.a.poolState, p);
  }

  /** How lower-case `q` matches pool p's address as rendered in lower case: Exact, Prefix or None. */
  poolAddressMatch(p: number, q: SearchText): TextMatch {
    return this.addressMatch(this.a.poolAddr, this.a.poolState, p, q);
  }

  poolChain(p: number): number {
    return this.views.poolChain[p]!;
  }

  poolDex(p: number): number {
    return this.views.poolDex[p]!;
  }

  poolToken0(p: number): number {
    return this.views.poolToken0[p]!;
  }

  poolToken1(p: number): number {
    return this.views.poolToken1[p]!;
  }

  /** The whole record of pool p, made on each call (for callers outside the hot paths). */
  pool(p: number): PoolRecord {
    const v = this.views;
    return {
      id: p,
      chain: v.poolChain[p]!,
      dex: v.poolDex[p]!,
      address: this.poolAddress(p),
      token0: v.poolToken0[p]!,
      token1: v.poolToken1[p]!,
      protocol: v.poolProtocol[p]!,
      feePpm: v.poolFeePpm[p]!,
      createdAt: v.poolCreatedAt[p]!,
      createdBlock: v.poolCreatedBlock[p]!,
      ...(v.poolProtocol[p] === PoolProtocol.Weighted ? { weights: [poolWeight(v, p, 0).toString(), poolWeight(v, p, 1).toString()] as const } : {}),
    };
  }

  // ---- tokens by id ----

  tokenLive(t: number): boolean {
    if (t < 0 || t >= this.tokenBound) return false;
    if (t >= this.tokenRows) this.refresh();
    return (this.a.tokenState[t]! & TokenState.Mask) === TokenState.Live;
  }

  tokenAddress(t: number): string {
    if (t >= this.tokenRows) this.refresh();
    return this.addressText(this.tokenAddrText, this.a.tokenState, t);
  }

  tokenName(t: number): string {
    return this.text(this.textAt(t));
  }

  tokenSymbol(t: number): string {
    return this.text(this.skip(this.textAt(t)));
  }

  /** Total supply, decimal digits of the raw integer. */
  tokenTotalSupply(t: number): string {
    const at = this.skip(this.skip(this.textAt(t)));
    if (at >= this.heapBytes) this.refresh();
    const from = this.textStart(at);
    if (this.textEnd > this.heapBytes) this.refresh();
    return decodeSupply(this.a.heap.subarray(from, this.textEnd));
  }

  tokenDecimals(t: number): number {
    return this.views.tokenDecimals[t]!;
  }

  tokenChain(t: number): number {
    return this.views.tokenChain[t]!;
  }

  tokenAddedAt(t: number): number {
    if (t >= this.tokenRows) this.refresh();
    return this.a.tokenAddedAt[t]!;
  }

  /** How lower-case `q` matches token t's lower-case symbol, name (Exact, Prefix, Substring) or address (Exact, Prefix): the best. */
  tokenMatch(t: number, q: SearchText): TextMatch {
    const name = this.textAt(t);
    const symbol = this.skip(name);
    const nonAscii = (this.a.tokenState[t]! & TokenState.NonAscii) !== 0;
    const bySymbol = this.textMatch(symbol, q, true, nonAscii);
    if (bySymbol === TextMatch.Exact) return bySymbol;
    const byName = this.textMatch(name, q, true, nonAscii);
    const byAddress = this.addressMatch(this.a.tokenAddr, this.a.tokenState, t, q);
    return Math.max(bySymbol, byName, byAddress) as TextMatch;
  }

  token(t: number): TokenRecord {
    const v = this.views;
    return {
      id: t,
      chain: v.tokenChain[t]!,
      address: this.tokenAddress(t),
      name: this.tokenName(t),
      symbol: this.tokenSymbol(t),
      decimals: v.tokenDecimals[t]!,
      totalSupply: this.tokenTotalSupply(t),
      role: v.tokenRole[t]!,
      addedAt: this.tokenAddedAt(t),
    };
  }

  // ---- lists: pools of a chain, pools of a token (creation order; walk with first/next, -1 ends) ----

  chainPoolCount(c: number): number {
    return this.a.chainPoolCount[c]!;
  }

  firstPoolOfChain(c: number): number {
    return this.chainPoolFrom(c, 0);
  }

  nextPoolOfChain(p: number): number {
    return this.chainPoolFrom(this.views.poolChain[p]!, p + 1);
  }

  /**
   * Chain c's first live pool from id `from` on, -1 when none. A chain's pools are the ids of its
   * blocks (ID_BLOCK ids handed out to one chain, in ascending order, so id order is creation order):
   * a block is c's when the first id of it handed out is, and the others are skipped whole.
   */
  private chainPoolFrom(c: number, from: number): number {
    const bound = this.poolBound;
    if (bound > this.poolRows) this.refresh();
    const state = this.a.poolState;
    const chain = this.views.poolChain;
    let q = from;
    while (q < bound) {
      const blockEnd = Math.min(bound, q - (q % ID_BLOCK) + ID_BLOCK);
      let owner = q - (q % ID_BLOCK);
      while (owner < blockEnd && (state[owner]! & PoolState.Mask) === PoolState.None) owner++;
      if (owner === blockEnd || chain[owner] !== c) {
        q = blockEnd;
        continue;
      }
      for (; q < blockEnd; q++) if ((state[q]! & PoolState.Mask) === PoolState.Live) return q;
    }
    return -1;
  }

  tokenPoolCount(t: number): number {
    if (t >= this.tokenRows) this.refresh();
    return this.a.tokenPoolCount[t]!;
  }

  firstPoolOfToken(t: number): number {
    if (t >= this.tokenRows) this.refresh();
    return this.a.tokenFirstPool[t]! - 1;
  }

  /** The pool after p in token t's list (p is one of t's pools). */
  nextPoolOfToken(t: number, p: number): number {
    if (p >= this.poolRows) this.refresh();
    return (this.views.poolToken0[p] === t ? this.a.poolNextOf0[p]! : this.a.poolNextOf1[p]!) - 1;
  }

  /** Token t's pools as a new array (for callers that keep it; walk the list on hot paths). */
  poolsOfToken(t: number): number[] {
    const out: number[] = [];
    for (let p = this.firstPoolOfToken(t); p >= 0; p = this.nextPoolOfToken(t, p)) out.push(p);
    return out;
  }

  poolsOfChain(c: number): number[] {
    const out: number[] = [];
    for (let p = this.firstPoolOfChain(c); p >= 0; p = this.nextPoolOfChain(p)) out.push(p);
    return out;
  }

  // ---- records by id, for callers that index or iterate them (taking snapshots, tests) ----

  /** Pools by id: an entry for every id ever created (removed ones included), undefined in gaps; fields read on access. */
  get pools(): readonly (PoolRecord | undefined)[] {
    return (this.poolList ??= recordList(() => this.poolBound, (p) => (this.poolKnown(p) ? new PoolEntry(this, p) : undefined)));
  }

  /** Tokens by id: an entry for every live token, undefined elsewhere; fields read on access. Hot loops use tokenLive. */
  get tokens(): readonly (TokenRecord | undefined)[] {
    return (this.tokenList ??= recordList(() => this.tokenBound, (t) => (this.tokenLive(t) ? new TokenEntry(this, t) : undefined)));
  }

  private poolList: readonly (PoolRecord | undefined)[] | undefined;
  private tokenList: readonly (TokenRecord | undefined)[] | undefined;

  // ---- writing (ingest) ----

  /** Loads networks, DEXes, pools and tokens persisted earlier (those not already held) and restores the static columns. */
  load(store: Store): void {
    for (const { value } of store.networks.getRange()) if (this.networks[value.index] === undefined) this.addNetwork(value);
    for (const { value } of store.dexes.getRange()) if (this.dexes[value.index] === undefined) this.addDex(value);
    for (const { value } of store.tokens.getRange()) if (!this.tokenKnown(value.id)) this.addToken(value);
    for (const { value } of store.pools.getRange()) if (!this.poolKnown(value.id)) this.addPool(value);
  }

  private tokenKnown(t: number): boolean {
    return t < this.tokenRows && (this.a.tokenState[t]! & TokenState.Mask) !== TokenState.None;
  }

  /** Registers the source's networks and DEXes that are new; returns the records to persist. */
  syncNetworks(infos: readonly NetworkInfo[]): { networks: NetworkRecord[]; dexes: DexRecord[] } {
    const out = { networks: [] as NetworkRecord[], dexes: [] as DexRecord[] };
    for (const info of infos) {
      let net = this.networkOf(info.id);
      if (!net) {
        if (this.networks.length >= this.views.capacity.chains) throw new CapacityError(`more than ${this.views.capacity.chains} networks`);
        const rec: NetworkRecord = { index: this.networks.length, id: info.id, displayName: info.displayName, blockTimeSeconds: info.blockTimeSeconds };
        net = this.addNetwork(rec);
        out.networks.push(rec);
      }
      for (const d of info.dexes) {
        if (this.dexOf(net.index, d.id)) continue;
        const rec: DexRecord = {
          index: this.dexes.length,
          chain: net.index,
          id: d.id,
          name: d.name,
          protocol: d.protocol,
          poolProtocol: d.poolProtocol,
          factory: d.factory,
        };
        this.addDex(rec);
        out.dexes.push(rec);
      }
    }
    return out;
  }

  /**
   * Assigns ids for a new pool and any new tokens; returns the records to persist with the batch.
   * Returns null when the pool is already known (a duplicate creation event).
   */
  createPool(chain: number, e: PoolCreated): { pool: PoolRecord; tokens: TokenRecord[] } | null {
    if (this.poolId(chain, e.pool) >= 0) return null;
    const dex = this.dexOf(chain, e.dexId);
    if (!dex) throw new Error(`pool ${e.pool} names unknown DEX ${e.dexId}`);
    const tokens: TokenRecord[] = [];
    const tokenId = (t: TokenInfo): number => {
      const known = this.tokenId(chain, t.address);
      if (known >= 0) return known;
      const rec: TokenRecord = {
        id: this.tokenIds.allocate(chain),
        chain,
        address: normalizeAddress(t.address),
        name: t.name,
        symbol: t.symbol,
        decimals: t.decimals,
        totalSupply: t.totalSupply.toString(),
        role: t.role,
        addedAt: e.timestamp,
      };
      this.addToken(rec);
      tokens.push(rec);
      return rec.id;
    };
    const pool: PoolRecord = {
      id: this.poolIds.allocate(chain),
      chain,
      dex: dex.index,
      address: normalizeAddress(e.pool),
      token0: tokenId(e.token0),
      token1: tokenId(e.token1),
      protocol: e.protocol,
      feePpm: e.feePpm,
      createdAt: e.timestamp,
      createdBlock: e.key.blockNumber,
      ...(e.weights ? { weights: [e.weights[0].toString(), e.weights[1].toString()] as const } : {}),
    };
    this.addPool(pool);
    return { pool, tokens };
  }

  /**
   * Takes pools and tokens out of every lookup and list after a rollback orphaned their creation.
   * A pool keeps its address at its id (readers holding the id still render it; poolLive says it is
   * gone); a token is gone for every reader (tokenLive). Ids are not handed out again by this process.
   */
  removePools(chain: number, pools: readonly number[], tokens: readonly number[]): void {
    if (pools.length === 0 && tokens.length === 0) return;
    const v = this.views;
    const a = this.a;
    const gone = new Set<number>();
    for (const p of pools) {
      if (!this.poolLive(p)) continue;
      gone.add(p);
      v.poolExists[p] = 0;
      a.poolState[p] = (a.poolState[p]! & ~PoolState.Mask) | PoolState.Removed;
      this.poolTable!.remove(chain, this.storedKey(a.poolAddr, a.poolState, p));
      Atomics.sub(a.counts, Count.Pools, 1);
    }
    if (gone.size > 0) {
      a.chainPoolCount[chain] = a.chainPoolCount[chain]! - gone.size;
      const touched = new Set<number>();
      for (const p of gone) touched.add(v.poolToken0[p]!).add(v.poolToken1[p]!);
      for (const t of touched) {
        const at = (p: number) => (v.poolToken0[p] === t ? a.poolNextOf0 : a.poolNextOf1);
        this.relink(a.tokenFirstPool, a.tokenLastPool, a.tokenPoolCount, t, gone, (p) => at(p)[p]! - 1, (p, next) => (at(p)[p] = next + 1));
      }
    }
    for (const t of tokens) {
      if (!this.tokenLive(t)) continue;
      this.tokenTable!.remove(chain, this.storedKey(a.tokenAddr, a.tokenState, t));
      a.tokenState[t] = (a.tokenState[t]! & ~TokenState.Mask) | TokenState.Removed;
      Atomics.sub(a.counts, Count.Tokens, 1);
    }
  }

  /** Rebuilds list `owner` (first/last/count arrays, next links) without the pools in `gone`. */
  private relink(first: Int32Array, last: Int32Array, count: Int32Array, owner: number, gone: ReadonlySet<number>, next: (p: number) => number, setNext: (p: number, next: number) => void): void {
    let prev = -1;
    let n = 0;
    for (let p = first[owner]! - 1; p >= 0; ) {
      const after = next(p);
      if (!gone.has(p)) {
        if (prev < 0) first[owner] = p + 1;
        else setNext(prev, p);
        prev = p;
        n++;
      }
      p = after;
    }
    if (prev < 0) first[owner] = 0;
    else setNext(prev, -1);
    last[owner] = prev + 1;
    count[owner] = n;
  }

  private addNetwork(rec: NetworkRecord): NetworkEntry {
    const entry: NetworkEntry = { ...rec, dexes: [] };
    this.networks[rec.index] = entry;
    this.networkIndex.set(rec.id, rec.index);
    return entry;
  }

  private addDex(rec: DexRecord): void {
    this.dexes[rec.index] = rec;
    this.dexIndex.set(`${rec.chain}:${rec.id}`, rec.index);
    this.networks[rec.chain]!.dexes.push(rec);
  }

  private addToken(rec: TokenRecord): void {
    const v = this.views;
    const t = rec.id;
    this.grow('token', t + 1);
    this.tokenIds.restore(rec.chain, t);
    v.tokenChain[t] = rec.chain;
    v.tokenDecimals[t] = rec.decimals;
    v.tokenRole[t] = rec.role;
    const a = this.a;
    const inHeap = this.storeAddress(a.tokenAddr, t, rec.address);
    const text = this.appendText(rec.name);
    this.appendText(rec.symbol);
    this.appendBytes(encodeSupply(rec.totalSupply));
    this.a.tokenText[t] = text;
    this.a.tokenAddedAt[t] = rec.addedAt;
    this.a.tokenState[t] = TokenState.Live | inHeap | (NON_ASCII.test(rec.name) || NON_ASCII.test(rec.symbol) ? TokenState.NonAscii : 0);
    this.tokenTable!.insert(t);
    this.bump(Count.TokenBound, this.tokenIds.bound);
    Atomics.add(this.a.counts, Count.Tokens, 1);
    Atomics.store(v.counts, 1, this.tokenIds.bound);
  }

  private addPool(rec: PoolRecord): void {
    const v = this.views;
    const p = rec.id;
    this.grow('pool', p + 1);
    this.poolIds.restore(rec.chain, p);
    v.poolChain[p] = rec.chain;
    v.poolDex[p] = rec.dex;
    v.poolToken0[p] = rec.token0;
    v.poolToken1[p] = rec.token1;
    v.poolDecimals0[p] = v.tokenDecimals[rec.token0]!;
    v.poolDecimals1[p] = v.tokenDecimals[rec.token1]!;
    v.poolProtocol[p] = rec.protocol;
    v.poolFeePpm[p] = rec.feePpm;
    if (rec.weights) setPoolWeights(v, p, BigInt(rec.weights[0]), BigInt(rec.weights[1]));
    v.poolCreatedAt[p] = rec.createdAt;
    v.poolCreatedBlock[p] = rec.createdBlock;
    v.poolExists[p] = 1;
    const a = this.a;
    a.poolState[p] = PoolState.Live | this.storeAddress(a.poolAddr, p, rec.address);
    // The lists take the pool last: a reader walking one finds its row complete.
    a.poolNextOf0[p] = a.poolNextOf1[p] = 0;
    a.chainPoolCount[rec.chain] = a.chainPoolCount[rec.chain]! + 1;
    for (const t of [rec.token0, rec.token1]) {
      this.append(a.tokenFirstPool, a.tokenLastPool, a.tokenPoolCount, t, p, (q) => ((v.poolToken0[q] === t ? a.poolNextOf0 : a.poolNextOf1)[q] = p + 1));
    }
    this.poolTable!.insert(p);
    this.bump(Count.PoolBound, this.poolIds.bound);
    Atomics.add(a.counts, Count.Pools, 1);
    Atomics.store(v.counts, 0, this.poolIds.bound);
  }

  private append(first: Int32Array, last: Int32Array, count: Int32Array, owner: number, p: number, link: (tail: number) => void): void {
    const tail = last[owner]! - 1;
    if (tail < 0) first[owner] = p + 1;
    else link(tail);
    last[owner] = p + 1;
    count[owner] = count[owner]! + 1;
  }

  private bump(word: Count, value: number): void {
    if (Atomics.load(this.a.counts, word) < value) Atomics.store(this.a.counts, word, value);
  }

  // ---- addresses and texts ----

  /** Writes an address into row `id` of `bytes` (EVM bytes, or a heap text's offset); the state flag to set with it. */
  private storeAddress(bytes: Uint8Array, id: number, address: string): number {
    const key = this.probe.set(address);
    if (key.kind === KeyKind.Evm) {
      bytes.set(key.bytes.subarray(0, EVM_ADDRESS_BYTES), id * EVM_ADDRESS_BYTES);
      return 0;
    }
    const at = this.appendText(normalizeAddress(address));
    const from = id * EVM_ADDRESS_BYTES;
    bytes[from] = at & 255;
    bytes[from + 1] = (at >>> 8) & 255;
    bytes[from + 2] = (at >>> 16) & 255;
    bytes[from + 3] = at >>> 24;
    return ADDRESS_IN_HEAP;
  }

  /** The heap offset of row `id`'s address text, 0 when the row holds EVM bytes. */
  private addressRef(bytes: Uint8Array, state: Uint8Array, id: number): number {
    if ((state[id]! & ADDRESS_IN_HEAP) === 0) return 0;
    const from = id * EVM_ADDRESS_BYTES;
    return (bytes[from]! | (bytes[from + 1]! << 8) | (bytes[from + 2]! << 16)) + bytes[from + 3]! * 2 ** 24;
  }

  private addressText(text: Buffer, state: Uint8Array, id: number): string {
    const at = this.addressRef(text, state, id);
    if (at !== 0) return this.text(at);
    const from = id * EVM_ADDRESS_BYTES;
    return `0x${text.toString('hex', from, from + EVM_ADDRESS_BYTES)}`;
  }

  /** The key of a stored address (for removal from a table). */
  private storedKey(bytes: Uint8Array, state: Uint8Array, id: number): AddressKey {
    return this.probe.set(this.addressText(bytes === this.a.poolAddr ? this.poolAddrText : this.tokenAddrText, state, id));
  }

  private addressHash(bytes: Uint8Array, state: Uint8Array, id: number, chain: number): number {
    const at = this.addressRef(bytes, state, id);
    if (at === 0) return chainHash(hashBytes(bytes, id * EVM_ADDRESS_BYTES, (id + 1) * EVM_ADDRESS_BYTES, KeyKind.Evm), chain);
    const from = this.textStart(at);
    return chainHash(hashBytes(this.a.heap, from, this.textEnd, KeyKind.Text), chain);
  }

  private sameAddress(bytes: Uint8Array, state: Uint8Array, id: number, key: AddressKey): boolean {
    const at = this.addressRef(bytes, state, id);
    const k = key.bytes;
    if (at === 0) {
      if (key.kind !== KeyKind.Evm) return false;
      const from = id * EVM_ADDRESS_BYTES;
      for (let i = 0; i < EVM_ADDRESS_BYTES; i++) if (bytes[from + i] !== k[i]) return false;
      return true;
    }
    if (key.kind !== KeyKind.Text) return false;
    const from = this.textStart(at);
    if (this.textEnd - from !== key.length) return false;
    const heap = this.a.heap;
    for (let i = 0; i < key.length; i++) if (heap[from + i] !== k[i]) return false;
    return true;
  }

  private addressMatch(bytes: Uint8Array, state: Uint8Array, id: number, q: SearchText): TextMatch {
    const at = this.addressRef(bytes, state, id);
    if (at === 0) {
      const m = hexPrefixMatch(bytes, id * EVM_ADDRESS_BYTES, q.text);
      return m === 2 ? TextMatch.Exact : m === 1 ? TextMatch.Prefix : TextMatch.None;
    }
    return this.textMatch(at, q, false, false);
  }

  /**
   * How `q` matches the heap text at `at` folded to lower case, as `text.toLowerCase()` would: ASCII
   * byte by byte, through a decoded string once a compared byte is not ASCII (or at once when
   * `nonAscii` says the text holds such bytes). Without `substring`, exact or prefix only.
   */
  private textMatch(at: number, q: SearchText, substring: boolean, nonAscii: boolean): TextMatch {
    const from = this.textStart(at);
    const to = this.textEnd;
    if (nonAscii) return this.decodedMatch(from, to, q, substring);
    const heap = this.a.heap;
    const qb = q.bytes;
    const qn = qb.length;
    const last = substring ? to - qn : Math.min(from, to - qn);
    search: for (let s = from; s <= last; s++) {
      for (let k = 0; k < qn; k++) {
        let b = heap[s + k]!;
        if (b >= 128) return this.decodedMatch(from, to, q, substring);
        if (b >= 65 && b <= 90) b |= 32;
        if (b !== qb[k]) continue search;
      }
      return s > from ? TextMatch.Substring : to - from === qn ? TextMatch.Exact : TextMatch.Prefix;
    }
    return TextMatch.None;
  }

  private decodedMatch(from: number, to: number, q: SearchText, substring: boolean): TextMatch {
    const text = this.heapText.toString('utf8', from, to).toLowerCase();
    if (text === q.text) return TextMatch.Exact;
    const k = text.indexOf(q.text);
    return k === 0 ? TextMatch.Prefix : k > 0 && substring ? TextMatch.Substring : TextMatch.None;
  }

  private textAt(t: number): number {
    if (t >= this.tokenRows) this.refresh();
    return this.a.tokenText[t]!;
  }

  /** Appends a text to the heap; returns its offset. */
  private appendText(s: string): number {
    const used = Atomics.load(this.a.counts, Count.HeapUsed);
    const most = 5 + 3 * s.length;
    this.grow('heap', used + most);
    const heap = this.a.heap;
    const start = used + leb128Length(3 * s.length);
    const written = encoderInto(s, heap.subarray(start, start + 3 * s.length));
    // Write the true length before the text (shifting the text when its length takes fewer bytes).
    const lengthBytes = leb128Length(written);
    const textAt = used + lengthBytes;
    if (textAt !== start) heap.copyWithin(textAt, start, start + written);
    writeLeb128(heap, used, written);
    Atomics.store(this.a.counts, Count.HeapUsed, textAt + written);
    return used;
  }

  /** Appends bytes to the heap behind their LEB128 length, as a text; returns the offset. */
  private appendBytes(bytes: Uint8Array): number {
    const used = Atomics.load(this.a.counts, Count.HeapUsed);
    const lengthBytes = leb128Length(bytes.length);
    this.grow('heap', used + lengthBytes + bytes.length);
    const heap = this.a.heap;
    writeLeb128(heap, used, bytes.length);
    heap.set(bytes, used + lengthBytes);
    Atomics.store(this.a.counts, Count.HeapUsed, used + lengthBytes + bytes.length);
    return used;
  }

  /** End of the text textStart read last. */
  private textEnd = 0;

  /** Where the bytes of the text at heap offset `at` start (past its length); sets textEnd. */
  private textStart(at: number): number {
    const heap = this.a.heap;
    let n = 0;
    let shift = 0;
    let i = at;
    for (;;) {
      const b = heap[i++]!;
      n += (b & 127) * 2 ** shift;
      if (b < 128) break;
      shift += 7;
    }
    this.textEnd = i + n;
    return i;
  }

  private text(at: number): string {
    if (at >= this.heapBytes) this.refresh();
    const from = this.textStart(at);
    if (this.textEnd > this.heapBytes) this.refresh();
    return this.heapText.toString('utf8', from, this.textEnd);
  }

  /** The offset after the text at `at`. */
  private skip(at: number): number {
    if (at >= this.heapBytes) this.refresh();
    this.textStart(at);
    return this.textEnd;
  }

  // ---- export and import ----

  /**
   * The catalog as byte sections, up to the ids in use, plus (with `viewColumns`, the default) the
   * static view columns it wrote. Sections are copies, except with `shareAppendOnly`: the parts whose
   * rows in use are never rewritten (PARTS' appendOnly) are then views of the shared memory, which
   * stay as exported while the writer goes on (a snapshot cut writes them out later without a copy).
   */
  export(options: { readonly viewColumns?: boolean; readonly shareAppendOnly?: boolean } = {}): CatalogExport {
    const a = this.a;
    const poolBound = this.poolBound;
    const tokenBound = this.tokenBound;
    const sections: { name: string; bytes: Uint8Array }[] = [];
    const add = (name: string, array: ArrayBufferView, elements: number, elementBytes: number, share = false) => {
      const view = new Uint8Array(array.buffer, array.byteOffset, elements * elementBytes);
      sections.push({ name, bytes: share ? view : view.slice() });
    };
    for (const p of PARTS as readonly PartSpec[]) {
      const array = a[p.name];
      const rowBytes = p.ctor.BYTES_PER_ELEMENT * p.stride;
      const rows = p.scope === 'pool' ? poolBound : p.scope === 'token' ? tokenBound : p.scope === 'heap' ? Atomics.load(a.counts, Count.HeapUsed) : array.length / p.stride;
      add(p.name, array, rows, rowBytes, p.appendOnly && options.shareAppendOnly === true);
    }
    add('poolSlots', this.poolTable!.slots, this.poolTable!.slots.length, 4);
    add('tokenSlots', this.tokenTable!.slots, this.tokenTable!.slots.length, 4);
    if (options.viewColumns !== false) {
      for (const c of staticViewColumns(this.views)) {
        const rows = c.scope === 'pool' ? poolBound : c.scope === 'token' ? tokenBound : 1;
        add(VIEW_SECTION + c.name, c.array, rows * c.stride, c.array.BYTES_PER_ELEMENT);
      }
    }
    return {
      meta: {
        version: EXPORT_VERSION,
        networks: this.networks.map(({ dexes: _, ...n }) => n),
        dexes: this.dexes.slice(),
        poolIds: this.poolIds.save(),
        tokenIds: this.tokenIds.save(),
        poolSlotsUsed: this.poolTable!.inUse,
        tokenSlotsUsed: this.tokenTable!.inUse,
        poolSlotIdBits: this.poolTable!.idBits,
        tokenSlotIdBits: this.tokenTable!.idBits,
      },
      sections,
    };
  }

  /** A catalog over `views` from an export (the views' static columns are written from it too). */
  static import(views: EngineViews, from: CatalogExport): Catalog {
    const bytes = new Map(from.sections.map((s) => [s.name, s.bytes]));
    const section = (name: string): Uint8Array => {
      const b = bytes.get(name);
      if (b === undefined) throw new Error(`catalog export lacks section ${name}`);
      return b;
    };
    const counts = new Uint32Array(section('counts').slice().buffer);
    const c = new Catalog(views, Math.max(counts[Count.PoolBound]!, counts[Count.TokenBound]!, CATALOG_INITIAL_ROWS));
    c.restore(from.meta, { has: (name) => bytes.has(name), bytes: (name) => section(name).byteLength, read: (name, into) => into.set(section(name)) });
    return c;
  }

  /**
   * Fills this new, empty catalog (the writer) from an export's meta and sections, read straight into
   * its parts by `sections` (one bulk copy per section, no per-row work). The views' static columns
   * are written from the export's view sections when it has them (a snapshot keeps those columns
   * itself and loads them before).
   */
  restore(meta: CatalogMeta, sections: CatalogSectionReader): void {
    const r = this.restoreInto(meta, sections);
    for (const { name, into } of r.reads) sections.read(name, into);
    r.finish();
  }

  /**
   * As restore, in two steps, for a reader that fills many sections at once (a start reads them in
   * parallel: snapshot/load.ts): the counts are read and the parts sized now; every section of
   * `reads` is then to be filled, in any order, before `finish` adopts them.
   */
  restoreInto(meta: CatalogMeta, sections: CatalogSectionReader): CatalogRestore {
    if (meta.version !== EXPORT_VERSION) throw new Error(`catalog export version ${meta.version}, this build reads ${EXPORT_VERSION}`);
    if (this.poolTable === null || this.poolBound > 0 || this.tokenBound > 0 || this.networks.length > 0) throw new Error('a catalog is restored into a new, empty writer only');
    const views = this.views;
    const counts = new Uint32Array(PARTS.find((p) => p.name === 'counts')!.stride);
    sections.read('counts', new Uint8Array(counts.buffer));
    const poolBound = counts[Count.PoolBound]!;
    const tokenBound = counts[Count.TokenBound]!;
    if (poolBound > views.capacity.pools || tokenBound > views.capacity.tokens) {
      throw new CapacityError(`catalog export holds ${poolBound} pool and ${tokenBound} token ids, the views have room for ${views.capacity.pools} and ${views.capacity.tokens}`);
    }
    this.grow('pool', poolBound);
    this.grow('token', tokenBound);
    this.grow('heap', counts[Count.HeapUsed]!);
    const reads: { name: string; into: Uint8Array }[] = [];
    const a = this.a as unknown as Record<PartName, ArrayBufferView>;
    for (const p of PARTS as readonly PartSpec[]) {
      if (p.name === 'counts') continue;
      const dst = a[p.name]!;
      const n = sections.bytes(p.name);
      if (n > dst.byteLength) throw new Error(`catalog export section ${p.name} is larger than its part`);
      reads.push({ name: p.name, into: new Uint8Array(dst.buffer, dst.byteOffset, n) });
    }
    for (const col of staticViewColumns(views)) {
      const name = VIEW_SECTION + col.name;
      if (!sections.has(name)) continue;
      reads.push({ name, into: new Uint8Array(col.array.buffer, col.array.byteOffset, sections.bytes(name)) });
    }
    const slots = (name: string) => {
      const s = new Int32Array(sections.bytes(name) / 4);
      reads.push({ name, into: new Uint8Array(s.buffer) });
      return s;
    };
    const poolSlots = slots('poolSlots');
    const tokenSlots = slots('tokenSlots');
    return {
      reads,
      finish: () => {
        this.poolTable!.adopt(poolSlots, meta.poolSlotsUsed, meta.poolSlotIdBits);
        this.tokenTable!.adopt(tokenSlots, meta.tokenSlotsUsed, meta.tokenSlotIdBits);
        for (const n of meta.networks) this.addNetwork(n);
        for (const d of meta.dexes) this.addDex(d);
        this.poolIds.load(meta.poolIds);
        this.tokenIds.load(meta.tokenIds);
        for (const w of [Count.PoolBound, Count.TokenBound, Count.Pools, Count.Tokens, Count.HeapUsed]) Atomics.store(this.a.counts, w, counts[w]!);
        Atomics.store(views.counts, 0, this.poolIds.bound);
        Atomics.store(views.counts, 1, this.tokenIds.bound);
      },
    };
  }

  /**
   * After `restore`: loads the networks, DEXes, pools and tokens persisted since the export was
   * taken. Ids grow per chain in creation order within its open block, and new blocks start at the
   * bound, so those records are exactly the ids the export's allocation had not handed out: the
   * rest of each chain's open block and every id past the bound (a few ranges of records read,
   * not every record).
   */
  loadSince(store: Store): void {
    for (const { value } of store.networks.getRange()) if (this.networks[value.index] === undefined) this.addNetwork(value);
    for (const { value } of store.dexes.getRange()) if (this.dexes[value.index] === undefined) this.addDex(value);
    const tokenRanges = unallocated(this.tokenIds.save());
    const poolRanges = unallocated(this.poolIds.save());
    for (const [start, end] of tokenRanges) for (const { value } of store.tokens.getRange({ start, end })) if (!this.tokenKnown(value.id)) this.addToken(value);
    for (const [start, end] of poolRanges) for (const { value } of store.pools.getRange({ start, end })) if (!this.poolKnown(value.id)) this.addPool(value);
  }
}

/** The id ranges [start, end) an allocation in state `s` has not handed out (the last one open-ended). */
function unallocated(s: AllocatorState): [number, number | undefined][] {
  const out: [number, number | undefined][] = [];
  for (const [, at, end] of s.open) if (at < end) out.push([at, end]);
  out.sort((x, y) => x[0] - y[0]);
  out.push([s.next, undefined]);
  return out;
}

/** A pool record whose fields are read from the catalog when asked (made cheaply, read rarely). */
class PoolEntry implements PoolRecord {
  constructor(
    private readonly catalog: Catalog,
    readonly id: number,
  ) {}
  get chain() {
    return this.catalog.poolChain(this.id);
  }
  get dex() {
    return this.catalog.poolDex(this.id);
  }
  get address() {
    return this.catalog.poolAddress(this.id);
  }
  get token0() {
    return this.catalog.poolToken0(this.id);
  }
  get token1() {
    return this.catalog.poolToken1(this.id);
  }
  get protocol() {
    return this.catalog.pool(this.id).protocol;
  }
  get feePpm() {
    return this.catalog.pool(this.id).feePpm;
  }
  get createdAt() {
    return this.catalog.pool(this.id).createdAt;
  }
  get createdBlock() {
    return this.catalog.pool(this.id).createdBlock;
  }
  get weights() {
    return this.catalog.pool(this.id).weights;
  }
}

class TokenEntry implements TokenRecord {
  constructor(
    private readonly catalog: Catalog,
    readonly id: number,
  ) {}
  get chain() {
    return this.catalog.tokenChain(this.id);
  }
  get address() {
    return this.catalog.tokenAddress(this.id);
  }
  get name() {
    return this.catalog.tokenName(this.id);
  }
  get symbol() {
    return this.catalog.tokenSymbol(this.id);
  }
  get decimals() {
    return this.catalog.tokenDecimals(this.id);
  }
  get totalSupply() {
    return this.catalog.tokenTotalSupply(this.id);
  }
  get role() {
    return this.catalog.token(this.id).role;
  }
  get addedAt() {
    return this.catalog.tokenAddedAt(this.id);
  }
}

/** The views' columns the catalog writes for every pool and token (their static rows), and the weighted pools' side table. */
function staticViewColumns(views: EngineViews) {
  return views.columnTable.filter((c) => c.writer === 'ingest' && !c.transient && (c.scope === 'pool' || c.scope === 'token' || c.name.startsWith('weighted')));
}

/** A SharedArrayBuffer that grows in place up to maxByteLength (ES2024; Node 20 has it). */
interface GrowableBuffer extends SharedArrayBuffer {
  readonly maxByteLength: number;
  grow(bytes: number): void;
}

function growableBuffer(bytes: number, maxBytes: number): GrowableBuffer {
  const Ctor = SharedArrayBuffer as unknown as new (bytes: number, options: { maxByteLength: number }) => GrowableBuffer;
  return new Ctor(bytes, { maxByteLength: maxBytes });
}

/** Slots of an address table for `rows` entries: a power of two, at least twice as many. */
function tableSlots(rows: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(2, (4 * rows) / 3)));
}

/** Bytes of `n` as a heap text's LEB128 length. */
export function leb128Length(n: number): number {
  let k = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    k++;
  }
  return k;
}

/** Writes `n` as a LEB128 length at `at` (leb128Length bytes). */
export function writeLeb128(out: Uint8Array, at: number, n: number): void {
  while (n >= 128) {
    out[at++] = (n % 128) | 128;
    n = Math.floor(n / 128);
  }
  out[at] = n;
}

const textEncoder = new TextEncoder();

function encoderInto(s: string, out: Uint8Array): number {
  return textEncoder.encodeInto(s, out).written;
}

/** A read-only array-like of records made on access (index, length, iteration); nothing is kept. */
function recordList<T>(bound: () => number, at: (id: number) => T | undefined): readonly (T | undefined)[] {
  return new Proxy([] as (T | undefined)[], {
    get(target, prop) {
      if (typeof prop === 'string') {
        const i = Number(prop);
        if (Number.isInteger(i) && i >= 0 && String(i) === prop) return i < bound() ? at(i) : undefined;
        if (prop === 'length') return bound();
      }
      if (prop === Symbol.iterator) {
        return function* () {
          const n = bound();
          for (let i = 0; i < n; i++) yield at(i);
        };
      }
      const own = Reflect.get(Array.prototype, prop, target);
      return typeof own === 'function' ? own.bind(Array.from({ length: bound() }, (_, i) => at(i))) : own;
    },
  });
}
