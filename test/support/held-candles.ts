/**
 * What a pool's rings mean, whichever tier the pool is in: the newest candles of each interval (as
 * many as its ring keeps), from its ring block while it holds one, else from LMDB (where a quiet
 * pool's are). Two engines that went quiet at different moments hold different blocks, counted
 * differently (views.ts ringOpened), but the same candles.
 */
import { INTERVALS } from '../../engine/state/layout.js';
import { candleValue, RING_FIELDS } from '../../engine/state/candle-record.js';
import { createPoolState, createScratchRings, newestCandleOpen, readPool } from '../../engine/state/read.js';
import { ringOpenedAt, type CandleRing, type EngineViews } from '../../engine/state/views.js';
import { LmdbCandles } from '../../engine/shards/stored-candles.js';
import { reloadNewest } from '../../engine/state/windows.js';
import type { Store } from '../../engine/store/store.js';


/** Per interval name, every existing pool's held candles in pool order, as numbers. */
export function heldCandles(views: EngineViews, store: Store): Map<string, number[]> {
  const stored = new LmdbCandles(store);
  const scratch = createScratchRings();
  const out = new Map<string, number[]>();
  for (let i = 0; i < INTERVALS.length; i++) {
    const values: number[] = [];
    const shared = views.rings[i]!;
    for (let p = 0; p < views.poolCount; p++) {
      if (views.poolExists[p] !== 1) continue;
      const R = shared.slots;
      let r: CandleRing = shared;
      let row = views.poolBlock[p]! - 1;
      let n: number;
      if (row >= 0) n = views.ringOpened[ringOpenedAt(row, i)]!;
      else {
        r = scratch[i]!;
        row = 0;
        n = views.lastSwapTime[p] === 0 ? 0 : reloadNewest(stored, p, i, newestCandleOpen(views, p, i), r, 0);
        if (views.lastSwapTime[p] !== 0 && n === 0) throw new Error(`pool ${p} ${INTERVALS[i]}: LMDB lacks the candles its ring held`);
      }
      const m = n < R ? n : R;
      values.push(p, m);
      for (let k = n - m; k < n; k++) for (const f of RING_FIELDS) values.push(candleValue(r, row * R + (k % R), f));
    }
    out.set(INTERVALS[i]!, values);
  }
  return out;
}

/** Every existing pool's token-1 price change per window, as a reader sees it. */
export function token1Changes(views: EngineViews): number[] {
  const s = createPoolState();
  const out: number[] = [];
  for (let p = 0; p < views.poolCount; p++) {
    if (views.poolExists[p] !== 1) continue;
    if (!readPool(views, p, s, true)) throw new Error(`pool ${p} did not settle`);
    out.push(p, ...s.winPriceChange1);
  }
  return out;
}
