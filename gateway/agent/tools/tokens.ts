/**
 * Token tools, each one main-interface route:
 *   getTokenDetails      GET /networks/{n}/tokens/{token}
 *   getTokenPools        GET /networks/{n}/pools/search?token_address={token}
 *   getTokenMultiPrices  GET /networks/{n}/multi/prices?tokens=...      {prices, missing_tokens}
 *   getTokenOHLCV        GET /networks/{n}/tokens/{token}/ohlcv          {ohlcv: [...]}        paid plans
 *   getTokenIndicators   GET /networks/{n}/tokens/{token}/indicators     {indicators: [...]}   paid plans
 *   getTopTokens         GET /networks/{n}/tokens/search
 *   filterNetworkTokens  GET /networks/{n}/tokens/search with range filters
 */
import { z } from 'zod';
import { normalizeAddress } from '../../../engine/read/index.js';
import { MULTI_PRICES_MAX, SEARCH_LIMIT_MAX } from '../../rest/schemas.js';
import {
  candleArgs,
  cursorArg,
  IDENTIFIER_MAX_CHARS,
  indicatorArgs,
  limitArg,
  networkArg,
  POOL_SORT_ALIASES,
  poolSortArgs,
  required,
  TOKEN_FILTER_NAMES,
  TOKEN_SORT_ALIASES,
  tokenAddressArg,
  tokenFilterArgs,
  tokenSortArgs,
} from './args.js';
import * as out from './outputs.js';
import { candleParams, filterParams, indicatorParams, INDICATORS_NOTE, listingParams, poolSearch } from './pools.js';
import { pathOf, queryOf, type QueryLayer } from './query.js';
import { defineTool, ToolFailure, type ToolSpec } from './tool.js';

const TOKEN_LISTING_NOTE =
  'Answers {results, has_next_page, next_cursor, query}; each row has the token `id` (its address), price, fdv, liquidity, volumes and pools_count. ' +
  'To page on, call again with cursor = next_cursor and the same sorting. An empty `results` means no token matched. ' +
  'Ranking by price_usd or by 6h/1h/5m price change is not offered for tokens.';

const TOKENS_RULE = `tokens must be a list of 1 to ${MULTI_PRICES_MAX} token addresses`;

interface PriceRow {
  id: string;
}

/** The addresses a `tokens` argument lists: an array, or one comma-separated text. */
function tokenList(tokens: readonly string[] | string): string[] {
  const list = (typeof tokens === 'string' ? tokens.split(',') : [...tokens]).map((t) => t.trim());
  if (list.length < 1 || list.length > MULTI_PRICES_MAX) {
    throw new ToolFailure(`tokens must list 1 to ${MULTI_PRICES_MAX} addresses (${list.length} given); split a longer list over several calls.`);
  }
  if (list.some((t) => t === '')) throw new ToolFailure('tokens must not hold empty entries: list token addresses only.');
  return list;
}

