/**
 * The history endpoints (pool transactions, pool indicators, token OHLCV, token indicators) over a
 * real in-process engine and gateway, fetched over HTTP. Expected figures are computed here from
 * the events fed, with the definitions of the interface, not by calling engine or gateway code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainEvent, NetworkInfo, TokenInfo } from '../engine/events/model.js';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { startGateway, type Gateway, type GatewayContext } from '../gateway/server.js';

const T0 = 1_700_006_400; // 2023-11-15T00:00:00Z
const DAY = 86_400;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const MINUTES = 40;
const NOW = T0 + MINUTES * 60 + 60;

const USDC: TokenInfo = { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 };
const WETH: TokenInfo = { address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, totalSupply: 10n ** 24n, role: 2 };
const TKN: TokenInfo = { address: '0x00000000000000000000000000000000000E0001', name: 'Token', symbol: 'TKN', decimals: 18, totalSupply: 10n ** 27n, role: 3 };

const POOL_A = '0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc'; // WETH/USDC
const POOL_B = '0x397FF1542f962076d0BFE58eA045FfA2d347ACa0'; // USDC/WETH
const POOL_C = '0x00000000000000000000000000000000000C0001'; // TKN/USDC
const SENDER = '0x1111111111111111111111111111111111111111';
const RECIPIENT = '0x2222222222222222222222222222222222222222';

const NETWORKS: NetworkInfo[] = [
  {
    id: 'ethereum',
    displayName: 'Ethereum',
    blockTimeSeconds: 12,
    dexes: [{ id: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f' }],
  },
];

/** One swap: WETH's USD price after it, USD volume (the USDC leg), whether WETH left the pool. */
interface Trade {
  pool: string;
  t: number;
  price: number;
  vol: number;
  buy: boolean;
  block: number;
}

const priceA = (i: number) => 2000 + ((i * 37) % 23) * 5 - (i % 4) * 7;
const priceB = (i: number) => 1990 + ((i * 13) % 17) * 3;
const MINUTES_B = [0, 1, 2, 3, 4, ...Array.from({ length: 10 }, (_, k) => 30 + k)];

const TRADES_A: Trade[] = Array.from({ length: MINUTES }, (_, i) => ({ pool: POOL_A, t: T0 + 60 * i + 5, price: priceA(i), vol: 100 + ((i * 53) % 900), buy: i % 3 !== 0, block: 0 }));
const TRADES_B: Trade[] = MINUTES_B.map((i) => ({ pool: POOL_B, t: T0 + 60 * i + 30, price: priceB(i), vol: 200 + ((i * 31) % 500), buy: i % 2 === 0, block: 0 }));

let block = 1000;
const hashOf = (b: number) => `0x${b.toString(16).padStart(64, '0')}`;

function syncEvent(pool: string, t: number, r0: bigint, r1: bigint): ChainEvent {
  return { kind: 'sync', key: { blockNumber: block, txIndex: 0, logIndex: 0 }, timestamp: t, pool, reserve0: r0, reserve1: r1 };
}

function swapEvents(x: Trade): ChainEvent[] {
  x.block = ++block;
  const usdc = BigInt(x.vol) * E6;
  // Pool A holds 1000 WETH against price x 1000 USDC; pool B price x 500 USDC against 500 WETH.
  const a = x.pool === POOL_A;
  const [r0, r1] = a ? [1000n * E18, BigInt(x.price * 1000) * E6] : [BigInt(x.price * 500) * E6, 500n * E18];
  const weth = x.buy ? -E18 : E18;
  const cash = x.buy ? usdc : -usdc;
  return [
    syncEvent(x.pool, x.t, r0, r1),
    {
      kind: 'swap',
      key: { blockNumber: block, txIndex: 0, logIndex: 1 },
      timestamp: x.t,
      pool: x.pool,
      amount0: a ? weth : cash,
      amount1: a ? cash : weth,
      sqrtPriceX96: 0n,
      liquidity: 0n,
      tick: 0,
      txHash: hashOf(block),
      sender: SENDER,
      recipient: RECIPIENT,
    },
  ];
}

/** Pool C: TKN at 0.5 USDC; events at T0 - 8 d (beyond the 7-day cap), - 6 d, - 5 d (add), - 4 d (remove). */
const C_MINT = { a0: 1_234_567_890_123_456_789_012n, a1: 987_654_321n };
const C_BURN = { a0: 5n * E18 + 1n, a1: 1n };
const C_TIMES = [T0 - 8 * DAY, T0 - 6 * DAY, T0 - 5 * DAY, T0 - 4 * DAY];
const C_BLOCKS: number[] = [];

