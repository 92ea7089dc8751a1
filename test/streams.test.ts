/**
 * The stream hosts over real sockets, against a real in-process engine: trades are fed through
 * ingest and the shard writer, and every event is read back over HTTP, raw (every SSE field) or with
 * the `eventsource` client. Expected payloads are computed here from the trades fed (decimal.js for
 * exact prices and reserves), never by calling the gateway's code.
 */
import { Decimal } from 'decimal.js';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rfc3339 } from '../gateway/http/time.js';
import { SLOW_READER_MS } from '../gateway/streams/client.js';
import { plansWith } from './support/access.js';
import { E18, E6, isData, openRaw, PEPE, POOL_A, POOL_P, refusal, sleep, START, startStreamFixture, USDC, WETH, wethTrade, type Frame, type StreamFixture, type Trade } from './support/streams.js';

const D = Decimal.clone({ precision: 80 });
const weth = WETH.address.toLowerCase();
const usdc = USDC.address.toLowerCase();
const pepe = PEPE.address.toLowerCase();
const poolA = POOL_A.toLowerCase();
const poolP = POOL_P.toLowerCase();

let fx: StreamFixture;
/** Trade time: moves forward through the file, so candles and windows only ever move forward. */
let t = START;

const PLANS = plansWith({
  keyless: { requestsPerMinute: 1_000, concurrentStreams: 3 },
  free: { requestsPerMinute: 1_000, concurrentStreams: 3 },
  dev: { requestsPerMinute: 1_000 },
  pro: { requestsPerMinute: 1_000, credits: 6 },
});

beforeAll(async () => {
  fx = await startStreamFixture(PLANS);
  // A market before anyone streams: WETH at 2000 USDC, PEPE at 0.000002 WETH.
  await fx.trade([wethTrade(t, 2000), pepeTrade(t, 500_000_000n, 1000n)]);
});

afterAll(async () => {
  await fx?.close();
});

/** A trade in POOL_P (PEPE/WETH) leaving `pepe` PEPE against `wethUnits` WETH; the trader bought 1000 PEPE. */
function pepeTrade(at: number, pepeUnits: bigint, wethUnits: bigint, txHash?: string): Trade {
  return { pool: POOL_P, t: at, r0: pepeUnits * E18, r1: wethUnits * E18, a0: -1000n * E18, a1: 2n * 10n ** 15n, ...(txHash ? { txHash } : {}) };
}

/** USD price of WETH in a WETH/USDC pool with these raw reserves, to 18 significant digits. */
function wethPrice(r0: bigint, r1: bigint): Decimal {
  return new D(r1.toString()).div(1e6).div(new D(r0.toString()).div(new D(10).pow(18)));
}
const text18 = (d: Decimal) => d.toSignificantDigits(18).toFixed();

const stream = (role: 'freeStream' | 'paidStream', path: string) => `${fx.url(role)}${path}`;
const parse = (f: Frame) => JSON.parse(f.data) as Record<string, any>;

async function usage(plan: 'free' | 'dev' | 'pro' | 'enterprise', key: string): Promise<number> {
  const host = plan === 'free' ? fx.url('freeRest') : fx.url('paidRest');
  const r = await fetch(`${host}/usage`, { headers: { authorization: key } });
  return ((await r.json()) as { credits_used: number }).credits_used;
}

