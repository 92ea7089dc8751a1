/**
 * The gateway over a real in-process engine: events are fed through ingest, applied by LocalShards
 * into shared views, sealed candles persisted to LMDB, and every answer is fetched over HTTP.
 * Expected figures are computed here from the trades fed, with the definitions of the interface
 * (candles, rolling windows), not by calling engine code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLog } from '../engine/log.js';
import { Ingest } from '../engine/ingest/ingest.js';
import type { ChainEvent, NetworkInfo, TokenInfo } from '../engine/events/model.js';
import { LocalShards } from '../engine/shards/local.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { startGateway, type Gateway, type GatewayContext } from '../gateway/server.js';

const T0 = 1_700_006_400; // 2023-11-15T00:00:00Z
const D1 = T0 + 86_400; // 2023-11-16T00:00:00Z
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const E9 = 10n ** 9n;

const USDC: TokenInfo = { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 };
const WETH: TokenInfo = { address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, totalSupply: 10n ** 24n, role: 2 };
const SOL_USDC: TokenInfo = { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 };
const WSOL: TokenInfo = { address: 'So11111111111111111111111111111111111111112', name: 'Wrapped SOL', symbol: 'SOL', decimals: 9, totalSupply: 10n ** 18n, role: 2 };

const POOL_A = '0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc'; // WETH/USDC on uniswap_v2
const POOL_B = '0x397FF1542f962076d0BFE58eA045FfA2d347ACa0'; // USDC/WETH on sushiswap
const POOL_SOL = '7XawhbbxtsRcQA8KTkHT9f9nc6d69UwqCDh6U5EEbEmX'; // SOL/USDC on raydium
const FILLERS = 24;
const fillerAddress = (i: number) => `0x${(0xf000 + i).toString(16).padStart(40, '0')}`;
const fillerToken = (i: number): TokenInfo => ({
  address: `0x${(0xe000 + i).toString(16).padStart(40, '0')}`,
  name: `Token ${i}`,
  symbol: `TK${i}`,
  decimals: 18,
  totalSupply: 10n ** 27n,
  role: 3,
});
const fillerVolume = (i: number) => 100 * (((i * 7) % 10) + 1); // 100..1000, each value twice or three times

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

/** One swap as the test sees it: prices after it (USD), USD volume, whether token 0 left the pool. */
interface Trade {
  pool: string;
  t: number;
  p0: number;
  p1: number;
  vol: number;
  buy: boolean;
  r0: bigint;
  r1: bigint;
  a0: bigint;
  a1: bigint;
}

/** Pool A (WETH/USDC): reserves 1000 WETH against price x 1000 USDC; volume is the USDC leg. */
function tradeA(t: number, price: number, vol: number, buy: boolean): Trade {
  const usdc = BigInt(vol) * E6;
  return { pool: POOL_A, t, p0: price, p1: 1, vol, buy, r0: 1000n * E18, r1: BigInt(price * 1000) * E6, a0: buy ? -E18 : E18, a1: buy ? usdc : -usdc };
}

/** Pool B (USDC/WETH): reserves price x 500 USDC against 500 WETH; volume is the USDC leg. */
function tradeB(t: number, wethPrice: number, vol: number, buy: boolean): Trade {
  const usdc = BigInt(vol) * E6;
  return { pool: POOL_B, t, p0: 1, p1: wethPrice, vol, buy, r0: BigInt(wethPrice * 500) * E6, r1: 500n * E18, a0: buy ? -usdc : usdc, a1: buy ? E18 : -E18 };
}

function tradeFiller(i: number): Trade {
  const usdc = BigInt(fillerVolume(i)) * E6;
  const buy = i % 2 === 0;
  return {
    pool: fillerAddress(i),
    t: D1 + 12 * 3600 + i * 10,
    p0: (i + 1) / 1000,
    p1: 1,
    vol: fillerVolume(i),
    buy,
    r0: 10n ** 24n,
    r1: BigInt(1000 * (i + 1)) * E6,
    a0: buy ? -E18 : E18,
    a1: buy ? usdc : -usdc,
  };
}

const TRADES_A: Trade[] = [
  tradeA(T0 + 100, 2000, 5000, true),
  tradeA(T0 + 130, 2010, 3000, false),
  tradeA(T0 + 400, 2005, 1000, true),
  tradeA(T0 + 3700, 2020, 2500, true),
  tradeA(T0 + 7300, 1990, 4000, false),
  tradeA(T0 + 43_300, 1980, 1500, false),
  tradeA(D1 + 50, 2050, 6000, true),
  tradeA(D1 + 72_010, 2100, 2000, true),
  tradeA(D1 + 82_805, 2080, 700, false),
  tradeA(D1 + 85_800, 2090, 800, true),
  tradeA(D1 + 86_000, 2095, 900, true),
  tradeA(D1 + 86_100, 2085, 1100, false),
  tradeA(D1 + 86_130, 2088, 1200, true),
  tradeA(D1 + 86_230, 2092, 1300, false),
  tradeA(D1 + 86_339, 2099, 1400, true),
  tradeA(D1 + 86_370, 2101, 1600, true),
];
const TRADES_B: Trade[] = [
  tradeB(D1 + 21_600, 1995, 10_000, true),
  tradeB(D1 + 22_800, 2001, 1_500, false),
  tradeB(D1 + 79_800, 2040, 2000, false),
  tradeB(D1 + 85_920, 2060, 3000, true),
  tradeB(D1 + 86_280, 2075, 500, false),
];
const TRADES_FILLERS: Trade[] = Array.from({ length: FILLERS }, (_, i) => tradeFiller(i));
const TRADE_SOL: Trade = {
  pool: POOL_SOL,
  t: D1 + 36_000,
  p0: 150,
  p1: 1,
  vol: 777,
  buy: true,
  r0: 1000n * E9,
  r1: 150_000n * E6,
  a0: -E9,
  a1: 777n * E6,
};

/** Creation order within the test = dense pool ids (ties in search are broken by it). */
const ETH_POOLS = [POOL_A, POOL_B, ...Array.from({ length: FILLERS }, (_, i) => fillerAddress(i))];
const CREATED_AT = T0 + 10;

// ---------- the model: candles and windows from trades ----------

