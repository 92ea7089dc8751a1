/**
 * Query parameters of every REST endpoint, one schema each. Handlers parse with these and the
 * OpenAPI document is generated from them, so what is validated is what is documented.
 */
import { z } from 'zod';
import { INTERVALS, POOL_FIGURES } from '../../engine/read/index.js';
import { boolParam, enumParam, intParam, textParam, timeParam } from '../http/params.js';

export const DEX_PAGE_MAX = 1_000_000;
export const DEX_LIMIT_MAX = 100;
export const SEARCH_LIMIT_MAX = 100;
export const OHLCV_LIMIT_MAX = 1000;
/** Token addresses one batch price request may list. */
export const MULTI_PRICES_MAX = 10;

/** Orderings pool search serves; the older spelling `volume_usd` is not among them. */
export const POOL_ORDER_BY = POOL_FIGURES;
export const SORT_DIRECTIONS = ['desc', 'asc'] as const;

const NUMBER_TEXT = /^[-+]?(?:[0-9]{1,40}(?:\.[0-9]{0,40})?|\.[0-9]{1,40})(?:[eE][-+]?[0-9]{1,3})?$/;
const NUMBER_RULE = 'must be a finite decimal number (e.g. 1000, -2.5)';

/** The one number rule (schemas are immutable: every parameter shares it, and a start builds it once). */
const NUMBER_PARAM = z
  .string()
  .max(64, { error: NUMBER_RULE })
  .regex(NUMBER_TEXT, { error: NUMBER_RULE })
  .describe('A decimal number (negatives and fractions allowed).')
  .transform(Number)
  .pipe(z.number().refine((x) => Number.isFinite(x), { error: NUMBER_RULE }));

/** A finite decimal number, negatives and fractions included; NaN, Infinity and other text are rejected. */
export function numberParam() {
  return NUMBER_PARAM;
}

/** Integers of transaction counts: up to 2^53 - 1. */
export const COUNT_MAX = Number.MAX_SAFE_INTEGER;

/** Range filters pool search and token search both take, name -> parsed bound (all optional). */
export const SEARCH_RANGE_FILTERS = {
  volume_usd_24h_min: numberParam().optional(),
  volume_usd_24h_max: numberParam().optional(),
  volume_usd_7d_min: numberParam().optional(),
  volume_usd_7d_max: numberParam().optional(),
  volume_usd_30d_min: numberParam().optional(),
  volume_usd_30d_max: numberParam().optional(),
  liquidity_usd_min: numberParam().optional(),
  liquidity_usd_max: numberParam().optional(),
  txns_24h_min: intParam(0, COUNT_MAX).optional(),
  created_after: timeParam().optional(),
  created_before: timeParam().optional(),
  price_usd_min: numberParam().optional(),
  price_usd_max: numberParam().optional(),
  price_change_percentage_24h_min: numberParam().optional(),
  price_change_percentage_24h_max: numberParam().optional(),
};

/** Range filters of pool search, name -> parsed bound (all optional). */
const poolFilters = {
  token_address: textParam().describe('Only pools holding this token (network-scoped).').optional(),
  dex_name: textParam().describe('Only pools of this DEX, by dex_id (case-insensitive).').optional(),
  ...SEARCH_RANGE_FILTERS,
  price_change_percentage_48h_min: numberParam().optional(),
  price_change_percentage_48h_max: numberParam().optional(),
  price_change_percentage_6h_min: numberParam().optional(),
  price_change_percentage_6h_max: numberParam().optional(),
  price_change_percentage_1h_min: numberParam().optional(),
  price_change_percentage_1h_max: numberParam().optional(),
  price_change_percentage_5m_min: numberParam().optional(),
  price_change_percentage_5m_max: numberParam().optional(),
};

export const dexListQuery = z.object({
  page: intParam(0, DEX_PAGE_MAX).transform((p) => (p === 0 ? 1 : p)).default(1),
  limit: intParam(1, DEX_LIMIT_MAX).default(10),
});

export const poolSearchQuery = z.object({
  limit: intParam(1, SEARCH_LIMIT_MAX).default(10),
  cursor: textParam().describe('next_cursor of the previous page.').optional(),
  order_by: enumParam(POOL_ORDER_BY).default('volume_usd_24h'),
  sort: enumParam(SORT_DIRECTIONS).default('desc'),
  ...poolFilters,
});

/** GET /pools/search: pool search over several networks, `chains` a comma-separated list of network ids. */
export const globalPoolSearchQuery = poolSearchQuery.extend({
  chains: textParam().describe('Comma-separated network ids (all networks when absent).').optional(),
});

export const poolDetailsQuery = z.object({
  inversed: boolParam().default(false),
});

export const poolOhlcvQuery = z.object({
  start: timeParam(),
  end: timeParam().optional(),
  limit: intParam(1, OHLCV_LIMIT_MAX).default(100),
  count_back: intParam(1, OHLCV_LIMIT_MAX).optional(),
  interval: enumParam(INTERVALS).default('24h'),
  inversed: boolParam().default(false),
});

export const multiPricesQuery = z.object({
  /** Comma-separated token addresses (a percent-encoded comma counts as a comma). */
  tokens: textParam()
    .describe(`Comma-separated token addresses, 1 to ${MULTI_PRICES_MAX}.`)
    .transform((v) => v.split(','))
    .pipe(
      z
        .array(z.string().min(1, { error: 'must not hold empty entries' }))
        .min(1, { error: `must list 1 to ${MULTI_PRICES_MAX} token addresses` })
        .max(MULTI_PRICES_MAX, { error: `must list 1 to ${MULTI_PRICES_MAX} token addresses` }),
    ),
});

export type DexListQuery = z.output<typeof dexListQuery>;
export type PoolSearchQuery = z.output<typeof poolSearchQuery>;
export type PoolDetailsQuery = z.output<typeof poolDetailsQuery>;
export type PoolOhlcvQuery = z.output<typeof poolOhlcvQuery>;
export type MultiPricesQuery = z.output<typeof multiPricesQuery>;