describe('GET and POST /sse/prices', () => {
  it('streams token_price with an exact decimal price, ISO times on GET, to a keyless caller on a showcase token', async () => {
    const s = await openRaw(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address.toUpperCase().replace('0X', '0x')}`));
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream');
    expect(s.headers['x-api-plan']).toBe('keyless');
    t += 10;
    fx.now = t + 3;
    // 6,000,001 USDC against 3,000 WETH: 2000.000333... USD, not a float's rounding of it.
    const r0 = 3000n * E18;
    const r1 = 6_000_001n * E6;
    await fx.trade([{ pool: POOL_A, t, r0, r1, a0: -E18, a1: 2000n * E6 }]);
    const [f] = await s.waitFrames(1);
    expect(f!.event).toBe('token_price');
    expect(f!.requestId).toBe('0');
    expect(f!.fields).toEqual(['id', 'event', 'request_id', 'data']);
    expect(parse(f!)).toEqual({ address: weth, chain: 'ethereum', price: text18(wethPrice(r0, r1)), timestamp: rfc3339(t + 3), timestamp_price: rfc3339(t) });
    expect(parse(f!).price).toBe('2000.00033333333333');
    s.close();
  });

  it('streams several tokens from one POST with Unix times, token_price and the request_id of each subscription', async () => {
    const body = JSON.stringify([
      { chain: 'ethereum', address: WETH.address, method: 'token_price', request_id: 4_294_967_295 },
      { chain: 'ethereum', address: PEPE.address, method: 'token_price', filter: { anything: true } },
    ]);
    const s = await openRaw(stream('freeStream', '/sse/prices'), { method: 'POST', key: fx.key('free'), body });
    expect(s.status).toBe(200);
    expect(s.headers['x-api-plan']).toBe('free');
    // The paid host (the free one serves answers up to 15 s old, by design).
    const rest = async (path: string) => (await (await fetch(`${fx.url('paidRest')}${path}`, { headers: { authorization: fx.key('dev') } })).json()) as any;
    const poolPath = `/networks/ethereum/pools/${POOL_P}`;
    // PEPE/WETH as it last traded, with WETH at 2000 (the answer is cached until something it depends on moves).
    expect((await rest(poolPath)).last_price_usd).toBeCloseTo(0.004, 8);
    t += 10;
    fx.now = t + 1;
    // Only WETH/USDC trades: PEPE, priced through PEPE/WETH, moves with WETH and is streamed too.
    await fx.trade([wethTrade(t, 2500)]);
    const first = await s.waitFrames(2);
    const byReq = new Map(first.map((f) => [f.requestId, parse(f)]));
    const wethUsd = wethPrice(1000n * E18, 2_500_000n * E6);
    expect(byReq.get('4294967295')).toEqual({ address: weth, chain: 'ethereum', price: '2500', timestamp: t + 1, timestamp_price: t, token_price: t });
    // 1000 WETH / 500,000,000 PEPE (PEPE/WETH as it last traded) x 2500 USD, stamped with the WETH move.
    expect(byReq.get('1')).toEqual({ address: pepe, chain: 'ethereum', price: '0.005', timestamp: t + 1, timestamp_price: t, token_price: t });
    // The same price in the REST token details, at the same moment.
    expect((await rest(`/networks/ethereum/tokens/${PEPE.address}`)).price_usd).toBe(0.005);
    // And the pool's USD figures: 500,000,000 PEPE at 0.005 and 1000 WETH at 2500.
    const details = await rest(poolPath);
    expect([details.last_price_usd, details.liquidity_usd]).toEqual([0.005, 5_000_000]);
    await fx.trade([pepeTrade(t + 1, 400_000_000n, 1000n)]);
    const data = await s.waitFrames(3);
    expect(data).toHaveLength(3);
    expect(data[2]!.requestId).toBe('1');
    // PEPE is priced through PEPE/WETH, then WETH/USDC: 1000 WETH / 400,000,000 PEPE x 2500 USD.
    const pepeUsd = new D(1000).div(400_000_000).mul(wethUsd);
    expect(parse(data[2]!)).toEqual({ address: pepe, chain: 'ethereum', price: text18(pepeUsd), timestamp: t + 1, timestamp_price: t + 1, token_price: t + 1 });
    expect(parse(data[2]!).price).toBe('0.00625');
    // Ids increase along the stream.
    expect(Number(data[2]!.id)).toBeGreaterThan(Number(data[1]!.id));
    expect(Number(data[1]!.id)).toBeGreaterThan(Number(data[0]!.id));
    s.close();
  });

  it('is read by the eventsource client: event name, data and last event id', async () => {
    const es = new EventSource(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}&request_id=9`));
    const got: MessageEvent[] = [];
    es.addEventListener('token_price', (e) => got.push(e));
    await new Promise<void>((ok, fail) => {
      es.onopen = () => ok();
      es.onerror = () => fail(new Error('eventsource could not open'));
    });
    t += 10;
    fx.now = t;
    await fx.trade([wethTrade(t, 2600)]);
    for (let i = 0; i < 100 && got.length === 0; i++) await sleep(20);
    es.close();
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.data)).toMatchObject({ address: weth, price: '2600', timestamp_price: rfc3339(t) });
    expect(got[0]!.lastEventId).toMatch(/^[0-9]+$/);
  });

  it('ends the stream after `limit` data events', async () => {
    const s = await openRaw(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}&limit=2`), { key: fx.key('free') });
    for (const price of [2601, 2602, 2603]) {
      t += 1;
      fx.now = t;
      await fx.trade([wethTrade(t, price)]);
      await sleep(60);
    }
    await s.ended;
    const data = s.frames.filter(isData);
    expect(data.map((f) => parse(f).price)).toEqual(['2601', '2602']);
  });

  it('sends a ping every 15 s by the service clock, without id or request_id, not counted by limit', async () => {
    fx.now = t + 100;
    const s = await openRaw(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}&limit=1&request_id=5`));
    await sleep(100);
    fx.now += 14;
    await sleep(300);
    expect(s.frames.filter((f) => f.event === 'ping')).toHaveLength(0);
    fx.now += 1;
    const [ping] = await s.waitFrames(1, (f) => f.event === 'ping');
    expect(ping!.fields).toEqual(['event', 'data']);
    expect(JSON.parse(ping!.data)).toEqual({ time: fx.now });
    fx.now += 15;
    await s.waitFrames(2, (f) => f.event === 'ping');
    expect(s.isEnded()).toBe(false);
    t = fx.now;
    await fx.trade([wethTrade(t, 2700)]);
    await s.ended;
    expect(s.frames.filter(isData)).toHaveLength(1);
  });
});