function poolCEvents(): ChainEvent[] {
  const out: ChainEvent[] = [];
  const reserves = (t: number) => syncEvent(POOL_C, t, 2000n * E18, 1000n * E6);
  for (const t of C_TIMES.slice(0, 2)) {
    C_BLOCKS.push(++block);
    out.push(reserves(t), {
      kind: 'swap',
      key: { blockNumber: block, txIndex: 0, logIndex: 1 },
      timestamp: t,
      pool: POOL_C,
      amount0: -E18,
      amount1: E6 / 2n,
      sqrtPriceX96: 0n,
      liquidity: 0n,
      tick: 0,
      txHash: hashOf(block),
      sender: SENDER,
      recipient: RECIPIENT,
    });
  }
  for (const [k, kind] of [[2, 'mint'], [3, 'burn']] as const) {
    C_BLOCKS.push(++block);
    const amounts = kind === 'mint' ? C_MINT : C_BURN;
    out.push(reserves(C_TIMES[k]!), {
      kind,
      key: { blockNumber: block, txIndex: 0, logIndex: 2 },
      timestamp: C_TIMES[k]!,
      pool: POOL_C,
      amount0: amounts.a0,
      amount1: amounts.a1,
      liquidity: 1n,
      tickLower: 0,
      tickUpper: 0,
      owner: SENDER,
      txHash: hashOf(block),
    });
  }
  return out;
}

// ---------- the model ----------

