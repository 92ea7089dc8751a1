/**
 * Rolling windows to the minute, over HTTP from the real gateway: at a chain clock 7 minutes into an
 * hour (not on any window's base candle), every pool's 5m, 15m, 30m, 1h, 6h and 24h figures must be
 * exactly those of its swaps in the last N minutes (the current partial minute and the N - 1 before
 * it), counted and summed from its transactions endpoint; its price change must compare the price
 * now with the price exactly one window ago (the last swap before the window). Somewhere the old
 * rule (the current partial base candle plus the whole ones before it) gives another answer. Two
 * engines are fed the same market, one letting idle pools give their ring blocks back: every pool's
 * details, quiet or not, are the same bytes in both.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { engineSides, GENESIS, HOUR, type Side } from './support/engine-sides.js';
import { settle } from './support/settle.js';

const MINUTE = 60;
/** The windows checked: name in the pool details, seconds, and the base candle of the old rule. */
const CHECKED = [
  { name: '5m', seconds: 300, oldBase: 60 },
  { name: '15m', seconds: 900, oldBase: 300 },
  { name: '30m', seconds: 1800, oldBase: 300 },
  { name: '1h', seconds: 3600, oldBase: 300 },
  { name: '6h', seconds: 21_600, oldBase: 3600 },
  { name: '24h', seconds: 86_400, oldBase: 3600 },
] as const;

const sides = engineSides('dexdata-windows-');
const side = sides.side;

afterAll(() => sides.close());

interface Tx {
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly amount_0: string;
  readonly price_0_usd: number;
  readonly volume_usd: number;
}

interface Swap {
  readonly time: number;
  readonly buy: boolean;
  readonly volumeUsd: number;
  readonly price0Usd: number;
}

/** Every swap of a pool since `from` (Unix s), oldest first, paged through its transactions endpoint. */
async function swapsOf(s: Side, base: string, from: number): Promise<Swap[]> {
  const out: Swap[] = [];
  let cursor = '';
  for (;;) {
    const r = await s.get(`${base}/transactions?limit=100&from=${from}${cursor === '' ? '' : `&cursor=${cursor}`}`);
    expect(r.status, r.body).toBe(200);
    const page = JSON.parse(r.body) as Tx[];
    for (const t of page) {
      if (t.type !== 'swap') continue;
      out.push({ time: Date.parse(t.created_at) / 1000, buy: t.amount_0.startsWith('-'), volumeUsd: t.volume_usd, price0Usd: t.price_0_usd });
    }
    if (page.length < 100) break;
    cursor = page[page.length - 1]!.id;
  }
  return out.reverse();
}

function near(actual: number, expected: number, what: string): void {
  const scale = Math.max(Math.abs(expected), 1);
  if (Math.abs(actual - expected) / scale > 1e-9) expect.fail(`${what}: ${actual} != ${expected}`);
}

describe('rolling windows to the minute', () => {
  it('every window is its swaps of exactly the last N minutes, quiet pools included, at a clock off the base candles', async () => {
    const clock = { now: GENESIS + 6 * HOUR };
    const tiered = await side(clock, HOUR);
    const whole = await side(clock, null);
    // Two days and six hours in steps of three hours (pools go quiet between steps), then 7 min 23 s on.
    while (clock.now < GENESIS + 54 * HOUR) {
      clock.now += 3 * HOUR;
      await Promise.all([settle(tiered.engine, clock, true), settle(whole.engine, clock, true)]);
    }
    clock.now += 7 * MINUTE + 23;
    await Promise.all([settle(tiered.engine, clock, true), settle(whole.engine, clock, true)]);
    expect((await tiered.engine.shards.tierStats()).missing).toBe(0);

    const networks = new Map(whole.engine.registry.networks.map((n, i) => [i, n.id]));
    let quietCompared = 0;
    let quietWithVolume = 0;
    let checked = 0;
    let nonZero = 0;
    const oldDiffers = new Map<string, number>();
    const changes = { before: 0, opens: 0 };
    for (const pool of whole.engine.registry.pools) {
      if (pool === undefined) continue;
      const base = `/networks/${networks.get(pool.chain)}/pools/${pool.address}`;
      const [a, b] = await Promise.all([tiered.get(base), whole.get(base)]);
      expect(b.status, base).toBe(200);
      // Quiet or hot, the same bytes.
      expect(a.body, base).toBe(b.body);
      if (whole.engine.views.lastSwapTime[pool.id] === 0) continue;
      const details = JSON.parse(b.body) as Record<string, unknown>;
      if (tiered.engine.views.poolBlock[pool.id] === 0) {
        quietCompared++;
        if ((details['24h'] as { volume_usd: number }).volume_usd > 0) quietWithVolume++;
      }

      // The window clock: the chain's, 7 minutes into its hour.
      const now = whole.engine.views.chainClock[pool.chain]!;
      const m = now - (now % MINUTE);
      expect(m % HOUR).toBeGreaterThanOrEqual(5 * MINUTE);
      const swaps = await swapsOf(whole, base, GENESIS);
      const price = details.last_price_usd as number;
      for (const w of CHECKED) {
        const start = m + MINUTE - w.seconds;
        const inside = swaps.filter((s) => s.time >= start && s.time < m + MINUTE);
        const got = details[w.name] as { volume_usd: number; buy_usd: number; sell_usd: number; buys: number; sells: number; txns: number; last_price_usd_change: number };
        const what = `${base} ${w.name}`;
        expect(got.txns, what).toBe(inside.length);
        expect(got.buys, what).toBe(inside.filter((s) => s.buy).length);
        expect(got.sells, what).toBe(inside.filter((s) => !s.buy).length);
        near(got.volume_usd, inside.reduce((x, s) => x + s.volumeUsd, 0), `${what} volume`);
        near(got.buy_usd, inside.reduce((x, s) => x + (s.buy ? s.volumeUsd : 0), 0), `${what} buy volume`);
        if (w.name === '24h') near(details.volume_usd as number, got.volume_usd, `${base} volume_usd`);
        // The price exactly one window ago: the last swap before the window, else the first one in it.
        const before = swaps.filter((s) => s.time < start);
        const ref = before.length > 0 ? before[before.length - 1]!.price0Usd : inside.length > 0 ? inside[0]!.price0Usd : 0;
        if (before.length > 0) changes.before++;
        else if (inside.length > 0) changes.opens++;
        const change = ref > 0 ? (price / ref - 1) * 100 : 0;
        if (Math.abs(got.last_price_usd_change - change) > 1e-7 * Math.max(1, Math.abs(change))) expect.fail(`${what} price change: ${got.last_price_usd_change} != ${change}`);
        // The old rule: the current base candle and the whole ones before it.
        const oldStart = m - (m % w.oldBase) - w.seconds + w.oldBase;
        const oldCount = swaps.filter((s) => s.time >= oldStart && s.time < m + MINUTE).length;
        if (oldCount !== inside.length) oldDiffers.set(w.name, (oldDiffers.get(w.name) ?? 0) + 1);
        if (inside.length > 0) nonZero++;
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
    expect(nonZero).toBeGreaterThan(300);
    expect(changes.before).toBeGreaterThan(100);
    // Where the rules part, the figures served are the one-minute rule's.
    for (const name of ['15m', '1h', '24h']) expect(oldDiffers.get(name) ?? 0, `pools whose ${name} differs under the old rule`).toBeGreaterThan(0);
    expect(quietCompared).toBeGreaterThan(20);
    expect(quietWithVolume).toBeGreaterThan(5);
  }, 600_000);
});