describe('refusals', () => {
  const prices = (q: string) => stream('freeStream', `/sse/prices?${q}`);

  it('rejects a request_id that is not a non-negative 32-bit integer with the documented message', async () => {
    for (const rid of ['abc', '-1', '1.5', '4294967296']) {
      const r = await refusal(prices(`chain=ethereum&address=${WETH.address}&request_id=${rid}`));
      expect(r.status, rid).toBe(400);
      expect(r.body.message, rid).toBe('invalid query parameters: request_id (must be a number)');
    }
    for (const rid of ['"5"', '-1', '1.5', 'null']) {
      const r = await refusal(stream('freeStream', '/sse/prices'), {
        method: 'POST',
        key: fx.key('free'),
        body: `[{"chain":"ethereum","address":"${WETH.address}","method":"token_price","request_id":${rid}}]`,
      });
      expect(r.status, rid).toBe(400);
      expect(r.body.message, rid).toBe('invalid query parameters: request_id (must be a number)');
    }
  });

  it('rejects unknown chains, unknown assets, bad methods, limits and intervals with 400 before the stream opens', async () => {
    const cases: [string, { method?: string; key?: string; body?: string }, Record<string, unknown>][] = [
      [prices(`chain=bitcoin&address=${WETH.address}`), {}, { error: 'invalid_parameter', message: 'unsupported chain', param: 'chain', accepted: ['ethereum'] }],
      [prices(`chain=ethereum&address=0x0000000000000000000000000000000000000001`), {}, { error: 'invalid_parameter', message: 'asset not found', param: 'address' }],
      [prices(`chain=ethereum&address=${POOL_A}`), {}, { error: 'invalid_parameter', message: 'asset not found', param: 'address' }],
      [prices(`chain=ethereum&address=${WETH.address}&method=price`), {}, { error: 'invalid_parameter', param: 'method', accepted: ['token_price'] }],
      [prices(`chain=ethereum&address=${WETH.address}&limit=0`), {}, { error: 'invalid_parameter', param: 'limit' }],
      [prices(`chain=ethereum&address=${WETH.address}&limit=x`), {}, { error: 'invalid_parameter', param: 'limit' }],
      [prices(`address=${WETH.address}`), {}, { error: 'invalid_parameter', param: 'chain' }],
      [stream('freeStream', `/sse/reserves?chain=ethereum&address=${POOL_A}`), { key: fx.key('free') }, { error: 'invalid_parameter', param: 'method', accepted: ['pool_reserves', 'token_reserves'] }],
      [stream('freeStream', `/sse/reserves?chain=ethereum&address=${WETH.address}&method=pool_reserves`), { key: fx.key('free') }, { error: 'invalid_parameter', message: 'asset not found' }],
      [stream('paidStream', `/sse/ohlcv?chain=ethereum&token_id=${WETH.address}&interval=1m`), { key: fx.key('dev') }, { error: 'invalid_parameter', param: 'interval', accepted: ['1s'] }],
      [stream('paidStream', `/sse/ohlcv?chain=ethereum`), { key: fx.key('dev') }, { error: 'invalid_parameter', param: 'token_id' }],
      [stream('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=swap`), { key: fx.key('dev') }, { error: 'invalid_parameter', param: 'method', accepted: ['pool', 'token'] }],
    ];
    for (const [url, options, expected] of cases) {
      const r = await refusal(url, options);
      expect(r.status, url).toBe(400);
      expect(r.body, url).toMatchObject(expected);
    }
    expect(fx.gateway.streams!.hub.stats().streams).toBe(0);
  });

  it('rejects a whole POST batch when one subscription is invalid, and batches of 0 or over 25', async () => {
    const sub = (address: string) => ({ chain: 'ethereum', address, method: 'token_price' });
    const post = (items: unknown) => refusal(stream('freeStream', '/sse/prices'), { method: 'POST', key: fx.key('free'), body: JSON.stringify(items) });
    let r = await post([sub(WETH.address), sub('0x00000000000000000000000000000000000000ff'), sub(PEPE.address)]);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'invalid_parameter', message: 'asset not found', param: 'address', index: 1 });
    r = await post([sub(WETH.address), { ...sub(PEPE.address), chain: 'solana' }]);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ message: 'unsupported chain', index: 1 });
    r = await post([sub(WETH.address), { ...sub(PEPE.address), filter: 3 }]);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ param: 'filter', index: 1 });
    for (const items of [[], Array.from({ length: 26 }, () => sub(WETH.address)), { chain: 'ethereum' }]) {
      r = await post(items);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', param: 'body' });
    }
    r = await refusal(stream('freeStream', '/sse/prices'), { method: 'POST', key: fx.key('free'), body: '[{' });
    expect(r.status).toBe(400);
    r = await refusal(stream('freeStream', '/sse/reserves'), { method: 'POST', key: fx.key('free'), body: JSON.stringify([{ chain: 'ethereum', address: POOL_A }]) });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ param: 'method', index: 0 });
    // Twenty-five is allowed.
    const ok = await openRaw(stream('freeStream', '/sse/prices'), { method: 'POST', key: fx.key('free'), body: JSON.stringify(Array.from({ length: 25 }, () => sub(WETH.address))) });
    expect(ok.status).toBe(200);
    ok.close();
  });

  it('keeps keyless callers to the showcase prices with the preview_only body', async () => {
    const expected = { error: 'preview_only', tier: 'keyless', links: {} };
    let r = await refusal(stream('freeStream', `/sse/prices?chain=ethereum&address=${PEPE.address}`));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject(expected);
    expect(Object.keys(r.body).sort()).toEqual(['error', 'links', 'message', 'tier']);
    r = await refusal(stream('freeStream', '/sse/prices'), { method: 'POST', body: JSON.stringify([{ chain: 'ethereum', address: WETH.address }, { chain: 'ethereum', address: PEPE.address }]) });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject(expected);
    r = await refusal(stream('freeStream', `/sse/reserves?chain=ethereum&address=${POOL_A}&method=pool_reserves`));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject(expected);
    // USDC (a stablecoin) is a showcase token.
    const ok = await openRaw(stream('freeStream', `/sse/prices?chain=ethereum&address=${USDC.address}`));
    expect(ok.status).toBe(200);
    ok.close();
  });

  it('gates plans and hosts: plan_required for swaps and candles, wrong_host across hosts, 401 for a bad key', async () => {
    const tx = `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`;
    const candles = `/sse/ohlcv?chain=ethereum&token_id=${WETH.address}`;
    for (const [path, key, tier] of [
      [tx, '', 'keyless'],
      [tx, fx.key('free'), 'free'],
      [candles, '', 'keyless'],
      [candles, fx.key('free'), 'free'],
    ] as const) {
      const r = await refusal(stream('freeStream', path), { key });
      expect(r.status, `${tier} ${path}`).toBe(403);
      expect(r.body).toMatchObject({ error: 'plan_required', tier, required_tier: 'dev' });
      expect(r.body.param).toBeUndefined();
    }
    let r = await refusal(stream('freeStream', tx), { key: fx.key('dev') });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'wrong_host', host: fx.url('paidStream') });
    r = await refusal(stream('paidStream', `/sse/prices?chain=ethereum&address=${WETH.address}`), { key: fx.key('free') });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'wrong_host', host: fx.url('freeStream') });
    r = await refusal(stream('paidStream', `/sse/prices?chain=ethereum&address=${WETH.address}`));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'wrong_host', host: fx.url('freeStream') });
    r = await refusal(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}`), { key: `api_${'x'.repeat(32)}` });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'invalid_api_key', message: 'api key verification has failed' });
    r = await refusal(stream('freeStream', '/sse/nothing'));
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'not_found', message: 'route "GET /sse/nothing" not found' });
    const health = await fetch(stream('paidStream', '/health'));
    expect(await health.json()).toEqual({ status: 'ok' });
  });
});

describe('GET and POST /sse/reserves', () => {
  it('streams pool_reserves: exact reserves and deltas against the previous snapshot, USD figures, blocks', async () => {
    t += 10;
    fx.now = t;
    await fx.trade([{ pool: POOL_A, t, r0: 1000n * E18, r1: 2_000_000n * E6, a0: -E18, a1: 2000n * E6 }]);
    const before = fx.block;
    const s = await openRaw(stream('freeStream', `/sse/reserves?chain=ethereum&address=${POOL_A}&method=pool_reserves&request_id=3`), { key: fx.key('free') });
    expect(s.status).toBe(200);
    t += 12;
    fx.now = t + 1;
    const r0 = 9995n * 10n ** 17n; // 999.5 WETH
    const r1 = 2_001_000_500_000n; // 2,001,000.5 USDC
    await fx.trade([{ pool: POOL_A, t, r0, r1, a0: 5n * 10n ** 17n, a1: -1_000_500_000n }]);
    const [f] = await s.waitFrames(1);
    expect(f!.event).toBe('pool_reserves');
    expect(f!.requestId).toBe('3');
    const d = parse(f!);
    const p0 = 2_001_000.5 / 999.5;
    expect(d).toMatchObject({ chain: 'ethereum', pool_id: poolA, block: String(fx.block), previous_block: String(before), timestamp: t + 1, block_timestamp: t });
    expect(d.tokens).toHaveLength(2);
    expect(d.tokens[0]).toMatchObject({ token_id: weth, reserve: '999.5', delta: '-0.5' });
    expect(d.tokens[1]).toMatchObject({ token_id: usdc, reserve: '2001000.5', delta: '1000.5', price_usd: 1, reserve_usd: 2_001_000.5, delta_usd: 1000.5 });
    expect(d.tokens[0].price_usd).toBeCloseTo(p0, 9);
    expect(d.tokens[0].reserve_usd).toBeCloseTo(999.5 * p0, 6);
    expect(d.tokens[0].delta_usd).toBeCloseTo(-0.5 * p0, 6);
    expect(d.total_reserve_usd).toBeCloseTo(999.5 * p0 + 2_001_000.5, 6);
    expect(d.total_delta_usd).toBeCloseTo(-0.5 * p0 + 1000.5, 6);
    s.close();
  });

  it('streams token_reserves for every pool of the token, and mixes methods in one POST', async () => {
    const body = JSON.stringify([
      { chain: 'ethereum', address: WETH.address, method: 'token_reserves', request_id: 10 },
      { chain: 'ethereum', address: POOL_P, method: 'pool_reserves' },
    ]);
    const s = await openRaw(stream('freeStream', '/sse/reserves'), { method: 'POST', key: fx.key('free'), body });
    expect(s.status).toBe(200);
    t += 12;
    fx.now = t + 2;
    await fx.trade([pepeTrade(t, 300_000_000n, 1200n)]);
    const frames = await s.waitFrames(2);
    const tokenEvent = frames.find((f) => f.event === 'token_reserves')!;
    const poolEvent = frames.find((f) => f.event === 'pool_reserves')!;
    expect(tokenEvent.requestId).toBe('10');
    expect(poolEvent.requestId).toBe('1');
    const d = parse(tokenEvent);
    expect(d).toMatchObject({ chain: 'ethereum', token_id: weth, pool_id: poolP, reserve: '1200', delta: '200', block: String(fx.block), updated_at: t, timestamp: t + 2 });
    expect(typeof d.price_usd).toBe('number');
    expect(d.reserve_usd).toBeCloseTo(1200 * d.price_usd, 6);
    expect(d.delta_usd).toBeCloseTo(200 * d.price_usd, 6);
    expect(parse(poolEvent).tokens.map((x: { token_id: string }) => x.token_id)).toEqual([pepe, weth]);
    // A trade in the other pool of WETH reaches the token_reserves subscription only.
    t += 12;
    fx.now = t;
    await fx.trade([wethTrade(t, 2100)]);
    const more = await s.waitFrames(3);
    expect(more[2]!.event).toBe('token_reserves');
    expect(parse(more[2]!)).toMatchObject({ pool_id: poolA, token_id: weth, reserve: '1000', delta: '0.5' });
    s.close();
  });
});

describe('GET /sse/transactions', () => {
  it('streams each swap of a pool with the trader-view amounts and USD figures', async () => {
    const s = await openRaw(stream('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool&request_id=42`), { key: fx.key('dev') });
    expect(s.status).toBe(200);
    expect(s.headers['x-api-plan']).toBe('dev');
    t += 12;
    fx.now = t;
    const hash = `0x${'ab'.repeat(32)}`;
    await fx.trade([wethTrade(t, 2003, hash)]);
    const [f] = await s.waitFrames(1);
    expect(f!.event).toBe('pool');
    expect(f!.requestId).toBe('42');
    expect(parse(f!)).toEqual({
      chain: 'ethereum',
      pool_id: poolA,
      block_number: String(fx.block),
      block_timestamp: rfc3339(t),
      tx_hash: hash,
      tx_index: 0,
      log_index: 1,
      sender: '0x1111111111111111111111111111111111111111',
      recipient: '0x2222222222222222222222222222222222222222',
      token_0: weth,
      token_1: usdc,
      // The trader received 1 WETH (10^18 raw, beyond 2^53: a string) and paid 2003 USDC.
      amount_0: '1000000000000000000',
      amount_1: -2_003_000_000,
      amount_0_usd: 2003,
      amount_1_usd: -2003,
      price_0_usd: 2003,
      price_1_usd: 1,
      volume_usd: 2003,
    });
    s.close();
  });

  it('streams the swaps of every pool of a token, and nothing for pools it is not in', async () => {
    const s = await openRaw(stream('paidStream', `/sse/transactions?chain=ethereum&address=${PEPE.address}&method=token`), { key: fx.key('dev') });
    t += 12;
    fx.now = t;
    await fx.trade([wethTrade(t, 2004), pepeTrade(t, 300_000_000n, 1201n)]);
    const [f] = await s.waitFrames(1);
    await sleep(100);
    expect(s.frames.filter(isData)).toHaveLength(1);
    expect(f!.event).toBe('token');
    expect(f!.requestId).toBe('0');
    expect(parse(f!)).toMatchObject({ pool_id: poolP, token_0: pepe, token_1: weth, amount_0: '1000000000000000000000', amount_1: -2_000_000_000_000_000 });
    s.close();
    await sleep(60);
    // The watch lingers for the replay window (a reconnecting client finds what it missed), then
    // nobody watches any more: the shard is no longer asked for these swaps.
    expect(fx.context.views.watchToken.some((x) => x === 1)).toBe(true);
    fx.now += 61;
    await sleep(1_100);
    expect(fx.context.views.watchToken.every((x) => x === 0)).toBe(true);
    expect(fx.context.views.watchPool.every((x) => x === 0)).toBe(true);
    t = fx.now;
  });
});

