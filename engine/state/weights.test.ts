import { describe, expect, it } from 'vitest';
import { Catalog } from '../catalog/catalog.js';
import { PoolProtocol } from '../events/model.js';
import { poolWeight, reservePrice, setPoolWeights, weightRatio } from './reserve-price.js';
import { EngineViews, WEIGHTED_POOL_SLOTS } from './views.js';

const E18 = 10n ** 18n;

describe("weighted pools' side table", () => {
  it('keeps the weights of weighted pools only, off every pool row, readable from another thread\'s views', () => {
    const v = EngineViews.create({ pools: 200_000, tokens: 10, chains: 1, blocks: 1, secondBlocks: 1 });
    expect(v.columnTable.some((c) => c.scope === 'pool' && c.name.toLowerCase().includes('weight'))).toBe(false);
    // Pools far apart and close together, so that home slots collide and probing is exercised.
    const pools = [0, 1, 2, 3, 32_768, 65_536, 131_072, 199_999, ...Array.from({ length: 3_000 }, (_, i) => 7 + i * 61)];
    const w = (p: number): [bigint, bigint] => [E18 / 5n + BigInt(p) * 1_000_003n, (E18 * 4n) / 5n - BigInt(p) * 999_983n];
    for (const p of pools) {
      v.poolProtocol[p] = PoolProtocol.Weighted;
      setPoolWeights(v, p, ...w(p));
    }
    const other = EngineViews.attach(v.buffers);
    for (const p of pools) {
      const [w0, w1] = w(p);
      expect([poolWeight(other, p, 0), poolWeight(other, p, 1)]).toEqual([w0, w1]);
      expect(weightRatio(other, p)).toBe(Number(w0) / Number(w1));
      // Priced (B1/w1)/(B0/w0): reserves 10 and 30 give 3 * w0/w1.
      expect(reservePrice(PoolProtocol.Weighted, 10, 30, weightRatio(other, p))).toBeCloseTo((3 * Number(w0)) / Number(w1), 12);
    }
    // A pool of another model, or a weighted pool never given weights, reads none.
    expect(poolWeight(other, 5, 0)).toBe(0n);
    expect(weightRatio(other, 5)).toBe(1);
    other.poolProtocol[6] = PoolProtocol.Weighted;
    expect(weightRatio(other, 6)).toBe(1);
    // Setting weights again replaces them in the same slot.
    setPoolWeights(v, 3, E18 / 2n, E18 / 2n);
    expect(weightRatio(other, 3)).toBe(1);
    expect(v.weightedPool.filter((k) => k !== 0).length).toBe(pools.length);
  });

  it('travels with the catalog\'s export of its view columns', () => {
    const v = EngineViews.create({ pools: 100, tokens: 10, chains: 1, blocks: 1, secondBlocks: 1 });
    setPoolWeights(v, 42, (E18 * 4n) / 5n, E18 / 5n);
    const copy = EngineViews.create({ pools: 100, tokens: 10, chains: 1, blocks: 1, secondBlocks: 1 });
    Catalog.import(copy, new Catalog(v, 16).export());
    expect([poolWeight(copy, 42, 0), poolWeight(copy, 42, 1)]).toEqual([(E18 * 4n) / 5n, E18 / 5n]);
  });

  it('refuses a pool with a clear error once every slot is taken', () => {
    const v = EngineViews.create({ pools: WEIGHTED_POOL_SLOTS + 1, tokens: 1, chains: 1, blocks: 1, secondBlocks: 1 });
    for (let p = 0; p < WEIGHTED_POOL_SLOTS; p++) setPoolWeights(v, p, 1n, 1n);
    expect(() => setPoolWeights(v, WEIGHTED_POOL_SLOTS, 1n, 1n)).toThrow(/weighted pools' table is full/);
  });
});
