import { takeBlock } from './ring-blocks.js';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Iv, WINDOW_COUNT, Win } from './layout.js';
import { createPoolState, createRingCandles, createTokenPriceState, readPool, readRing, readTokenPrice } from './read.js';
import { EngineViews, ringOpenedAt } from './views.js';
import { CANDLE_FIELD, CANDLE_WORDS, setCandleValue } from './candle-record.js';

const capacity = { pools: 8, tokens: 8, chains: 2 };

/** Writes candle number k of pool p into ring `iv` the way the shard writer lays it out. */
function putCandle(v: EngineViews, iv: number, p: number, k: number, time: number, o1: number, c1: number): void {
  const r = v.rings[iv]!;
  if (v.poolBlock[p] === 0) v.poolBlock[p] = takeBlock(v, p) + 1;
  const slot = (v.poolBlock[p]! - 1) * r.slots + (k % r.slots);
  const put = (f: Parameters<typeof setCandleValue>[2], value: number) => setCandleValue(r, slot, f, value);
  put('time', time);
  put('open0', time);
  put('close0', time + 1);
  put('high0', time + 2);
  put('low0', time - 1);
  put('open1', o1);
  put('close1', c1);
  put('high1', Math.max(o1, c1));
  put('low1', Math.min(o1, c1));
  put('volumeUsd', k * 10);
  put('buyVolumeUsd', k);
  put('txns', k + 1);
  put('buys', k);
  const at = ringOpenedAt(v.poolBlock[p]! - 1, iv);
  if (v.ringOpened[at]! < k + 1) v.ringOpened[at] = k + 1;
}

