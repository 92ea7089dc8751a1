/**
 * Window slots: a pool keeps its rolling-window figures in a slot only while some window of it holds
 * a candle (30 days after its last swap). Two engines are fed the same simulated market over six
 * weeks: one lets pools go quiet (ring blocks back after an hour without a swap, window slots back
 * once every window is empty), the other never does (every pool that traded keeps its ring block and
 * its slot). Pools that gave their slot back and traded again afterwards must answer exactly as in
 * the engine where they never let go: pool details, OHLCV at every interval, indicators and pool
 * search (every ordering, both directions, range filters on window figures), fetched over HTTP from
 * each engine's gateway, must be the same bytes; and /stats counts the slots each engine holds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { POOL_FIGURES } from '../engine/search/figures.js';
import { INTERVALS } from '../engine/state/layout.js';
import { GENESIS, HOUR, engineSides } from './support/engine-sides.js';
import { settle } from './support/settle.js';

const DAY = 24 * HOUR;
// A large universe (power-law activity) this small and this quiet: its least active living pools trade
// every few weeks, so some go quiet past 30 days and trade again; new pools trade two days and mostly stop.
const sides = engineSides('dexdata-window-slots-', { seed: 5, pools: 3000, swapsPerSecond: 0.002, newPoolsPerHour: 0.2, universe: 'large' });
const side = sides.side;

afterAll(() => sides.close());

interface SlotStats {
  readonly window_slots: { readonly total: number; readonly used: number; readonly free: number; readonly touched: number; readonly bytes_each: number };
}

describe('window slots', () => {
  it('a pool that gave its window slot back and traded again answers exactly as one that never let go', async () => {
    const clock = { now: GENESIS + 6 * HOUR };
    const tiered = await side(clock, HOUR);
    const whole = await side(clock, null);
    const v = tiered.engine.views;
    /** Pools seen without a slot after having swapped, with their last swap then. */
    const released = new Map<number, number>();
    let fewestSlots = Infinity;
    // Six weeks in steps of a day.
    for (let step = 0; step < 42; step++) {
      clock.now += DAY;
      await Promise.all([settle(tiered.engine, clock, true), settle(whole.engine, clock, true)]);
      for (let p = 0; p < v.poolCount; p++) {
        if (v.poolExists[p] === 1 && v.lastSwapTime[p]! > 0 && v.poolWindowSlot[p] === 0 && !released.has(p)) released.set(p, v.lastSwapTime[p]!);
      }
      const st = tiered.engine.stats() as unknown as SlotStats;
      expect(st.window_slots.used + st.window_slots.free).toBe(st.window_slots.total);
      if (step >= 31) fewestSlots = Math.min(fewestSlots, st.window_slots.used);
    }
    const slotsNow = tiered.engine.stats() as unknown as SlotStats;
    const wholeSlots = whole.engine.stats() as unknown as SlotStats;
    // Every pool that ever swapped keeps a slot where pools never go quiet; here only those within 30 days.
    const swapped = Array.from({ length: v.poolCount }, (_, p) => p).filter((p) => v.lastSwapTime[p]! > 0);
    expect(wholeSlots.window_slots.used).toBe(swapped.length);
    const within30d = swapped.filter((p) => v.lastSwapTime[p]! > clock.now - 30 * DAY).length;
    expect(slotsNow.window_slots.used).toBeLessThan(wholeSlots.window_slots.used);
    expect(slotsNow.window_slots.used).toBeGreaterThanOrEqual(within30d);
    expect(fewestSlots).toBeLessThan(swapped.length);
    expect(released.size).toBeGreaterThan(0);
    // Pools that gave the slot back and swapped again since: they took a slot again.
    const back = [...released].filter(([p, t]) => v.lastSwapTime[p]! > t).map(([p]) => p);
    expect(back.length).toBeGreaterThan(0);
    for (const p of back) expect(v.poolWindowSlot[p]).not.toBe(0);
    expect((await tiered.engine.shards.tierStats()).missing).toBe(0);

    const networks = new Map(tiered.engine.registry.networks.map((n, i) => [i, n.id]));
    const get = async (path: string) => {
      const [a, b] = await Promise.all([tiered.get(path), whole.get(path)]);
      expect(a.status, path).toBe(b.status);
      expect(a.body, path).toBe(b.body);
      return a;
    };
    let compared = 0;
    const start = GENESIS;
    // The pools that came back first, then every other pool.
    const pools = [...tiered.engine.registry.pools].filter((x) => x !== undefined);
    pools.sort((x, y) => Number(back.includes(y!.id)) - Number(back.includes(x!.id)));
    for (const pool of pools) {
      const base = `/networks/${networks.get(pool!.chain)}/pools/${pool!.address}`;
      for (const path of [
        base,
        `${base}?inversed=true`,
        ...INTERVALS.map((iv) => `${base}/ohlcv?interval=${iv}&start=${start}&limit=1000`),
        `${base}/indicators?start=${start}&interval=1h&indicators=sma,ema,rsi,macd,bbands&period=5`,
      ]) {
        await get(path);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
    // Search: every ordering both ways, every page (each engine's own cursors), and filters on window figures, on every network.
    type Page = { results: unknown[]; has_next_page: boolean; next_cursor?: string | null };
    const pages = async (s: typeof tiered, path: string): Promise<unknown[]> => {
      const out: unknown[] = [];
      for (let cursor: string | null | undefined = undefined; ; ) {
        const r = await s.get(cursor ? `${path}&cursor=${cursor}` : path);
        expect(r.status, path).toBe(200);
        const page = JSON.parse(r.body) as Page;
        out.push(...page.results);
        if (!page.has_next_page) return out;
        cursor = page.next_cursor;
      }
    };
    let listed = 0;
    for (const network of new Set(networks.values())) {
      for (const order of POOL_FIGURES) {
        for (const sort of ['desc', 'asc']) {
          const path = `/networks/${network}/pools/search?order_by=${order}&sort=${sort}&limit=100`;
          const [a, b] = await Promise.all([pages(tiered, path), pages(whole, path)]);
          expect(JSON.stringify(a), path).toBe(JSON.stringify(b));
          listed += a.length;
        }
      }
      for (const filter of ['volume_usd_30d_max=0', 'volume_usd_30d_min=0.01', 'txns_24h_min=1', 'price_change_percentage_24h_min=0.0001', 'price_change_percentage_24h_max=-0.0001', 'price_change_percentage_24h_min=0&price_change_percentage_24h_max=0']) {
        const path = `/networks/${network}/pools/search?order_by=price_change_percentage_24h&limit=100&${filter}`;
        const [a, b] = await Promise.all([pages(tiered, path), pages(whole, path)]);
        expect(JSON.stringify(a), path).toBe(JSON.stringify(b));
      }
    }
    expect(listed).toBeGreaterThan(100);
  }, 600_000);
});
