/**
 * GET /openapi.json: the OpenAPI 3.1 document of the REST routes served, built from the same zod
 * schemas that validate their query parameters, so what is documented is what is checked.
 */
import { z } from 'zod';
import type { ErrorCode } from '../errors.js';
import { ERROR_CODES } from '../errors.js';
import { dexListQuery, globalPoolSearchQuery, multiPricesQuery, poolDetailsQuery, poolOhlcvQuery, poolSearchQuery } from './schemas.js';
import { indicatorsQuery, poolTransactionsQuery, tokenOhlcvQuery } from './schemas-history.js';
import { globalSearchQuery, globalTokenSearchQuery, tokenSearchQuery } from './schemas-search.js';
import { eventPayloads, STREAM_OPERATIONS } from '../streams/schemas.js';

/**
 * The rule every window figure follows (engine/state/layout.ts): resolution one minute, on the chain's clock.
 */
export const WINDOW_RULE =
  'Window figures (5m, 15m, 30m, 1h, 6h, 24h, 48h, 7d, 30d) roll at a resolution of one minute. With now the ' +
  "chain's clock (the newest event time applied on the pool's network) and m = floor(now / 60) * 60 the open " +
  'of the current minute, window W sums the one-minute candles whose open time is in [m - W + 60, m]: the ' +
  'current partial minute and the W/60 - 1 whole minutes before it. Its price change compares the current ' +
  'price with the price exactly one window ago: the close of the newest one-minute candle opened before ' +
  'm - W + 60, or, when there is none, the open of the oldest candle in the window.';

interface Operation {
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  /** Longer text, when the summary is not enough. */
  readonly description?: string;
  readonly query?: z.ZodObject;
  readonly errors: readonly ErrorCode[];
}

