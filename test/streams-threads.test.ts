/**
 * The stream hosts served by several uWS threads sharing each port: connections spread over the
 * threads, every thread gets the swaps its streams asked for, and the concurrent-stream caps, the
 * credits and the event ids hold across them. Real sockets against the real gateway and engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plansWith } from './support/access.js';
import { E18, E6, isData, openRaw, POOL_A, refusal, sleep, START, startStreamFixture, USDC, WETH, wethTrade, type RawStream, type StreamFixture } from './support/streams.js';

const THREADS = 2;
let fx: StreamFixture;
let t = START;

const PLANS = plansWith({
  free: { requestsPerMinute: 10_000, concurrentStreams: 2 },
  dev: { requestsPerMinute: 10_000, concurrentStreams: 1_000 },
  pro: { requestsPerMinute: 10_000, concurrentStreams: 1_000 },
});

beforeAll(async () => {
  fx = await startStreamFixture(PLANS, { streamThreads: THREADS });
  await fx.trade([wethTrade(t, 2000)]);
});

afterAll(async () => {
  await fx?.close();
});

const url = (role: 'freeStream' | 'paidStream', path: string) => `${fx.url(role)}${path}`;
const swapsOfPoolA = () => url('paidStream', `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`);

/** Opens streams until every thread holds at least `perThread` of them (connections land where the kernel puts them). */
async function spreadStreams(open: () => Promise<RawStream>, perThread: number): Promise<RawStream[]> {
  const streams: RawStream[] = [];
  for (let i = 0; i < 64; i++) {
    const s = await open();
    expect(s.status).toBe(200);
    streams.push(s);
    const stats = await fx.gateway.streamThreads!.stats();
    if (stats.perThread.every((h) => h.streams >= perThread)) return streams;
  }
  throw new Error('connections did not reach every thread');
}

