/**
 * Tools of the agent protocol only (no REST route): getCapabilities, what the service offers and
 * what the caller's plan allows right now; submitFeedback, stored durably for the operators
 * (`dexdata feedback list`). Neither reads market data: they cost no credits but count against the
 * per-minute limit like any call.
 */
import { z } from 'zod';
import { INDICATOR_NAMES, INTERVALS, PAID_PLANS } from '../../../engine/read/index.js';
import { rfc3339 } from '../../http/time.js';
import { NETWORK_SYNONYMS } from '../../rest/api-subset.js';
import { GLOBAL_SEARCH_MAX } from '../../rest/global-search.js';
import { DEX_LIMIT_MAX, MULTI_PRICES_MAX, OHLCV_LIMIT_MAX, POOL_ORDER_BY, SEARCH_LIMIT_MAX } from '../../rest/schemas.js';
import { TOKEN_ORDER_BY } from '../../rest/schemas-search.js';
import { INDICATOR_PERIOD_MAX, TX_LIMIT_MAX, TX_PAGE_MAX } from '../../rest/schemas-history.js';
import { TX_WINDOW_SECONDS } from '../../rest/transactions.js';
import { FEEDBACK_CATEGORIES, FEEDBACK_MESSAGE_MAX_CHARS, FeedbackFull, feedbackRef, type FeedbackStore } from '../feedback.js';
import { intArg, required } from './args.js';
import * as out from './outputs.js';
import type { QueryLayer } from './query.js';
import { defineTool, ToolFailure, type ToolSpec } from './tool.js';

export interface ServiceInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string;
}

const WORKFLOWS: Readonly<Record<string, readonly string[]>> = {
  price_of_a_token_by_symbol: ['search {query: "<symbol>"}', 'getTokenDetails {network: <tokens[].chain>, token_address: <tokens[].id>}'],
  top_pools_of_a_network: ['getNetworks', 'getNetworkPools {network}'],
  pools_of_one_dex: ['getNetworkDexes {network}', 'getDexPools {network, dex: <dexes[].dex_id>}'],
  where_a_token_trades: ['search or getTopTokens for the address', 'getTokenPools {network, token_address}'],
  new_pools: ['getNetworkPoolsFilter {network, created_after: "-1d", sort_by: "created_at"}'],
  price_history: ['getNetworkPools or getTokenPools for a pool address', 'getPoolOHLCV {network, pool_address, start: "-7d", interval: "1h"}'],
  many_prices_at_once: [`getTokenMultiPrices {network, tokens: [up to ${MULTI_PRICES_MAX} addresses]}`],
  momentum_signals: ['getPoolIndicators {network, pool_address, start: "-30d", interval: "24h"}'],
  recent_trades: ['getPoolTransactions {network, pool_address} (paid plans)'],
};

const NOTES: readonly string[] = [
  'Network ids come from getNetworks; the short names in network_synonyms are accepted wherever a network is asked for.',
  'Addresses: pass the `id` of a pool or token row as pool_address or token_address; EVM addresses match in any case, base58 addresses exactly.',
  'getDexPools takes a dex_id (from getNetworkDexes), not the DEX display name.',
  'Listings page with cursors: pass next_cursor back as cursor, keeping the same sort_by and sort_dir.',
  'sort_by / sort_dir are also accepted under their REST names order_by / sort.',
  'Candles exist only for intervals with trades; an empty list is a valid answer, not an error.',
  `Transactions reach back ${TX_WINDOW_SECONDS / 86_400} days at most.`,
  'Errors say what to change: a wrong argument names it and the accepted values; a plan limit names the plan needed; a rate limit says how long to wait. Retry only rate limits and internal errors.',
  'The plan of a connection comes from the key in its Authorization header; without a key the keyless plan applies.',
];

