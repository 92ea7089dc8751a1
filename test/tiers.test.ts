/**
 * Hot and quiet pools: a pool that stops trading gives its candle rings back (its candles are in
 * LMDB), and one that trades again takes a ring block back and continues where it was. Two engines
 * are fed the same simulated market: one lets pools go quiet after an hour, the other never does.
 * Every pool's details, OHLCV at every interval and indicators, fetched over HTTP from each engine's
 * gateway, must be the same bytes.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { INTERVALS } from '../engine/state/layout.js';
import { CAPACITY, engineSides, GENESIS, HOUR } from './support/engine-sides.js';
import { settle } from './support/settle.js';

const sides = engineSides('dexdata-tiers-');
const side = sides.side;

afterAll(() => sides.close());

describe('hot and quiet pools', () => {
  it('a pool that went quiet and traded again answers exactly as one that never let go of its rings', async () => {
    const clock = { now: GENESIS + 6 * HOUR };
    const tiered = await side(clock, HOUR);
    const whole = await side(clock, null);
    // Two days in steps of three hours: pools go quiet between steps, and many trade again later.
    for (let step = 0; step < 16; step++) {
      clock.now += 3 * HOUR;
      await Promise.all([settle(tiered.engine, clock, true), settle(whole.engine, clock, true)]);
    }
    const tierStats = await tiered.engine.shards.tierStats();
    expect(tierStats.missing).toBe(0);
    expect(tierStats.released).toBeGreaterThan(50);
    expect(tierStats.reloaded).toBeGreaterThan(20);
    expect((await whole.engine.shards.tierStats()).released).toBe(0);
    const stats = tiered.engine.stats() as { pools_hot: number; pools_quiet: number; ring_blocks: { used: number; free: number } };
    const wholeStats = whole.engine.stats() as { pools_hot: number };
    expect(stats.pools_quiet).toBeGreaterThan(0);
    expect(stats.pools_hot).toBeLessThan(wholeStats.pools_hot);
    expect(stats.ring_blocks.used + stats.ring_blocks.free).toBe(CAPACITY.blocks);

    const networks = new Map(tiered.engine.registry.networks.map((n, i) => [i, n.id]));
    const start = GENESIS;
    let compared = 0;
    let withCandles = 0;
    for (const pool of tiered.engine.registry.pools) {
      if (pool === undefined) continue;
      const base = `/networks/${networks.get(pool.chain)}/pools/${pool.address}`;
      const paths = [
        base,
        `${base}?inversed=true`,
        ...INTERVALS.map((iv) => `${base}/ohlcv?interval=${iv}&start=${start}&limit=1000`),
        `${base}/ohlcv?interval=1h&count_back=30&inversed=true`,
        `${base}/indicators?start=${start}&interval=1h&indicators=sma,ema,rsi,macd,bbands&period=5`,
      ];
      for (const path of paths) {
        const [a, b] = await Promise.all([tiered.get(path), whole.get(path)]);
        expect(a.status, path).toBe(b.status);
        expect(a.body, path).toBe(b.body);
        compared++;
      }
      if (tiered.engine.views.lastSwapTime[pool.id]! > 0) withCandles++;
    }
    expect(withCandles).toBeGreaterThan(100);
    expect(compared).toBeGreaterThan(1000);
  }, 300_000);
});
