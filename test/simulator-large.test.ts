/**
 * The simulator's large universe (from 1,000,000 pools, or asked for): its activity law checked by
 * counting the events it emits against the law the README states, its creation stream, its memory
 * at 40,000,000 pools, and the determinism the small universe has.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../engine/config.js';
import type { ChainEvent, ChainEventBatch } from '../engine/events/model.js';
import { openSimulator } from '../engine/sources/open-simulator.js';
import { CREATION_BATCH_POOLS, createSimulator, MAX_POOLS, NETWORKS, resumeSimulator, type Simulator, type SimulatorOptions } from '../engine/sources/simulator/index.js';
import { openStore } from '../engine/store/store.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const GENESIS = 1_750_000_000;
const HOUR = 3600;
const DAY = 86_400;

/** The law as the README states it (not read from the code, so that either drifting fails here). */
const LIVING_SHARE = 0.025;
const PARETO_SHAPE = 1.2;
const WEIGHT_MAX = 10_000;
const TOKENS_PER_POOL = 0.92;

/** Expectation of g(w) under the truncated Pareto law of activity weights on [1, WEIGHT_MAX] (numeric, over log w). */
function expectation(g: (w: number) => number): number {
  const steps = 20_000;
  const top = Math.log(WEIGHT_MAX);
  const norm = 1 - WEIGHT_MAX ** -PARETO_SHAPE;
  let sum = 0;
  for (let i = 0; i < steps; i++) {
    const w = Math.exp((top * (i + 0.5)) / steps);
    sum += (g(w) * PARETO_SHAPE * w ** -PARETO_SHAPE) / norm;
  }
  return (sum * top) / steps;
}

/** P(W > x) under the truncated law. */
function tail(x: number): number {
  return (x ** -PARETO_SHAPE - WEIGHT_MAX ** -PARETO_SHAPE) / (1 - WEIGHT_MAX ** -PARETO_SHAPE);
}

function options(overrides: Partial<SimulatorOptions>): SimulatorOptions {
  return { seed: 42, pools: 100_000, genesisTime: GENESIS, swapsPerSecond: 1, newPoolsPerHour: 0, universe: 'large', ...overrides };
}

