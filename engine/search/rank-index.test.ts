import { describe, expect, it } from 'vitest';
import { EngineViews } from '../state/views.js';
import { figureColumns, POOL_FIGURES, rankValue } from './figures.js';
import { Rng } from '../sources/simulator/prng.js';
import { PoolRankIndex, type RankQuery } from './rank-index.js';

const POOLS = 3000;
const CHAINS = 4;

/** A deterministic PRNG: floats in [0, 1). */
function rng(seed: number): () => number {
  const g = new Rng(seed);
  return () => g.nextFloat();
}

/** A shard's columns written the way a shard writer does: change, then tell the index. */
function universe(seed: number) {
  const views = EngineViews.create({ pools: POOLS + 64, tokens: 64, chains: CHAINS });
  const index = new PoolRankIndex(views, [0, 1, 2, 3]);
  const cols = figureColumns(views);
  const r = rng(seed);
  // Few distinct values, many zeros and some negatives: ties everywhere.
  const value = (): number => {
    const u = r();
    if (u < 0.4) return 0;
    if (u < 0.5) return -Math.floor(r() * 5);
    if (u < 0.52) return Number.NaN;
    return Math.floor(r() * 20) * (r() < 0.5 ? 1 : 1.5);
  };
  let count = 0;
  const create = (): void => {
    const p = count++;
    views.poolExists[p] = 1;
    views.poolChain[p] = Math.floor(r() * CHAINS);
    views.poolDex[p] = Math.floor(r() * 3);
    views.poolToken0[p] = Math.floor(r() * 8);
    views.poolToken1[p] = 8 + Math.floor(r() * 8);
    // Window figure columns are indexed by window slot: pool p holds slot p here.
    views.poolWindowSlot[p] = p + 1;
    for (const c of cols) c[p] = value();
    Atomics.store(views.counts, 0, count);
    index.markDirty(p);
  };
  const mutate = (n: number): void => {
    index.beginTask();
    for (let i = 0; i < n; i++) {
      const p = Math.floor(r() * count);
      const c = cols[Math.floor(r() * cols.length)]!;
      c[p] = value();
      index.markDirty(p);
    }
  };
  for (let i = 0; i < POOLS - 200; i++) create();
  const grow = (n: number): void => {
    index.beginTask();
    for (let i = 0; i < n; i++) create();
  };
  return { views, index, cols, r, mutate, grow, get count() { return count; } };
}

function randomQuery(r: () => number): Omit<RankQuery, 'after'> {
  const chains = [0, 1, 2, 3].filter(() => r() < 0.8);
  const filterFigures: number[] = [];
  const lo: number[] = [];
  const hi: number[] = [];
  const nf = Math.floor(r() * 3);
  for (let i = 0; i < nf; i++) {
    filterFigures.push(Math.floor(r() * POOL_FIGURES.length));
    if (r() < 0.4) {
      // Narrow: one value, or the top of the range.
      const x = r() < 0.5 ? Math.floor(r() * 20) : 25;
      lo.push(x);
      hi.push(r() < 0.5 ? x : Infinity);
      continue;
    }
    lo.push(r() < 0.5 ? -Infinity : Math.floor(r() * 10) - 2);
    hi.push(r() < 0.5 ? Infinity : 5 + Math.floor(r() * 20));
  }
  return {
    figure: Math.floor(r() * POOL_FIGURES.length),
    descending: r() < 0.5,
    take: 1 + Math.floor(r() * 40),
    chains,
    dexes: chains.map(() => (r() < 0.3 ? Math.floor(r() * 3) : -1)),
    tokens: chains.map(() => (r() < 0.2 ? Math.floor(r() * 8) : -1)),
    filterFigures,
    lo,
    hi,
  };
}

/** Every pool matching q now, in rank order: the independent answer. */
function bruteForce(u: ReturnType<typeof universe>, q: Omit<RankQuery, 'after'>): { id: number; v: number }[] {
  const { views, cols } = u;
  const out: { id: number; v: number }[] = [];
  for (let p = 0; p < u.count; p++) {
    const at = q.chains.indexOf(views.poolChain[p]!);
    if (at < 0) continue;
    if (q.dexes[at]! >= 0 && views.poolDex[p] !== q.dexes[at]) continue;
    const t = q.tokens[at]!;
    if (t >= 0 && views.poolToken0[p] !== t && views.poolToken1[p] !== t) continue;
    let ok = true;
    for (let k = 0; k < q.filterFigures.length; k++) {
      const x = rankValue(cols[q.filterFigures[k]!]![p]!);
      if (!(x >= q.lo[k]! && x <= q.hi[k]!)) ok = false;
    }
    if (ok) out.push({ id: p, v: rankValue(cols[q.figure]![p]!) });
  }
  return out.sort((a, b) => (a.v !== b.v ? (q.descending ? b.v - a.v : a.v - b.v) : a.id - b.id));
}

