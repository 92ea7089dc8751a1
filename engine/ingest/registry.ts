/**
 * Dense ids and string side tables. Ingest assigns a pool or token id the first time it sees the
 * address, writes the static shared-memory columns, and keeps names, symbols and addresses here on
 * the main thread, where the gateway reads them. Records persist in LMDB with the batch that
 * created them, so ids are stable across restarts.
 */
import type { NetworkInfo, PoolCreated, TokenInfo } from '../events/model.js';
import type { DexRecord, NetworkRecord, PoolRecord, Store, TokenRecord } from '../store/store.js';
import type { EngineViews } from '../state/views.js';

/** EVM hex addresses compare case-insensitively; base58 (Solana) addresses are case-sensitive. */
export function normalizeAddress(address: string): string {
  return /^0x/i.test(address) ? address.toLowerCase() : address;
}

export class CapacityError extends Error {
  override readonly name = 'CapacityError';
}

export interface NetworkEntry extends NetworkRecord {
  readonly dexes: DexRecord[];
  /** Pools of this chain, by id, in creation order. */
  readonly poolIds: number[];
}

/**
 * Ids are handed out in per-chain blocks of ID_BLOCK consecutive ids, so the pools (and tokens) that
 * share a cache line of any per-pool column belong to one chain and thus one writer thread: no two
 * shards ever write the same cache line. Ids are therefore dense per block, with gaps between.
 */
export const ID_BLOCK = 64;

function lookup(index: Map<string, number> | undefined, address: string): number | undefined {
  if (index === undefined) return undefined;
  const id = index.get(address);
  if (id !== undefined) return id;
  const normal = normalizeAddress(address);
  return normal === address ? undefined : index.get(normal);
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
}

export class Registry {
  readonly networks: NetworkEntry[] = [];
  readonly dexes: DexRecord[] = [];
  readonly pools: PoolRecord[] = [];
  readonly tokens: TokenRecord[] = [];
  private readonly networkIndex = new Map<string, number>();
  private readonly dexIndex = new Map<string, number>();
  /** Per chain index: normalised address -> id. */
  private readonly poolIndex: Map<string, number>[] = [];
  private readonly tokenIndex: Map<string, number>[] = [];
  /** Pools of each token, by id. */
  readonly tokenPools: number[][] = [];
  private readonly views: EngineViews;
  private readonly poolIds: BlockAllocator;
  private readonly tokenIds: BlockAllocator;
  /** Pools registered (ids have gaps: iterate `pools` sparsely or use `networks[].poolIds`). */
  poolCount = 0;
  tokenCount = 0;

  constructor(views: EngineViews) {
    this.views = views;
    this.poolIds = new BlockAllocator(views.capacity.pools, 'pool');
    this.tokenIds = new BlockAllocator(views.capacity.tokens, 'token');
  }

  /** Loads networks, DEXes, pools and tokens persisted earlier and restores the static columns. */
  load(store: Store): void {
    for (const { value } of store.networks.getRange()) this.addNetwork(value);
    for (const { value } of store.dexes.getRange()) this.addDex(value);
    for (const { value } of store.tokens.getRange()) this.addToken(value);
    for (const { value } of store.pools.getRange()) this.addPool(value);
  }

  networkOf(id: string): NetworkEntry | undefined {
    const i = this.networkIndex.get(id);
    return i === undefined ? undefined : this.networks[i];
  }

  dexOf(chain: number, dexId: string): DexRecord | undefined {
    const i = this.dexIndex.get(`${chain}:${dexId}`);
    return i === undefined ? undefined : this.dexes[i];
  }

  /** Per-event lookup: no allocation when the address is already in normal form. */
  poolOf(chain: number, address: string): PoolRecord | undefined {
    const i = lookup(this.poolIndex[chain], address);
    return i === undefined ? undefined : this.pools[i];
  }

  tokenOf(chain: number, address: string): TokenRecord | undefined {
    const i = lookup(this.tokenIndex[chain], address);
    return i === undefined ? undefined : this.tokens[i];
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
    if (this.poolOf(chain, e.pool)) return null;
    const dex = this.dexOf(chain, e.dexId);
    if (!dex) throw new Error(`pool ${e.pool} names unknown DEX ${e.dexId}`);
    const tokens: TokenRecord[] = [];
    const tokenId = (t: TokenInfo): number => {
      const known = this.tokenOf(chain, t.address);
      if (known) return known.id;
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
    };
    this.addPool(pool);
    return { pool, tokens };
  }

  /**
   * Takes pools and tokens out of every lookup after a rollback orphaned their creation. Pool
   * records stay at their ids (readers holding a pool id still find a record; poolExists says it is
   * gone); token records go (searches walk the token table). Ids are not handed out again by this
   * process.
   */
  removePools(chain: number, pools: readonly number[], tokens: readonly number[]): void {
    if (pools.length === 0 && tokens.length === 0) return;
    const v = this.views;
    const gone = new Set(pools);
    const net = this.networks[chain]!;
    for (const p of pools) {
      const rec = this.pools[p];
      if (!rec) continue;
      v.poolExists[p] = 0;
      this.poolIndex[chain]?.delete(rec.address);
      this.poolCount--;
    }
    const kept = net.poolIds.filter((p) => !gone.has(p));
    net.poolIds.length = 0;
    net.poolIds.push(...kept);
    for (const p of pools) {
      const rec = this.pools[p];
      if (!rec) continue;
      for (const t of [rec.token0, rec.token1]) {
        const list = this.tokenPools[t];
        if (list) this.tokenPools[t] = list.filter((x) => !gone.has(x));
      }
    }
    for (const t of tokens) {
      const rec = this.tokens[t];
      if (!rec) continue;
      this.tokenIndex[chain]?.delete(rec.address);
      delete this.tokens[t];
      this.tokenCount--;
    }
  }

  private addNetwork(rec: NetworkRecord): NetworkEntry {
    const entry: NetworkEntry = { ...rec, dexes: [], poolIds: [] };
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
    this.tokens[rec.id] = rec;
    this.tokenPools[rec.id] = [];
    (this.tokenIndex[rec.chain] ??= new Map()).set(rec.address, rec.id);
    v.tokenChain[rec.id] = rec.chain;
    v.tokenDecimals[rec.id] = rec.decimals;
    v.tokenRole[rec.id] = rec.role;
    this.tokenIds.restore(rec.chain, rec.id);
    this.tokenCount++;
    Atomics.store(v.counts, 1, this.tokenIds.bound);
  }

  private addPool(rec: PoolRecord): void {
    const v = this.views;
    const p = rec.id;
    this.pools[p] = rec;
    (this.poolIndex[rec.chain] ??= new Map()).set(rec.address, p);
    this.networks[rec.chain]!.poolIds.push(p);
    this.tokenPools[rec.token0]!.push(p);
    this.tokenPools[rec.token1]!.push(p);
    v.poolChain[p] = rec.chain;
    v.poolDex[p] = rec.dex;
    v.poolToken0[p] = rec.token0;
    v.poolToken1[p] = rec.token1;
    v.poolDecimals0[p] = this.tokens[rec.token0]!.decimals;
    v.poolDecimals1[p] = this.tokens[rec.token1]!.decimals;
    v.poolProtocol[p] = rec.protocol;
    v.poolFeePpm[p] = rec.feePpm;
    v.poolCreatedAt[p] = rec.createdAt;
    v.poolCreatedBlock[p] = rec.createdBlock;
    v.poolExists[p] = 1;
    this.poolIds.restore(rec.chain, p);
    this.poolCount++;
    Atomics.store(v.counts, 0, this.poolIds.bound);
  }
}
