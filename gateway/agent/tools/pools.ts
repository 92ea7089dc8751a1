/**
 * Pool tools, each one main-interface route:
 *   getNetworkPools        GET /networks/{n}/pools/search
 *   getDexPools            GET /networks/{n}/pools/search?dex_name={dex}
 *   getNetworkPoolsFilter  GET /networks/{n}/pools/search with range filters
 *   getPoolDetails         GET /networks/{n}/pools/{pool}
 *   getPoolOHLCV           GET /networks/{n}/pools/{pool}/ohlcv              {ohlcv: [...]}
 *   getPoolTransactions    GET /networks/{n}/pools/{pool}/transactions       {transactions, page_info, next_cursor}
 *   getPoolIndicators      GET /networks/{n}/pools/{pool}/indicators         {indicators: [...]}
 */
import { z } from 'zod';
import type { NetworkEntry } from '../../../engine/read/index.js';
import { SEARCH_LIMIT_MAX } from '../../rest/schemas.js';
import { TX_LIMIT_MAX, TX_PAGE_MAX } from '../../rest/schemas-history.js';
import {
  booleanArg,
  candleArgs,
  cursorArg,
  FILTER_ALIASES,
  IDENTIFIER_MAX_CHARS,
  indicatorArgs,
  intArg,
  limitArg,
  networkArg,
  POOL_FILTER_NAMES,
  POOL_SORT_ALIASES,
  poolAddressArg,
  poolFilterArgs,
  poolSortArgs,
  required,
  timeArg,
  tokenAddressArg,
} from './args.js';
import * as out from './outputs.js';
import { eitherOf, pathOf, queryOf, type QueryLayer } from './query.js';
import { defineTool, type ToolCall, type ToolSpec } from './tool.js';

type Scalar = string | number | boolean | undefined;
type Params = Record<string, Scalar>;

/** Arguments shared by every pool listing. */
interface PoolListArgs {
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
  readonly sort_by?: string | undefined;
  readonly order_by?: string | undefined;
  readonly sort_dir?: string | undefined;
  readonly sort?: string | undefined;
}

/** limit, cursor, order_by and sort of a listing, aliases resolved and older ordering names made current. */
export function listingParams(args: PoolListArgs, aliases: Readonly<Record<string, string>>): Params {
  const orderBy = eitherOf('sort_by', args.sort_by, 'order_by', args.order_by);
  return {
    limit: args.limit,
    cursor: args.cursor,
    order_by: orderBy === undefined ? undefined : (aliases[orderBy] ?? orderBy),
    sort: eitherOf('sort_dir', args.sort_dir, 'sort', args.sort),
  };
}

/** Range filters present in `args`, under their query-layer names (older alias names resolved). */
export function filterParams(args: Readonly<Record<string, unknown>>, names: readonly string[]): Params {
  const params: Params = {};
  const has = new Set(names);
  for (const name of names) params[name] = args[name] as number | undefined;
  for (const [alias, name] of Object.entries(FILTER_ALIASES)) {
    if (!has.has(name)) continue;
    params[name] = eitherOf(name, params[name] as number | undefined, alias, args[alias] as number | undefined);
  }
  params['created_after'] = args['created_after'] as string | number | undefined;
  params['created_before'] = args['created_before'] as string | number | undefined;
  return params;
}

export async function poolSearch(q: QueryLayer, call: ToolCall, net: NetworkEntry, params: Params): Promise<Record<string, unknown>> {
  return (await q.get(call.caller, pathOf('networks', net.id, 'pools', 'search'), queryOf(params))) as Record<string, unknown>;
}

const LISTING_NOTE =
  'Answers {results, has_next_page, next_cursor, query}; to page on, call again with cursor = next_cursor and the same sorting. ' +
  'An empty `results` means no pool matched.';

/** Candle arguments as query parameters. */
export function candleParams(args: {
  readonly start: string | number;
  readonly end?: string | number | undefined;
  readonly limit?: number | undefined;
  readonly count_back?: number | undefined;
  readonly interval?: string | undefined;
}): Params {
  return { start: args.start, end: args.end, limit: args.limit, count_back: args.count_back, interval: args.interval };
}

/** Indicator arguments as query parameters. */
export function indicatorParams(args: {
  readonly indicators?: readonly string[] | string | undefined;
  readonly period?: number | undefined;
  readonly macd_fast?: number | undefined;
  readonly macd_slow?: number | undefined;
  readonly macd_signal?: number | undefined;
  readonly bbands_stddev?: number | undefined;
}): Params {
  const list = typeof args.indicators === 'string' ? args.indicators.replace(/\s+/g, '') : args.indicators?.join(',');
  return {
    indicators: list,
    period: args.period,
    macd_fast: args.macd_fast,
    macd_slow: args.macd_slow,
    macd_signal: args.macd_signal,
    bbands_stddev: args.bbands_stddev,
  };
}