interface Candle {
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

function candlesOf(trades: readonly Trade[], seconds: number, side: 0 | 1): Candle[] {
  const out: Candle[] = [];
  for (const x of trades) {
    const time = Math.floor(x.t / seconds) * seconds;
    const price = side === 0 ? x.p0 : x.p1;
    const last = out.at(-1);
    if (last !== undefined && last.time === time) {
      last.high = Math.max(last.high, price);
      last.low = Math.min(last.low, price);
      last.close = price;
      last.volume += x.vol;
    } else out.push({ time, open: price, high: price, low: price, close: price, volume: x.vol });
  }
  return out;
}

/** Rolling window: base candles from floor(asOf/B)*B - W + B on; change vs. the last price before it. */
const WINDOW_DEFS: Readonly<Record<string, readonly [baseSeconds: number, buckets: number]>> = {
  '5m': [60, 5],
  '15m': [300, 3],
  '30m': [300, 6],
  '1h': [300, 12],
  '6h': [3600, 6],
  '24h': [3600, 24],
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
  const buys = inside.filter((x) => x.buy);
  return {
    volume: inside.reduce((s, x) => s + x.vol, 0),
    buyVolume: buys.reduce((s, x) => s + x.vol, 0),
    txns: inside.length,
    buys: buys.length,
    change: ref > 0 ? (price(last) / ref - 1) * 100 : 0,
  };
}

const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

function expectClose(actual: unknown, expected: number, what = ''): void {
  expect(typeof actual, what).toBe('number');
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  if (Math.abs((actual as number) - expected) > tolerance) expect(actual, what).toBe(expected);
}

function expectCandles(actual: unknown, expected: readonly Candle[], seconds: number): void {
  expect(Array.isArray(actual)).toBe(true);
  const rows = actual as Record<string, unknown>[];
  expect(rows.map((r) => r['timestamp'])).toEqual(expected.map((c) => iso(c.time)));
  rows.forEach((r, i) => {
    const c = expected[i]!;
    expect(r['time_open']).toBe(iso(c.time));
    expect(r['time_close']).toBe(iso(c.time + seconds));
    expectClose(r['open'], c.open, `open ${i}`);
    expectClose(r['high'], c.high, `high ${i}`);
    expectClose(r['low'], c.low, `low ${i}`);
    expectClose(r['close'], c.close, `close ${i}`);
    expectClose(r['volume'], c.volume, `volume ${i}`);
  });
}

// ---------- the engine and the gateway ----------

let dir = '';
let store: Store;
let gateway: Gateway;
let ingest: Ingest;
let shards: LocalShards;
let base = '';
let context: GatewayContext;
let block = 1000;
let now = D1 + 86_390; // 2023-11-16T23:59:50Z

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
  return { kind: 'pool_created', key: { blockNumber: 10 + n, txIndex: 0, logIndex: 0 }, timestamp: CREATED_AT, pool, dexId, factory, protocol: 0, feePpm: 3000, token0, token1 };
}

async function feed(chain: string, events: ChainEvent[]): Promise<void> {
  const result = await ingest.ingest([{ chain, events }]);
  await result.applied;
  await shards.flush();
}

interface Reply {
  status: number;
  body: any;
  text: string;
}

