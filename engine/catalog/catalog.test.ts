import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { NetworkInfo, PoolCreated, TokenInfo } from '../events/model.js';
import { EngineViews } from '../state/views.js';
import { openStore } from '../store/store.js';
import { Catalog, SearchText, TextMatch, decodeSupply, encodeSupply } from './catalog.js';

const NETWORKS: NetworkInfo[] = [
  { id: 'ethereum', displayName: 'Ethereum', blockTimeSeconds: 12, dexes: [{ id: 'uni', name: 'Uniswap', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0xf0' }] },
  { id: 'solana', displayName: 'Solana', blockTimeSeconds: 0.4, dexes: [{ id: 'ray', name: 'Raydium', protocol: 'raydium', poolProtocol: 0, factory: 'Fact0ry' }] },
] as NetworkInfo[];

/** A 0x address from a number (40 hex digits, mixed case when asked). */
function evm(n: number, mixed = false): string {
  const hex = n.toString(16).padStart(40, 'a');
  return `0x${mixed ? hex.toUpperCase() : hex}`;
}

/** A base58-looking address from a number (exact case matters). */
function b58(n: number): string {
  return `So1${n.toString(36)}AbCdEfGhJkLmNpQrStUvWxYz${n}`;
}

function token(address: string, symbol: string, name = `${symbol} token`): TokenInfo {
  return { address, name, symbol, decimals: 18, totalSupply: 10n ** 27n + BigInt(symbol.length), role: 0 } as TokenInfo;
}

let block = 1;
function created(pool: string, dexId: string, t0: TokenInfo, t1: TokenInfo): PoolCreated {
  return { kind: 'pool_created', key: { blockNumber: block++, txIndex: 0, logIndex: 0 }, timestamp: 1_700_000_000 + block, pool, dexId, factory: '', protocol: 0, feePpm: 3000, token0: t0, token1: t1 } as unknown as PoolCreated;
}

const views = () => EngineViews.create({ pools: 20_000, tokens: 20_000, chains: 4 });

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('catalog', () => {
  it('looks pools and tokens up by address: 0x in any case, base58 exactly, per chain', () => {
    const c = new Catalog(views(), 64);
    c.syncNetworks(NETWORKS);
    const weth = token(evm(1), 'WETH', 'Wrapped Ether');
    const usdc = token(evm(2, true), 'USDC');
    const made = c.createPool(0, created(evm(100, true), 'uni', weth, usdc))!;
    expect(made.pool.address).toBe(evm(100));
    expect(made.tokens.map((t) => t.address)).toEqual([evm(1), evm(2)]);
    const p = made.pool.id;
    expect(c.poolId(0, evm(100))).toBe(p);
    expect(c.poolId(0, evm(100, true))).toBe(p);
    expect(c.poolId(0, `0X${evm(100).slice(2)}`)).toBe(p);
    expect(c.poolId(1, evm(100))).toBe(-1);
    expect(c.poolId(0, evm(101))).toBe(-1);
    expect(c.poolAddress(p)).toBe(evm(100));
    expect(c.tokenId(0, evm(2, true))).toBe(made.pool.token1);
    expect(c.tokenSymbol(made.pool.token0)).toBe('WETH');
    expect(c.tokenTotalSupply(made.pool.token0)).toBe('1000000000000000000000000004');
    expect(c.tokenName(made.pool.token1)).toBe('USDC token');
    expect(c.tokenName(made.pool.token0)).toBe('Wrapped Ether');
    expect(c.tokenTotalSupply(made.pool.token1)).toBe((10n ** 27n + 4n).toString());
    expect(c.createPool(0, created(evm(100), 'uni', weth, usdc))).toBeNull();

    const sol = token(b58(1), 'SOL');
    const bonk = token(b58(2), 'BONK', 'Bonk ∞ 🐕');
    const sp = c.createPool(1, created(b58(77), 'ray', sol, bonk))!.pool.id;
    expect(c.poolId(1, b58(77))).toBe(sp);
    expect(c.poolId(1, b58(77).toLowerCase())).toBe(-1);
    expect(c.poolId(1, b58(77).toUpperCase())).toBe(-1);
    expect(c.poolAddress(sp)).toBe(b58(77));
    expect(c.tokenName(c.tokenId(1, b58(2)))).toBe('Bonk ∞ 🐕');
    // A short 0x text is not 20 bytes: kept as text, lower case, found in any case.
    const odd = c.createPool(0, created('0xABC', 'uni', weth, usdc))!.pool.id;
    expect(c.poolAddress(odd)).toBe('0xabc');
    expect(c.poolId(0, '0XAbc')).toBe(odd);

    expect(c.poolsOfToken(made.pool.token0)).toEqual([p, odd]);
    expect(c.poolsOfChain(0)).toEqual([p, odd]);
    expect(c.poolsOfChain(1)).toEqual([sp]);
    expect(c.poolCount).toBe(3);
    expect(c.tokenCount).toBe(4);
    expect(c.pool(p)).toEqual(made.pool);
    expect(c.token(made.pool.token0)).toEqual(made.tokens[0]);
  });

  it('matches search text as a lower-cased string would', () => {
    const c = new Catalog(views(), 64);
    c.syncNetworks(NETWORKS);
    const made = c.createPool(0, created(evm(0xbeef), 'uni', token(evm(3), 'PePe', 'Pepe The Frog'), token(b58(9), 'ÉCU', 'Écu Ünïcode')))!;
    const [t0, t1] = [made.pool.token0, made.pool.token1];
    const m = (t: number, q: string) => c.tokenMatch(t, new SearchText(q.toLowerCase()));
    expect(m(t0, 'PEPE')).toBe(TextMatch.Exact);
    expect(m(t0, 'pep')).toBe(TextMatch.Prefix);
    expect(m(t0, 'frog')).toBe(TextMatch.Substring);
    expect(m(t0, 'toad')).toBe(TextMatch.None);
    expect(m(t0, evm(3).slice(0, 9))).toBe(TextMatch.Prefix);
    expect(m(t0, evm(3))).toBe(TextMatch.Exact);
    expect(m(t1, 'écu')).toBe(TextMatch.Exact);
    expect(m(t1, 'ünï')).toBe(TextMatch.Substring);
    // A base58 address matches by prefix in any case in search (as its lower-cased text would).
    expect(m(t1, b58(9).slice(0, 6).toUpperCase())).toBe(TextMatch.Prefix);
    const a = (q: string) => c.poolAddressMatch(made.pool.id, new SearchText(q));
    expect(a('0x')).toBe(TextMatch.Prefix);
    expect(a(evm(0xbeef))).toBe(TextMatch.Exact);
    expect(a(evm(0xbeef).slice(0, 30))).toBe(TextMatch.Prefix);
    expect(a(`${evm(0xbeef)}0`)).toBe(TextMatch.None);
    expect(a('0xb')).toBe(TextMatch.None);
  });

  it('grows past its initial rows and heap, and keeps every lookup', () => {
    const v = views();
    const c = new Catalog(v, 64);
    c.syncNetworks(NETWORKS);
    const ids: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const chain = i % 2;
      const addr = chain === 0 ? evm(10_000 + i) : b58(10_000 + i);
      const t0 = token(chain === 0 ? evm(50_000 + i) : b58(50_000 + i), `T${i}`, `Token number ${i} ${'x'.repeat(i % 40)}`);
      const t1 = token(chain === 0 ? evm(1) : b58(1), chain === 0 ? 'WETH' : 'SOL');
      ids.push(c.createPool(chain, created(addr, chain === 0 ? 'uni' : 'ray', t0, t1))!.pool.id);
    }
    for (let i = 0; i < 3000; i++) {
      const chain = i % 2;
      expect(c.poolId(chain, chain === 0 ? evm(10_000 + i, true) : b58(10_000 + i))).toBe(ids[i]);
      expect(c.poolAddress(ids[i]!)).toBe(chain === 0 ? evm(10_000 + i) : b58(10_000 + i));
      expect(c.tokenName(c.poolToken0(ids[i]!))).toBe(`Token number ${i} ${'x'.repeat(i % 40)}`);
    }
    const weth = c.tokenId(0, evm(1));
    expect(c.tokenPoolCount(weth)).toBe(1500);
    expect(c.poolsOfToken(weth)).toEqual(ids.filter((_, i) => i % 2 === 0));
    expect(c.poolsOfChain(1)).toEqual(ids.filter((_, i) => i % 2 === 1));
    expect(v.poolCount).toBe(c.poolBound);
  });

  it('takes rolled-back pools and tokens out of lookups and lists', () => {
    const c = new Catalog(views(), 64);
    c.syncNetworks(NETWORKS);
    const weth = token(evm(1), 'WETH');
    const a = c.createPool(0, created(evm(200), 'uni', weth, token(evm(2), 'A')))!.pool;
    const b = c.createPool(0, created(evm(201), 'uni', weth, token(evm(3), 'B')))!.pool;
    const d = c.createPool(0, created(evm(202), 'uni', weth, token(evm(4), 'D')))!.pool;
    c.removePools(0, [b.id], [b.token1]);
    expect(c.poolId(0, evm(201))).toBe(-1);
    expect(c.poolLive(b.id)).toBe(false);
    expect(c.poolAddress(b.id)).toBe(evm(201));
    expect(c.tokenId(0, evm(3))).toBe(-1);
    expect(c.tokenLive(b.token1)).toBe(false);
    expect(c.tokens[b.token1]).toBeUndefined();
    expect(c.pools[b.id]?.address).toBe(evm(201));
    expect(c.poolsOfToken(weth ? a.token0 : 0)).toEqual([a.id, d.id]);
    expect(c.poolsOfChain(0)).toEqual([a.id, d.id]);
    expect(c.poolCount).toBe(2);
    expect(c.tokenCount).toBe(3);
    // The list goes on after a removal at its tail.
    c.removePools(0, [d.id], []);
    const e = c.createPool(0, created(evm(203), 'uni', weth, token(evm(5), 'E')))!.pool;
    expect(c.poolsOfToken(a.token0)).toEqual([a.id, e.id]);
    expect(c.poolsOfChain(0)).toEqual([a.id, e.id]);
    // The address of a removed pool can be created again, under a new id.
    const again = c.createPool(0, created(evm(201), 'uni', weth, token(evm(3), 'B')))!.pool;
    expect(again.id).not.toBe(b.id);
    expect(c.poolId(0, evm(201))).toBe(again.id);
  });

  it('keeps a total supply as the bytes of its integer, and any other text as it is', () => {
    const cases = ['0', '1', '255', '256', (2n ** 256n - 1n).toString(), '1000000000000000000000000004', '', '01', '-5', '1e21', 'unknown', 'Näme'];
    for (const supply of cases) expect(decodeSupply(encodeSupply(supply))).toBe(supply);
    // 28 digits in 12 bytes and the kind.
    expect(encodeSupply('1000000000000000000000000004').length).toBe(13);
    expect(encodeSupply('0').length).toBe(1);
  });

  it('finds every address of a full address table, and none removed', () => {
    const c = new Catalog(views(), 64);
    c.syncNetworks(NETWORKS);
    const weth = token(evm(1), 'WETH');
    const ids: number[] = [];
    // 3,000 pools: the table doubles at three quarters full, several times over.
    for (let i = 0; i < 3000; i++) ids.push(c.createPool(0, created(evm(10_000 + i), 'uni', weth, token(evm(50_000 + i), `T${i}`)))!.pool.id);
    c.removePools(0, ids.filter((_, i) => i % 7 === 0), []);
    for (let i = 0; i < 3000; i++) {
      expect(c.poolId(0, evm(10_000 + i))).toBe(i % 7 === 0 ? -1 : ids[i]);
      expect(c.poolId(1, evm(10_000 + i))).toBe(-1);
      expect(c.tokenSymbol(c.tokenId(0, evm(50_000 + i)))).toBe(`T${i}`);
    }
    expect(c.poolId(0, evm(9_999))).toBe(-1);
    // A chain's pools, in creation order, as its id blocks hold them between another chain's.
    const other: number[] = [];
    for (let i = 0; i < 300; i++) {
      other.push(c.createPool(1, created(b58(70_000 + i), 'ray', token(b58(80_000 + i), `U${i}`), token(b58(1), 'SOL')))!.pool.id);
      ids.push(c.createPool(0, created(evm(20_000 + i), 'uni', weth, token(evm(90_000 + i), `V${i}`)))!.pool.id);
    }
    c.removePools(1, other.slice(0, 70), []);
    const live = ids.filter((_, i) => i >= 3000 || i % 7 !== 0);
    expect(c.poolsOfChain(0)).toEqual(live);
    expect(c.chainPoolCount(0)).toBe(live.length);
    expect(c.poolsOfChain(1)).toEqual(other.slice(70));
    expect(c.chainPoolCount(1)).toBe(230);
    expect(c.poolsOfChain(2)).toEqual([]);
  });

  it('exports and imports as byte sections: same answers, same ids after', () => {
    const v = views();
    const c = new Catalog(v, 64);
    c.syncNetworks(NETWORKS);
    for (let i = 0; i < 500; i++) {
      const chain = i % 2;
      c.createPool(chain, created(chain === 0 ? evm(1000 + i) : b58(1000 + i), chain === 0 ? 'uni' : 'ray', token(chain === 0 ? evm(3000 + (i % 70)) : b58(3000 + (i % 70)), `S${i % 70}`), token(chain === 0 ? evm(1) : b58(1), 'W')));
    }
    c.removePools(0, [c.poolId(0, evm(1010))], []);
    const exported = c.export();
    expect(exported.sections.length).toBeLessThan(40);
    const v2 = views();
    const d = Catalog.import(v2, structuredClone(exported));
    const inUse = (x: Catalog) => [(x as unknown as { poolTable: { inUse: number } }).poolTable.inUse, (x as unknown as { tokenTable: { inUse: number } }).tokenTable.inUse];
    expect(inUse(d)).toEqual(inUse(c));
    expect(exported.meta.poolSlotsUsed).toBe(500);
    // Into views of another capacity (ids take other bits of an address table's slot): every address found, none invented.
    const wider = Catalog.import(EngineViews.create({ pools: 5_000_000, tokens: 5_000_000, chains: 4, blocks: 64, secondBlocks: 64, windowSlots: 64 }), structuredClone(exported));
    expect(exported.meta.poolSlotIdBits).toBe(15);
    expect(wider.export().meta.poolSlotIdBits).toBe(23);
    for (let i = 0; i < 500; i++) {
      const chain = i % 2;
      const addr = chain === 0 ? evm(1000 + i, true) : b58(1000 + i);
      expect(wider.poolId(chain, addr)).toBe(c.poolId(chain, addr));
      expect(wider.tokenId(chain, chain === 0 ? evm(3000 + (i % 70)) : b58(3000 + (i % 70)))).toBe(c.tokenId(chain, chain === 0 ? evm(3000 + (i % 70)) : b58(3000 + (i % 70))));
    }
    expect(wider.poolId(0, evm(1010))).toBe(-1);
    expect(wider.poolId(0, evm(999))).toBe(-1);
    expect(d.networks.map((n) => n.id)).toEqual(['ethereum', 'solana']);
    expect(d.dexOf(1, 'ray')?.name).toBe('Raydium');
    expect(d.poolCount).toBe(c.poolCount);
    expect(d.tokenCount).toBe(c.tokenCount);
    const records = (x: Catalog) => ({
      pools: [...x.pools].map((p) => p && x.pool(p.id)),
      tokens: [...x.tokens].map((t) => t && x.token(t.id)),
    });
    expect(records(d)).toEqual(records(c));
    expect(records(d).pools.filter(Boolean).length).toBe(500);
    for (let i = 0; i < 500; i++) {
      const chain = i % 2;
      const addr = chain === 0 ? evm(1000 + i, true) : b58(1000 + i);
      expect(d.poolId(chain, addr)).toBe(c.poolId(chain, addr));
    }
    for (const t of [0, 1, 64, 65]) expect(d.poolsOfToken(t)).toEqual(c.poolsOfToken(t));
    expect(d.poolsOfChain(0)).toEqual(c.poolsOfChain(0));
    expect(v2.poolToken0.subarray(0, c.poolBound)).toEqual(v.poolToken0.subarray(0, c.poolBound));
    expect(v2.poolCount).toBe(v.poolCount);
    // Ids handed out after the import are those the original would hand out.
    const event = created(b58(9999), 'ray', token(b58(8888), 'N'), token(b58(1), 'W'));
    const next = (x: Catalog) => x.createPool(1, event)!;
    const [fromC, fromD] = [next(c), next(d)];
    expect(fromD).toEqual(fromC);
    expect(d.poolsOfToken(d.tokenId(1, b58(1)))).toEqual(c.poolsOfToken(c.tokenId(1, b58(1))));
  });

  it('loads what the store holds; an attached reader follows the writer as it grows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
    dirs.push(dir);
    const store = openStore(dir);
    const v = views();
    const c = new Catalog(v, 64);
    const nets = c.syncNetworks(NETWORKS);
    const writes: Promise<unknown>[] = [];
    for (const n of nets.networks) writes.push(store.networks.put(n.index, n));
    for (const d of nets.dexes) writes.push(store.dexes.put(d.index, d));
    for (let i = 0; i < 200; i++) {
      const made = c.createPool(1, created(b58(i + 1), 'ray', token(b58(5000 + i), `S${i}`, `Näme ${i}`), token(b58(1), 'SOL')))!;
      writes.push(store.pools.put(made.pool.id, made.pool));
      for (const t of made.tokens) writes.push(store.tokens.put(t.id, t));
    }
    await Promise.all(writes);
    const loaded = new Catalog(views(), 64);
    loaded.load(store);
    expect([...loaded.pools].map((p) => p && loaded.pool(p.id))).toEqual([...c.pools].map((p) => p && c.pool(p.id)));
    expect([...loaded.tokens].map((t) => t && loaded.token(t.id))).toEqual([...c.tokens].map((t) => t && c.token(t.id)));
    expect(loaded.tokenCount).toBe(201);
    expect(loaded.poolsOfChain(1)).toEqual(c.poolsOfChain(1));
    await store.close();

    // A reader on the same buffers (as another thread attaches them) sees rows added and grown after it attached.
    const reader = Catalog.attach(structuredClone(c.buffers), v, c.networks, c.dexes);
    expect(reader.tokenName(c.poolToken0(c.poolId(1, b58(150))))).toBe('Näme 149');
    for (let i = 200; i < 2000; i++) c.createPool(1, created(b58(i + 1), 'ray', token(b58(5000 + i), `S${i}`, `Näme ${i}`), token(b58(1), 'SOL')));
    const late = c.poolId(1, b58(1999));
    expect(reader.poolAddress(late)).toBe(b58(1999));
    expect(reader.tokenName(reader.poolToken0(late))).toBe('Näme 1998');
    expect(reader.tokenPoolCount(c.tokenId(1, b58(1)))).toBe(2000);
  });
});