const ROUTES: readonly Operation[] = [
  { path: '/health', operationId: 'getHealth', summary: 'Whether the service is up.', errors: [] },
  { path: '/networks', operationId: 'getNetworks', summary: 'Networks with 24 h volume, transactions and pool counts.', errors: [] },
  { path: '/stats', operationId: 'getStats', summary: 'Counts of networks, DEX factories, pools and tokens.', errors: [] },
  { path: '/networks/{network}/dexes', operationId: 'getNetworkDexes', summary: 'DEXes of a network by 24 h volume, paged.', query: dexListQuery, errors: ['invalid_parameter', 'not_found'] },
  {
    path: '/pools/search',
    operationId: 'searchPools',
    summary: 'Pools of every network (or those in chains), ordered, with a cursor.',
    description: WINDOW_RULE,
    query: globalPoolSearchQuery,
    errors: ['invalid_parameter'],
  },
  {
    path: '/networks/{network}/pools/search',
    operationId: 'searchNetworkPools',
    summary: 'Pools of a network, ordered, with a cursor.',
    description: WINDOW_RULE,
    query: poolSearchQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/pools/{pool_address}',
    operationId: 'getPoolDetails',
    summary: 'A pool: tokens, prices, reserves, liquidity and window figures.',
    description: WINDOW_RULE,
    query: poolDetailsQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/pools/{pool_address}/ohlcv',
    operationId: 'getPoolOhlcv',
    summary: "A pool's OHLCV candles in USD, oldest first, only where trades happened.",
    query: poolOhlcvQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/pools/{pool_address}/transactions',
    operationId: 'getPoolTransactions',
    summary: "A pool's swaps, adds and removes of the last 7 days, newest first.",
    query: poolTransactionsQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/pools/{pool_address}/indicators',
    operationId: 'getPoolIndicators',
    summary: 'SMA, EMA, RSI, MACD and Bollinger bands over the pool candles.',
    query: indicatorsQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/tokens/{token_address}/ohlcv',
    operationId: 'getTokenOhlcv',
    summary: "A token's USD candles over all its pools (liquidity-weighted prices, summed volume).",
    query: tokenOhlcvQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/tokens/{token_address}/indicators',
    operationId: 'getTokenIndicators',
    summary: 'SMA, EMA, RSI, MACD and Bollinger bands over the token candles.',
    query: indicatorsQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  {
    path: '/networks/{network}/tokens/search',
    operationId: 'searchNetworkTokens',
    summary: 'Tokens of a network, ordered, with a cursor.',
    query: tokenSearchQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
  { path: '/tokens/search', operationId: 'searchTokens', summary: 'Tokens of every network (or those in chains), ordered, with a cursor.', query: globalTokenSearchQuery, errors: ['invalid_parameter'] },
  { path: '/search', operationId: 'search', summary: 'Tokens, pools and DEXes matching a name, symbol or address prefix.', query: globalSearchQuery, errors: ['invalid_parameter'] },
  {
    path: '/networks/{network}/tokens/{token_address}',
    operationId: 'getTokenDetails',
    summary: "A token's price, fdv, supply and window figures over its pools.",
    description: WINDOW_RULE,
    errors: ['not_found'],
  },
  {
    path: '/networks/{network}/multi/prices',
    operationId: 'getTokenMultiPrices',
    summary: 'USD prices of 1 to 10 tokens; tokens without a price are left out.',
    query: multiPricesQuery,
    errors: ['invalid_parameter', 'not_found'],
  },
];

const PATH_PARAMETERS: Readonly<Record<string, string>> = {
  network: 'Network id, as listed by /networks.',
  pool_address: 'Pool address (EVM hex in any case, base58 exactly).',
  token_address: 'Token address (EVM hex in any case, base58 exactly).',
};

function queryParameters(schema: z.ZodObject): unknown[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return { name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

const ERROR_BODY = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string' },
    message: { type: 'string' },
    param: { type: 'string', description: 'The rejected parameter.' },
    accepted: { type: 'array', items: { type: 'string' }, description: 'Accepted values, when the set is fixed.' },
  },
};

const STREAM_ERRORS: readonly ErrorCode[] = ['invalid_parameter', 'invalid_api_key', 'credits_exhausted', 'wrong_host', 'plan_required', 'preview_only', 'rate_limited'];

/** The stream hosts: port 8082 for keyless callers and free keys, 8083 for paid keys (by default). */
const STREAM_SERVERS = [
  {
    url: 'http://{host}:{port}',
    description: 'A stream host: 8082 for keyless callers and free keys, 8083 for dev, pro and enterprise keys (defaults).',
    variables: { host: { default: '127.0.0.1' }, port: { default: '8082', enum: ['8082', '8083'] } },
  },
];

/**
 * The SSE operations: each 200 answer is a `text/event-stream` whose frames are described one by
 * one (event name, `id` and `request_id` lines on data events, the JSON `data` payload).
 */
function streamPaths(paths: Record<string, Record<string, unknown>>, schemas: Record<string, unknown>): void {
  for (const [name, schema] of Object.entries(eventPayloads)) schemas[`StreamEvent_${name}`] = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });
  for (const op of STREAM_OPERATIONS) {
    const frames = Object.entries(op.events).map(([event, payload]) => {
      const data = event === 'ping' || event === 'warning' || event === 'error';
      return {
        type: 'object',
        description: data ? `\`${event}\` (no id, no request_id)` : `data event \`${event}\``,
        required: data ? ['event', 'data'] : ['id', 'event', 'request_id', 'data'],
        properties: {
          ...(data ? {} : { id: { type: 'string', description: 'Event id (for Last-Event-ID).' } }),
          event: { const: event },
          ...(data ? {} : { request_id: { type: 'string', description: "The subscription's request_id." } }),
          data: { $ref: `#/components/schemas/StreamEvent_${payload}` },
        },
      };
    });
    const responses: Record<string, unknown> = {
      '200': { description: `Server-sent events (${Object.keys(op.events).join(', ')}).`, content: { 'text/event-stream': { schema: { oneOf: frames } } } },
    };
    for (const code of STREAM_ERRORS) {
      responses[String(ERROR_CODES[code].status)] ??= { description: code, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    const operation: Record<string, unknown> = {
      operationId: op.operationId,
      summary: op.summary,
      description: `Plans: ${op.plans}. Send the key as the whole Authorization header value.`,
      parameters: [
        ...queryParameters(op.query),
        { name: 'Last-Event-ID', in: 'header', required: false, description: 'Resume after this event id.', schema: { type: 'string' } },
      ],
      responses,
    };
    if (op.body !== undefined) operation['requestBody'] = { required: true, content: { 'application/json': { schema: z.toJSONSchema(op.body, { io: 'input', unrepresentable: 'any' }) } } };
    const item = (paths[op.path] ??= { servers: STREAM_SERVERS });
    item[op.method] = operation;
  }
}

export function openApiDocument(version: string): unknown {
  const paths: Record<string, unknown> = {};
  for (const r of ROUTES) {
    const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1]!,
      in: 'path',
      required: true,
      description: PATH_PARAMETERS[m[1]!] ?? m[1],
      schema: { type: 'string' },
    }));
    const responses: Record<string, unknown> = { '200': { description: 'Success.', content: { 'application/json': {} } } };
    for (const code of r.errors) {
      responses[String(ERROR_CODES[code].status)] = { description: code, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    paths[r.path] = { get: { operationId: r.operationId, summary: r.summary, ...(r.description ? { description: r.description } : {}), parameters: [...pathParams, ...(r.query ? queryParameters(r.query) : [])], responses } };
  }
  const schemas: Record<string, unknown> = { Error: ERROR_BODY };
  streamPaths(paths as Record<string, Record<string, unknown>>, schemas);
  return {
    openapi: '3.1.0',
    info: { title: 'dexdata', version, description: `DEX market data: networks, DEXes, pools, tokens, prices and candles, and live streams (SSE) on the stream hosts. ${WINDOW_RULE}` },
    paths,
    components: { schemas },
  };
}