export const INDICATORS_NOTE =
  'Each entry: timestamp, close, sma, ema, rsi, macd {macd, signal, histogram}, bbands {upper, middle, lower}; a value is null where there is not yet enough history (never made up). ' +
  'Warm-up candles before start are read where the plan allows. An empty list means no trades in the range.';

export function poolTools(q: QueryLayer): ToolSpec[] {
  const getNetworkPools = defineTool({
    name: 'getNetworkPools',
    title: 'Top pools of a network',
    description:
      'Ranks the liquidity pools of one network, by 24 h USD volume unless sort_by says otherwise. ' +
      'Use for "biggest pools on ethereum" or "most traded pairs on solana". Narrow to one DEX with getDexPools, to one token with getTokenPools, or apply numeric filters with getNetworkPoolsFilter. ' +
      LISTING_NOTE,
    input: z.object({ network: networkArg(), limit: limitArg(SEARCH_LIMIT_MAX, 10, 'pools').optional(), cursor: cursorArg().optional(), ...poolSortArgs() }),
    output: out.poolPage,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      return await poolSearch(q, call, net, listingParams(args, POOL_SORT_ALIASES));
    },
  });

  const getDexPools = defineTool({
    name: 'getDexPools',
    title: 'Pools of one DEX',
    description:
      'Ranks the pools of one DEX on one network (e.g. uniswap_v3 on ethereum), by 24 h USD volume unless sort_by says otherwise. ' +
      'The `dex` argument is a dex_id from getNetworkDexes or search, not the display name. ' +
      LISTING_NOTE,
    input: z.object({
      network: networkArg(),
      dex: z
        .string({ error: required('dex', 'a dex_id from getNetworkDexes, e.g. "uniswap_v3"', 'must be a text dex_id from getNetworkDexes') })
        .min(1, { error: 'dex must not be empty: pass a dex_id from getNetworkDexes' })
        .max(IDENTIFIER_MAX_CHARS, { error: 'dex must be a dex_id from getNetworkDexes' })
        .describe('DEX id (`dex_id` from getNetworkDexes or search), e.g. "uniswap_v3"; any case.'),
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
      const dex = q.dex(net, args.dex);
      return await poolSearch(q, call, net, { dex_name: dex.id, ...listingParams(args, POOL_SORT_ALIASES) });
    },
  });

  const getNetworkPoolsFilter = defineTool({
    name: 'getNetworkPoolsFilter',
    title: 'Filter pools of a network',
    description:
      'Pools of one network that pass numeric and time filters (all filters must hold), ranked like getNetworkPools. ' +
      'Use for "pools with over $1M liquidity on base", "pools created in the last day" (created_after "-1d"), or "pools up more than 20 % in 24 h". ' +
      'Optionally restricted to one DEX (dex_name, a dex_id) or one token (token_address). ' +
      LISTING_NOTE,
    input: z.object({
      network: networkArg(),
      limit: limitArg(SEARCH_LIMIT_MAX, 10, 'pools').optional(),
      cursor: cursorArg().optional(),
      ...poolSortArgs(),
      ...poolFilterArgs(),
      dex_name: z
        .string({ error: 'dex_name must be a dex_id from getNetworkDexes' })
        .min(1, { error: 'dex_name must not be empty' })
        .max(IDENTIFIER_MAX_CHARS, { error: 'dex_name must be a dex_id from getNetworkDexes' })
        .describe('Only pools of this DEX: a dex_id from getNetworkDexes.')
        .optional(),
      token_address: tokenAddressArg('Only pools holding this token (address on the same network).').optional(),
    }),
    output: out.poolPage,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const dex = args.dex_name === undefined ? undefined : q.dex(net, args.dex_name).id;
      if (args.token_address !== undefined) q.token(net, args.token_address);
      const token = args.token_address?.trim();
      return await poolSearch(q, call, net, {
        ...listingParams(args, POOL_SORT_ALIASES),
        ...filterParams(args, POOL_FILTER_NAMES),
        dex_name: dex,
        token_address: token,
      });
    },
  });

  const getPoolDetails = defineTool({
    name: 'getPoolDetails',
    title: 'Pool details',
    description:
      'The current state of one pool: its two tokens, price of the first token in the second (last_price) and in USD (last_price_usd), reserves, liquidity, ' +
      'and volume, buys, sells and price change over 5m, 15m, 30m, 1h, 6h and 24h windows, plus the DEX and its factory_id. ' +
      'Get pool addresses from getNetworkPools, getTokenPools or search. For price history use getPoolOHLCV; for individual trades getPoolTransactions.',
    input: z.object({
      network: networkArg(),
      pool_address: poolAddressArg(),
      inversed: booleanArg('inversed', 'true swaps the roles of the two tokens in every price (default false).').optional(),
    }),
    output: out.poolDetails,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const pool = q.pool(net, args.pool_address);
      return await q.get(call.caller, pathOf('networks', net.id, 'pools', pool.address), queryOf({ inversed: args.inversed })) as Record<string, unknown>;
    },
  });

  const getPoolOHLCV = defineTool({
    name: 'getPoolOHLCV',
    title: 'Pool price candles',
    description:
      "OHLCV candles of one pool: the USD price of the pool's first token (the second with inversed=true) and the USD volume per interval, oldest first. " +
      'start is required. Only intervals with trades have a candle, so an empty `ohlcv` means no trades in the range (or the pool did not exist yet). ' +
      'Plans cap history: keyless 1h candles over the last 24 h, free 10m over 7 days, dev every interval over 30 days, pro and enterprise unlimited. ' +
      'For the current price alone use getPoolDetails.',
    input: z.object({
      network: networkArg(),
      pool_address: poolAddressArg(),
      ...candleArgs(),
      inversed: booleanArg('inversed', 'true gives the price of the second token instead (default false).').optional(),
    }),
    output: out.candles,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const pool = q.pool(net, args.pool_address);
      const rows = await q.get(call.caller, pathOf('networks', net.id, 'pools', pool.address, 'ohlcv'), queryOf({ ...candleParams(args), inversed: args.inversed }));
      return { ohlcv: rows as unknown[] };
    },
  });

  const getPoolTransactions = defineTool({
    name: 'getPoolTransactions',
    title: 'Pool transactions',
    description:
      'Individual swaps, liquidity adds and removes of one pool over the last 7 days, newest first, with amounts, USD prices and addresses. ' +
      'Needs a paid plan (dev, pro or enterprise): the key goes in the Authorization header of the MCP connection. ' +
      'Page with `page` (up to 100) or, for deeper history, cursor = next_cursor. An empty list means no activity in the range.',
    input: z.object({
      network: networkArg(),
      pool_address: poolAddressArg(),
      page: intArg('page', 0, TX_PAGE_MAX, `Page number, 1 to ${TX_PAGE_MAX} (default 1; 0 counts as 1).`).optional(),
      limit: limitArg(TX_LIMIT_MAX, 10, 'transactions').optional(),
      cursor: z
        .string({ error: 'cursor must be the id of a transaction (next_cursor of the previous page)' })
        .min(1)
        .max(64, { error: 'cursor must be the id of a transaction (next_cursor of the previous page)' })
        .describe('Only transactions older than this one: pass next_cursor (a transaction id) of the previous answer.')
        .optional(),
      from: timeArg('from', 'Only transactions at or after this time.').optional(),
      to: timeArg('to', 'Only transactions before this time.').optional(),
    }),
    output: out.transactions,
    credits: '1',
    paidOnly: true,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const path = pathOf('networks', net.id, 'pools', args.pool_address.trim(), 'transactions');
      // The plan is checked before the pool is looked up, as on the REST interface.
      q.checkPaidOnly(call.caller, path);
      const pool = q.pool(net, args.pool_address);
      const limit = args.limit ?? 10;
      const page = args.page === undefined || args.page === 0 ? 1 : args.page;
      const rows = await q.get(
        call.caller,
        pathOf('networks', net.id, 'pools', pool.address, 'transactions'),
        queryOf({ page: args.page, limit: args.limit, cursor: args.cursor, from: args.from, to: args.to }),
      ) as { id: string }[];
      const last = rows.length === limit ? rows[rows.length - 1] : undefined;
      return { transactions: rows, page_info: { page, limit }, next_cursor: last === undefined ? null : last.id };
    },
  });

  const getPoolIndicators = defineTool({
    name: 'getPoolIndicators',
    title: 'Pool technical indicators',
    description:
      "SMA, EMA, RSI, MACD and Bollinger bands over the closes of one pool's candles (the candles getPoolOHLCV answers with the same arguments), one entry per candle. " +
      INDICATORS_NOTE +
      ' Plan caps are those of getPoolOHLCV.',
    input: z.object({
      network: networkArg(),
      pool_address: poolAddressArg(),
      ...candleArgs(),
      inversed: booleanArg('inversed', 'true uses the price of the second token instead (default false).').optional(),
      ...indicatorArgs(),
    }),
    output: out.indicators,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      const pool = q.pool(net, args.pool_address);
      const rows = await q.get(
        call.caller,
        pathOf('networks', net.id, 'pools', pool.address, 'indicators'),
        queryOf({ ...candleParams(args), inversed: args.inversed, ...indicatorParams(args) }),
      );
      return { indicators: rows as unknown[] };
    },
  });

  return [getNetworkPools, getDexPools, getNetworkPoolsFilter, getPoolDetails, getPoolOHLCV, getPoolTransactions, getPoolIndicators];
}
