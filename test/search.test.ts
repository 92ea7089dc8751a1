/**
 * Pool search filters and orderings, token search and GET /search, over a real in-process engine
 * and the gateway over HTTP. Expected figures come from the trades fed (candles, rolling windows,
 * reserves), computed here, not by engine code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../engine/ingest/ingest.js';
import type { ChainEvent, NetworkInfo, TokenInfo } from '../engine/events/model.js';
import { LocalShards } from '../engine/shards/local.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { startGateway, type Gateway } from '../gateway/server.js';

const T0 = 1_700_006_400; // 2023-11-15T00:00:00Z
const D1 = T0 + 86_400;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const E9 = 10n ** 9n;
/** Pool n of a chain is created at CREATED0 + n hours, in block 10 + n. */
const CREATED0 = T0 - 10 * 86_400;

const USDC: TokenInfo = { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 };
const WETH: TokenInfo = { address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, totalSupply: 10n ** 24n, role: 2 };
const SOL_USDC: TokenInfo = { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 };
const WSOL: TokenInfo = { address: 'So11111111111111111111111111111111111111112', name: 'Wrapped SOL', symbol: 'SOL', decimals: 9, totalSupply: 10n ** 18n, role: 2 };

const POOL_A = '0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc'; // WETH/USDC on uniswap_v2
const POOL_B = '0x397FF1542f962076d0BFE58eA045FfA2d347ACa0'; // USDC/WETH on sushiswap
const POOL_SOL = '7XawhbbxtsRcQA8KTkHT9f9nc6d69UwqCDh6U5EEbEmX';
const FILLERS = 12;
const fillerAddress = (i: number) => `0x${(0xf000 + i).toString(16).padStart(40, '0')}`;
const fillerToken = (i: number): TokenInfo => ({
  address: `0x${(0xe000 + i).toString(16).padStart(40, '0')}`,
  name: `Token ${i}`,
  symbol: `TK${i}`,
  decimals: 18,
  totalSupply: 10n ** 27n,
  role: 3,
});
/** Even fillers hold their token as token 0 (TK/USDC, uniswap_v2), odd ones as token 1 (USDC/TK, sushiswap). */
const fillerIsToken0 = (i: number) => i % 2 === 0;