async function get(path: string, init?: RequestInit): Promise<Reply> {
  const r = await fetch(base + path, init);
  const text = await r.text();
  expect(r.headers.get('content-type')).toBe('application/json');
  expect(r.headers.get('x-api-plan')).toBe('keyless');
  return { status: r.status, body: JSON.parse(text), text };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  shards = new LocalShards(views, store);
  ingest = new Ingest(store, views, shards);
  await ingest.registerNetworks(NETWORKS);

  const uni = NETWORKS[0]!.dexes[0]!;
  const sushi = NETWORKS[0]!.dexes[1]!;
  const creations: ChainEvent[] = [
    created(POOL_A, uni.id, uni.factory, WETH, USDC, 0),
    created(POOL_B, sushi.id, sushi.factory, USDC, WETH, 1),
    ...Array.from({ length: FILLERS }, (_, i) => {
      const dex = i % 2 === 0 ? uni : sushi;
      return created(fillerAddress(i), dex.id, dex.factory, fillerToken(i), USDC, 2 + i);
    }),
  ];
  const trades = [...TRADES_A, ...TRADES_B, ...TRADES_FILLERS].sort((a, b) => a.t - b.t);
  await feed('ethereum', [...creations, ...trades.flatMap(swapEvents)]);
  const ray = NETWORKS[1]!.dexes[0]!;
  await feed('solana', [created(POOL_SOL, ray.id, ray.factory, WSOL, SOL_USDC, 0), ...swapEvents(TRADE_SOL)]);

  context = { views, registry: ingest.registry, store, ranker: shards, now: () => now };
  gateway = await startGateway(context, { host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${gateway.port}`;
});

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

// ---------- tests ----------

describe('health and routing', () => {
  it('answers /health', async () => {
    const r = await get('/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
  });

  it('answers 404 JSON naming what was not found and its kind, for unknown routes, networks, pools, tokens and methods', async () => {
    const dead = '0x000000000000000000000000000000000000dead';
    const cases: [string, string][] = [
      ['/', 'route "GET /" not found'],
      ['/nope', 'route "GET /nope" not found'],
      ['/health/', 'route "GET /health/" not found'],
      ['/networks/nope/dexes', 'network "nope" not found'],
      ['/networks/nope/pools/search', 'network "nope" not found'],
      ['/networks/nope/tokens/search', 'network "nope" not found'],
      ['/networks/nope/multi/prices?tokens=0x1', 'network "nope" not found'],
      [`/networks/nope/pools/${POOL_A}`, 'network "nope" not found'],
      [`/networks/nope/tokens/${WETH.address}`, 'network "nope" not found'],
      [`/networks/ethereum/pools/${dead}`, `pool "${dead}" not found on network "ethereum"`],
      [`/networks/ethereum/pools/${dead}/ohlcv?start=0`, `pool "${dead}" not found on network "ethereum"`],
      [`/networks/ethereum/pools/${dead}/indicators`, `pool "${dead}" not found on network "ethereum"`],
      [`/networks/ethereum/tokens/${dead}`, `token "${dead}" not found on network "ethereum"`],
      [`/networks/ethereum/tokens/${POOL_A}`, `token "${POOL_A}" not found on network "ethereum"`],
      [`/networks/ethereum/pools/${POOL_A}/trades`, `route "GET /networks/ethereum/pools/${POOL_A}/trades" not found`],
      [`/networks/ethereum/pools/${POOL_A}/ohlcv/1m`, `route "GET /networks/ethereum/pools/${POOL_A}/ohlcv/1m" not found`],
      ['/networks/ethereum/tokens', 'route "GET /networks/ethereum/tokens" not found'],
      ['/networks/%E0%A4%A/dexes', 'network "%E0%A4%A" not found'],
      [`/networks/solana/pools/${POOL_SOL.toLowerCase()}`, `pool "${POOL_SOL.toLowerCase()}" not found on network "solana"`],
      [`/networks/solana/pools/${POOL_A}`, `pool "${POOL_A}" not found on network "solana"`],
      [`/networks/${'n'.repeat(300)}/dexes`, `network "${'n'.repeat(128)}..." not found`],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).toEqual({ error: 'not_found', message });
    }
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await get('/health', { method });
      expect(r.status, method).toBe(404);
      expect(r.body).toEqual({ error: 'not_found', message: `route "${method} /health" not found` });
    }
  });
});

describe('GET /networks', () => {
  it('sums the 24 h window of every pool of each network', async () => {
    const r = await get('/networks');
    expect(r.status).toBe(200);
    const eth = [TRADES_A, TRADES_B, ...TRADES_FILLERS.map((x) => [x])].map((trades) => windowOf(trades, '24h', 0));
    expect(r.body).toHaveLength(2);
    expect(r.body[0]).toMatchObject({ id: 'ethereum', display_name: 'Ethereum', pools_count: 26 });
    expectClose(r.body[0].volume_usd_24h, eth.reduce((s, w) => s + w.volume, 0));
    expect(r.body[0].txns_24h).toBe(eth.reduce((s, w) => s + w.txns, 0));
    expect(r.body[1]).toEqual({ id: 'solana', display_name: 'Solana', volume_usd_24h: 777, txns_24h: 1, pools_count: 1 });
  });
});

describe('GET /networks/{network}/dexes', () => {
  const dexFigures = () => {
    const byDex = new Map<string, { volume: number; txns: number; pools: number }>([
      ['uniswap_v2', { volume: 0, txns: 0, pools: 0 }],
      ['sushiswap', { volume: 0, txns: 0, pools: 0 }],
      ['curve', { volume: 0, txns: 0, pools: 0 }],
    ]);
    const add = (dex: string, trades: Trade[]) => {
      const w = windowOf(trades, '24h', 0);
      const d = byDex.get(dex)!;
      d.volume += w.volume;
      d.txns += w.txns;
      d.pools += 1;
    };
    add('uniswap_v2', TRADES_A);
    add('sushiswap', TRADES_B);
    TRADES_FILLERS.forEach((x, i) => add(i % 2 === 0 ? 'uniswap_v2' : 'sushiswap', [x]));
    return [...byDex.entries()].sort((a, b) => b[1].volume - a[1].volume);
  };

  it('lists DEXes by 24 h volume with their sums and page info', async () => {
    const r = await get('/networks/ethereum/dexes');
    expect(r.status).toBe(200);
    const expected = dexFigures();
    expect(r.body.page_info).toEqual({ limit: 10, page: 1, total_items: 3, total_pages: 1 });
    expect(r.body.dexes.map((d: { dex_id: string }) => d.dex_id)).toEqual(expected.map(([id]) => id));
    r.body.dexes.forEach((d: Record<string, unknown>, i: number) => {
      const [, f] = expected[i]!;
      expect(d['chain']).toBe('ethereum');
      expectClose(d['volume_usd_24h'], f.volume);
      expect(d['txns_24h']).toBe(f.txns);
      expect(d['pools_count']).toBe(f.pools);
    });
    expect(r.body.dexes.find((d: { dex_id: string }) => d.dex_id === 'curve')).toEqual({
      dex_id: 'curve',
      dex_name: 'Curve',
      chain: 'ethereum',
      protocol: 'curve',
      volume_usd_24h: 0,
      txns_24h: 0,
      pools_count: 0,
    });
  });

  it('pages, treating page 0 as 1', async () => {
    const expected = dexFigures().map(([id]) => id);
    const p0 = await get('/networks/ethereum/dexes?page=0&limit=2');
    expect(p0.body.page_info).toEqual({ limit: 2, page: 1, total_items: 3, total_pages: 2 });
    expect(p0.body.dexes.map((d: { dex_id: string }) => d.dex_id)).toEqual(expected.slice(0, 2));
    const p2 = await get('/networks/ethereum/dexes?page=2&limit=2');
    expect(p2.body.dexes.map((d: { dex_id: string }) => d.dex_id)).toEqual(expected.slice(2));
    const p9 = await get('/networks/ethereum/dexes?page=9&limit=2');
    expect(p9.body.dexes).toEqual([]);
  });

  it('rejects bad page and limit', async () => {
    for (const [q, param] of [
      ['limit=101', 'limit'],
      ['limit=0', 'limit'],
      ['page=-1', 'page'],
      ['page=abc', 'page'],
      ['limit=1.5', 'limit'],
    ] as const) {
      const r = await get(`/networks/ethereum/dexes?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error).toBe('invalid_parameter');
      expect(r.body.param).toBe(param);
      expect(r.body.message).toMatch(new RegExp(`^invalid query param: ${param} `));
    }
  });
});