describe('readPool', () => {
  it('copies every dynamic column of a pool holding a ring block, its windows from the block, and reports the even version it read', () => {
    const v = EngineViews.create(capacity);
    const p = 3;
    const b = takeBlock(v, p);
    v.poolBlock[p] = b + 1;
    // A pool holding a ring block holds a window slot (slot p here): its as-of minutes are there.
    v.poolWindowSlot[p] = p + 1;
    v.poolSeq[p] = 42;
    // Token 1 of p (WETH, token 2) is routed through pool 4, WETH/USDC at 2000; p prices token 0 at 1.5 WETH.
    v.poolToken0[p] = 1;
    v.poolToken1[p] = 2;
    v.tokenRole[1] = 3;
    v.tokenRole[2] = 2;
    v.tokenRole[3] = 0;
    v.poolToken0[4] = 2;
    v.poolToken1[4] = 3;
    v.ratio[4] = 2000;
    v.tokenRoutePool[2] = 5;
    v.ratio[p] = 1.5;
    // As the pool's last event stored them, before WETH moved: reads take the USD figures as they stand.
    v.priceUsd0[p] = 2700;
    v.priceUsd1[p] = 1800;
    // Reserves 10 (18 decimals) and 15 (6 decimals), kept as their raw words only: 10^19 and 1.5 * 10^7.
    v.poolDecimals0[p] = 18;
    v.poolDecimals1[p] = 6;
    v.reserveRaw.set([0x89e8_0000, 0x8ac7_2304, 0, 0, 15_000_000, 0, 0, 0], p * 8);
    v.liquidityUsd[p] = 54_000;
    v.txnsTotal[p] = 77;
    v.lastSwapTime[p] = 1_700_000_000;
    v.blockWinVolumeUsd[b * WINDOW_COUNT + Win.H24] = 1234.5;
    v.blockWinTxns[b * WINDOW_COUNT + Win.H24] = 9;
    v.blockWinBuys[b * WINDOW_COUNT + Win.M5] = 4;
    v.blockWinPriceChange[b * WINDOW_COUNT + Win.M30] = -2.5;
    v.blockWinRefPrice[b * WINDOW_COUNT + Win.M30] = 2400;
    v.blockWinRefPrice1[b * WINDOW_COUNT + Win.H1] = 1000;
    v.winAsOf[2]![p] = 1_699_999_200;

    const out = createPoolState();
    expect(readPool(v, p, out, true)).toBe(true);
    expect(out.seq).toBe(42);
    expect([out.ratio, out.priceUsd0, out.priceUsd1, out.reserve0, out.reserve1]).toEqual([1.5, 3000, 2000, 10, 15]);
    expect(Array.from(out.reserveRaw)).toEqual([0x89e8_0000, 0x8ac7_2304, 0, 0, 15_000_000, 0, 0, 0]);
    expect([out.liquidityUsd, out.txnsTotal, out.lastSwapTime]).toEqual([60_000, 77, 1_700_000_000]);
    expect(out.winVolumeUsd[Win.H24]).toBe(1234.5);
    expect(out.winTxns[Win.H24]).toBe(9);
    expect(out.winBuys[Win.M5]).toBe(4);
    // Price changes compare the price as it stands (the block's own change was as of the last event):
    // token 0 at 3000 against 2400, token 1 at 2000 against 1000.
    expect(out.winPriceChange[Win.M30]).toBe(25);
    expect(out.winPriceChange1[Win.H1]).toBe(100);
    expect(out.winAsOf[2]).toBe(1_699_999_200);
  });

  it("copies a quiet pool's row figures; one that never swapped has every window figure zero without a store", () => {
    const v = EngineViews.create(capacity);
    const p = 6;
    // Its window figures are in its window slot (slot p here).
    v.poolWindowSlot[p] = p + 1;
    v.winVolumeUsd[Win.D7]![p] = 55;
    v.winPriceChange[Win.H6]![p] = 3.5;
    const out = createPoolState();
    expect(readPool(v, p, out, true)).toBe(true);
    expect(out.winVolumeUsd[Win.D7]).toBe(55);
    expect(out.winPriceChange[Win.H6]).toBe(3.5);
    expect([out.winBuyVolumeUsd[Win.D7], out.winBuys[Win.M5], out.winPriceChange[Win.M30], out.winPriceChange1[Win.H24]]).toEqual([0, 0, 0, 0]);

    // Swapped once (as of a base candle), asked for the row only: no store needed, the rest unknown.
    v.winAsOf[0]![p] = 1_700_000_040;
    v.lastSwapTime[p] = 1_700_000_040;
    expect(readPool(v, p, out, false, 'row')).toBe(true);
    expect(out.winVolumeUsd[Win.D7]).toBe(55);
    expect(out.winBuys[Win.M5]).toBeNaN();
    expect(() => readPool(v, p, out)).toThrow(/no stored candles/);
  });

  it('gives up instead of spinning forever when a writer never leaves its update', () => {
    const v = EngineViews.create(capacity);
    v.poolSeq[1] = 7;
    expect(readPool(v, 1, createPoolState())).toBe(false);
    expect(readRing(v, 1, Iv.M1, 0, 1e9, createRingCandles())).toBe(false);
    v.tokenSeq[1] = 1;
    expect(readTokenPrice(v, 1, createTokenPriceState())).toBe(false);
  });

  it('never returns a torn copy while another thread updates the pool back to back', async () => {
    const v = EngineViews.create(capacity);
    const p = 5;
    // The writer below puts the pool's candles in ring block p.
    v.poolBlock[p] = p + 1;
    const stop = new SharedArrayBuffer(4);
    const source = `
      const { workerData, parentPort } = require('node:worker_threads');
      const c = workerData.columns, p = workerData.p;
      const seq = new Int32Array(c.poolSeq), ratio = new Float64Array(c.ratio);
      const u0 = new Float64Array(c.priceUsd0), u1 = new Float64Array(c.priceUsd1);
      const raw = new Uint32Array(c.reserveRaw), vol = new Float64Array(c['win.volumeUsd']);
      const opened = new Uint32Array(c['ring.opened']), cells = new Float64Array(c['ring.1m.candles']), words = new Uint32Array(c['ring.1m.candles']);
      const W = workerData.W, F = workerData.F;
      const stop = new Int32Array(workerData.stop);
      let i = 0, spin = 0;
      parentPort.postMessage('ready');
      while (Atomics.load(stop, 0) === 0) {
        i++;
        Atomics.add(seq, p, 1);
        ratio[p] = i; u0[p] = 2 * i; u1[p] = 3 * i; vol[p * workerData.windows + workerData.h24] = 5 * i;
        for (let k = 0; k < 8; k++) raw[p * 8 + k] = i;
        const slot = p * 8 + (i % 8);
        words[slot * 2 * W + F.time] = i * 60; cells[slot * W + F.open0] = i; cells[slot * W + F.close0] = -i; opened[workerData.opened] = i + 1;
        Atomics.add(seq, p, 1);
        for (let s = 0; s < 300; s++) spin = (spin * 31 + s) | 0; // decoding the next event
      }
      parentPort.postMessage(i + (spin & 0));
    `;
    const worker = new Worker(source, { eval: true, workerData: { columns: v.buffers.columns, p, opened: ringOpenedAt(p, Iv.M1), stop, windows: WINDOW_COUNT, h24: Win.H24, W: CANDLE_WORDS, F: { time: CANDLE_FIELD.time.word, open0: CANDLE_FIELD.open0.word, close0: CANDLE_FIELD.close0.word } } });
    const messages: unknown[] = [];
    const done = new Promise<number>((resolve, reject) => {
      worker.on('message', (m) => (typeof m === 'number' ? resolve(m) : messages.push(m)));
      worker.on('error', reject);
    });
    while (messages.length === 0) await new Promise((r) => setTimeout(r, 5));

    const pool = createPoolState();
    const ring = createRingCandles();
    const seen = new Set<number>();
    // At least 300 ms, and on until enough reads met enough distinct writes (a loaded machine gives the threads less time).
    const started = performance.now();
    let reads = 0;
    let gaveUp = 0;
    while (performance.now() - started < 300 || ((reads < 2000 || seen.size < 20) && performance.now() - started < 20_000)) {
      // A read may give up (false, after READ_TIMEOUT_MS without a stable version): never with a torn copy.
      if (!readPool(v, p, pool)) {
        gaveUp++;
        continue;
      }
      const i = pool.ratio;
      // Both tokens are token 0, the reference stablecoin: token 1 of the pool is 1 USD, token 0 the ratio.
      if (pool.priceUsd0 !== i || pool.priceUsd1 !== 1 || pool.winVolumeUsd[Win.H24] !== 5 * i) throw new Error(`torn pool copy at ${i}`);
      for (let k = 0; k < 8; k++) if (pool.reserveRaw[k] !== i) throw new Error(`torn reserve words at ${i}`);
      seen.add(i);
      if (!readRing(v, p, Iv.M1, 0, 2 ** 32, ring)) {
        gaveUp++;
        continue;
      }
      for (let k = 0; k < ring.count; k++) {
        const n = ring.open0[k]!;
        if (ring.time[k] !== n * 60 || ring.close0[k] !== -n) throw new Error(`torn candle ${k}`);
        if (k > 0 && ring.time[k]! <= ring.time[k - 1]!) throw new Error('ring copy out of order');
      }
      reads++;
    }
    Atomics.store(new Int32Array(stop), 0, 1);
    const writes = await done;
    await worker.terminate();
    expect(reads).toBeGreaterThan(1000);
    // Each reader that gives up has spent READ_TIMEOUT_MS: a few, against thousands that succeed.
    expect(gaveUp).toBeLessThan(reads / 20);
    expect(writes).toBeGreaterThan(1000);
    expect(seen.size).toBeGreaterThan(10);
  });
});

