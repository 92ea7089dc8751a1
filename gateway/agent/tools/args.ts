/**
 * Argument schemas of the agent tools. They describe each argument to a model (the JSON Schema sent
 * in tools/list is generated from them) and carry rejection messages that name the argument and say
 * what is accepted, since a model reads them to fix its next call.
 *
 * Only plain JSON types are used (no transforms), so the published input schema is exactly what is
 * checked. Numbers also accept numeric text ("25"), which models often send. Mapping to the query
 * layer (aliases, legacy names) happens in the tools, not here.
 */
import { z } from 'zod';
import { INDICATOR_NAMES, INTERVALS } from '../../../engine/read/index.js';
import { NETWORK_SYNONYMS } from '../../rest/api-subset.js';
import { POOL_ORDER_BY, SORT_DIRECTIONS } from '../../rest/schemas.js';
import { TOKEN_ORDER_BY } from '../../rest/schemas-search.js';

/** Longest identifier (network id, address, DEX id, cursor) a tool accepts, in characters. */
export const IDENTIFIER_MAX_CHARS = 512;

const SYNONYM_LIST = Object.keys(NETWORK_SYNONYMS).join(', ');

/** The rejection of a required argument: missing, or of the wrong type. */
export function required(name: string, what: string, wrongType: string) {
  return (issue: { readonly input?: unknown }): string => (issue.input === undefined ? `${name} is required: ${what}` : `${name} ${wrongType}`);
}

export function networkArg() {
  return z
    .string({ error: required('network', 'a network id from getNetworks, e.g. "ethereum"', 'must be a text network id from getNetworks, e.g. "ethereum"') })
    .min(1, { error: 'network must not be empty: pass a network id from getNetworks, e.g. "ethereum"' })
    .max(64, { error: 'network must be a network id from getNetworks (at most 64 characters)' })
    .describe(`Network id from getNetworks, e.g. "ethereum" or "solana". Short names ${SYNONYM_LIST} are accepted too.`);
}

export function poolAddressArg() {
  return z
    .string({ error: required('pool_address', 'the `id` of a pool row from getNetworkPools, getTokenPools or search', 'must be a text address') })
    .min(1, { error: 'pool_address must not be empty' })
    .max(IDENTIFIER_MAX_CHARS, { error: `pool_address must be at most ${IDENTIFIER_MAX_CHARS} characters` })
    .describe('Pool address on that network (the `id` of a pool row from getNetworkPools, getTokenPools or search). EVM hex in any case; base58 exactly.');
}

export function tokenAddressArg(what = 'Token contract address on that network (the `id` of a token from search, getTopTokens or a pool\'s `tokens`). EVM hex in any case; base58 exactly.') {
  return z
    .string({ error: required('token_address', 'a token contract address, e.g. the `id` of a token from search', 'must be a text address') })
    .min(1, { error: 'token_address must not be empty' })
    .max(IDENTIFIER_MAX_CHARS, { error: `token_address must be at most ${IDENTIFIER_MAX_CHARS} characters` })
    .describe(what);
}

/** A whole number in [min, max]; numeric text accepted. */
export function intArg(name: string, min: number, max: number, describe: string) {
  const rule = `${name} must be a whole number from ${min} to ${max}`;
  return z.coerce
    .number({ error: rule })
    .int({ error: rule })
    .min(min, { error: rule })
    .max(max, { error: rule })
    .describe(describe);
}

/** A finite decimal number, negatives and fractions allowed; numeric text accepted. */
export function numberArg(name: string, describe: string) {
  return z.coerce.number({ error: `${name} must be a finite number, e.g. 1000 or -2.5` }).describe(describe);
}

export function limitArg(max: number, fallback: number, rows = 'rows') {
  return intArg('limit', 1, max, `How many ${rows} to return, 1 to ${max} (default ${fallback}).`);
}

export function cursorArg() {
  return z
    .string({ error: 'cursor must be the next_cursor text of the previous page' })
    .min(1, { error: 'cursor must not be empty: omit it for the first page' })
    .max(IDENTIFIER_MAX_CHARS, { error: 'cursor must be the next_cursor text of the previous page' })
    .describe('To get the next page, pass `next_cursor` of the previous answer, with the same sort_by and sort_dir. Omit for the first page.');
}

const TIME_RULE =
  'must be Unix seconds (a number), an RFC 3339 time ("2024-01-31T12:00:00Z"), a date ("2024-01-31") or an offset from now ("-90s", "-30m", "-6h", "-7d")';

/** A time value: Unix seconds, RFC 3339, yyyy-mm-dd or a relative offset (parsed by the query layer). */
export function timeArg(name: string, describe: string) {
  return z
    .union([z.number(), z.string().min(1).max(64)], { error: required(name, TIME_RULE.replace(/^must be /, ''), TIME_RULE) })
    .describe(`${describe} Unix seconds, an RFC 3339 time ("2024-01-31T12:00:00Z"), a date ("2024-01-31") or an offset from now ("-1d", "-6h").`);
}

export function booleanArg(name: string, describe: string) {
  return z.boolean({ error: `${name} must be true or false` }).describe(describe);
}