describe('PoolRankIndex', () => {
  it('answers every first page exactly as a full scan would, while figures change between searches', () => {
    const u = universe(1);
    for (let round = 0; round < 400; round++) {
      const q = randomQuery(u.r);
      const got = u.index.query({ ...q, after: null });
      const want = bruteForce(u, q).slice(0, q.take);
      expect(Array.from(got.ids), `round ${round}`).toEqual(want.map((w) => w.id));
      expect(Array.from(got.values)).toEqual(want.map((w) => w.v));
      if (round % 3 === 0) u.mutate(Math.floor(u.r() * 400));
      if (round % 50 === 0) u.grow(10);
    }
    // Both ways of answering were taken.
    expect(u.index.walks).toBeGreaterThan(50);
    expect(u.index.filterScans).toBeGreaterThan(50);
  });

  it('pages through a frozen ranking: no pool twice, none skipped, values as they stood at the first page', () => {
    const u = universe(2);
    u.index.query({ ...randomQuery(u.r), after: null });
    for (let walk = 0; walk < 12; walk++) {
      const q = { ...randomQuery(u.r), take: 25 };
      const frozen = u.cols.map((c) => Float64Array.from(c));
      const matchedAtStart = new Set(bruteForce(u, q).map((w) => w.id));
      const seen = new Map<number, number>();
      let after: RankQuery['after'] = null;
      let prev: { v: number; id: number } | null = null;
      for (let page = 0; page < 1000; page++) {
        const res = u.index.query({ ...q, after });
        for (let i = 0; i < res.count; i++) {
          const id = res.ids[i]!;
          const v = res.values[i]!;
          expect(seen.has(id), `pool ${id} repeated`).toBe(false);
          seen.set(id, v);
          expect(v).toBe(rankValue(frozen[q.figure]![id]!));
          if (prev !== null) {
            const inOrder = prev.v !== v ? (q.descending ? prev.v > v : prev.v < v) : prev.id < id;
            expect(inOrder, `order at ${id}`).toBe(true);
          }
          prev = { v, id };
        }
        if (res.count < q.take) break;
        after = { value: res.values[res.count - 1]!, id: res.ids[res.count - 1]!, ranking: res.ranking };
        // Enough churn between pages to roll the bases over now and then.
        u.mutate(Math.floor(u.r() * 2500));
        if (page % 4 === 0) u.grow(3);
      }
      // Pools that matched at the start and were never changed since must all have been served.
      for (const id of matchedAtStart) {
        const untouched = u.cols.every((c, f) => Object.is(c[id], frozen[f]![id]));
        if (untouched) expect(seen.has(id), `pool ${id} skipped`).toBe(true);
      }
    }
  });

  it.each([
    ['base', false],
    ['overlay', true],
  ])('pages a search answered from a narrow filter by the values frozen at its first page (pools in the %s)', (_where, warm) => {
    const u = universe(4);
    const TXNS = POOL_FIGURES.indexOf('txns_24h');
    const VOLUME = POOL_FIGURES.indexOf('volume_usd_24h');
    const chosen: number[] = [];
    // A search before the change: the chosen pools then rank from the overlay, not the base.
    if (warm) u.index.query({ figure: VOLUME, descending: true, take: 1, chains: [0], dexes: [-1], tokens: [-1], filterFigures: [], lo: [], hi: [], after: null });
    u.index.beginTask();
    for (let p = 0; p < u.count; p++) {
      u.cols[TXNS]![p] = p % 150 === 7 ? 999 : 0;
      if (p % 150 === 7) chosen.push(p);
      u.index.markDirty(p);
    }
    u.mutate(0);
    const q = { figure: VOLUME, descending: true, take: 4, chains: [0, 1, 2, 3], dexes: [-1, -1, -1, -1], tokens: [-1, -1, -1, -1], filterFigures: [TXNS], lo: [999], hi: [Infinity] };
    const scansBefore = u.index.filterScans;
    const frozen = Float64Array.from(u.cols[VOLUME]!);
    const seen: number[] = [];
    let after: RankQuery['after'] = null;
    for (let page = 0; page < 50; page++) {
      const res = u.index.query({ ...q, after });
      for (let i = 0; i < res.count; i++) {
        expect(res.values[i]).toBe(rankValue(frozen[res.ids[i]!]!));
        seen.push(res.ids[i]!);
      }
      if (res.count < q.take) break;
      after = { value: res.values[res.count - 1]!, id: res.ids[res.count - 1]!, ranking: res.ranking };
      // Turn the order of the chosen pools upside down, and more.
      u.index.beginTask();
      for (const p of chosen) {
        u.cols[VOLUME]![p] = 1e6 - u.cols[VOLUME]![p]! * 1000;
        u.index.markDirty(p);
      }
      u.mutate(3000);
      for (const p of chosen) u.cols[TXNS]![p] = 999; // still within the filter
    }
    expect(u.index.filterScans).toBeGreaterThan(scansBefore);
    expect([...seen].sort((a, b) => a - b)).toEqual(chosen);
    const want = [...chosen].sort((a, b) => rankValue(frozen[b]!) - rankValue(frozen[a]!) || a - b);
    expect(seen).toEqual(want);
  });

  it('keeps paging by value in a fresh ranking when the named one is unknown', () => {
    const u = universe(3);
    const q = { ...randomQuery(u.r), filterFigures: [], lo: [], hi: [], chains: [0, 1, 2, 3], dexes: [-1, -1, -1, -1], tokens: [-1, -1, -1, -1], take: 10 };
    const first = u.index.query({ ...q, after: null });
    const after = { value: first.values[9]!, id: first.ids[9]!, ranking: 'ffffffff.1' };
    const next = u.index.query({ ...q, after });
    const want = bruteForce(u, q);
    const at = want.findIndex((w) => w.id === after.id);
    expect(Array.from(next.ids)).toEqual(want.slice(at + 1, at + 11).map((w) => w.id));
  });
});