export function tokenTools(q: QueryLayer): ToolSpec[] {
  const getTokenDetails = defineTool({
    name: 'getTokenDetails',
    title: 'Token details',
    description:
      "One token's USD price, fully diluted valuation, supply and metadata, and a summary over all its pools: liquidity, pool count, and volume, buys, sells and price change over 1m to 24h windows. " +
      'If you only have a symbol (e.g. "PEPE"), call search first for its address and network. For several prices at once use getTokenMultiPrices; for its pools getTokenPools.',
    input: z.object({ network: networkArg(), token_address: tokenAddressArg() }),
    output: out.tokenDetails,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const token = q.token(net, args.token_address);
      return await q.get(call.caller, pathOf('networks', net.id, 'tokens', token.address), '') as Record<string, unknown>;
    },
  });

  const getTokenPools = defineTool({
    name: 'getTokenPools',
    title: 'Pools of a token',
    description:
      'Ranks the pools on one network that hold a given token, by 24 h USD volume unless sort_by says otherwise: where the token trades and against what. ' +
      'Answers {results, has_next_page, next_cursor, query}; to page on, call again with cursor = next_cursor and the same sorting. ' +
      'For one pair, look through results[].tokens. An address the network does not know is an error naming where it belongs, not an empty list.',
    input: z.object({
      network: networkArg(),
      token_address: tokenAddressArg(),
      limit: limitArg(SEARCH_LIMIT_MAX, 10, 'pools').optional(),
      cursor: cursorArg().optional(),
      ...poolSortArgs(),
    }),
    output: out.poolPage,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      q.token(net, args.token_address);
      return await poolSearch(q, call, net, { token_address: args.token_address.trim(), ...listingParams(args, POOL_SORT_ALIASES) });
    },
  });

  const getTokenMultiPrices = defineTool({
    name: 'getTokenMultiPrices',
    title: 'Prices of several tokens',
    description:
      `Current USD prices of 1 to ${MULTI_PRICES_MAX} tokens of one network in one call: {prices: [{id, chain, price_usd}], missing_tokens}. ` +
      'Tokens that cannot be priced (unknown on this network, or never traded) are listed in missing_tokens instead of prices, so check it. ' +
      'Costs one credit per token listed. For one token with full figures use getTokenDetails.',
    input: z.object({
      network: networkArg(),
      tokens: z
        .union(
          [
            z
              .array(z.string({ error: TOKENS_RULE }).min(1, { error: 'tokens must not hold empty addresses' }).max(IDENTIFIER_MAX_CHARS, { error: TOKENS_RULE }), { error: TOKENS_RULE })
              .min(1, { error: TOKENS_RULE })
              .max(MULTI_PRICES_MAX, { error: `${TOKENS_RULE}; split a longer list over several calls` }),
            z.string().min(1, { error: TOKENS_RULE }).max(MULTI_PRICES_MAX * (IDENTIFIER_MAX_CHARS + 1), { error: TOKENS_RULE }),
          ],
          { error: required('tokens', `a list of 1 to ${MULTI_PRICES_MAX} token addresses`, `must be a list of 1 to ${MULTI_PRICES_MAX} token addresses`) },
        )
        .describe(`Token addresses on that network, 1 to ${MULTI_PRICES_MAX} (a list; one comma-separated text also works).`),
    }),
    output: out.multiPrices,
    credits: '1 per token',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const list = tokenList(args.tokens);
      const prices = await q.get(call.caller, pathOf('networks', net.id, 'multi', 'prices'), queryOf({ tokens: list.join(',') }), list.length) as PriceRow[];
      const priced = new Set(prices.map((p) => normalizeAddress(p.id)));
      const missing: string[] = [];
      const seen = new Set<string>();
      for (const address of list) {
        const a = normalizeAddress(address);
        if (seen.has(a)) continue;
        seen.add(a);
        if (!priced.has(a)) missing.push(address);
      }
      return { prices, missing_tokens: missing };
    },
  });

  const getTokenOHLCV = defineTool({
    name: 'getTokenOHLCV',
    title: 'Token price candles',
    description:
      "OHLCV candles of one token's USD price over all its pools (prices weighted by pool liquidity, volume summed), oldest first. start is required. " +
      'Needs a paid plan (dev, pro or enterprise): the key goes in the Authorization header of the MCP connection. Without one, use getPoolOHLCV on the token\'s most liquid pool (getTokenPools). ' +
      'An empty `ohlcv` means no trades in the range.',
    input: z.object({ network: networkArg(), token_address: tokenAddressArg(), ...candleArgs() }),
    output: out.candles,
    credits: '1',
    paidOnly: true,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      q.checkPaidOnly(call.caller, pathOf('networks', net.id, 'tokens', args.token_address.trim(), 'ohlcv'));
      const token = q.token(net, args.token_address);
      const rows = await q.get(call.caller, pathOf('networks', net.id, 'tokens', token.address, 'ohlcv'), queryOf(candleParams(args)));
      return { ohlcv: rows as unknown[] };
    },
  });

  const getTokenIndicators = defineTool({
    name: 'getTokenIndicators',
    title: 'Token technical indicators',
    description:
      "SMA, EMA, RSI, MACD and Bollinger bands over the closes of a token's candles (those getTokenOHLCV answers with the same arguments), one entry per candle. " +
      INDICATORS_NOTE +
      ' Needs a paid plan (dev, pro or enterprise); without one, use getPoolIndicators on one of the token\'s pools.',
    input: z.object({ network: networkArg(), token_address: tokenAddressArg(), ...candleArgs(), ...indicatorArgs() }),
    output: out.indicators,
    credits: '1',
    paidOnly: true,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      q.checkPaidOnly(call.caller, pathOf('networks', net.id, 'tokens', args.token_address.trim(), 'indicators'));
      const token = q.token(net, args.token_address);
      const rows = await q.get(
        call.caller,
        pathOf('networks', net.id, 'tokens', token.address, 'indicators'),
        queryOf({ ...candleParams(args), ...indicatorParams(args) }),
      );
      return { indicators: rows as unknown[] };
    },
  });

  const getTopTokens = defineTool({
    name: 'getTopTokens',
    title: 'Top tokens of a network',
    description:
      'Ranks the tokens of one network by 24 h USD volume, or by sort_by: volume over 7 or 30 days, liquidity, transactions, 24 h price change (top gainers: price_change_percentage_24h desc), fdv or age. ' +
      'For numeric filters use filterNetworkTokens. ' +
      TOKEN_LISTING_NOTE,
    input: z.object({ network: networkArg(), limit: limitArg(SEARCH_LIMIT_MAX, 10, 'tokens').optional(), cursor: cursorArg().optional(), ...tokenSortArgs() }),
    output: out.tokenPage,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      return await q.get(call.caller, pathOf('networks', net.id, 'tokens', 'search'), queryOf(listingParams(args, TOKEN_SORT_ALIASES))) as Record<string, unknown>;
    },
  });

  const filterNetworkTokens = defineTool({
    name: 'filterNetworkTokens',
    title: 'Filter tokens of a network',
    description:
      'Tokens of one network that pass numeric and time filters (all must hold), ranked like getTopTokens. ' +
      'Use for "tokens with fdv over $10M on base", "tokens first seen today" (created_after "-1d") or "liquid tokens down over 10 % in 24 h". ' +
      TOKEN_LISTING_NOTE,
    input: z.object({
      network: networkArg(),
      limit: limitArg(SEARCH_LIMIT_MAX, 10, 'tokens').optional(),
      cursor: cursorArg().optional(),
      ...tokenSortArgs(),
      ...tokenFilterArgs(),
    }),
    output: out.tokenPage,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const params = { ...listingParams(args, TOKEN_SORT_ALIASES), ...filterParams(args, TOKEN_FILTER_NAMES) };
      return await q.get(call.caller, pathOf('networks', net.id, 'tokens', 'search'), queryOf(params)) as Record<string, unknown>;
    },
  });

  return [getTokenDetails, getTokenPools, getTokenMultiPrices, getTokenOHLCV, getTokenIndicators, getTopTokens, filterNetworkTokens];
}
