/** EVM hex addresses compare case-insensitively; base58 (Solana) addresses are case-sensitive. */
export function normalizeAddress(address) {
    return /^0x/i.test(address) ? address.toLowerCase() : address;
}
export class CapacityError extends Error {
    name = 'CapacityError';
}
/**
 * Ids are handed out in per-chain blocks of ID_BLOCK consecutive ids, so the pools (and tokens) that
 * share a cache line of any per-pool column belong to one chain and thus one writer thread: no two
 * shards ever write the same cache line. Ids are therefore dense per block, with gaps between.
 */
export const ID_BLOCK = 64;
function lookup(index, address) {
    if (index === undefined)
        return undefined;
    const id = index.get(address);
    if (id !== undefined)
        return id;
    const normal = normalizeAddress(address);
    return normal === address ? undefined : index.get(normal);
}
class BlockAllocator {
    capacity;
    what;
    next = 0;
    open = new Map();
    constructor(capacity, what) {
        this.capacity = capacity;
        this.what = what;
    }
    allocate(chain) {
        let block = this.open.get(chain);
        if (!block || block.at >= block.end) {
            if (this.next + ID_BLOCK > this.capacity)
                throw new CapacityError(`${this.what} capacity ${this.capacity} reached`);
            block = { at: this.next, end: this.next + ID_BLOCK };
            this.next += ID_BLOCK;
            this.open.set(chain, block);
        }
        return block.at++;
    }
    /** Re-learns the allocation state from an id restored from the store. */
    restore(chain, id) {
        const start = id - (id % ID_BLOCK);
        if (start + ID_BLOCK > this.next)
            this.next = start + ID_BLOCK;
        const block = this.open.get(chain);
        if (!block || id >= block.at || start >= block.end)
            this.open.set(chain, { at: id + 1, end: start + ID_BLOCK });
    }
    /** One past the highest id handed out. */
    get bound() {
        return this.next;
    }
}
export class Registry {
    networks = [];
    dexes = [];
    pools = [];
    tokens = [];
    networkIndex = new Map();
    dexIndex = new Map();
    /** Per chain index: normalised address -> id. */
    poolIndex = [];
    tokenIndex = [];
    /** Pools of each token, by id. */
    tokenPools = [];
    views;
    poolIds;
    tokenIds;
    /** Pools registered (ids have gaps: iterate `pools` sparsely or use `networks[].poolIds`). */
    poolCount = 0;
    tokenCount = 0;
    constructor(views) {
        this.views = views;
        this.poolIds = new BlockAllocator(views.capacity.pools, 'pool');
        this.tokenIds = new BlockAllocator(views.capacity.tokens, 'token');
    }
    /** Loads networks, DEXes, pools and tokens persisted earlier and restores the static columns. */
    load(store) {
        for (const { value } of store.networks.getRange())
            this.addNetwork(value);
        for (const { value } of store.dexes.getRange())
            this.addDex(value);
        for (const { value } of store.tokens.getRange())
            this.addToken(value);
        for (const { value } of store.pools.getRange())
            this.addPool(value);
    }
    networkOf(id) {
        const i = this.networkIndex.get(id);
        return i === undefined ? undefined : this.networks[i];
    }
    dexOf(chain, dexId) {
        const i = this.dexIndex.get(`${chain}:${dexId}`);
        return i === undefined ? undefined : this.dexes[i];
    }
    /** Per-event lookup: no allocation when the address is already in normal form. */
    poolOf(chain, address) {
        const i = lookup(this.poolIndex[chain], address);
        return i === undefined ? undefined : this.pools[i];
    }
    tokenOf(chain, address) {
        const i = lookup(this.tokenIndex[chain], address);
        return i === undefined ? undefined : this.tokens[i];
    }
    /** Registers the source's networks and DEXes that are new; returns the records to persist. */
    syncNetworks(infos) {
        const out = { networks: [], dexes: [] };
        for (const info of infos) {
            let net = this.networkOf(info.id);
            if (!net) {
                if (this.networks.length >= this.views.capacity.chains)
                    throw new CapacityError(`more than ${this.views.capacity.chains} networks`);
                const rec = { index: this.networks.length, id: info.id, displayName: info.displayName, blockTimeSeconds: info.blockTimeSeconds };
                net = this.addNetwork(rec);
                out.networks.push(rec);
            }
            for (const d of info.dexes) {
                if (this.dexOf(net.index, d.id))
                    continue;
                const rec = {
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
    createPool(chain, e) {
        if (this.poolOf(chain, e.pool))
            return null;
        const dex = this.dexOf(chain, e.dexId);
        if (!dex)
            throw new Error(`pool ${e.pool} names unknown DEX ${e.dexId}`);
        const tokens = [];
        const tokenId = (t) => {
            const known = this.tokenOf(chain, t.address);
            if (known)
                return known.id;
            const rec = {
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
        const pool = {
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
    removePools(chain, pools, tokens) {
        if (pools.length === 0 && tokens.length === 0)
            return;
        const v = this.views;
        const gone = new Set(pools);
        const net = this.networks[chain];
        for (const p of pools) {
            const rec = this.pools[p];
            if (!rec)
                continue;
            v.poolExists[p] = 0;
            this.poolIndex[chain]?.delete(rec.address);
            this.poolCount--;
        }
        const kept = net.poolIds.filter((p) => !gone.has(p));
        net.poolIds.length = 0;
        net.poolIds.push(...kept);
        for (const p of pools) {
            const rec = this.pools[p];
            if (!rec)
                continue;
            for (const t of [rec.token0, rec.token1]) {
                const list = this.tokenPools[t];
                if (list)
                    this.tokenPools[t] = list.filter((x) => !gone.has(x));
            }
        }
        for (const t of tokens) {
            const rec = this.tokens[t];
            if (!rec)
                continue;
            this.tokenIndex[chain]?.delete(rec.address);
            delete this.tokens[t];
            this.tokenCount--;
        }
    }
    addNetwork(rec) {
        const entry = { ...rec, dexes: [], poolIds: [] };
        this.networks[rec.index] = entry;
        this.networkIndex.set(rec.id, rec.index);
        return entry;
    }
    addDex(rec) {
        this.dexes[rec.index] = rec;
        this.dexIndex.set(`${rec.chain}:${rec.id}`, rec.index);
        this.networks[rec.chain].dexes.push(rec);
    }
    addToken(rec) {
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
    addPool(rec) {
        const v = this.views;
        const p = rec.id;
        this.pools[p] = rec;
        (this.poolIndex[rec.chain] ??= new Map()).set(rec.address, p);
        this.networks[rec.chain].poolIds.push(p);
        this.tokenPools[rec.token0].push(p);
        this.tokenPools[rec.token1].push(p);
        v.poolChain[p] = rec.chain;
        v.poolDex[p] = rec.dex;
        v.poolToken0[p] = rec.token0;
        v.poolToken1[p] = rec.token1;
        v.poolDecimals0[p] = this.tokens[rec.token0].decimals;
        v.poolDecimals1[p] = this.tokens[rec.token1].decimals;
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
//# sourceMappingURL=registry.js.map