function serialise(chain: string, e: ChainEvent): string {
  return chain + '|' + JSON.stringify(e, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

/** The catalogue's tokens of a network by (symbol, name): the pools of two of them are core pools. */
function catalogue(chain: string): Set<string> {
  const spec = NETWORKS.find((n) => n.id === chain)!;
  return new Set([spec.wrappedNative, ...spec.stables, ...spec.majors].map((t) => `${t.symbol}|${t.name}`));
}

interface Census {
  /** Long-tail pools (at least one token not from the catalogue), by chain and address. */
  readonly longTail: Set<string>;
  readonly tokens: Set<string>;
  readonly created: number;
  /** Noise swaps (sender is not the recipient: arbitrage bots send to themselves) per long-tail pool. */
  readonly noiseSwaps: Map<string, number>;
}

function census(): Census {
  return { longTail: new Set(), tokens: new Set(), created: 0, noiseSwaps: new Map() };
}

function count(c: Census, batches: readonly ChainEventBatch[]): Census {
  let created = c.created;
  for (const { chain, events } of batches) {
    const core = catalogue(chain);
    for (const e of events) {
      if (e.kind === 'pool_created') {
        created++;
        c.tokens.add(`${chain}|${e.token0.address}`);
        c.tokens.add(`${chain}|${e.token1.address}`);
        if (!core.has(`${e.token0.symbol}|${e.token0.name}`) || !core.has(`${e.token1.symbol}|${e.token1.name}`)) c.longTail.add(`${chain}|${e.pool}`);
      } else if (e.kind === 'swap' && e.sender !== e.recipient) {
        const id = `${chain}|${e.pool}`;
        if (c.longTail.has(id)) c.noiseSwaps.set(id, (c.noiseSwaps.get(id) ?? 0) + 1);
      }
    }
  }
  return { ...c, created };
}

/** Creates every genesis pool, then runs `days` of history hour by hour. */
function run(opts: SimulatorOptions, days: number): Census {
  const sim = createSimulator(opts);
  let c = census();
  while (sim.creationsPending > 0) c = count(c, sim.advance(GENESIS + HOUR));
  for (let t = GENESIS + HOUR; t <= GENESIS + days * DAY; t += HOUR) c = count(c, sim.advance(t));
  return c;
}

// EVM networks only: there a noise swap's sender (the router) is not its recipient (the trader).
const EVM = ['ethereum', 'base'];

describe('simulator, large universe', () => {
  it('lists about 0.92 tokens per pool; 2.5 % of long-tail pools live, their activity weights follow the truncated Pareto law, and a quiet day sees E[1 - exp(-c w)] of them trade', () => {
    // Busy enough that the quietest living pool expects dozens of swaps a day: every living pool trades.
    const busy = run(options({ networks: EVM, swapsPerSecond: 4 }), 1);
    expect(busy.created).toBe(85_000);
    expect(Math.abs(busy.tokens.size / busy.created - TOKENS_PER_POOL)).toBeLessThan(0.01);

    const longTail = busy.longTail.size;
    expect(longTail).toBeGreaterThan(84_000);
    const counts = [...busy.noiseSwaps.values()].sort((a, b) => a - b);
    const living = counts.length;
    // Binomial: 4 standard deviations.
    const sd = Math.sqrt(longTail * LIVING_SHARE * (1 - LIVING_SHARE));
    expect(Math.abs(living - longTail * LIVING_SHARE)).toBeLessThan(4 * sd);

    // Swaps per pool are Poisson(c * w): with c large their distribution is the weights'. c comes from
    // the median (the mean of so heavy a tail is too noisy): the law's median weight is 2^(1 / shape).
    const perUnitWeight = counts[Math.floor(living / 2)]! / 2 ** (1 / PARETO_SHAPE);
    expect(perUnitWeight).toBeGreaterThan(15);
    for (const x of [3, 6, 12, 30]) {
      const above = counts.filter((n) => n > x * perUnitWeight).length;
      // Within 4 standard deviations of a Poisson count.
      expect(Math.abs(above - living * tail(x)), `living pools above ${x} x the quietest: ${above}`).toBeLessThan(4 * Math.sqrt(living * tail(x)));
    }

    // The same universe at a rate 40 times lower: c shrinks alike, and only part of the living pools trade in a day.
    const quiet = run(options({ networks: EVM, swapsPerSecond: 0.1 }), 1);
    const c = (perUnitWeight * 0.1) / 4;
    const observed = quiet.noiseSwaps.size / living;
    const expected = expectation((w) => 1 - Math.exp(-c * w));
    expect(expected).toBeLessThan(0.9);
    expect(Math.abs(observed / expected - 1)).toBeLessThan(0.05);
  }, 600_000);

  it('streams its creations in bounded batches while time stays at genesis; deterministic and resumable mid-creation', () => {
    const opts = options({ pools: 50_000, swapsPerSecond: 2, newPoolsPerHour: 200 });
    const whole = createSimulator(opts);
    const first = createSimulator(opts);
    const flat = (batches: ChainEventBatch[]) => batches.flatMap((b) => b.events.map((e) => serialise(b.chain, e)));
    const created = (lines: string[]) => lines.filter((l) => l.includes('"kind":"pool_created"')).length;
    const lastKey = new Map<string, string>();
    let batches = 0;
    let total = 0;
    // The first creation batch, then a save: the resumed simulator goes on with the rest.
    let expected = flat(whole.advance(GENESIS + HOUR));
    expect(flat(first.advance(GENESIS + HOUR))).toEqual(expected);
    const resumed = resumeSimulator(first.saveState());
    for (;;) {
      batches++;
      const n = created(expected);
      total += n;
      expect(n).toBeLessThanOrEqual(CREATION_BATCH_POOLS + 8);
      expect(whole.time).toBe(GENESIS);
      // Keys keep growing across batches, per chain.
      for (const line of expected) {
        const [chain, json] = [line.slice(0, line.indexOf('|')), line.slice(line.indexOf('|') + 1)];
        const e = JSON.parse(json) as { key?: { blockNumber: number; txIndex: number; logIndex: number } };
        if (!e.key) continue;
        const key = [e.key.blockNumber, e.key.txIndex, e.key.logIndex].map((x) => String(x).padStart(12, '0')).join('.');
        expect(key > (lastKey.get(chain) ?? '')).toBe(true);
        lastKey.set(chain, key);
      }
      if (whole.creationsPending === 0) break;
      expected = flat(whole.advance(GENESIS + HOUR));
      expect(flat(resumed.advance(GENESIS + HOUR))).toEqual(expected);
    }
    expect(total).toBe(42_500);
    expect(batches).toBe(Math.ceil(42_500 / CREATION_BATCH_POOLS));
    // Then history: swaps, and pools created live (launches), byte for byte alike.
    let swaps = 0;
    let live = 0;
    for (let t = GENESIS + HOUR; t <= GENESIS + 3 * HOUR; t += 1_799.7) {
      const next = flat(whole.advance(t));
      swaps += next.filter((l) => l.includes('"kind":"swap"')).length;
      live += created(next);
      expect(flat(resumed.advance(t))).toEqual(next);
    }
    expect(swaps).toBeGreaterThan(10_000);
    expect(live).toBeGreaterThan(300);
  }, 300_000);

  it(`builds ${MAX_POOLS.toLocaleString('en')} pools holding a few dozen bytes each; its first creations follow the law`, () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const sim = createSimulator({ seed: 42, pools: MAX_POOLS, genesisTime: GENESIS, swapsPerSecond: 25, newPoolsPerHour: 0 });
    gc();
    const perPool = (process.memoryUsage().heapUsed - before) / MAX_POOLS;
    console.log(`simulator at ${MAX_POOLS} pools: ${perPool.toFixed(1)} B of heap per pool, ${sim.poolsInState} pools in state`);
    expect(perPool).toBeLessThan(64);
    const genesis = Math.round(MAX_POOLS * 0.85);
    expect(sim.creationsPending).toBe(genesis);
    // Living pools (and a few hundred core pools) are the state: 2.5 % of the long tail, within 4 standard deviations.
    expect(Math.abs(sim.poolsInState - genesis * LIVING_SHARE)).toBeLessThan(4 * Math.sqrt(genesis * LIVING_SHARE) + 500);
    let c = census();
    // About 100,000 creations, batch by batch.
    const advances = Math.ceil(100_000 / CREATION_BATCH_POOLS);
    for (let i = 0; i < advances; i++) c = count(c, sim.advance(GENESIS + HOUR));
    expect(c.created).toBeGreaterThan(advances * (CREATION_BATCH_POOLS - 8));
    expect(c.created).toBeLessThanOrEqual(advances * (CREATION_BATCH_POOLS + 8));
    expect(sim.time).toBe(GENESIS);
    expect(Math.abs(c.tokens.size / c.created - TOKENS_PER_POOL)).toBeLessThan(0.01);
  }, 600_000);

  it('is what --pools asks for up to 40,000,000; more is refused naming the flag', () => {
    expect(loadConfig({ pools: '40000000' }, {}).simulator.pools).toBe(40_000_000);
    expect(loadConfig({}, { DEXDATA_POOLS: '2500000' }).simulator.pools).toBe(2_500_000);
    let problems = '';
    try {
      loadConfig({ pools: '40000001' }, {});
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems.join('\n');
    }
    expect(problems).toMatch(/pools/);
    expect(problems).toMatch(/40000000|40,000,000/);
  });

  it('refuses to resume the saved state of another version of the simulator; a start then makes it again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-sim-version-'));
    const store = openStore(dir);
    try {
      const cfg = { ...loadConfig({ pools: '2000' }, {}).simulator, genesisTime: GENESIS };
      const sim = openSimulator(store, cfg, GENESIS + DAY) as Simulator;
      sim.advance(GENESIS + HOUR);
      const state = sim.saveState();
      expect(resumeSimulator(state).time).toBe(GENESIS + HOUR);
      expect(openSimulator(store, cfg, GENESIS + DAY, state).time).toBe(GENESIS + HOUR);
      const graph = deserialize(state) as Record<string, unknown>;
      const older = { ...graph };
      delete older.version;
      expect(() => resumeSimulator(serialize(older))).toThrow(RangeError);
      expect(() => resumeSimulator(serialize({ ...graph, version: 1 }))).toThrow(/version 1/);
      // Made again from its settings: back at genesis, the same events as the first one.
      const again = openSimulator(store, cfg, GENESIS + DAY, serialize(older)) as Simulator;
      expect(again.time).toBe(GENESIS);
      const flat = (b: ChainEventBatch[]) => b.flatMap((x) => x.events.map((e) => serialise(x.chain, e)));
      expect(flat(again.advance(GENESIS + HOUR))).toEqual(flat(createSimulator({ ...sim.options() }).advance(GENESIS + HOUR)));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