function enumArg<const T extends readonly [string, ...string[]]>(name: string, values: T, describe: string) {
  return z.enum(values, { error: `${name} must be one of ${values.join(', ')}` }).describe(describe);
}

// ---- sorting ----------------------------------------------------------------------------------

/** Older short names of pool orderings still sent by agent clients, to the current names. */
export const POOL_SORT_ALIASES: Readonly<Record<string, (typeof POOL_ORDER_BY)[number]>> = Object.freeze({
  volume_usd: 'volume_usd_24h',
  volume_24h: 'volume_usd_24h',
  volume_7d: 'volume_usd_7d',
  volume_30d: 'volume_usd_30d',
  liquidity: 'liquidity_usd',
  transactions: 'txns_24h',
  txns: 'txns_24h',
  price: 'price_usd',
  last_price_change_usd_24h: 'price_change_percentage_24h',
});

/** Older short names of token orderings, to the current names. */
export const TOKEN_SORT_ALIASES: Readonly<Record<string, (typeof TOKEN_ORDER_BY)[number]>> = Object.freeze({
  volume_24h: 'volume_usd_24h',
  volume_7d: 'volume_usd_7d',
  volume_30d: 'volume_usd_30d',
  liquidity: 'liquidity_usd',
  txns: 'txns_24h',
  price_change: 'price_change_percentage_24h',
  fdv: 'fdv_usd',
});

const POOL_SORT_VALUES = [...POOL_ORDER_BY, ...Object.keys(POOL_SORT_ALIASES)] as [string, ...string[]];
const TOKEN_SORT_VALUES = [...TOKEN_ORDER_BY, ...Object.keys(TOKEN_SORT_ALIASES)] as [string, ...string[]];

function sortByArg(values: [string, ...string[]], canonical: readonly string[], name: string, alias: boolean) {
  const rule = `${name} must be one of ${canonical.join(', ')}`;
  const text = alias
    ? 'Same as sort_by (the REST interface calls it order_by); give one of the two.'
    : `What to rank by: ${canonical.join(', ')} (default volume_usd_24h). Older short names (volume_usd, liquidity, txns, ...) are accepted.`;
  return z.enum(values, { error: rule }).describe(text);
}

/** sort_by and its alias order_by, sort_dir and its alias sort, for pool listings. */
export function poolSortArgs() {
  return {
    sort_by: sortByArg(POOL_SORT_VALUES, POOL_ORDER_BY, 'sort_by', false).optional(),
    order_by: sortByArg(POOL_SORT_VALUES, POOL_ORDER_BY, 'order_by', true).optional(),
    sort_dir: enumArg('sort_dir', SORT_DIRECTIONS, 'Direction: "desc" (largest first, the default) or "asc".').optional(),
    sort: enumArg('sort', SORT_DIRECTIONS, 'Same as sort_dir (the REST interface calls it sort); give one of the two.').optional(),
  };
}

/** The same for token listings (token orderings: no price_usd, no short price-change windows). */
export function tokenSortArgs() {
  return {
    sort_by: sortByArg(TOKEN_SORT_VALUES, TOKEN_ORDER_BY, 'sort_by', false).optional(),
    order_by: sortByArg(TOKEN_SORT_VALUES, TOKEN_ORDER_BY, 'order_by', true).optional(),
    sort_dir: enumArg('sort_dir', SORT_DIRECTIONS, 'Direction: "desc" (largest first, the default) or "asc".').optional(),
    sort: enumArg('sort', SORT_DIRECTIONS, 'Same as sort_dir (the REST interface calls it sort); give one of the two.').optional(),
  };
}

// ---- candles ----------------------------------------------------------------------------------

export function intervalArg() {
  return enumArg(
    'interval',
    INTERVALS,
    `Candle width: ${INTERVALS.join(', ')} (default 24h; 1h without a key). Plans cap the finest interval: keyless 1h, free 10m, paid plans 1m.`,
  );
}

/** start, end, limit, count_back and interval of the candle tools. */
export function candleArgs() {
  return {
    start: timeArg('start', 'Required. First candle time.'),
    end: timeArg('end', 'Last candle time (default now).').optional(),
    limit: intArg('limit', 1, 1000, 'Most candles to return, 1 to 1000 (default 100), the earliest first from start.').optional(),
    count_back: intArg('count_back', 1, 1000, 'Return the last N candles up to end instead of the first ones from start.').optional(),
    interval: intervalArg().optional(),
  };
}