describe('GET /sse/ohlcv', () => {
  it('streams each sealed 1 s candle of the token once, from its swaps', async () => {
    const key = fx.key('enterprise');
    const before = await usage('enterprise', key);
    // Earlier candles of WETH are sealed by now: a new subscription does not get them.
    t += 10;
    fx.now = t;
    const s = await openRaw(stream('paidStream', `/sse/ohlcv?chain=ethereum&token_id=${WETH.address}&interval=1s&request_id=8`), { key });
    expect(s.status).toBe(200);
    // The second is not over: nothing sealed yet.
    await fx.trade([wethTrade(t, 2000), wethTrade(t, 2010), wethTrade(t, 1990)], true);
    await sleep(100);
    expect(s.frames.filter(isData)).toHaveLength(0);
    // A later second opens: the first is sealed.
    await fx.trade([wethTrade(t + 1, 2020)]);
    const [f] = await s.waitFrames(1);
    expect(f!.event).toBe('ohlcv');
    expect(f!.requestId).toBe('8');
    const d = parse(f!);
    expect(d).toMatchObject({ chain: 'ethereum', token_id: weth, interval: '1s', timestamp: rfc3339(t), open: 2000, high: 2010, low: 1990, close: 1990, txns: 3 });
    expect(d.avg).toBeCloseTo((2000 + 2010 + 1990) / 3, 9);
    expect(d.volume_usd).toBeCloseTo(2000 + 2010 + 1990, 9);
    // The newest candle is sealed by the clock once its second is well over.
    fx.now = t + 4;
    const [, g] = await s.waitFrames(2);
    expect(parse(g!)).toMatchObject({ timestamp: rfc3339(t + 1), open: 2020, close: 2020, txns: 1, volume_usd: 2020 });
    await sleep(100);
    expect(s.frames.filter(isData)).toHaveLength(2);
    s.close();
    // Enterprise streaming is unmetered.
    expect(await usage('enterprise', key)).toBe(before);
    t += 1;
  });
});