const NETWORKS: NetworkInfo[] = [
  {
    id: 'ethereum',
    displayName: 'Ethereum',
    blockTimeSeconds: 12,
    dexes: [
      { id: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f' },
      { id: 'sushiswap', name: 'SushiSwap', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0xc0aee478e3658e2610c5f7a4a2e1777ce9e4f2ac' },
      { id: 'curve', name: 'Curve', protocol: 'curve', poolProtocol: 0, factory: '0xb9fc157394af804a3578134a6585c0dc9cc990d4' },
    ],
  },
  {
    id: 'solana',
    displayName: 'Solana',
    blockTimeSeconds: 0.4,
    dexes: [{ id: 'raydium', name: 'Raydium', protocol: 'raydium', poolProtocol: 0, factory: '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8' }],
  },
];

/** One swap: USD prices of token 0 and 1 after it, USD volume, reserves with decimals applied. */
interface Trade {
  pool: string;
  t: number;
  p0: number;
  p1: number;
  vol: number;
  r0: bigint;
  r1: bigint;
  a0: bigint;
  a1: bigint;
  /** Reserves in whole tokens, for liquidity. */
  h0: number;
  h1: number;
}

function tradeA(t: number, price: number, vol: number): Trade {
  const usdc = BigInt(vol) * E6;
  return { pool: POOL_A, t, p0: price, p1: 1, vol, r0: 1000n * E18, r1: BigInt(price * 1000) * E6, a0: -E18, a1: usdc, h0: 1000, h1: price * 1000 };
}

function tradeB(t: number, wethPrice: number, vol: number): Trade {
  const usdc = BigInt(vol) * E6;
  return { pool: POOL_B, t, p0: 1, p1: wethPrice, vol, r0: BigInt(wethPrice * 500) * E6, r1: 500n * E18, a0: usdc, a1: -E18, h0: wethPrice * 500, h1: 500 };
}

/** Filler i: 10^6 tokens against price x 10^6 USDC. */
function tradeFiller(i: number, t: number, x: number, vol: number): Trade {
  const usdcRaw = BigInt(Math.round(x * 1e12));
  const price = Number(usdcRaw) / 1e12;
  const tokens = 10n ** 24n;
  const usdc = BigInt(vol) * E6;
  const base = { pool: fillerAddress(i), t, vol };
  return fillerIsToken0(i)
    ? { ...base, p0: price, p1: 1, r0: tokens, r1: usdcRaw, a0: -E18, a1: usdc, h0: 1e6, h1: price * 1e6 }
    : { ...base, p0: 1, p1: price, r0: usdcRaw, r1: tokens, a0: usdc, a1: -E18, h0: price * 1e6, h1: 1e6 };
}

const TRADES: Record<string, Trade[]> = {
  [POOL_A]: [
    tradeA(T0 + 100, 2000, 5000),
    tradeA(T0 + 3700, 2020, 2500),
    tradeA(T0 + 43_300, 1980, 1500),
    tradeA(D1 + 50, 2050, 6000),
    tradeA(D1 + 72_010, 2100, 2000),
    tradeA(D1 + 86_000, 2095, 900),
    tradeA(D1 + 86_370, 2101, 1600),
  ],
  [POOL_B]: [tradeB(D1 + 21_600, 1995, 10_000), tradeB(D1 + 79_800, 2040, 2000), tradeB(D1 + 86_280, 2075, 500)],
};
const MULTIPLIERS = [0.8, 0.9, 1, 1.1, 1.2];
for (let i = 0; i < FILLERS; i++) {
  const x = (i + 1) / 1000;
  TRADES[fillerAddress(i)] = [
    tradeFiller(i, D1 + 43_200 + i * 10, x, 100 * (((i * 7) % 10) + 1)),
    tradeFiller(i, D1 + 72_000 + i * 10, x * MULTIPLIERS[i % 5]!, 50 * ((i % 3) + 1)),
  ];
}
const TRADE_SOL: Trade = { pool: POOL_SOL, t: D1 + 36_000, p0: 150, p1: 1, vol: 777, r0: 1000n * E9, r1: 150_000n * E6, a0: -E9, a1: 777n * E6, h0: 1000, h1: 150_000 };

/** Ethereum pools in creation order (= id order). */
const ETH_POOLS = [POOL_A, POOL_B, ...Array.from({ length: FILLERS }, (_, i) => fillerAddress(i))];
const createdAt = (n: number) => CREATED0 + n * 3600;

// ---------- the model ----------

const WINDOW_DEFS: Readonly<Record<string, readonly [baseSeconds: number, buckets: number]>> = {
  '5m': [60, 5],
  '1h': [300, 12],
  '6h': [3600, 6],
  '24h': [3600, 24],
  '48h': [3600, 48],
  '7d': [21_600, 28],
  '30d': [86_400, 30],
};

function windowOf(trades: readonly Trade[], name: string, side: 0 | 1) {
  const [base, buckets] = WINDOW_DEFS[name]!;
  const last = trades.at(-1)!;
  const current = Math.floor(last.t / base) * base;
  const start = current - (buckets - 1) * base;
  const inside = trades.filter((x) => x.t >= start && x.t < current + base);
  const before = trades.filter((x) => x.t < start);
  const price = (x: Trade) => (side === 0 ? x.p0 : x.p1);
  const ref = before.length > 0 ? price(before.at(-1)!) : inside.length > 0 ? price(inside[0]!) : 0;
  return { volume: inside.reduce((s, x) => s + x.vol, 0), txns: inside.length, change: ref > 0 ? (price(last) / ref - 1) * 100 : 0 };
}

interface PoolModel {
  address: string;
  order: number;
  dex: string;
  tokens: string[];
  figures: Record<string, number>;
}

function poolModel(address: string, order: number): PoolModel {
  const trades = TRADES[address]!;
  const last = trades.at(-1)!;
  const i = order - 2;
  const filler = order >= 2;
  const tokens =
    address === POOL_A ? [WETH.address, USDC.address] : address === POOL_B ? [USDC.address, WETH.address] : fillerIsToken0(i) ? [fillerToken(i).address, USDC.address] : [USDC.address, fillerToken(i).address];
  return {
    address: address.toLowerCase(),
    order,
    dex: address === POOL_A || (filler && fillerIsToken0(i)) ? 'uniswap_v2' : 'sushiswap',
    tokens: tokens.map((t) => t.toLowerCase()),
    figures: {
      volume_usd_24h: windowOf(trades, '24h', 0).volume,
      volume_usd_7d: windowOf(trades, '7d', 0).volume,
      volume_usd_30d: windowOf(trades, '30d', 0).volume,
      liquidity_usd: last.h0 * last.p0 + last.h1 * last.p1,
      txns_24h: windowOf(trades, '24h', 0).txns,
      created_at: createdAt(order),
      price_usd: last.p0,
      price_change_percentage_24h: windowOf(trades, '24h', 0).change,
      price_change_percentage_48h: windowOf(trades, '48h', 0).change,
      price_change_percentage_6h: windowOf(trades, '6h', 0).change,
      price_change_percentage_1h: windowOf(trades, '1h', 0).change,
      price_change_percentage_5m: windowOf(trades, '5m', 0).change,
    },
  };
}

const POOLS = ETH_POOLS.map(poolModel);
const POOL_ORDERS = Object.keys(POOLS[0]!.figures);
/** Orderings whose values are exact (integers, distinct times): the full sequence, ties by id, is checked. */
const EXACT_POOL_ORDERS = ['volume_usd_24h', 'volume_usd_7d', 'volume_usd_30d', 'txns_24h', 'created_at'];

function ranked<T extends { order: number; figures: Record<string, number> }>(rows: readonly T[], by: string, desc: boolean): T[] {
  return [...rows].sort((a, b) => (desc ? b.figures[by]! - a.figures[by]! : a.figures[by]! - b.figures[by]!) || a.order - b.order);
}

interface TokenModel {
  address: string;
  order: number;
  symbol: string;
  figures: Record<string, number>;
  pools: number;
}

/** Token figures from the pools holding it: sums of pool figures; price and change only for single-pool fillers. */
function tokenModel(token: TokenInfo, order: number): TokenModel {
  const address = token.address.toLowerCase();
  const pools = POOLS.filter((p) => p.tokens.includes(address));
  const sum = (f: string) => pools.reduce((s, p) => s + p.figures[f]!, 0);
  const figures: Record<string, number> = {
    volume_usd_24h: sum('volume_usd_24h'),
    volume_usd_7d: sum('volume_usd_7d'),
    volume_usd_30d: sum('volume_usd_30d'),
    liquidity_usd: sum('liquidity_usd'),
    txns_24h: sum('txns_24h'),
    created_at: Math.min(...pools.map((p) => p.figures['created_at']!)),
  };
  if (order >= 2) {
    const i = order - 2;
    const side = fillerIsToken0(i) ? 0 : 1;
    const trades = TRADES[fillerAddress(i)]!;
    const price = side === 0 ? trades.at(-1)!.p0 : trades.at(-1)!.p1;
    figures['price_usd'] = price;
    figures['fdv_usd'] = price * 1e9;
    figures['price_change_percentage_24h'] = windowOf(trades, '24h', side).change;
  }
  return { address, order, symbol: token.symbol, figures, pools: pools.length };
}

/** Ethereum tokens in registration (id) order: WETH, USDC (pool A), then each filler's token. */
const TOKENS = [WETH, USDC, ...Array.from({ length: FILLERS }, (_, i) => fillerToken(i))].map(tokenModel);
const FILLER_TOKENS = TOKENS.slice(2);

const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

function expectClose(actual: unknown, expected: number, what = ''): void {
  expect(typeof actual, what).toBe('number');
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  if (Math.abs((actual as number) - expected) > tolerance) expect(actual, what).toBe(expected);
}

/** Consecutive values are in order (within rounding). */
function expectMonotone(values: readonly number[], desc: boolean, what: string): void {
  for (let i = 1; i < values.length; i++) {
    const [a, b] = [values[i - 1]!, values[i]!];
    const slack = 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    expect(desc ? a >= b - slack : a <= b + slack, `${what} at ${i}: ${a} then ${b}`).toBe(true);
  }
}

// ---------- the engine and the gateway ----------

let dir = '';
let store: Store;
let gateway: Gateway;
let ingest: Ingest;
let shards: LocalShards;
let base = '';
const now = D1 + 86_390;
let block = 1000;

function swapEvents(x: Trade): ChainEvent[] {
  block++;
  const key = (logIndex: number) => ({ blockNumber: block, txIndex: 0, logIndex });
  return [
    { kind: 'sync', key: key(0), timestamp: x.t, pool: x.pool, reserve0: x.r0, reserve1: x.r1 },
    {
      kind: 'swap',
      key: key(1),
      timestamp: x.t,
      pool: x.pool,
      amount0: x.a0,
      amount1: x.a1,
      sqrtPriceX96: 0n,
      liquidity: 0n,
      tick: 0,
      txHash: `0x${block.toString(16).padStart(64, '0')}`,
      sender: '0x1111111111111111111111111111111111111111',
      recipient: '0x2222222222222222222222222222222222222222',
    },
  ];
}

function created(pool: string, dexId: string, factory: string, token0: TokenInfo, token1: TokenInfo, n: number): ChainEvent {
  return { kind: 'pool_created', key: { blockNumber: 10 + n, txIndex: 0, logIndex: 0 }, timestamp: createdAt(n), pool, dexId, factory, protocol: 0, feePpm: 3000, token0, token1 };
}

async function feed(chain: string, events: ChainEvent[]): Promise<void> {
  const result = await ingest.ingest([{ chain, events }]);
  await result.applied;
  await shards.flush();
}

interface Reply {
  status: number;
  body: any;
}

async function get(path: string): Promise<Reply> {
  const r = await fetch(base + path);
  const text = await r.text();
  expect(r.headers.get('content-type')).toBe('application/json');
  return { status: r.status, body: JSON.parse(text) };
}

/** Every row of a cursor-paged search, following next_cursor; checks the envelope on each page. */
async function pageAll(path: string, limit: number): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const r: Reply = await get(`${path}${sep}limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.has_next_page).toBe(r.body.next_cursor !== null);
    expect(r.body.results.length).toBeLessThanOrEqual(limit);
    rows.push(...r.body.results);
    cursor = r.body.next_cursor;
    if (cursor === null) return rows;
  }
  throw new Error('too many pages');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'search-test-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  shards = new LocalShards(views, store);
  ingest = new Ingest(store, views, shards);
  await ingest.registerNetworks(NETWORKS);
  const [uni, sushi] = NETWORKS[0]!.dexes as [NetworkInfo['dexes'][number], NetworkInfo['dexes'][number]];
  const creations: ChainEvent[] = [
    created(POOL_A, uni.id, uni.factory, WETH, USDC, 0),
    created(POOL_B, sushi.id, sushi.factory, USDC, WETH, 1),
    ...Array.from({ length: FILLERS }, (_, i) =>
      fillerIsToken0(i) ? created(fillerAddress(i), uni.id, uni.factory, fillerToken(i), USDC, 2 + i) : created(fillerAddress(i), sushi.id, sushi.factory, USDC, fillerToken(i), 2 + i),
    ),
  ];
  const trades = Object.values(TRADES)
    .flat()
    .sort((a, b) => a.t - b.t);
  await feed('ethereum', [...creations, ...trades.flatMap(swapEvents)]);
  const ray = NETWORKS[1]!.dexes[0]!;
  await feed('solana', [created(POOL_SOL, ray.id, ray.factory, WSOL, SOL_USDC, 0), ...swapEvents(TRADE_SOL)]);
  gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => now }, { host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${gateway.port}`;
});

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

// ---------- pool search ----------

describe('pool search orderings', () => {
  it('pages through every pool once for every order_by and sort, in that order', async () => {
    for (const order of POOL_ORDERS) {
      for (const desc of [true, false]) {
        const sort = desc ? 'desc' : 'asc';
        const rows = await pageAll(`/networks/ethereum/pools/search?order_by=${order}&sort=${sort}`, 4);
        const ids = rows.map((r) => r.id as string);
        const what = `${order} ${sort}`;
        expect([...ids].sort(), what).toEqual(POOLS.map((p) => p.address).sort());
        if (EXACT_POOL_ORDERS.includes(order)) expect(ids, what).toEqual(ranked(POOLS, order, desc).map((p) => p.address));
        else
          expectMonotone(
            ids.map((id) => POOLS.find((p) => p.address === id)!.figures[order]!),
            desc,
            what,
          );
      }
    }
  });

  it('returns each pool figure as the model computes it', async () => {
    const r = await get('/networks/ethereum/pools/search?limit=100');
    expect(r.body.results).toHaveLength(POOLS.length);
    for (const row of r.body.results) {
      const m = POOLS.find((p) => p.address === row.id)!;
      for (const f of ['volume_usd_24h', 'volume_usd_7d', 'volume_usd_30d', 'liquidity_usd', 'price_usd', 'price_change_percentage_24h', 'price_change_percentage_48h', 'price_change_percentage_6h', 'price_change_percentage_1h', 'price_change_percentage_5m'])
        expectClose(row[f], m.figures[f]!, `${row.id} ${f}`);
      expect(row.transactions_24h).toBe(m.figures['txns_24h']);
      expect(row.created_at).toBe(iso(m.figures['created_at']!));
      expect(row.dex_id).toBe(m.dex);
    }
  });

  it('rejects volume_usd and unknown orderings, listing the twelve accepted', async () => {
    for (const order of ['volume_usd', 'fdv_usd', 'price_change_percentage_30m']) {
      const r = await get(`/networks/ethereum/pools/search?order_by=${order}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'order_by' });
      expect(r.body.accepted).toEqual(POOL_ORDERS.map((o) => o));
    }
  });

  it('keeps a cursor tied to its order_by', async () => {
    const first = await get('/networks/ethereum/pools/search?order_by=created_at&limit=3');
    expect(first.body.results.map((r: { id: string }) => r.id)).toEqual(ranked(POOLS, 'created_at', true).slice(0, 3).map((p) => p.address));
    const crossed = await get(`/networks/ethereum/pools/search?order_by=liquidity_usd&limit=3&cursor=${first.body.next_cursor}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.param).toBe('cursor');
  });
});

describe('pool search filters', () => {
  const ids = (r: Reply) => (r.body.results as { id: string }[]).map((x) => x.id).sort();
  const expected = (keep: (p: PoolModel) => boolean) =>
    POOLS.filter(keep)
      .map((p) => p.address)
      .sort();

  it('applies every range filter, inclusive, with negatives and decimals', async () => {
    const cases: [string, (p: PoolModel) => boolean][] = [
      ['volume_usd_24h_min=300&volume_usd_24h_max=800', (p) => p.figures['volume_usd_24h']! >= 300 && p.figures['volume_usd_24h']! <= 800],
      ['volume_usd_7d_min=1000', (p) => p.figures['volume_usd_7d']! >= 1000],
      ['volume_usd_30d_max=500.5', (p) => p.figures['volume_usd_30d']! <= 500.5],
      ['liquidity_usd_min=10000&liquidity_usd_max=20000', (p) => p.figures['liquidity_usd']! >= 10_000 && p.figures['liquidity_usd']! <= 20_000],
      ['txns_24h_min=3', (p) => p.figures['txns_24h']! >= 3],
      ['price_usd_min=0.005&price_usd_max=1000', (p) => p.figures['price_usd']! >= 0.005 && p.figures['price_usd']! <= 1000],
      ['price_change_percentage_24h_min=-25&price_change_percentage_24h_max=-5', (p) => p.figures['price_change_percentage_24h']! >= -25 && p.figures['price_change_percentage_24h']! <= -5],
      ['price_change_percentage_48h_min=5', (p) => p.figures['price_change_percentage_48h']! >= 5],
      ['price_change_percentage_6h_max=0', (p) => p.figures['price_change_percentage_6h']! <= 0],
      ['price_change_percentage_1h_min=0.1', (p) => p.figures['price_change_percentage_1h']! >= 0.1],
      ['price_change_percentage_5m_min=-1e-3', (p) => p.figures['price_change_percentage_5m']! >= -1e-3],
    ];
    for (const [q, keep] of cases) {
      const r = await get(`/networks/ethereum/pools/search?limit=100&${q}`);
      expect(r.status, q).toBe(200);
      const want = expected(keep);
      expect(want.length, `${q} selects something and not everything`).toBeGreaterThan(0);
      expect(ids(r), q).toEqual(want);
      for (const pair of q.split('&')) {
        const [name, value] = pair.split('=') as [string, string];
        expect(r.body.query[name], `${q} echoes ${name}`).toBe(Number(value));
      }
    }
  });

  it('bounds creation time inclusively in every time format', async () => {
    const n4 = createdAt(4);
    const n9 = createdAt(9);
    const keep = (p: PoolModel) => p.figures['created_at']! >= n4 && p.figures['created_at']! <= n9;
    for (const [after, before] of [
      [`${n4}`, `${n9}`],
      [iso(n4), iso(n9)],
      [encodeURIComponent(iso(n4).replace('Z', '+00:00')), encodeURIComponent(`${iso(n9 + 3600).slice(0, 13)}:00:00+01:00`)],
      [`-${now - n4}s`, `-${now - n9}s`],
    ] as const) {
      const r = await get(`/networks/ethereum/pools/search?limit=100&created_after=${after}&created_before=${before}`);
      expect(r.status, `${after} ${before}`).toBe(200);
      expect(ids(r), `${after} ${before}`).toEqual(expected(keep));
      expect(r.body.query).toMatchObject({ created_after: iso(n4), created_before: iso(n9) });
    }
    const all = await get('/networks/ethereum/pools/search?limit=100&created_after=0');
    expect(all.body.results).toHaveLength(POOLS.length);
    expect(all.body.query.created_after).toBe('1970-01-01T00:00:00Z');
    const day = await get(`/networks/ethereum/pools/search?limit=100&created_before=${iso(CREATED0).slice(0, 10)}`);
    expect(ids(day)).toEqual(expected((p) => p.figures['created_at']! <= Math.floor(CREATED0 / 86_400) * 86_400));
    const bad = await get('/networks/ethereum/pools/search?created_after=yesterday');
    expect(bad.body).toMatchObject({ error: 'invalid_parameter', param: 'created_after' });
  });

  it('filters by token_address and dex_name, unknown ones giving empty results', async () => {
    const tk3 = fillerToken(3).address;
    const byToken = await get(`/networks/ethereum/pools/search?token_address=${tk3.toUpperCase().replace('0X', '0x')}`);
    expect(ids(byToken)).toEqual([fillerAddress(3)]);
    expect(byToken.body.query.token_address).toBe(tk3.toUpperCase().replace('0X', '0x'));
    const usdc = await get(`/networks/ethereum/pools/search?limit=100&token_address=${USDC.address}`);
    expect(ids(usdc)).toEqual(expected((p) => p.tokens.includes(USDC.address.toLowerCase())));
    const unknown = await get('/networks/ethereum/pools/search?token_address=0xdead');
    expect(unknown.status).toBe(200);
    expect(unknown.body.results).toEqual([]);
    expect(unknown.body.has_next_page).toBe(false);
    const uni = await get('/networks/ethereum/pools/search?limit=100&dex_name=UniSwap_V2');
    expect(ids(uni)).toEqual(expected((p) => p.dex === 'uniswap_v2'));
    expect(uni.body.query.dex_name).toBe('UniSwap_V2');
    const display = await get('/networks/ethereum/pools/search?dex_name=Uniswap%20V2');
    expect(display.status).toBe(200);
    expect(display.body.results).toEqual([]);
    const both = await get(`/networks/ethereum/pools/search?limit=100&dex_name=sushiswap&token_address=${USDC.address}&txns_24h_min=2`);
    expect(ids(both)).toEqual(expected((p) => p.dex === 'sushiswap' && p.figures['txns_24h']! >= 2));
  });

  it('combines filters with an ordering and a cursor on the global search, and drops unknown parameters', async () => {
    const q = 'order_by=liquidity_usd&sort=asc&liquidity_usd_min=5000&chains=ethereum,solana&volume_24h_min=1&sort_by=x';
    const rows = await pageAll(`/pools/search?${q}`, 3);
    const want = [...POOLS.filter((p) => p.figures['liquidity_usd']! >= 5000).map((p) => [p.address, p.figures['liquidity_usd']!] as const), [POOL_SOL, 300_000] as const];
    expect(rows.map((r) => r.id).sort()).toEqual(want.map(([a]) => a).sort());
    expectMonotone(
      rows.map((r) => r.liquidity_usd),
      false,
      'liquidity asc',
    );
    const first = await get(`/pools/search?${q}`);
    expect(first.body.query).toEqual({ limit: 10, order_by: 'liquidity_usd', sort: 'asc', chains: ['ethereum', 'solana'], liquidity_usd_min: 5000 });
  });

  it('rejects numbers that are not finite decimals, naming the parameter', async () => {
    for (const [name, value] of [
      ['volume_usd_24h_min', 'NaN'],
      ['liquidity_usd_max', 'Infinity'],
      ['price_usd_min', '1e309'],
      ['price_change_percentage_24h_min', 'abc'],
      ['volume_usd_7d_max', '1,5'],
      ['price_change_percentage_5m_max', '--1'],
      ['txns_24h_min', '-1'],
      ['txns_24h_min', '1.5'],
    ] as const) {
      const r = await get(`/networks/ethereum/pools/search?${name}=${value}`);
      expect(r.status, `${name}=${value}`).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: name });
      expect(r.body.message).toMatch(new RegExp(`^invalid query param: ${name} `));
    }
    const empty = await get('/networks/ethereum/pools/search?volume_usd_24h_min=');
    expect(empty.status).toBe(200);
    expect(empty.body.query.volume_usd_24h_min).toBeUndefined();
  });
});

