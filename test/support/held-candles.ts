/**
 * What a pool's rings mean, whichever tier the pool is in: the newest min(opened, slots) candles of
 * each interval, from its ring block while it holds one, else from LMDB (where a quiet pool's are).
 * Two engines that went quiet at different moments hold different blocks but the same candles.
 */
import { INTERVALS } from '../../engine/state/layout.js';
import { candleValue, RING_FIELDS } from '../../engine/state/candle-record.js';
import { createPoolState, createScratchRings, newestCandleOpen, readPool } from '../../engine/state/read.js';
import type { CandleRing, EngineViews } from '../../engine/state/views.js';
import { LmdbCandles } from '../../engine/shards/stored-candles.js';
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
      const n = shared.opened[p]!;
      const R = shared.slots;
      const m = n < R ? n : R;
      let r: CandleRing = shared;
      let row = views.poolBlock[p]! - 1;
      if (row < 0) {
        r = scratch[i]!;
        row = 0;
        if (stored.loadNewest(p, i, m, n, newestCandleOpen(views, p, i), r, 0) !== m) throw new Error(`pool ${p} ${INTERVALS[i]}: LMDB lacks candles its ring held`);
      }
      values.push(p, n);
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