describe('limits and metering', () => {
  it('caps concurrent streams per account and releases a stream however it ends', async () => {
    const key = fx.key('free');
    await sleep(100);
    const url = stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}`);
    const open = [await openRaw(url, { key }), await openRaw(url, { key }), await openRaw(`${url}&limit=1`, { key })];
    for (const s of open) expect(s.status).toBe(200);
    const r = await refusal(url, { key });
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('5');
    expect(r.body.error).toBe('rate_limited');
    expect(r.body.message).toMatch(/^Concurrent stream limit reached/);
    // The client goes away: its stream is released.
    open[0]!.close();
    await sleep(100);
    const again = await openRaw(url, { key });
    expect(again.status).toBe(200);
    // The limit ends one: released too.
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2222)]);
    await open[2]!.ended;
    await sleep(50);
    const third = await openRaw(url, { key });
    expect(third.status).toBe(200);
    for (const s of [open[1]!, again, third]) s.close();
  });

  it('caps keyless streams per address', async () => {
    const url = stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}`);
    await sleep(100);
    const open = [await openRaw(url), await openRaw(url), await openRaw(url)];
    const r = await refusal(url);
    expect(r.status).toBe(429);
    expect(r.body.message).toMatch(/^Concurrent stream limit reached/);
    for (const s of open) s.close();
    await sleep(100);
    const ok = await openRaw(url);
    expect(ok.status).toBe(200);
    ok.close();
  });

  it('charges one credit per data event delivered, nothing for pings or the opening', async () => {
    const key = fx.key('free');
    const before = await usage('free', key);
    const body = JSON.stringify([
      { chain: 'ethereum', address: WETH.address, method: 'token_price' },
      { chain: 'ethereum', address: PEPE.address, method: 'token_price' },
    ]);
    const s = await openRaw(stream('freeStream', '/sse/prices'), { method: 'POST', key, body });
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2300)]);
    // WETH, and PEPE (routed through WETH) with it.
    await s.waitFrames(2);
    await fx.trade([pepeTrade(t, 300_000_000n, 1202n)]);
    await s.waitFrames(3);
    fx.now += 16;
    await s.waitFrames(1, (f) => f.event === 'ping');
    s.close();
    expect(s.frames.filter(isData)).toHaveLength(3);
    expect(await usage('free', key)).toBe(before + 3);
  });

  it('ends a stream with an error event when the credits run out, then refuses with 402', async () => {
    const { key } = fx.keys.create('pro', 'small allowance', fx.now);
    const s = await openRaw(stream('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`), { key });
    expect(s.status).toBe(200);
    t += 1;
    fx.now = t;
    await fx.trade(Array.from({ length: 8 }, (_, i) => wethTrade(t, 2000 + i)));
    await s.ended;
    expect(s.frames.filter(isData)).toHaveLength(6);
    const last = s.frames[s.frames.length - 1]!;
    expect(last.event).toBe('error');
    expect(last.fields).toEqual(['event', 'data']);
    expect(JSON.parse(last.data).message).toMatch(/^credit allowance of 6 exhausted/);
    const r = await refusal(stream('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`), { key });
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ error: 'credits_exhausted', plan: 'pro' });
    expect(r.headers['retry-after']).toBeUndefined();
  });
});

