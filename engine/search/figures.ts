/**
 * The pool figures search ranks and filters by, each one shared column of the engine's views.
 * The order of POOL_FIGURES is the wire between the gateway and the shard threads: a figure
 * travels as its index here.
 */
import { Win } from '../state/layout.js';
import type { EngineViews } from '../state/views.js';

export const POOL_FIGURES = [
  'volume_usd_24h',
  'volume_usd_7d',
  'volume_usd_30d',
  'liquidity_usd',
  'txns_24h',
  'created_at',
  'price_usd',
  'price_change_percentage_24h',
  'price_change_percentage_48h',
  'price_change_percentage_6h',
  'price_change_percentage_1h',
  'price_change_percentage_5m',
] as const;

export type PoolFigure = (typeof POOL_FIGURES)[number];

const COLUMN: Readonly<Record<PoolFigure, (v: EngineViews) => Float64Array>> = {
  volume_usd_24h: (v) => v.winVolumeUsd[Win.H24]!,
  volume_usd_7d: (v) => v.winVolumeUsd[Win.D7]!,
  volume_usd_30d: (v) => v.winVolumeUsd[Win.D30]!,
  liquidity_usd: (v) => v.liquidityUsd,
  txns_24h: (v) => v.winTxns[Win.H24]!,
  created_at: (v) => v.poolCreatedAt,
  price_usd: (v) => v.priceUsd0,
  price_change_percentage_24h: (v) => v.winPriceChange[Win.H24]!,
  price_change_percentage_48h: (v) => v.winPriceChange[Win.H48]!,
  price_change_percentage_6h: (v) => v.winPriceChange[Win.H6]!,
  price_change_percentage_1h: (v) => v.winPriceChange[Win.H1]!,
  price_change_percentage_5m: (v) => v.winPriceChange[Win.M5]!,
};

/** The column of every figure, in POOL_FIGURES order. */
export function figureColumns(views: EngineViews): Float64Array[] {
  return POOL_FIGURES.map((f) => COLUMN[f](views));
}

export function figureIndex(name: PoolFigure): number {
  return POOL_FIGURES.indexOf(name);
}

/** The value a figure ranks and filters by: non-finite as 0, -0 as 0, so the order is total. */
export function rankValue(x: number): number {
  return x - x === 0 ? x + 0 : 0;
}