describe('stream threads sharing the stream ports', () => {
  it('spreads connections over the threads and delivers each swap to every stream, whichever thread holds it', async () => {
    const key = fx.key('dev');
    expect(fx.gateway.streamThreads!.threads).toBe(THREADS);
    const streams = await spreadStreams(() => openRaw(swapsOfPoolA(), { key }), 2);
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2001, `0x${'a1'.repeat(32)}`), wethTrade(t, 2002, `0x${'a2'.repeat(32)}`)]);
    const ids = new Set<string>();
    for (const s of streams) {
      const got = await s.waitFrames(2);
      expect(got.map((f) => JSON.parse(f.data).tx_hash)).toEqual([`0x${'a1'.repeat(32)}`, `0x${'a2'.repeat(32)}`]);
      ids.add(got.map((f) => f.id).join(','));
    }
    // One swap has one id, whichever thread sent it.
    expect(ids.size).toBe(1);
    for (const s of streams) s.close();
  });

  it('streams the reserves and swaps of a pool created after the streams opened, on every thread, with its addresses as the catalog holds them', async () => {
    const key = fx.key('dev');
    const usdc = USDC.address.toLowerCase();
    const reserves = await spreadStreams(() => openRaw(url('paidStream', `/sse/reserves?method=token_reserves&chain=ethereum&address=${usdc}`), { key }), 1);
    const swaps: RawStream[] = [];
    for (let i = 0; i < 8; i++) swaps.push(await openRaw(url('paidStream', `/sse/transactions?method=token&chain=ethereum&address=${USDC.address}`), { key }));
    const fresh = '0x00000000000000000000000000000000000C0FFE';
    const dai = { address: '0x6B175474E89094C44Da98b954EedeAC495271d0F', name: 'Dai Stablecoin', symbol: 'DAI', decimals: 18, totalSupply: 10n ** 27n, role: 3 } as const;
    t += 1;
    fx.now = t;
    await fx.createPool(fresh, dai, USDC);
    // Give the streams a tick to see the new pool of their token, then trade in it.
    await sleep(100);
    await fx.trade([{ pool: fresh, t, r0: 5000n * E18, r1: 5001n * E6, a0: E18, a1: -E6, txHash: `0x${'c0'.repeat(32)}` }]);
    const isFresh = (f: { data: string }) => isData(f as never) && JSON.parse(f.data).pool_id === fresh.toLowerCase();
    for (const s of reserves) {
      const [f] = await s.waitFrames(1, isFresh);
      const body = JSON.parse(f!.data);
      expect(body).toMatchObject({ chain: 'ethereum', token_id: usdc, pool_id: fresh.toLowerCase(), reserve: '5001' });
    }
    for (const s of swaps) {
      const [f] = await s.waitFrames(1, isFresh);
      const body = JSON.parse(f!.data);
      expect(body).toMatchObject({ chain: 'ethereum', pool_id: fresh.toLowerCase(), token_0: dai.address.toLowerCase(), token_1: usdc, tx_hash: `0x${'c0'.repeat(32)}`, amount_0: '-1000000000000000000', amount_1: 1000000 });
    }
    for (const s of [...reserves, ...swaps]) s.close();
  });

  it('refuses the stream past the cap whichever thread accepts it, and releases a count from the thread that held it', async () => {
    const key = fx.key('free');
    const prices = url('freeStream', `/sse/prices?chain=ethereum&address=${WETH.address}`);
    const open = [await openRaw(prices, { key }), await openRaw(prices, { key })];
    for (const s of open) expect(s.status).toBe(200);
    // Each attempt is a new connection; the kernel hands them to either thread.
    for (let i = 0; i < 8; i++) {
      const r = await refusal(prices, { key });
      expect(r.status).toBe(429);
      expect(r.body.message).toMatch(/^Concurrent stream limit reached: 2 streams/);
    }
    open[0]!.close();
    await sleep(100);
    const again = await openRaw(prices, { key });
    expect(again.status).toBe(200);
    expect((await refusal(prices, { key })).status).toBe(429);
    for (const s of [open[1]!, again]) s.close();
  });

  it('charges one credit per event delivered, in total over the threads', async () => {
    const key = fx.key('pro');
    const usage = async (): Promise<number> => {
      await sleep(150); // a thread reports what it delivered every 20 ms
      const r = await fetch(`${fx.url('paidRest')}/usage`, { headers: { authorization: key } });
      return ((await r.json()) as { credits_used: number }).credits_used;
    };
    const streams = await spreadStreams(() => openRaw(swapsOfPoolA(), { key }), 2);
    const before = await usage();
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2010), wethTrade(t, 2011), wethTrade(t, 2012)]);
    for (const s of streams) await s.waitFrames(3);
    expect(await usage()).toBe(before + 3 * streams.length);
    for (const s of streams) s.close();
  });

  it('resumes a swap stream with Last-Event-ID on whichever thread the reconnection lands', async () => {
    const key = fx.key('dev');
    const first = await openRaw(swapsOfPoolA(), { key });
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2020, `0x${'b1'.repeat(32)}`)]);
    const [seen] = await first.waitFrames(1);
    first.close();
    await sleep(50);
    await fx.trade([wethTrade(t, 2021, `0x${'b2'.repeat(32)}`), wethTrade(t, 2022, `0x${'b3'.repeat(32)}`)]);
    // Several reconnections: the kernel puts them on either thread; each gets exactly what was missed.
    const again = await spreadStreams(() => openRaw(swapsOfPoolA(), { key, headers: { 'last-event-id': seen!.id! } }), 1);
    for (const s of again) {
      const got = await s.waitFrames(2);
      expect(got.map((f) => JSON.parse(f.data).tx_hash)).toEqual([`0x${'b2'.repeat(32)}`, `0x${'b3'.repeat(32)}`]);
      expect(s.frames.filter((f) => f.event === 'warning')).toEqual([]);
      s.close();
    }
  });

  it('ends every thread\'s streams with an error event on shutdown', async () => {
    const key = fx.key('dev');
    const streams = await spreadStreams(() => openRaw(swapsOfPoolA(), { key }), 1);
    await fx.close();
    for (const s of streams) {
      await s.ended;
      const last = s.frames[s.frames.length - 1]!;
      expect(last.event).toBe('error');
      expect(s.frames.filter(isData)).toEqual([]);
    }
    fx = undefined as unknown as StreamFixture;
  });
});
