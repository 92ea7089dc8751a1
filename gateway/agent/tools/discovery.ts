/**
 * Discovery tools: networks, service totals, the DEXes of a network and free-text search.
 *   getNetworks      GET /networks                    {networks: [...]}
 *   getStats         GET /stats
 *   getNetworkDexes  GET /networks/{n}/dexes
 *   search           GET /search                      pools gain factory_id; `limit` per category
 */
import { z } from 'zod';
import { GLOBAL_SEARCH_MAX } from '../../rest/global-search.js';
import { DEX_LIMIT_MAX } from '../../rest/schemas.js';
import { intArg, limitArg, networkArg, required } from './args.js';
import * as out from './outputs.js';
import { pathOf, queryOf, type QueryLayer } from './query.js';
import { defineTool, type ToolSpec } from './tool.js';

interface SearchPool {
  id: string;
  chain: string;
  dex_id?: string;
  factory_id?: string;
  [field: string]: unknown;
}

interface SearchAnswer {
  tokens: unknown[];
  pools: SearchPool[];
  dexes: unknown[];
}

export function discoveryTools(q: QueryLayer): ToolSpec[] {
  const getNetworks = defineTool({
    name: 'getNetworks',
    title: 'List networks',
    description:
      'Lists every blockchain network the service covers, with its id, display name, 24 h USD volume, 24 h transactions and pool count. ' +
      'Call this first: almost every other tool takes a `network` argument, which must be one of these ids. Takes no arguments.',
    input: z.object({}),
    output: out.networkList,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (_args, call) => ({ networks: await q.get(call.caller, '/networks', '') as unknown[] }),
  });

  const getStats = defineTool({
    name: 'getStats',
    title: 'Service totals',
    description:
      'How much the service covers in total: numbers of networks (chains), DEX factories, pools and tokens. ' +
      'For per-network figures use getNetworks. Takes no arguments.',
    input: z.object({}),
    output: out.stats,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (_args, call) => await q.get(call.caller, '/stats', '') as Record<string, unknown>,
  });

  const getNetworkDexes = defineTool({
    name: 'getNetworkDexes',
    title: 'DEXes of a network',
    description:
      'Lists the DEXes (exchanges) of one network by 24 h USD volume, largest first, with page_info for paging. ' +
      'Use the `dex_id` of a row as the `dex` argument of getDexPools (the display name `dex_name` is not accepted there). ' +
      'An empty `dexes` array past the last page means there are no more.',
    input: z.object({
      network: networkArg(),
      page: intArg('page', 0, 1_000_000, 'Page number, from 1 (default 1; 0 counts as 1).').optional(),
      limit: limitArg(DEX_LIMIT_MAX, 10, 'DEXes per page').optional(),
    }),
    output: out.dexList,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const net = q.network(args.network);
      return await q.get(call.caller, pathOf('networks', net.id, 'dexes'), queryOf({ page: args.page, limit: args.limit })) as Record<string, unknown>;
    },
  });

  const search = defineTool({
    name: 'search',
    title: 'Search tokens, pools and DEXes',
    description:
      'Finds tokens, pools and DEXes on every network whose name or symbol contains the text, or whose address starts with it (case-insensitive); ' +
      'best matches first (exact, then prefix, then substring), ties by 24 h volume. ' +
      'Use it to turn a symbol like "WETH" or a project name into addresses and network ids for the other tools: each token and pool carries `chain` (the network id) and `id` (its address). ' +
      `Returns {tokens, pools, dexes}, at most ${GLOBAL_SEARCH_MAX} of each; empty arrays mean nothing matched (try a shorter text or the symbol).`,
    input: z.object({
      query: z
        .string({ error: required('query', 'a name, symbol or address prefix to look for', 'must be text') })
        .trim()
        .min(1, { error: 'query must not be empty: give a name, symbol or address prefix' })
        .max(512, { error: 'query must be at most 512 characters' })
        .describe('Text to look for: a token or pool name, a symbol (e.g. "USDC"), a DEX name, or the start of an address.'),
      limit: limitArg(100, GLOBAL_SEARCH_MAX, `results per category (at most ${GLOBAL_SEARCH_MAX} exist)`).optional(),
    }),
    output: out.searchResult,
    credits: '1',
    paidOnly: false,
    readOnly: true,
    run: async (args, call) => {
      const answer = await q.get(call.caller, '/search', queryOf({ query: args.query })) as SearchAnswer;
      // Pools name the factory that created them (the agent layer's identifier of a DEX deployment).
      for (const row of answer.pools) {
        const net = q.registry.networkOf(row.chain);
        const pool = net === undefined ? -1 : q.registry.poolId(net.index, row.id);
        const dex = pool < 0 ? undefined : q.registry.dexes[q.registry.poolDex(pool)];
        row.factory_id = dex?.factory ?? '';
      }
      if (args.limit !== undefined) {
        answer.tokens = answer.tokens.slice(0, args.limit);
        answer.pools = answer.pools.slice(0, args.limit);
        answer.dexes = answer.dexes.slice(0, args.limit);
      }
      return answer as unknown as Record<string, unknown>;
    },
  });

  return [getNetworks, getStats, getNetworkDexes, search];
}