describe('GET /pools/search', () => {
  /** Every pool of both networks by 24 h volume, ties by id (Solana pools come after Ethereum's). */
  const ranking = () => {
    const eth = ETH_POOLS.map((address, i) => {
      const trades = address === POOL_A ? TRADES_A : address === POOL_B ? TRADES_B : [TRADES_FILLERS[i - 2]!];
      return { address: address.toLowerCase(), order: i, volume: windowOf(trades, '24h', 0).volume };
    });
    const sol = { address: POOL_SOL, order: ETH_POOLS.length, volume: TRADE_SOL.vol };
    return [...eth, sol].sort((a, b) => b.volume - a.volume || a.order - b.order).map((r) => r.address);
  };

  it('pages through the pools of every network exactly once, in 24 h volume order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: Reply = await get(`/pools/search?limit=10${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.results.map((row: { id: string }) => row.id));
      cursor = r.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(ranking());
  });

  it('keeps to the networks named in chains, echoing them', async () => {
    const sol = await get('/pools/search?chains=solana');
    expect(sol.body.results.map((row: { id: string; chain: string }) => [row.id, row.chain])).toEqual([[POOL_SOL, 'solana']]);
    expect(sol.body.query).toEqual({ limit: 10, order_by: 'volume_usd_24h', sort: 'desc', chains: ['solana'] });
    const eth = await get('/pools/search?chains=ethereum,ethereum&limit=100');
    expect(eth.body.results).toHaveLength(ETH_POOLS.length);
    expect(eth.body.query.chains).toEqual(['ethereum']);
    const both = await get('/pools/search?chains=solana%2Cethereum&limit=100');
    expect(both.body.results).toHaveLength(ETH_POOLS.length + 1);
  });

  it('rejects an unknown network in chains, listing the ones served', async () => {
    const r = await get('/pools/search?chains=ethereum,eth');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'chains', accepted: ['ethereum', 'solana'] });
    expect((await get('/pools/search?order_by=volume_usd')).status).toBe(400);
  });
});