/** Arguments of the indicator tools beyond the candle ones. */
export function indicatorArgs() {
  const rule = `indicators must be a list drawn from ${INDICATOR_NAMES.join(', ')}`;
  const names = z.enum(INDICATOR_NAMES, { error: rule });
  return {
    indicators: z
      .union([z.array(names).min(1, { error: rule }).max(INDICATOR_NAMES.length, { error: rule }), z.string().min(1, { error: rule }).max(64, { error: rule })], { error: rule })
      .describe(`Which indicators to compute: a list drawn from ${INDICATOR_NAMES.join(', ')} (default all five).`)
      .optional(),
    period: intArg('period', 2, 200, 'Period of SMA, EMA, RSI and Bollinger bands, in candles (default 14).').optional(),
    macd_fast: intArg('macd_fast', 2, 200, 'MACD fast EMA period (default 12); must be below macd_slow.').optional(),
    macd_slow: intArg('macd_slow', 2, 200, 'MACD slow EMA period (default 26).').optional(),
    macd_signal: intArg('macd_signal', 2, 200, 'MACD signal line period (default 9).').optional(),
    bbands_stddev: z.coerce
      .number({ error: 'bbands_stddev must be a number greater than 0 and at most 10' })
      .gt(0, { error: 'bbands_stddev must be a number greater than 0 and at most 10' })
      .max(10, { error: 'bbands_stddev must be a number greater than 0 and at most 10' })
      .describe('Bollinger band width in standard deviations (default 2).')
      .optional(),
  };
}

// ---- range filters ----------------------------------------------------------------------------

/** Range filters of pool listings, by their query-layer names. */
export const POOL_FILTER_NAMES = [
  'volume_usd_24h_min',
  'volume_usd_24h_max',
  'volume_usd_7d_min',
  'volume_usd_7d_max',
  'volume_usd_30d_min',
  'volume_usd_30d_max',
  'liquidity_usd_min',
  'liquidity_usd_max',
  'txns_24h_min',
  'price_usd_min',
  'price_usd_max',
  'price_change_percentage_24h_min',
  'price_change_percentage_24h_max',
  'price_change_percentage_48h_min',
  'price_change_percentage_48h_max',
  'price_change_percentage_6h_min',
  'price_change_percentage_6h_max',
  'price_change_percentage_1h_min',
  'price_change_percentage_1h_max',
  'price_change_percentage_5m_min',
  'price_change_percentage_5m_max',
] as const;

/** Range filters of token listings, by their query-layer names. */
export const TOKEN_FILTER_NAMES = [
  'volume_usd_24h_min',
  'volume_usd_24h_max',
  'volume_usd_7d_min',
  'volume_usd_7d_max',
  'volume_usd_30d_min',
  'volume_usd_30d_max',
  'liquidity_usd_min',
  'liquidity_usd_max',
  'txns_24h_min',
  'txns_24h_max',
  'price_usd_min',
  'price_usd_max',
  'price_change_percentage_24h_min',
  'price_change_percentage_24h_max',
  'fdv_usd_min',
  'fdv_usd_max',
] as const;

/** Older filter names agent clients send, to the query-layer names. */
export const FILTER_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  volume_24h_min: 'volume_usd_24h_min',
  volume_24h_max: 'volume_usd_24h_max',
  volume_7d_min: 'volume_usd_7d_min',
  volume_7d_max: 'volume_usd_7d_max',
  volume_30d_min: 'volume_usd_30d_min',
  volume_30d_max: 'volume_usd_30d_max',
  fdv_min: 'fdv_usd_min',
  fdv_max: 'fdv_usd_max',
});

function describeFilter(name: string): string {
  const bound = name.endsWith('_min') ? 'Minimum' : 'Maximum';
  const what = name.replace(/_(min|max)$/, '');
  if (what.startsWith('price_change_percentage_')) return `${bound} price change over ${what.slice('price_change_percentage_'.length)}, in percent (negatives allowed).`;
  if (what === 'txns_24h') return `${bound} number of transactions in the last 24 h.`;
  if (what === 'price_usd') return `${bound} USD price.`;
  if (what === 'liquidity_usd') return `${bound} liquidity in USD.`;
  if (what === 'fdv_usd') return `${bound} fully diluted valuation in USD.`;
  return `${bound} ${what.slice('volume_usd_'.length)} trading volume in USD.`;
}

function filterShape(names: readonly string[], aliases: readonly string[]): Record<string, z.ZodOptional<z.ZodCoercedNumber>> {
  const shape: Record<string, z.ZodOptional<z.ZodCoercedNumber>> = {};
  for (const name of names) shape[name] = numberArg(name, describeFilter(name)).optional();
  for (const alias of aliases) shape[alias] = numberArg(alias, `Same as ${FILTER_ALIASES[alias]}.`).optional();
  return shape;
}

export function poolFilterArgs() {
  return {
    ...filterShape(POOL_FILTER_NAMES, ['volume_24h_min', 'volume_24h_max', 'volume_7d_min', 'volume_7d_max', 'volume_30d_min', 'volume_30d_max']),
    created_after: timeArg('created_after', 'Only pools created at or after this time.').optional(),
    created_before: timeArg('created_before', 'Only pools created at or before this time.').optional(),
  };
}

export function tokenFilterArgs() {
  return {
    ...filterShape(TOKEN_FILTER_NAMES, ['volume_24h_min', 'volume_24h_max', 'volume_7d_min', 'volume_7d_max', 'volume_30d_min', 'volume_30d_max', 'fdv_min', 'fdv_max']),
    created_after: timeArg('created_after', 'Only tokens first seen at or after this time.').optional(),
    created_before: timeArg('created_before', 'Only tokens first seen at or before this time.').optional(),
  };
}