// ---------- token search ----------

describe('token search', () => {
  const TOKEN_ORDERS = ['volume_usd_24h', 'volume_usd_7d', 'volume_usd_30d', 'liquidity_usd', 'txns_24h', 'price_change_percentage_24h', 'created_at', 'fdv_usd'];

  it('returns token rows summed over their pools, price and change from the token side', async () => {
    const r = await get('/networks/ethereum/tokens/search?limit=100');
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(TOKENS.length);
    expect(r.body.query).toEqual({ limit: 100, order_by: 'volume_usd_24h', sort: 'desc' });
    for (const row of r.body.results) {
      const m = TOKENS.find((t) => t.address === row.id)!;
      expect(row.address).toBe(row.id);
      expect(row).toMatchObject({ chain: 'ethereum', symbol: m.symbol, pools_count: m.pools, created_at: iso(m.figures['created_at']!) });
      for (const [f, v] of Object.entries(m.figures)) if (f !== 'created_at') expectClose(row[f], v, `${m.symbol} ${f}`);
    }
    const tk1 = r.body.results.find((x: { symbol: string }) => x.symbol === 'TK1');
    expect(tk1.price_change_percentage_24h).toBeCloseTo(100 * (MULTIPLIERS[1]! - 1), 6); // token 1 of its pool
    expect(tk1.decimals).toBe(18);
  });

  it('orders by each of the eight orderings, paging every token once', async () => {
    for (const order of TOKEN_ORDERS) {
      for (const desc of [true, false]) {
        const sort = desc ? 'desc' : 'asc';
        const what = `${order} ${sort}`;
        const rows = await pageAll(`/networks/ethereum/tokens/search?order_by=${order}&sort=${sort}`, 5);
        expect(rows.map((x) => x.id).sort(), what).toEqual(TOKENS.map((t) => t.address).sort());
        expectMonotone(
          rows.map((x) => (order === 'created_at' ? Date.parse(x.created_at) : x[order])),
          desc,
          what,
        );
        if (['volume_usd_24h', 'txns_24h', 'created_at'].includes(order)) expect(rows.map((x) => x.id), what).toEqual(ranked(TOKENS, order, desc).map((t) => t.address));
      }
    }
    const fillers = await get('/networks/ethereum/tokens/search?order_by=price_change_percentage_24h&limit=100&fdv_usd_max=1e8');
    // Equal multipliers give equal changes up to rounding, so the order is checked on the model's values.
    const fillerIds: string[] = fillers.body.results.map((x: { id: string }) => x.id);
    expect([...fillerIds].sort()).toEqual(FILLER_TOKENS.map((t) => t.address).sort());
    expectMonotone(
      fillerIds.map((id) => FILLER_TOKENS.find((t) => t.address === id)!.figures['price_change_percentage_24h']!),
      true,
      'filler price change',
    );
  });

  it('rejects ordering by price and by short price-change windows', async () => {
    for (const order of ['price_usd', 'price_change_percentage_6h', 'price_change_percentage_1h', 'price_change_percentage_5m', 'volume_usd']) {
      const r = await get(`/tokens/search?order_by=${order}`);
      expect(r.status, order).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'order_by', accepted: TOKEN_ORDERS });
    }
  });

  it('applies its filters, fdv aliases included', async () => {
    const ids = (r: Reply) => (r.body.results as { id: string }[]).map((x) => x.id).sort();
    const want = (keep: (t: TokenModel) => boolean, from = TOKENS) =>
      from
        .filter(keep)
        .map((t) => t.address)
        .sort();
    const fdv = await get('/networks/ethereum/tokens/search?limit=100&fdv_usd_min=3e6&fdv_usd_max=8000000');
    expect(ids(fdv)).toEqual(want((t) => t.figures['fdv_usd']! >= 3e6 && t.figures['fdv_usd']! <= 8e6, FILLER_TOKENS));
    expect(fdv.body.query).toMatchObject({ fdv_usd_min: 3e6, fdv_usd_max: 8e6 });
    const alias = await get('/networks/ethereum/tokens/search?limit=100&fdv_min=3e6&fdv_max=8000000');
    expect(ids(alias)).toEqual(ids(fdv));
    const txns = await get('/networks/ethereum/tokens/search?limit=100&txns_24h_min=2&txns_24h_max=2');
    expect(ids(txns)).toEqual(want((t) => t.figures['txns_24h'] === 2));
    const vol = await get('/networks/ethereum/tokens/search?limit=100&volume_usd_24h_min=500&liquidity_usd_max=30000');
    expect(ids(vol)).toEqual(want((t) => t.figures['volume_usd_24h']! >= 500 && t.figures['liquidity_usd']! <= 30_000));
    const recent = await get(`/networks/ethereum/tokens/search?limit=100&created_after=${createdAt(2)}&price_change_percentage_24h_max=-0.5&price_usd_min=0.003`);
    expect(ids(recent)).toEqual(want((t) => t.figures['price_change_percentage_24h']! <= -0.5 && t.figures['price_usd']! >= 0.003, FILLER_TOKENS));
    const bad = await get('/networks/ethereum/tokens/search?fdv_min=lots');
    expect(bad.body).toMatchObject({ error: 'invalid_parameter', param: 'fdv_min' });
    expect((await get('/networks/nope/tokens/search')).status).toBe(404);
  });

  it('searches across the networks in chains', async () => {
    const sol = await get('/tokens/search?chains=solana');
    expect(sol.body.results.map((x: { id: string; chain: string }) => [x.id, x.chain]).sort()).toEqual([
      [SOL_USDC.address, 'solana'],
      [WSOL.address, 'solana'],
    ]);
    expect(sol.body.query.chains).toEqual(['solana']);
    const all = await pageAll('/tokens/search', 7);
    expect(all).toHaveLength(TOKENS.length + 2);
    expect((await get('/tokens/search?chains=solana,nope')).body.param).toBe('chains');
  });
});