interface Candle {
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

function candlesOf(trades: readonly Trade[], seconds: number): Candle[] {
  const out: Candle[] = [];
  for (const x of trades) {
    const time = Math.floor(x.t / seconds) * seconds;
    const last = out.at(-1);
    if (last !== undefined && last.time === time) {
      last.high = Math.max(last.high, x.price);
      last.low = Math.min(last.low, x.price);
      last.close = x.price;
      last.volume += x.vol;
    } else out.push({ time, open: x.price, high: x.price, low: x.price, close: x.price, volume: x.vol });
  }
  return out;
}

/** WETH over pools A and B: prices weighted by each pool's liquidity now (both sides' reserves in USD). */
function wethCandles(seconds: number): Candle[] {
  const a = candlesOf(TRADES_A, seconds);
  const b = candlesOf(TRADES_B, seconds);
  const wA = 2 * 1000 * TRADES_A.at(-1)!.price; // 1000 WETH + price x 1000 USDC
  const wB = 2 * 500 * TRADES_B.at(-1)!.price; // price x 500 USDC + 500 WETH
  const times = [...new Set([...a, ...b].map((c) => c.time))].sort((x, y) => x - y);
  return times.map((time) => {
    const parts = [
      [a.find((c) => c.time === time), wA],
      [b.find((c) => c.time === time), wB],
    ].filter((p): p is [Candle, number] => p[0] !== undefined);
    const w = parts.reduce((s, [, x]) => s + x, 0);
    const avg = (f: (c: Candle) => number) => parts.reduce((s, [c, x]) => s + f(c) * x, 0) / w;
    return { time, open: avg((c) => c.open), high: avg((c) => c.high), low: avg((c) => c.low), close: avg((c) => c.close), volume: parts.reduce((s, [c]) => s + c.volume, 0) };
  });
}

// Indicator definitions, written out independently (plain arrays, recursion from the definitions).
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

function smaOf(x: number[], n: number): (number | null)[] {
  return x.map((_, i) => (i + 1 < n ? null : mean(x.slice(i + 1 - n, i + 1))));
}

function emaOf(x: (number | null)[], n: number): (number | null)[] {
  const first = x.findIndex((v) => v !== null);
  const out: (number | null)[] = x.map(() => null);
  if (first < 0 || first + n > x.length) return out;
  out[first + n - 1] = mean(x.slice(first, first + n) as number[]);
  for (let i = first + n; i < x.length; i++) out[i] = (x[i]! * 2) / (n + 1) + (out[i - 1]! * (n - 1)) / (n + 1);
  return out;
}

function rsiOf(x: number[], n: number): (number | null)[] {
  const out: (number | null)[] = x.map(() => null);
  const up = x.map((v, i) => (i === 0 ? 0 : Math.max(0, v - x[i - 1]!)));
  const down = x.map((v, i) => (i === 0 ? 0 : Math.max(0, x[i - 1]! - v)));
  let g = 0;
  let l = 0;
  for (let i = n; i < x.length; i++) {
    if (i === n) {
      g = mean(up.slice(1, n + 1));
      l = mean(down.slice(1, n + 1));
    } else {
      g = (g * (n - 1) + up[i]!) / n;
      l = (l * (n - 1) + down[i]!) / n;
    }
    out[i] = l === 0 ? (g === 0 ? null : 100) : 100 - 100 / (1 + g / l);
  }
  return out;
}

function indicatorsOf(x: number[], period: number, fast: number, slow: number, signal: number, k: number) {
  const f = emaOf(x, fast);
  const s = emaOf(x, slow);
  const line = x.map((_, i) => (f[i] === null || s[i] === null ? null : f[i]! - s[i]!));
  const sig = emaOf(line, signal);
  const mid = smaOf(x, period);
  const sd = x.map((_, i) => {
    if (i + 1 < period) return null;
    const w = x.slice(i + 1 - period, i + 1);
    const m = mean(w);
    return Math.sqrt(mean(w.map((v) => (v - m) ** 2)));
  });
  return x.map((_, i) => ({
    sma: mid[i]!,
    ema: emaOf(x, period)[i]!,
    rsi: rsiOf(x, period)[i]!,
    macd: { macd: line[i]!, signal: sig[i]!, histogram: line[i] === null || sig[i] === null ? null : line[i]! - sig[i]! },
    bbands: { upper: mid[i] === null ? null : mid[i]! + k * sd[i]!, middle: mid[i]!, lower: mid[i] === null ? null : mid[i]! - k * sd[i]! },
  }));
}

const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

function expectClose(actual: unknown, expected: number | null, what = ''): void {
  if (expected === null) {
    expect(actual, what).toBeNull();
    return;
  }
  expect(typeof actual, what).toBe('number');
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  if (Math.abs((actual as number) - expected) > tolerance) expect(actual, what).toBe(expected);
}

/** Compares nested objects of numbers and nulls with expectClose. */
function expectDeepClose(actual: unknown, expected: unknown, what: string): void {
  if (expected === null || typeof expected === 'number') return expectClose(actual, expected as number | null, what);
  expect(Object.keys(actual as object).sort(), what).toEqual(Object.keys(expected as object).sort());
  for (const [k, v] of Object.entries(expected as object)) expectDeepClose((actual as Record<string, unknown>)[k], v, `${what}.${k}`);
}

function expectCandles(actual: unknown, expected: readonly Candle[], seconds: number): void {
  const rows = actual as Record<string, unknown>[];
  expect(rows.map((r) => r['timestamp'])).toEqual(expected.map((c) => iso(c.time)));
  rows.forEach((r, i) => {
    const c = expected[i]!;
    expect(r['time_open']).toBe(iso(c.time));
    expect(r['time_close']).toBe(iso(c.time + seconds));
    for (const f of ['open', 'high', 'low', 'close', 'volume'] as const) expectClose(r[f], c[f], `${f} ${i}`);
  });
}

// ---------- the engine and the gateway ----------

let dir = '';
let store: Store;
let gateway: Gateway;
let base = '';

interface Reply {
  status: number;
  body: any;
}

async function get(path: string): Promise<Reply> {
  const r = await fetch(base + path);
  expect(r.headers.get('content-type')).toBe('application/json');
  return { status: r.status, body: JSON.parse(await r.text()) };
}

async function expect400(path: string, param: string): Promise<Record<string, unknown>> {
  const r = await get(path);
  expect(r.status, path).toBe(400);
  expect(r.body.error, path).toBe('invalid_parameter');
  expect(r.body.param, path).toBe(param);
  expect(r.body.message, path).toContain(param);
  return r.body;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'history-test-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  await ingest.registerNetworks(NETWORKS);
  const uni = NETWORKS[0]!.dexes[0]!;
  const created = (pool: string, token0: TokenInfo, token1: TokenInfo, n: number): ChainEvent => ({
    kind: 'pool_created',
    key: { blockNumber: 10 + n, txIndex: 0, logIndex: 0 },
    timestamp: T0 - 10 * DAY,
    pool,
    dexId: uni.id,
    factory: uni.factory,
    protocol: 0,
    feePpm: 3000,
    token0,
    token1,
  });
  const trades = [...TRADES_A, ...TRADES_B].sort((x, y) => x.t - y.t);
  const events = [created(POOL_A, WETH, USDC, 0), created(POOL_B, USDC, WETH, 1), created(POOL_C, TKN, USDC, 2), ...poolCEvents(), ...trades.flatMap(swapEvents)];
  const result = await ingest.ingest([{ chain: 'ethereum', events }]);
  await result.applied;
  await shards.flush();
  const context: GatewayContext = { views, registry: ingest.registry, store, ranker: shards, now: () => NOW };
  gateway = await startGateway(context, { host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${gateway.port}`;
});

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

// ---------- tests ----------

const TX_A = `/networks/ethereum/pools/${POOL_A}/transactions`;
/** Pool A's swaps newest first, as ids. */
const idsA = () => [...TRADES_A].reverse().map((x) => `${x.block}:0:1`);

describe('GET /networks/{network}/pools/{pool_address}/transactions', () => {
  it('answers a bare array, newest first, ten by default, with every field', async () => {
    const r = await get(TX_A);
    expect(r.status).toBe(200);
    expect(r.body.map((x: { id: string }) => x.id)).toEqual(idsA().slice(0, 10));
    const x = TRADES_A.at(-1)!;
    expect(r.body[0]).toEqual({
      id: `${x.block}:0:1`,
      transaction_hash: hashOf(x.block),
      type: 'swap',
      token_0_symbol: 'WETH',
      token_1_symbol: 'USDC',
      price_0: expect.any(Number),
      price_1: expect.any(Number),
      price_0_usd: expect.any(Number),
      price_1_usd: expect.any(Number),
      created_at: iso(x.t),
      created_at_block_number: x.block,
      transaction_index: 0,
      log_index: 1,
      pool_id: POOL_A.toLowerCase(),
      sender: SENDER,
      recipient: RECIPIENT,
      token_0: WETH.address.toLowerCase(),
      token_1: USDC.address.toLowerCase(),
      amount_0: x.buy ? '-1' : '1',
      amount_1: x.buy ? `${x.vol}` : `-${x.vol}`,
      volume_usd: expect.any(Number),
    });
    expectClose(r.body[0].price_0, x.price, 'price_0');
    expectClose(r.body[0].price_1, 1 / x.price, 'price_1');
    expectClose(r.body[0].price_0_usd, x.price, 'price_0_usd');
    expectClose(r.body[0].price_1_usd, 1, 'price_1_usd');
    expectClose(r.body[0].volume_usd, x.vol, 'volume_usd');
  });

  it('pages by number (0 counting as 1) and by cursor, strictly older, each item once', async () => {
    const all = idsA();
    const ids = (b: { id: string }[]) => b.map((x) => x.id);
    expect(ids((await get(`${TX_A}?page=0&limit=7`)).body)).toEqual(all.slice(0, 7));
    expect(ids((await get(`${TX_A}?page=2&limit=7`)).body)).toEqual(all.slice(7, 14));
    expect(ids((await get(`${TX_A}?page=6&limit=7`)).body)).toEqual(all.slice(35, 40));
    expect((await get(`${TX_A}?page=100&limit=7`)).body).toEqual([]);
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const r = await get(`${TX_A}?limit=15${cursor === '' ? '' : `&cursor=${cursor}`}`);
      expect(r.status).toBe(200);
      if (r.body.length === 0) break;
      seen.push(...ids(r.body));
      cursor = r.body.at(-1).id;
    }
    expect(seen).toEqual(all);
  });

  it('keeps to from (inclusive) and to (exclusive), in any time form', async () => {
    const from = TRADES_A[5]!.t;
    const to = TRADES_A[10]!.t;
    const expected = idsA().filter((_, k) => {
      const i = MINUTES - 1 - k;
      return i >= 5 && i < 10;
    });
    const r = await get(`${TX_A}?from=${from}&to=${iso(to)}&limit=100`);
    expect(r.body.map((x: { id: string }) => x.id)).toEqual(expected);
    expect((await get(`${TX_A}?from=${from}&to=${from}`)).body).toEqual([]);
  });

  it('caps history to the last 7 days, and reports adds and removes with exact decimal amounts', async () => {
    const r = await get(`/networks/ethereum/pools/${POOL_C}/transactions?from=-30d`);
    expect(r.status).toBe(200);
    expect(r.body.map((x: { id: string; type: string }) => [x.id, x.type])).toEqual([
      [`${C_BLOCKS[3]}:0:2`, 'remove'],
      [`${C_BLOCKS[2]}:0:2`, 'add'],
      [`${C_BLOCKS[1]}:0:1`, 'swap'],
    ]);
    expect(r.body[0]).toMatchObject({ amount_0: '-5.000000000000000001', amount_1: '-0.000001', created_at: iso(C_TIMES[3]!), token_0_symbol: 'TKN' });
    expect(r.body[1]).toMatchObject({ amount_0: '1234.567890123456789012', amount_1: '987.654321', sender: SENDER, recipient: SENDER });
    expect(r.body[2]).toMatchObject({ amount_0: '-1', amount_1: '0.5' });
    expectClose(r.body[2].price_0, 0.5, 'price_0');
    expectClose(r.body[2].price_1, 2, 'price_1');
  });

  it('rejects bad page, limit, cursor, from and to, naming them; 404 for unknown pools', async () => {
    await expect400(`${TX_A}?page=101`, 'page');
    await expect400(`${TX_A}?page=-1`, 'page');
    await expect400(`${TX_A}?limit=0`, 'limit');
    await expect400(`${TX_A}?limit=101`, 'limit');
    await expect400(`${TX_A}?cursor=abc`, 'cursor');
    await expect400(`${TX_A}?from=yesterday`, 'from');
    await expect400(`${TX_A}?to=99999999999999`, 'to');
    await expect400(`${TX_A}?from=-1h&to=-2h`, 'to');
    expect((await get('/networks/ethereum/pools/0x000000000000000000000000000000000000dead/transactions')).status).toBe(404);
    expect((await get(`/networks/nope/pools/${POOL_A}/transactions`)).status).toBe(404);
  });
});

const IND_A = `/networks/ethereum/pools/${POOL_A}/indicators`;
const closesA = candlesOf(TRADES_A, 60).map((c) => c.close);

function expectIndicatorRows(body: any[], candles: Candle[], closes: number[], firstIndex: number, p: [number, number, number, number, number], keys?: string[]): void {
  const expected = indicatorsOf(closes, ...p);
  expect(body.map((r) => r.timestamp)).toEqual(candles.slice(firstIndex, firstIndex + body.length).map((c) => iso(c.time)));
  body.forEach((row, k) => {
    const i = firstIndex + k;
    const e: Record<string, unknown> = { ...expected[i]! };
    for (const name of Object.keys(e)) if (keys !== undefined && !keys.includes(name)) delete e[name];
    expect(row.time_open).toBe(iso(candles[i]!.time));
    expect(row.time_close).toBe(iso(candles[i]!.time + 60));
    const { timestamp: _t, time_open: _o, time_close: _c, ...values } = row;
    expectDeepClose(values, { close: closes[i]!, ...e }, `row ${i}`);
  });
}

describe('GET /networks/{network}/pools/{pool_address}/indicators', () => {
  it('computes all five over the requested candles, warmed up on the candles before start', async () => {
    const candles = candlesOf(TRADES_A, 60);
    const r = await get(`${IND_A}?interval=1m&start=${T0 + 20 * 60}&period=5&macd_fast=3&macd_slow=6&macd_signal=4&bbands_stddev=1.5`);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(20);
    expectIndicatorRows(r.body, candles, closesA, 20, [5, 3, 6, 4, 1.5]);
  });

  it('uses the defaults (14; 12/26/9; 2) and answers null where history is too short', async () => {
    const candles = candlesOf(TRADES_A, 60);
    const r = await get(`${IND_A}?interval=1m&start=${T0}`);
    expect(r.body).toHaveLength(MINUTES);
    expectIndicatorRows(r.body, candles, closesA, 0, [14, 12, 26, 9, 2]);
    expect(r.body[12].sma).toBeNull();
    expect(r.body[13].sma).not.toBeNull();
    expect(r.body[13].rsi).toBeNull();
    expect(r.body[24].macd.macd).toBeNull();
    expect(r.body[32].macd.signal).toBeNull();
    expect(r.body[33].macd.signal).not.toBeNull();
  });

  it('counts back from end, keeps only the indicators asked for, and prices token 1 with inversed', async () => {
    const candles = candlesOf(TRADES_A, 60);
    const r = await get(`${IND_A}?interval=1m&start=${T0}&end=${T0 + 38 * 60}&count_back=5&indicators=sma,rsi&period=3`);
    expect(r.body).toHaveLength(5);
    expectIndicatorRows(r.body, candles, closesA, 34, [3, 12, 26, 9, 2], ['sma', 'rsi']);
    const inv = await get(`${IND_A}?interval=1m&start=${T0 + 30 * 60}&inversed=true&indicators=rsi,sma&period=3`);
    expect(inv.body).toHaveLength(10);
    for (const row of inv.body) {
      expectClose(row.close, 1);
      expectClose(row.sma, 1);
      expect(row.rsi).toBeNull(); // no change at all: 0/0
    }
  });

  it('rejects bad indicator parameters, naming them and listing accepted indicators', async () => {
    const q = `${IND_A}?interval=1m&start=${T0}`;
    const body = await expect400(`${q}&indicators=sma,foo`, 'indicators');
    expect(body.accepted).toEqual(['sma', 'ema', 'rsi', 'macd', 'bbands']);
    await expect400(`${q}&indicators=sma,,rsi`, 'indicators');
    await expect400(`${q}&indicators=SMA`, 'indicators');
    // An empty value counts as absent (the rule of every query parameter): all five.
    expect(Object.keys((await get(`${q}&indicators=`)).body[0]).sort()).toEqual(['bbands', 'close', 'ema', 'macd', 'rsi', 'sma', 'time_close', 'time_open', 'timestamp']);
    await expect400(`${q}&period=1`, 'period');
    await expect400(`${q}&period=201`, 'period');
    await expect400(`${q}&macd_fast=30`, 'macd_fast');
    await expect400(`${q}&macd_signal=x`, 'macd_signal');
    await expect400(`${q}&bbands_stddev=0`, 'bbands_stddev');
    await expect400(`${q}&bbands_stddev=abc`, 'bbands_stddev');
    await expect400(`${q}&bbands_stddev=11`, 'bbands_stddev');
    await expect400(`${IND_A}?interval=1m`, 'start');
    await expect400(`${IND_A}?start=${T0}&interval=2m`, 'interval');
    await expect400(`${q}&end=${T0 - 60}`, 'end');
  });
});

const WETH_OHLCV = `/networks/ethereum/tokens/${WETH.address}/ohlcv`;

describe('GET /networks/{network}/tokens/{token_address}/ohlcv', () => {
  it('averages the prices of every pool from the token side, weighted by liquidity, and sums volume', async () => {
    const r = await get(`${WETH_OHLCV}?interval=1m&start=${T0}&limit=1000`);
    expect(r.status).toBe(200);
    expectCandles(r.body, wethCandles(60), 60);
    const hourly = await get(`${WETH_OHLCV}?interval=1h&start=${T0}`);
    expectCandles(hourly.body, wethCandles(3600), 3600);
  });

  it('takes the first limit candles from start, or the last count_back up to end', async () => {
    const all = wethCandles(60);
    expectCandles((await get(`${WETH_OHLCV}?interval=1m&start=${T0 + 2 * 60 + 10}&limit=4`)).body, all.slice(2, 6), 60);
    expectCandles((await get(`${WETH_OHLCV}?interval=1m&start=${T0}&end=${T0 + 33 * 60}&count_back=6`)).body, all.slice(28, 34), 60);
    expect((await get(`${WETH_OHLCV}?interval=1m&start=${T0 - DAY}&end=${T0 - 60}`)).body).toEqual([]);
  });

  it('rejects bad parameters, naming them; 404 for unknown tokens', async () => {
    await expect400(`${WETH_OHLCV}?interval=1m`, 'start');
    await expect400(`${WETH_OHLCV}?start=${T0}&limit=1001`, 'limit');
    await expect400(`${WETH_OHLCV}?start=${T0}&interval=7m`, 'interval');
    expect((await get(`/networks/ethereum/tokens/0x000000000000000000000000000000000000dead/ohlcv?start=${T0}`)).status).toBe(404);
  });
});

describe('GET /networks/{network}/tokens/{token_address}/indicators', () => {
  it('computes the indicators over the token candles', async () => {
    const candles = wethCandles(60);
    const closes = candles.map((c) => c.close);
    const start = candles[10]!.time;
    const r = await get(`/networks/ethereum/tokens/${WETH.address.toLowerCase()}/indicators?interval=1m&start=${start}&period=4&macd_fast=2&macd_slow=5&macd_signal=3`);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(candles.length - 10);
    expectIndicatorRows(r.body, candles, closes, 10, [4, 2, 5, 3, 2]);
  });

  it('rejects bad parameters and unknown tokens', async () => {
    await expect400(`/networks/ethereum/tokens/${WETH.address}/indicators?start=${T0}&indicators=vwap`, 'indicators');
    expect((await get(`/networks/ethereum/tokens/0x000000000000000000000000000000000000dead/indicators?start=${T0}`)).status).toBe(404);
  });
});