describe('GET /networks/{network}/pools/search', () => {
  /** Network pools by 24 h volume, ties by creation order. */
  const ranking = (descending: boolean) => {
    const rows = ETH_POOLS.map((address, id) => {
      const trades = address === POOL_A ? TRADES_A : address === POOL_B ? TRADES_B : [TRADES_FILLERS[id - 2]!];
      return { address: address.toLowerCase(), id, volume: windowOf(trades, '24h', 0).volume };
    });
    return rows.sort((a, b) => (descending ? b.volume - a.volume : a.volume - b.volume) || a.id - b.id).map((r) => r.address);
  };

  it('pages through every pool exactly once, in 24 h volume order', async () => {
    for (const sort of ['desc', 'asc'] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `limit=7&sort=${sort}${cursor === null ? '' : `&cursor=${cursor}`}`;
        const r = await get(`/networks/ethereum/pools/search?${q}`);
        expect(r.status).toBe(200);
        expect(r.body.query).toEqual({ limit: 7, order_by: 'volume_usd_24h', sort, ...(cursor === null ? {} : { cursor }) });
        seen.push(...r.body.results.map((row: { id: string }) => row.id));
        expect(r.body.has_next_page).toBe(r.body.next_cursor !== null);
        cursor = r.body.next_cursor;
        pages++;
      } while (cursor !== null);
      expect(pages).toBe(4);
      expect(seen).toEqual(ranking(sort === 'desc'));
    }
  });

  it('returns rows with the pool figures', async () => {
    const r = await get('/networks/ethereum/pools/search?limit=1');
    expect(r.body.has_next_page).toBe(true);
    const row = r.body.results[0];
    const w24 = windowOf(TRADES_A, '24h', 0);
    expect(row.id).toBe(POOL_A.toLowerCase());
    expect(row).toMatchObject({
      dex_id: 'uniswap_v2',
      dex_name: 'Uniswap V2',
      chain: 'ethereum',
      transactions_24h: w24.txns,
      created_at: iso(CREATED_AT),
      created_at_block_number: 10,
      fee: 3000,
      tokens: [
        { id: WETH.address.toLowerCase(), name: 'Wrapped Ether', symbol: 'WETH', chain: 'ethereum' },
        { id: USDC.address.toLowerCase(), name: 'USD Coin', symbol: 'USDC', chain: 'ethereum' },
      ],
    });
    expectClose(row.volume_usd_24h, w24.volume);
    expectClose(row.volume_usd_7d, windowOf(TRADES_A, '7d', 0).volume);
    expectClose(row.volume_usd_30d, windowOf(TRADES_A, '30d', 0).volume);
    expectClose(row.price_usd, 2101);
    expectClose(row.liquidity_usd, 1000 * 2101 + 2101 * 1000);
    expectClose(row.price_change_percentage_24h, w24.change);
  });

  it('rejects orderings it does not serve, bad sort, limit and cursor', async () => {
    const orderings = [
      'volume_usd_24h', 'volume_usd_7d', 'volume_usd_30d', 'liquidity_usd', 'txns_24h', 'created_at', 'price_usd',
      'price_change_percentage_24h', 'price_change_percentage_48h', 'price_change_percentage_6h', 'price_change_percentage_1h', 'price_change_percentage_5m',
    ];
    for (const order of ['volume_usd', 'nope']) {
      const r = await get(`/networks/ethereum/pools/search?order_by=${order}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'order_by', accepted: orderings });
      expect(r.body.message).toMatch(/^invalid query param: order_by/);
    }
    const sort = await get('/networks/ethereum/pools/search?sort=up');
    expect(sort.body).toMatchObject({ error: 'invalid_parameter', param: 'sort', accepted: ['desc', 'asc'] });
    for (const q of ['limit=101', 'limit=0', 'limit=NaN', 'limit=-3', 'limit=99999999999999999999']) {
      const r = await get(`/networks/ethereum/pools/search?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.param, q).toBe('limit');
    }
    const forged = Buffer.from('v1|volume_usd_24h|desc|abc|1').toString('base64url');
    for (const cursor of ['garbage!', 'Zm9v', forged, encodeURIComponent('ü')]) {
      const r = await get(`/networks/ethereum/pools/search?cursor=${cursor}`);
      expect(r.status, cursor).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'cursor' });
      expect(r.body.message).toMatch(/^invalid query param: cursor/);
    }
    const first = await get('/networks/ethereum/pools/search?limit=2');
    const crossed = await get(`/networks/ethereum/pools/search?sort=asc&cursor=${first.body.next_cursor}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.param).toBe('cursor');
  });
});

describe('GET /networks/{network}/pools/{pool_address}', () => {
  const WINDOW_NAMES = ['24h', '6h', '1h', '30m', '15m', '5m'];

  it('returns prices, reserves, liquidity and every window of the pool', async () => {
    const r = await get(`/networks/ethereum/pools/${POOL_A}`);
    expect(r.status).toBe(200);
    const d = r.body;
    expect(d).toMatchObject({
      id: POOL_A.toLowerCase(),
      chain: 'ethereum',
      dex_id: 'uniswap_v2',
      dex_name: 'Uniswap V2',
      factory_id: NETWORKS[0]!.dexes[0]!.factory,
      created_at: iso(CREATED_AT),
      created_at_block_number: 10,
      fee: 3000,
      price_time: iso(TRADES_A.at(-1)!.t),
      transactions: TRADES_A.length,
    });
    expect(d.tokens).toEqual([
      { id: WETH.address.toLowerCase(), name: 'Wrapped Ether', symbol: 'WETH', chain: 'ethereum', decimals: 18, added_at: iso(CREATED_AT) },
      { id: USDC.address.toLowerCase(), name: 'USD Coin', symbol: 'USDC', chain: 'ethereum', decimals: 6, added_at: iso(CREATED_AT) },
    ]);
    expectClose(d.last_price, 2101);
    expectClose(d.last_price_usd, 2101);
    expectClose(d.volume_usd, windowOf(TRADES_A, '24h', 0).volume);
    expect(d.token_reserves).toHaveLength(2);
    expect(d.token_reserves[0]).toMatchObject({ token_id: WETH.address.toLowerCase(), reserve: (1000n * E18).toString() });
    expectClose(d.token_reserves[0].reserve_normalized, 1000);
    expectClose(d.token_reserves[0].reserve_usd, 2_101_000);
    expect(d.token_reserves[1]).toMatchObject({ token_id: USDC.address.toLowerCase(), reserve: (2_101_000n * E6).toString() });
    expectClose(d.token_reserves[1].reserve_normalized, 2_101_000);
    expectClose(d.token_reserves[1].reserve_usd, 2_101_000);
    expectClose(d.liquidity_usd, 4_202_000);
    for (const name of WINDOW_NAMES) {
      const w = windowOf(TRADES_A, name, 0);
      const got = d[name];
      expectClose(got.volume_usd, w.volume, name);
      expectClose(got.buy_usd, w.buyVolume, name);
      expectClose(got.sell_usd, w.volume - w.buyVolume, name);
      expect(got.txns, name).toBe(w.txns);
      expect(got.buys, name).toBe(w.buys);
      expect(got.sells, name).toBe(w.txns - w.buys);
      expectClose(got.last_price_usd_change, w.change, name);
    }
    // The data must exercise the windows: distinct sums and a non-zero change in each.
    expect(new Set(WINDOW_NAMES.map((n) => d[n].txns)).size).toBeGreaterThan(3);
    for (const name of WINDOW_NAMES) expect(d[name].last_price_usd_change, name).not.toBe(0);
  });

  it('matches EVM addresses in any case', async () => {
    const lower = await get(`/networks/ethereum/pools/${POOL_A.toLowerCase()}`);
    const upper = await get(`/networks/ethereum/pools/0X${POOL_A.slice(2).toUpperCase()}`);
    expect(upper.status).toBe(200);
    expect(upper.text).toBe(lower.text);
    const sol = await get(`/networks/solana/pools/${POOL_SOL}`);
    expect(sol.status).toBe(200);
    expect(sol.body.id).toBe(POOL_SOL);
    expect(sol.body.tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['SOL', 'USDC']);
  });

  it('swaps the roles of the tokens with inversed=true', async () => {
    for (const flag of ['true', '1']) {
      const r = await get(`/networks/ethereum/pools/${POOL_B}?inversed=${flag}`);
      expect(r.status).toBe(200);
      const d = r.body;
      expect(d.tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['WETH', 'USDC']);
      expect(d.token_reserves.map((t: { token_id: string }) => t.token_id)).toEqual([WETH.address.toLowerCase(), USDC.address.toLowerCase()]);
      expect(d.token_reserves[0].reserve).toBe((500n * E18).toString());
      expectClose(d.last_price, 2075);
      expectClose(d.last_price_usd, 2075);
      for (const name of WINDOW_NAMES) {
        const w = windowOf(TRADES_B, name, 1);
        const got = d[name];
        expectClose(got.volume_usd, w.volume, name);
        expectClose(got.buy_usd, w.volume - w.buyVolume, name);
        expectClose(got.sell_usd, w.buyVolume, name);
        expect(got.buys, name).toBe(w.txns - w.buys);
        expect(got.sells, name).toBe(w.buys);
        expectClose(got.last_price_usd_change, w.change, name);
      }
      expect(d['24h'].last_price_usd_change).not.toBe(0);
    }
    const plain = await get(`/networks/ethereum/pools/${POOL_B}?inversed=0`);
    expect(plain.body.tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['USDC', 'WETH']);
    expectClose(plain.body.last_price, 1 / 2075);
    expectClose(plain.body.last_price_usd, 1);
    expect(plain.body['24h'].last_price_usd_change).toBe(0);
    const w = windowOf(TRADES_B, '24h', 0);
    expect(plain.body['24h'].buys).toBe(w.buys);
    expectClose(plain.body['24h'].buy_usd, w.buyVolume);
  });

  it('tolerates odd but harmless query strings', async () => {
    const plain = await get(`/networks/ethereum/pools/${POOL_A}`);
    for (const q of ['inversed', 'inversed=', 'inversed=&inversed=true', '&&=&%=1&%ZZ', 'inversed=false&inversed=nonsense', 'foo=%E0%A4%A']) {
      const r = await get(`/networks/ethereum/pools/${POOL_A}?${q}`);
      expect(r.status, q).toBe(200);
      expect(r.text, q).toBe(plain.text);
    }
    const broken = await get(`/networks/ethereum/pools/${POOL_A}?inversed=%`);
    expect(broken.status).toBe(400);
    expect(broken.body.param).toBe('inversed');
    const unicodePath = await get('/networks/%C3%BC/pools/%F0%9F%92%A9');
    expect(unicodePath.status).toBe(404);
  });

  it('rejects a non-boolean inversed, listing the accepted values', async () => {
    for (const value of ['yes', 'TRUE', '2', '%C3%BC']) {
      const r = await get(`/networks/ethereum/pools/${POOL_A}?inversed=${value}`);
      expect(r.status, value).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'inversed', accepted: ['true', 'false', '1', '0'] });
    }
  });
});

describe('GET /networks/{network}/pools/{pool_address}/ohlcv', () => {
  const ohlcv = (pool: string, q: string) => get(`/networks/ethereum/pools/${pool}/ohlcv?${q}`);

  it('joins stored and ring candles, oldest first, only where trades happened', async () => {
    const expected = candlesOf(TRADES_A, 60, 0);
    expect(expected).toHaveLength(15); // 7 of them older than the 8-slot 1 m ring
    const r = await ohlcv(POOL_A, `interval=1m&start=${T0}&limit=1000`);
    expect(r.status).toBe(200);
    expectCandles(r.body, expected, 60);
  });

  it('serves every interval from the definition of a candle', async () => {
    for (const [interval, seconds] of [
      ['5m', 300],
      ['10m', 600],
      ['15m', 900],
      ['30m', 1800],
      ['1h', 3600],
      ['6h', 21_600],
      ['12h', 43_200],
      ['24h', 86_400],
    ] as const) {
      const r = await ohlcv(POOL_A, `interval=${interval}&start=${T0}`);
      expect(r.status, interval).toBe(200);
      expectCandles(r.body, candlesOf(TRADES_A, seconds, 0), seconds);
    }
    const byDefault = await ohlcv(POOL_A, `start=${T0}`);
    expectCandles(byDefault.body, candlesOf(TRADES_A, 86_400, 0), 86_400);
  });

  it('takes the first `limit` candles from start, aligned down to the interval', async () => {
    const all = candlesOf(TRADES_A, 60, 0);
    const r = await ohlcv(POOL_A, `interval=1m&start=${T0 + 110}&limit=3`);
    expectCandles(r.body, all.slice(0, 3), 60); // the 00:01 candle opens before start but contains it
    const later = await ohlcv(POOL_A, `interval=1m&start=${T0 + 200}&end=${D1 + 85_800}&limit=1000`);
    expectCandles(
      later.body,
      all.filter((c) => c.time >= T0 + 180 && c.time <= D1 + 85_800),
      60,
    );
  });

  it('counts back from end with count_back, through stored candles too', async () => {
    const all = candlesOf(TRADES_A, 60, 0);
    const last4 = await ohlcv(POOL_A, `interval=1m&start=${T0}&count_back=4`);
    expectCandles(last4.body, all.slice(-4), 60);
    const end = D1 + 86_160; // 23:56:00
    const r = await ohlcv(POOL_A, `interval=1m&start=${T0}&end=${end}&count_back=10`);
    expectCandles(r.body, all.filter((c) => c.time <= end).slice(-10), 60);
    const bounded = await ohlcv(POOL_A, `interval=1m&start=${D1 + 80_000}&end=${end}&count_back=10`);
    expectCandles(bounded.body, all.filter((c) => c.time >= D1 + 79_980 && c.time <= end), 60);
  });

  it('accepts relative, RFC 3339 and date forms of time', async () => {
    const five = candlesOf(TRADES_A, 300, 0);
    const rel = await ohlcv(POOL_A, 'interval=5m&start=-1h');
    const from = Math.floor((now - 3600) / 300) * 300;
    expectCandles(rel.body, five.filter((c) => c.time >= from), 300);
    const rfc = await ohlcv(POOL_A, 'interval=1m&start=2023-11-16T23:50:00Z&end=2023-11-17T01:53:20%2B02:00');
    expectCandles(rfc.body, candlesOf(TRADES_A, 60, 0).filter((c) => c.time >= D1 + 85_800 && c.time <= D1 + 86_000), 60);
    const day = await ohlcv(POOL_A, 'start=2023-11-16');
    expectCandles(day.body, candlesOf(TRADES_A, 86_400, 0).slice(1), 86_400);
    const secs = await ohlcv(POOL_A, 'interval=1h&start=-90s');
    expectCandles(secs.body, candlesOf(TRADES_A, 3600, 0).filter((c) => c.time >= Math.floor((now - 90) / 3600) * 3600), 3600);
  });

  it('prices token 1 with inversed=true', async () => {
    const r = await ohlcv(POOL_B, `interval=1h&start=${T0}&inversed=true`);
    expectCandles(r.body, candlesOf(TRADES_B, 3600, 1), 3600);
    const plain = await ohlcv(POOL_B, `interval=1h&start=${T0}`);
    expectCandles(plain.body, candlesOf(TRADES_B, 3600, 0), 3600);
  });

  it('answers an empty array for a range without trades', async () => {
    const r = await ohlcv(POOL_A, `interval=1m&start=${D1 + 86_400}&end=${D1 + 90_000}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    const before = await ohlcv(POOL_A, `interval=1h&start=0&end=${T0 - 1}`);
    expect(before.body).toEqual([]);
  });

  it('rejects bad parameters, naming them', async () => {
    const cases: [string, string, string[]?][] = [
      ['interval=1h', 'start'],
      ['start=', 'start'],
      ['start=abc', 'start'],
      ['start=-1y', 'start'],
      ['start=2023-02-30', 'start'],
      ['start=2023-11-16T25:00:00Z', 'start'],
      ['start=1.5', 'start'],
      ['start=99999999999999', 'start'],
      ['start=-99999999999d', 'start'],
      [`start=${'9'.repeat(600)}`, 'start'],
      ['start=%E0%A4%A', 'start'],
      ['start=0&end=xyz', 'end'],
      [`start=${D1}&end=${T0}`, 'end'],
      ['start=0&interval=2m', 'interval', ['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '24h']],
      ['start=0&interval=%C3%BC', 'interval', ['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '24h']],
      ['start=0&limit=1001', 'limit'],
      ['start=0&limit=0', 'limit'],
      ['start=0&limit=NaN', 'limit'],
      ['start=0&count_back=0', 'count_back'],
      ['start=0&count_back=-5', 'count_back'],
      ['start=0&count_back=1001', 'count_back'],
      ['start=0&inversed=maybe', 'inversed', ['true', 'false', '1', '0']],
    ];
    for (const [q, param, accepted] of cases) {
      const r = await ohlcv(POOL_A, q);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toBe('invalid_parameter');
      expect(r.body.param, q).toBe(param);
      expect(r.body.message, q).toMatch(new RegExp(`^invalid query param: ${param}\\b`));
      if (accepted !== undefined) expect(r.body.accepted, q).toEqual(accepted);
      else expect(r.body.accepted, q).toBeUndefined();
    }
  });

  it('takes the first of repeated parameters and ignores unknown ones', async () => {
    const r = await ohlcv(POOL_A, `interval=1h&interval=2m&start=${T0}&start=nonsense&foo=bar&%ZZ=1`);
    expect(r.status).toBe(200);
    expectCandles(r.body, candlesOf(TRADES_A, 3600, 0), 3600);
  });
});

describe('removed routes', () => {
  it('answer 410 naming the replacement, whatever their segments hold', async () => {
    const cases: [string, string][] = [
      ['/pools', '/pools/search'],
      ['/networks/ethereum/pools', '/networks/{network}/pools/search'],
      ['/networks/nonsense/pools', '/networks/{network}/pools/search'],
      ['/networks/ethereum/pools/filter?volume_24h_min=1', '/networks/{network}/pools/search'],
      ['/networks/ethereum/dexes/no-such-dex/pools', '/networks/{network}/pools/search'],
      ['/networks/nonsense/dexes/%E0%A4%A/pools', '/networks/{network}/pools/search'],
      ['/networks/ethereum/tokens/0xnot-a-token/pools', '/networks/{network}/pools/search'],
      ['/networks/ethereum/tokens/filter', '/networks/{network}/tokens/search'],
      ['/networks/whatever/tokens/top', '/networks/{network}/tokens/search'],
    ];
    for (const [path, replacement] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(410);
      expect(r.body.error, path).toBe('endpoint_removed');
      expect(r.body.code, path).toBe(410);
      expect(r.body.replacement, path).toBe(replacement);
      expect(r.body.message, path).toMatch(/removed/);
    }
    // The replacement is the bare path clients compare; the filter to set is in the message.
    const dex = await get('/networks/ethereum/dexes/uniswap_v2/pools');
    expect(dex.body).toEqual({
      error: 'endpoint_removed',
      code: 410,
      replacement: '/networks/{network}/pools/search',
      message: 'this endpoint was removed on 2026-06-30; use GET /networks/ethereum/pools/search?dex_name=uniswap_v2',
    });
    const token = await get(`/networks/ethereum/tokens/${WETH.address}/pools`);
    expect(token.body.replacement).toBe('/networks/{network}/pools/search');
    expect(token.body.message).toContain(`GET /networks/ethereum/pools/search?token_address=${WETH.address}`);
  });
});

describe('GET /stats', () => {
  it('counts networks, DEX factories, pools and tokens', async () => {
    const r = await get('/stats');
    expect(r.status).toBe(200);
    const factories = new Set(NETWORKS.flatMap((n) => n.dexes.map((d) => `${n.id}:${d.factory}`))).size;
    // Pools A, B, the fillers and the Solana pool; tokens USDC, WETH, one per filler, and the two Solana tokens.
    expect(r.body).toEqual({ chains: NETWORKS.length, factories, pools: 2 + FILLERS + 1, tokens: 2 + FILLERS + 2 });
  });
});

describe('GET /networks/{network}/multi/prices', () => {
  const weth = TRADES_A.at(-1)!.p0; // pool A is the deepest WETH/USDC pool: it sets the WETH price
  it('prices the tokens asked, in order, each once, leaving out unknown ones', async () => {
    const unknown = '0x000000000000000000000000000000000000beef';
    const r = await get(`/networks/ethereum/multi/prices?tokens=${WETH.address.toUpperCase().replace('0X', '0x')},${unknown},${USDC.address},${WETH.address}`);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(2);
    expect(r.body[0]).toMatchObject({ id: WETH.address.toLowerCase(), chain: 'ethereum' });
    expectClose(r.body[0].price_usd, weth, 'WETH');
    expect(r.body[1]).toEqual({ id: USDC.address.toLowerCase(), chain: 'ethereum', price_usd: 1 });
  });

  it('accepts a percent-encoded comma, and answers [] when nothing has a price', async () => {
    const r = await get(`/networks/ethereum/multi/prices?tokens=${USDC.address}%2C${fillerToken(3).address}`);
    expect(r.body.map((x: { id: string }) => x.id)).toEqual([USDC.address.toLowerCase(), fillerToken(3).address]);
    expectClose(r.body[1].price_usd, TRADES_FILLERS[3]!.p0, 'filler 3');
    const none = await get('/networks/ethereum/multi/prices?tokens=0x000000000000000000000000000000000000beef');
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
    const sol = await get(`/networks/solana/multi/prices?tokens=${WSOL.address}`);
    expect(sol.body).toHaveLength(1);
    expectClose(sol.body[0].price_usd, TRADE_SOL.p0, 'SOL');
    // Base58 addresses are case-sensitive.
    expect((await get(`/networks/solana/multi/prices?tokens=${WSOL.address.toLowerCase()}`)).body).toEqual([]);
  });

  it('rejects no tokens, more than 10, and empty entries, naming tokens; 404 for an unknown network', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => fillerToken(i).address).join(',');
    for (const query of ['', '?tokens=', `?tokens=${eleven}`, `?tokens=${USDC.address},,${WETH.address}`]) {
      const r = await get(`/networks/ethereum/multi/prices${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.error, query).toBe('invalid_parameter');
      expect(r.body.param, query).toBe('tokens');
    }
    const ten = Array.from({ length: 10 }, (_, i) => fillerToken(i).address).join(',');
    expect((await get(`/networks/ethereum/multi/prices?tokens=${ten}`)).body).toHaveLength(10);
    expect((await get(`/networks/nope/multi/prices?tokens=${USDC.address}`)).status).toBe(404);
  });
});

describe('GET /networks/{network}/tokens/{token_address}', () => {
  it('sums every pool of the token from its side, with the price and changes of its route pool', async () => {
    const r = await get(`/networks/ethereum/tokens/${WETH.address.toUpperCase().replace('0X', '0x')}`);
    expect(r.status).toBe(200);
    const b = r.body;
    const price = TRADES_A.at(-1)!.p0; // pool A routes WETH: it is the deeper WETH/USDC pool
    expect(b).toMatchObject({ id: WETH.address.toLowerCase(), name: 'Wrapped Ether', symbol: 'WETH', chain: 'ethereum', decimals: 18 });
    expect(b.total_supply).toBe((10n ** 24n).toString()); // beyond 2^53: decimal text
    expectClose(b.price_usd, price, 'price');
    expectClose(b.fdv, price * 1e6, 'fdv');
    expect(b.summary.pools).toBe(2);
    for (const name of ['24h', '6h', '1h', '30m', '15m', '5m']) {
      const a = windowOf(TRADES_A, name, 0); // WETH is token 0 of pool A: its buys are WETH buys
      const bb = windowOf(TRADES_B, name, 1); // WETH is token 1 of pool B: B's sells are WETH buys
      const w = b.summary[name];
      expectClose(w.volume_usd, a.volume + bb.volume, `${name} volume`);
      expectClose(w.buy_usd, a.buyVolume + (bb.volume - bb.buyVolume), `${name} buy_usd`);
      expect(w.txns, name).toBe(a.txns + bb.txns);
      expect(w.buys, name).toBe(a.buys + (bb.txns - bb.buys));
      expect(w.sells, name).toBe(w.txns - w.buys);
      expectClose(w.last_price_usd_change, a.change, `${name} change`);
      expectClose(w.volume, (a.volume + bb.volume) / price, `${name} volume in WETH`);
    }
    // 1m: the current minute at the chain clock holds pool A's last trade only.
    const last = TRADES_A.at(-1)!;
    const minute = Math.floor(last.t / 60) * 60;
    const inMinute = [...TRADES_A, ...TRADES_B].filter((x) => x.t >= minute);
    expect(inMinute).toHaveLength(1);
    expect(b.summary['1m']).toMatchObject({ txns: 1, buys: 1, sells: 0 });
    expectClose(b.summary['1m'].volume_usd, last.vol, '1m volume');
    const before = TRADES_A.filter((x) => x.t < minute).at(-1)!;
    expectClose(b.summary['1m'].last_price_usd_change, (last.p0 / before.p0 - 1) * 100, '1m change');
  });

  it('gives a small supply as a number, the reference stablecoin at exactly 1 USD, and 404 for unknown tokens', async () => {
    const r = await get(`/networks/ethereum/tokens/${USDC.address}`);
    expect(r.body.total_supply).toBe(10 ** 15);
    expect(r.body.price_usd).toBe(1);
    expect(r.body.summary.pools).toBe(2 + FILLERS);
    expect((await get('/networks/ethereum/tokens/0x000000000000000000000000000000000000beef')).status).toBe(404);
    expect((await get(`/networks/solana/tokens/${WETH.address}`)).status).toBe(404);
    expect((await get(`/networks/nope/tokens/${WETH.address}`)).status).toBe(404);
  });
});

describe('GET /openapi.json', () => {
  it('documents every route served, with the parameters the server checks', async () => {
    const r = await get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const paths = r.body.paths as Record<string, { get: { operationId: string; parameters: { name: string; in: string; required: boolean; schema: { enum?: string[] } }[] } }>;
    const ohlcv = paths['/networks/{network}/pools/{pool_address}/ohlcv']!.get.parameters;
    const param = (name: string) => ohlcv.find((x) => x.name === name)!;
    expect(param('start').required).toBe(true);
    expect(param('end').required).toBe(false);
    expect(param('interval').schema.enum).toEqual(['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '24h']);
    expect(param('network').in).toBe('path');
    expect(paths['/networks/{network}/pools/search']!.get.parameters.find((x) => x.name === 'order_by')!.schema.enum).toContain('liquidity_usd');
    // Each documented path answers 200 when called with its required parameters.
    const examples: Record<string, string> = { network: 'ethereum', pool_address: POOL_A, token_address: WETH.address };
    const required: Record<string, string> = { start: '-1d', tokens: USDC.address, query: 'usdc' };
    for (const [template, item] of Object.entries(paths)) {
      // The stream operations are served on the stream hosts (test/streams-openapi.test.ts).
      if (template.startsWith('/sse/')) continue;
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => examples[name]!);
      const query = item.get.parameters.filter((x) => x.in === 'query' && x.required).map((x) => `${x.name}=${required[x.name]}`);
      const res = await get(query.length > 0 ? `${path}?${query.join('&')}` : path);
      expect(res.status, `${item.get.operationId} ${path}`).toBe(200);
    }
    expect(Object.keys(paths).length).toBeGreaterThanOrEqual(10);
  });
});

describe('after new trades', () => {
  it('serves fresh figures, not the bodies rendered before', async () => {
    const before = await get(`/networks/ethereum/pools/${POOL_A}`);
    const candlesBefore = await get(`/networks/ethereum/pools/${POOL_A}/ohlcv?interval=1m&start=${T0}&count_back=2`);
    const next = tradeA(D1 + 86_385, 2110, 2500, false);
    await feed('ethereum', swapEvents(next));
    const trades = [...TRADES_A, next];
    const after = await get(`/networks/ethereum/pools/${POOL_A}`);
    expect(before.body.transactions).toBe(TRADES_A.length);
    expect(after.body.transactions).toBe(trades.length);
    expectClose(after.body.last_price_usd, 2110);
    expectClose(after.body['5m'].volume_usd, windowOf(trades, '5m', 0).volume);
    const candlesAfter = await get(`/networks/ethereum/pools/${POOL_A}/ohlcv?interval=1m&start=${T0}&count_back=2`);
    expect(candlesAfter.text).not.toBe(candlesBefore.text);
    expectCandles(candlesAfter.body, candlesOf(trades, 60, 0).slice(-2), 60);
  });
});

describe('failures and shutdown', () => {
  it('answers internal_error without details when a handler fails, logs it once with its request id, and keeps serving', async () => {
    const lines: string[] = [];
    const log = createLog({ level: 'info', format: 'json', destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    const failing = await startGateway(
      {
        ...context,
        now: () => {
          throw new Error('clock exploded at /secret/path');
        },
        log,
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      const r = await fetch(`http://127.0.0.1:${failing.port}/networks/ethereum/pools/${POOL_A}/ohlcv?start=-1h`);
      expect(r.status).toBe(500);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(r.headers.get('x-api-plan')).toBe('keyless');
      expect(await r.json()).toEqual({ error: 'internal_error', message: 'internal error' });
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 50, path: `/networks/ethereum/pools/${POOL_A}/ohlcv`, req_id: expect.stringMatching(/^\w+-\w+$/) });
      expect(line['msg']).toMatch(/^internal error: Error: clock exploded/);
      expect(lines[0]).not.toContain('start=-1h');
      const health = await fetch(`http://127.0.0.1:${failing.port}/health`);
      expect(health.status).toBe(200);
    } finally {
      await failing.close();
    }
  });

  it('stops accepting connections once closed', async () => {
    const g = await startGateway(context, { host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${g.port}/health`;
    expect((await fetch(url)).status).toBe(200);
    await g.close();
    await expect(fetch(url)).rejects.toThrow();
  });
});
