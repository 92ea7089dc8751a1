/**
 * Query schemas of token search (per network and global) and of GET /search. Pool search schemas
 * live in schemas.ts with the other endpoint schemas; these reuse its building blocks.
 */
import { z } from 'zod';
import { MAX_PARAM_CHARS } from '../http/query.js';
import { enumParam, intParam, textParam } from '../http/params.js';
import { COUNT_MAX, SEARCH_LIMIT_MAX, SEARCH_RANGE_FILTERS, SORT_DIRECTIONS, numberParam } from './schemas.js';
/** Orderings token search serves: exactly these eight (no price_usd, no 6h/1h/5m price changes). */
export const TOKEN_ORDER_BY = [
    'volume_usd_24h',
    'volume_usd_7d',
    'volume_usd_30d',
    'liquidity_usd',
    'txns_24h',
    'price_change_percentage_24h',
    'created_at',
    'fdv_usd',
];
export const tokenSearchQuery = z.object({
    limit: intParam(1, SEARCH_LIMIT_MAX).default(10),
    cursor: textParam().describe('next_cursor of the previous page.').optional(),
    order_by: enumParam(TOKEN_ORDER_BY).default('volume_usd_24h'),
    sort: enumParam(SORT_DIRECTIONS).default('desc'),
    ...SEARCH_RANGE_FILTERS,
    txns_24h_max: intParam(0, COUNT_MAX).optional(),
    fdv_usd_min: numberParam().optional(),
    fdv_usd_max: numberParam().optional(),
    fdv_min: numberParam().describe('Alias of fdv_usd_min (fdv_usd_min wins when both are given).').optional(),
    fdv_max: numberParam().describe('Alias of fdv_usd_max (fdv_usd_max wins when both are given).').optional(),
});
/** GET /tokens/search: token search over several networks, `chains` a comma-separated list of network ids. */
export const globalTokenSearchQuery = tokenSearchQuery.extend({
    chains: textParam().describe('Comma-separated network ids (all networks when absent).').optional(),
});
/** GET /search: free text matched against names, symbols and address prefixes. */
export const globalSearchQuery = z.object({
    query: z
        .string({ error: 'is required: the text to search for' })
        .max(MAX_PARAM_CHARS, { error: `must be at most ${MAX_PARAM_CHARS} characters` })
        .describe('Text to look for in token, pool and DEX names and symbols, or an address prefix (case-insensitive).'),
});
//# sourceMappingURL=schemas-search.js.map