export function serviceTools(q: QueryLayer, feedback: FeedbackStore, info: ServiceInfo, allTools: () => readonly { name: string; credits: string; paidOnly: boolean }[]): ToolSpec[] {
  const getCapabilities = defineTool({
    name: 'getCapabilities',
    title: 'Service capabilities and plan',
    description:
      'What this service offers and what this connection may do: its plan (limits, credits left, when they reset, the finest candle interval and how far back history reaches), ' +
      'the networks and their short names, the limits of every argument, the orderings, the credits each tool costs, typical call sequences and notes on identifiers. ' +
      'Read it once at the start of a session. Costs no credits. Takes no arguments.',
    input: z.object({}),
    output: out.capabilities,
    credits: '0',
    paidOnly: false,
    readOnly: true,
    run: (_args, call) => {
      const caller = call.caller;
      q.admit(caller);
      const usage = q.usage(caller);
      const limits = caller.limits;
      return {
        service: { ...info },
        plan: {
          name: caller.plan,
          requests_per_minute: limits.requestsPerMinute,
          credits_limit: usage.limit,
          credits_used: usage.used,
          credits_remaining: Math.max(0, usage.limit - usage.used),
          period_started_at: rfc3339(usage.periodStart),
          resets_at: rfc3339(usage.resetsAt),
          ohlcv_finest_interval: limits.ohlcvFinestInterval,
          ohlcv_history_days: limits.ohlcvHistoryDays,
          paid_tools_allowed: PAID_PLANS.has(caller.plan),
        },
        networks: q.registry.networks.map((n) => ({ id: n.id, display_name: n.displayName })),
        network_synonyms: { ...NETWORK_SYNONYMS },
        limits: {
          search_limit_max: SEARCH_LIMIT_MAX,
          search_results_per_category_max: GLOBAL_SEARCH_MAX,
          dexes_limit_max: DEX_LIMIT_MAX,
          ohlcv_limit_max: OHLCV_LIMIT_MAX,
          multi_prices_tokens_max: MULTI_PRICES_MAX,
          transactions_limit_max: TX_LIMIT_MAX,
          transactions_page_max: TX_PAGE_MAX,
          transactions_history_days: TX_WINDOW_SECONDS / 86_400,
          indicator_period_max: INDICATOR_PERIOD_MAX,
          feedback_message_max_chars: FEEDBACK_MESSAGE_MAX_CHARS,
        },
        intervals: [...INTERVALS],
        pool_sort_by: [...POOL_ORDER_BY],
        token_sort_by: [...TOKEN_ORDER_BY],
        indicators: [...INDICATOR_NAMES],
        tools: allTools().map((t) => ({ name: t.name, credits: t.credits, needs_paid_plan: t.paidOnly })),
        workflows: Object.fromEntries(Object.entries(WORKFLOWS).map(([k, v]) => [k, [...v]])),
        notes: [...NOTES],
      };
    },
  });

  const submitFeedback = defineTool({
    name: 'submitFeedback',
    title: 'Send feedback to the operators',
    description:
      'Sends feedback about this service to its operators: a wrong or missing figure, a confusing answer or error, a tool or network you needed, or praise. ' +
      'It is stored durably and read by people; include what you called, with which arguments, and what you expected. Do not include secrets or personal data. ' +
      'Answers {id, status: "stored", received_at}. Costs no credits.',
    input: z.object({
      message: z
        .string({ error: required('message', 'the feedback text', 'must be text') })
        .trim()
        .min(1, { error: 'message must not be empty' })
        .max(FEEDBACK_MESSAGE_MAX_CHARS, { error: `message must be at most ${FEEDBACK_MESSAGE_MAX_CHARS} characters` })
        .describe(`The feedback, up to ${FEEDBACK_MESSAGE_MAX_CHARS} characters.`),
      category: z
        .enum(FEEDBACK_CATEGORIES, { error: `category must be one of ${FEEDBACK_CATEGORIES.join(', ')}` })
        .describe(`What it is about: ${FEEDBACK_CATEGORIES.join(', ')} (default other).`)
        .optional(),
      tool: z.string().max(64, { error: 'tool must be a tool name (at most 64 characters)' }).describe('The tool the feedback is about, if any.').optional(),
      rating: intArg('rating', 1, 5, 'How useful the service was, 1 (poor) to 5 (excellent).').optional(),
      contact: z.string().max(200, { error: 'contact must be at most 200 characters' }).describe('How the operators may reach the sender, if they wish to be reached.').optional(),
    }),
    output: out.feedbackReceipt,
    credits: '0',
    paidOnly: false,
    readOnly: false,
    run: async (args, call) => {
      const caller = call.caller;
      q.admit(caller);
      try {
        const record = await feedback.add({
          receivedAt: Math.floor(q.ctx.now()),
          category: args.category ?? 'other',
          message: args.message,
          tool: args.tool === undefined || args.tool === '' ? null : args.tool,
          rating: args.rating ?? null,
          contact: args.contact === undefined || args.contact === '' ? null : args.contact,
          plan: caller.plan,
          account: caller.account?.id ?? null,
          client: call.client === undefined ? null : { name: call.client.name, version: call.client.version },
          transport: call.transport,
        });
        return { id: feedbackRef(record.id), status: 'stored', received_at: rfc3339(record.receivedAt) };
      } catch (err) {
        if (err instanceof FeedbackFull) throw new ToolFailure('Feedback cannot be stored right now (the feedback store is full). Try again later.');
        throw err;
      }
    },
  });

  return [getCapabilities, submitFeedback];
}