describe('delivery', () => {
  it('a reader that stops reading neither delays the others nor makes the server hold more than SLOW_READER_MS of backlog', async () => {
    const { connect } = await import('node:net');
    const key = fx.key('dev');
    const path = `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`;
    const slow = connect(fx.gateway.ports.paidStream!, '127.0.0.1');
    await new Promise<void>((ok) => slow.once('connect', () => ok()));
    slow.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\n\r\n`);
    slow.pause();
    let slowClosed = false;
    slow.on('close', () => (slowClosed = true));
    slow.on('error', () => undefined);
    const fast = await openRaw(stream('paidStream', path), { key });
    await sleep(50);
    const hub = fx.gateway.streams!.hub;
    expect(hub.stats().streams).toBe(2);
    const batches = 60;
    const perBatch = 250;
    let maxBacklog = 0;
    let cutAfter = -1;
    const started = performance.now();
    // One batch per second of the gateway's clock.
    for (let b = 0; b < batches; b++) {
      t += 1;
      fx.now = t;
      await fx.trade(Array.from({ length: perBatch }, (_, i) => wethTrade(t, 2000 + ((b * perBatch + i) % 50))), true);
      await sleep(5);
      maxBacklog = Math.max(maxBacklog, hub.stats().maxBacklogBytes);
      if (cutAfter < 0 && hub.stats().streams === 1) cutAfter = b;
      // The clock moves a second per batch: the reader that keeps up has each batch before the next
      // (on a loaded machine it may need longer than the batch took to make).
      await fast.waitFrames((b + 1) * perBatch, isData, 10_000);
    }
    const frames = await fast.waitFrames(batches * perBatch, isData, 20_000);
    const elapsed = performance.now() - started;
    expect(frames).toHaveLength(batches * perBatch);
    expect(elapsed).toBeLessThan(15_000);
    // The slow reader was dropped once it had been behind for SLOW_READER_MS (its socket buffers
    // take a few batches first), and the server never held more than that many seconds of swaps for it.
    const frameBytes = Math.max(...frames.map((f) => f.data.length)) + 64;
    expect(cutAfter).toBeGreaterThan(SLOW_READER_MS / 1000 - 1);
    expect(cutAfter).toBeLessThan(SLOW_READER_MS / 1000 + 10);
    expect(maxBacklog).toBeLessThanOrEqual((SLOW_READER_MS / 1000 + 1) * perBatch * frameBytes);
    // Its connection is closed by the server: reading what was left in the buffers ends.
    slow.resume();
    const text = await new Promise<string>((ok, fail) => {
      let all = '';
      slow.setEncoding('utf8');
      slow.on('data', (c: string) => (all += c));
      slow.on('end', () => ok(all));
      slow.on('close', () => ok(all));
      setTimeout(() => fail(new Error(`the server did not close the slow reader's connection (closed: ${slowClosed}); it sent ${all.length} bytes`)), 5_000);
    });
    expect(text.split('\nid: ').length - 1).toBeLessThan(batches * perBatch);
    slow.destroy();
    fast.close();
  }, 30_000);

  it('resumes after a reconnect with Last-Event-ID: the missed swaps first, in order, then live ones', async () => {
    const key = fx.key('dev');
    const url = stream('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`);
    const first = await openRaw(url, { key });
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2100, `0x${'01'.repeat(32)}`), wethTrade(t, 2101, `0x${'02'.repeat(32)}`)]);
    const seen = await first.waitFrames(2);
    first.close();
    await sleep(50);
    // Missed while away.
    await fx.trade([wethTrade(t, 2102, `0x${'03'.repeat(32)}`), wethTrade(t, 2103, `0x${'04'.repeat(32)}`), wethTrade(t, 2104, `0x${'05'.repeat(32)}`)]);
    const again = await openRaw(url, { key, headers: { 'last-event-id': seen[1]!.id! } });
    const replayed = await again.waitFrames(3);
    expect(replayed.map((f) => parse(f).tx_hash)).toEqual(['03', '04', '05'].map((b) => `0x${b.repeat(32)}`));
    await fx.trade([wethTrade(t, 2105, `0x${'06'.repeat(32)}`)]);
    const all = await again.waitFrames(4);
    expect(parse(all[3]!).tx_hash).toBe(`0x${'06'.repeat(32)}`);
    const ids = all.map((f) => Number(f.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(ids[0]).toBeGreaterThan(Number(seen[1]!.id));
    again.close();
    // An id beyond reach: a warning, then live events.
    const old = await openRaw(url, { key, headers: { 'last-event-id': '9999999999999999' } });
    const [w] = await old.waitFrames(1, (f) => f.event === 'warning');
    expect(w!.fields).toEqual(['event', 'data']);
    expect(JSON.parse(w!.data).message).toMatch(/replay window/);
    old.close();
  });

  it('takes the id to resume after from last_event_id in the query too, and limit on a POST stream', async () => {
    const key = fx.key('free');
    const first = await openRaw(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}`), { key });
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 3001)]);
    const [seen] = await first.waitFrames(1);
    first.close();
    await sleep(50);
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 3002)]);
    await sleep(60);
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 3003)]);
    await sleep(60);
    // Both missed prices come back (a replay keeps every event), then the limit ends the stream.
    const body = JSON.stringify([{ chain: 'ethereum', address: WETH.address, method: 'token_price', request_id: 3 }]);
    const again = await openRaw(stream('freeStream', `/sse/prices?last_event_id=${seen!.id}&limit=2`), { method: 'POST', key, body });
    await again.ended;
    const data = again.frames.filter(isData);
    expect(data.map((f) => parse(f).price)).toEqual(['3002', '3003']);
    expect(data.map((f) => f.requestId)).toEqual(['3', '3']);
    expect(data.map((f) => typeof parse(f).timestamp)).toEqual(['number', 'number']);
  });

  it('lets the eventsource client reconnect by itself and lose nothing', async () => {
    const key = fx.key('dev');
    // limit=1: the server ends every connection after one event, the client reconnects with its Last-Event-ID.
    const es = new EventSource(stream('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool&limit=1`), {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: key } }),
    });
    const hashes: string[] = [];
    es.addEventListener('pool', (e) => hashes.push(JSON.parse(e.data).tx_hash));
    await new Promise<void>((ok) => (es.onopen = () => ok()));
    t += 1;
    fx.now = t;
    const fed = ['a1', 'a2', 'a3'].map((b) => `0x${b.repeat(32)}`);
    await fx.trade(fed.map((h, i) => wethTrade(t, 2200 + i, h)));
    for (let i = 0; i < 200 && hashes.length < 3; i++) await sleep(25);
    es.close();
    expect(hashes).toEqual(fed);
  }, 15_000);

  it('ends every stream with an error event on shutdown', async () => {
    const s = await openRaw(stream('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}`), { key: fx.key('free') });
    await sleep(50);
    await fx.gateway.close();
    await s.ended;
    const last = s.frames[s.frames.length - 1]!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data).message).toMatch(/shutting down/);
  });
});