// ---------- GET /search ----------

describe('GET /search', () => {
  it('requires query', async () => {
    for (const q of ['', '?query=', '?query=%20%20', '?q=weth']) {
      const r = await get(`/search${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'query' });
    }
  });

  it('ranks exact symbol before prefix, then by 24 h volume, capped at ten', async () => {
    const r = await get('/search?query=tK1');
    expect(r.status).toBe(200);
    const symbols = r.body.tokens.map((t: { symbol: string }) => t.symbol);
    const prefixed = FILLER_TOKENS.filter((t) => t.symbol.startsWith('TK1') && t.symbol !== 'TK1')
      .sort((a, b) => b.figures['volume_usd_24h']! - a.figures['volume_usd_24h']! || a.order - b.order)
      .map((t) => t.symbol);
    expect(symbols).toEqual(['TK1', ...prefixed]);
    const tk1 = r.body.tokens[0];
    const m = TOKENS.find((t) => t.symbol === 'TK1')!;
    expect(tk1).toMatchObject({ id: m.address, name: 'Token 1', chain: 'ethereum', decimals: 18, total_supply: '1000000000000000000000000000' });
    expectClose(tk1.price_usd, m.figures['price_usd']!);
    expectClose(tk1.fdv, m.figures['fdv_usd']!);
    expectClose(tk1.volume_usd, m.figures['volume_usd_24h']!);
    expectClose(tk1.liquidity_usd, m.figures['liquidity_usd']!);
    expectClose(tk1.price_usd_change, m.figures['price_change_percentage_24h']!);
    expect(r.body.pools[0].id).toBe(fillerAddress(1));
    expect(r.body.pools.map((p: { id: string }) => p.id).sort()).toEqual([1, 10, 11].map(fillerAddress).sort());
    const many = await get('/search?query=tk');
    expect(many.body.tokens).toHaveLength(10);
    expect(many.body.tokens.map((t: { symbol: string }) => t.symbol)).toEqual(
      [...FILLER_TOKENS]
        .sort((a, b) => b.figures['volume_usd_24h']! - a.figures['volume_usd_24h']! || a.order - b.order)
        .slice(0, 10)
        .map((t) => t.symbol),
    );
  });

  it('matches names, addresses by prefix, and DEXes', async () => {
    const usdc = await get('/search?query=usd%20coin');
    expect(usdc.body.tokens.map((t: { id: string; chain: string }) => t.chain)).toEqual(['ethereum', 'solana']); // ethereum's USDC trades more
    const pool = await get(`/search?query=${POOL_A.slice(0, 12).toUpperCase().replace('0X', '0x')}`);
    expect(pool.body.pools).toHaveLength(1);
    const row = pool.body.pools[0];
    const m = POOLS[0]!;
    expect(row).toMatchObject({ id: m.address, dex_id: 'uniswap_v2', dex_name: 'Uniswap V2', chain: 'ethereum', transactions: m.figures['txns_24h'], created_at: iso(createdAt(0)), fee: 3000 });
    expectClose(row.volume_usd, m.figures['volume_usd_24h']!);
    expectClose(row.price_usd, m.figures['price_usd']!);
    expectClose(row.last_price_change_usd_24h, m.figures['price_change_percentage_24h']!);
    expectClose(row.last_price_change_usd_1h, m.figures['price_change_percentage_1h']!);
    expectClose(row.last_price_change_usd_5m, m.figures['price_change_percentage_5m']!);
    expect(row.tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['WETH', 'USDC']);
    // Pool rows carry their tokens in full, as token rows and pool details do.
    for (const t of row.tokens) {
      const token = [WETH, USDC].find((x) => x.symbol === t.symbol)!;
      expect(Object.keys(t).sort()).toEqual(['added_at', 'chain', 'decimals', 'id', 'name', 'symbol']);
      // Both tokens arrived with the first pool.
      expect(t).toEqual({ id: token.address.toLowerCase(), name: token.name, symbol: token.symbol, chain: 'ethereum', decimals: token.decimals, added_at: iso(createdAt(0)) });
    }
    const dex = await get('/search?query=SWAP');
    expect(dex.body.dexes.map((d: { dex_id: string }) => d.dex_id)).toEqual(['sushiswap', 'uniswap_v2'].sort((a, b) => {
      const vol = (id: string) => POOLS.filter((p) => p.dex === id).reduce((s, p) => s + p.figures['volume_usd_24h']!, 0);
      return vol(b) - vol(a);
    }));
    const uni = dex.body.dexes.find((d: { dex_id: string }) => d.dex_id === 'uniswap_v2');
    const uniPools = POOLS.filter((p) => p.dex === 'uniswap_v2');
    expect(uni).toMatchObject({ id: 'uniswap_v2', dex_name: 'Uniswap V2', chain: 'ethereum', protocol: 'uniswap_v2', pools_count: uniPools.length, created_at: iso(createdAt(0)) });
    expectClose(uni.volume_usd_24h, uniPools.reduce((s, p) => s + p.figures['volume_usd_24h']!, 0));
    expect(uni.txns_24h).toBe(uniPools.reduce((s, p) => s + p.figures['txns_24h']!, 0));
    const none = await get('/search?query=zzzz-nothing');
    expect(none.body).toEqual({ tokens: [], pools: [], dexes: [] });
  });
});