describe('readRing', () => {
  it('copies the retained candles in range, oldest first, with the ring facts', () => {
    const v = EngineViews.create(capacity);
    const p = 1;
    // 20 one-minute candles, every other minute; the 8-slot ring keeps numbers 12..19.
    for (let k = 0; k < 20; k++) putCandle(v, Iv.M1, p, k, 1_700_000_040 + k * 120, k, k + 0.5);
    const out = createRingCandles();
    expect(readRing(v, p, Iv.M1, 0, 2 ** 32, out)).toBe(true);
    expect(out.opened).toBe(20);
    expect(out.slots).toBe(8);
    expect(out.count).toBe(8);
    expect(out.oldestTime).toBe(1_700_000_040 + 12 * 120);
    expect(Array.from(out.open1.subarray(0, 8))).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);

    const from = 1_700_000_040 + 14 * 120;
    const to = 1_700_000_040 + 17 * 120 + 59;
    expect(readRing(v, p, Iv.M1, from, to, out)).toBe(true);
    expect(out.count).toBe(4);
    expect(Array.from(out.time.subarray(0, 4))).toEqual([14, 15, 16, 17].map((k) => 1_700_000_040 + k * 120));
    expect(Array.from(out.volumeUsd.subarray(0, 4))).toEqual([140, 150, 160, 170]);
    expect(Array.from(out.txns.subarray(0, 4))).toEqual([15, 16, 17, 18]);
    expect(out.oldestTime).toBe(1_700_000_040 + 12 * 120);

    expect(readRing(v, 0, Iv.H24, 0, 2 ** 32, out)).toBe(true);
    expect([out.count, out.opened, out.oldestTime]).toEqual([0, 0, 0]);
    expect(() => readRing(v, 0, 99, 0, 1, out)).toThrow(RangeError);
  });
});

describe('readTokenPrice', () => {
  it('copies the price through its route as it stands, and its route', () => {
    const v = EngineViews.create(capacity);
    // Token 2 is routed through pool 5 (token 2 / token 3, 1.0002 token 3 each); token 3, the
    // reference stablecoin, is 1 USD by definition.
    v.tokenRole[2] = 1;
    v.tokenRole[3] = 0;
    v.poolToken0[5] = 2;
    v.poolToken1[5] = 3;
    v.ratio[5] = 1.0002;
    v.poolSeq[5] = 10;
    v.tokenSeq[2] = 4;
    v.tokenSeq[3] = 2;
    v.tokenPriceUsd[2] = 0.5; // as the route pool last set it: reads follow the route instead
    v.tokenRoutePool[2] = 6;
    v.tokenRouteLiquidityUsd[2] = 5e6;
    v.tokenPriceTime[2] = 1_700_000_123;
    v.tokenPriceTime[3] = 1_700_000_000;
    const out = createTokenPriceState();
    expect(readTokenPrice(v, 2, out)).toBe(true);
    expect(out).toEqual({ seq: 4 + 10 + 2, priceUsd: 1.0002, routeLiquidityUsd: 5e6, routePool: 6, priceTime: 1_700_000_123 });
    // The route pool moves: the price and its version follow, though token 2 itself was not written.
    v.ratio[5] = 0.9998;
    v.poolSeq[5] = 12;
    expect(readTokenPrice(v, 2, out)).toBe(true);
    expect([out.seq, out.priceUsd]).toEqual([4 + 12 + 2, 0.9998]);
  });
});
