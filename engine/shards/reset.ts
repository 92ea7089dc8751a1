import { WINDOWS, WINDOW_BASES } from '../state/layout.js';
import type { EngineViews } from '../state/views.js';

/**
 * Zeroes the dynamic state of pools and tokens (reserves, prices, windows, candle rings, routes,
 * 1 s candles) under their seqlocks, as a rollback does before the chain's log is applied again.
 * Runs on the shard thread that owns the chain (the only writer of these cells). Ring slots are not
 * cleared: a ring reads only its `opened` newest slots, and a slot is fully written when it opens.
 */
export function resetState(v: EngineViews, pools: readonly number[], tokens: readonly number[]): void {
  for (const p of pools) {
    Atomics.add(v.poolSeq, p, 1);
    v.lastEventTime[p] = 0;
    v.lastSwapTime[p] = 0;
    v.ratio[p] = 0;
    v.priceUsd0[p] = 0;
    v.priceUsd1[p] = 0;
    v.reserve0[p] = 0;
    v.reserve1[p] = 0;
    v.reserveRaw.fill(0, p * 8, p * 8 + 8);
    v.prevReserveRaw.fill(0, p * 8, p * 8 + 8);
    v.reserveBlock[p] = 0;
    v.reserveTime[p] = 0;
    v.syncBlock[p] = 0;
    v.syncTx[p] = 0;
    v.liquidityUsd[p] = 0;
    v.txnsTotal[p] = 0;
    for (let w = 0; w < WINDOWS.length; w++) {
      v.winVolumeUsd[w]![p] = 0;
      v.winBuyVolumeUsd[w]![p] = 0;
      v.winTxns[w]![p] = 0;
      v.winBuys[w]![p] = 0;
      v.winPriceChange[w]![p] = 0;
      v.winRefPrice[w]![p] = 0;
    }
    for (let b = 0; b < WINDOW_BASES.length; b++) v.winAsOf[b]![p] = 0;
    for (const r of v.rings) r.opened[p] = 0;
    Atomics.add(v.poolSeq, p, 1);
  }
  for (const t of tokens) {
    Atomics.add(v.tokenSeq, t, 1);
    v.tokenPriceUsd[t] = 0;
    v.tokenRouteLiquidityUsd[t] = 0;
    v.tokenRoutePool[t] = 0;
    v.tokenRouteClass[t] = 0;
    v.tokenPriceTime[t] = 0;
    v.secOpened[t] = 0;
    Atomics.add(v.tokenSeq, t, 1);
  }
}
