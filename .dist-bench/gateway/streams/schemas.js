/**
 * The stream operations as the OpenAPI document publishes them: query parameters, POST bodies and
 * the payload of every event, as zod schemas (request.ts checks the same rules by hand, on the
 * request path; test/streams-openapi.test.ts holds real streams to these schemas).
 */
import { z } from 'zod';
import { MAX_BATCH, MAX_REQUEST_ID, METHODS } from './request.js';
const chain = z.string().describe('Network id, as listed by /networks.');
const requestId = z
    .int()
    .min(0)
    .max(MAX_REQUEST_ID)
    .describe('Echoed on the `request_id:` line of each data event (invalid: 400 `invalid query parameters: request_id (must be a number)`).');
const requestIdText = z
    .string()
    .regex(/^[0-9]{1,10}$/)
    .describe('Integer 0 to 4294967295, echoed on the `request_id:` line of each data event; default 0.');
const common = {
    limit: z.string().regex(/^[0-9]+$/).optional().describe('Integer >= 1: the stream ends after this many data events; absent = no end.'),
    last_event_id: z.string().regex(/^[0-9]+$/).optional().describe('Resume after this event id (as the Last-Event-ID header).'),
};
function methodParam(endpoint) {
    return z.enum(METHODS[endpoint]);
}
export const streamQuery = {
    prices: z.object({
        chain,
        address: z.string().describe('Token address.'),
        method: methodParam('prices').optional(),
        request_id: requestIdText.optional(),
        ...common,
    }),
    reserves: z.object({
        chain,
        address: z.string().describe('Pool address (pool_reserves) or token address (token_reserves).'),
        method: methodParam('reserves'),
        request_id: requestIdText.optional(),
        ...common,
    }),
    transactions: z.object({
        chain,
        address: z.string().describe('Pool address (method pool) or token address (method token).'),
        method: methodParam('transactions'),
        request_id: requestIdText.optional(),
        ...common,
    }),
    ohlcv: z.object({
        chain,
        token_id: z.string().optional().describe('Token address; required unless `address` is given.'),
        address: z.string().optional().describe('Alias of token_id, ignored when token_id is set.'),
        interval: z.enum(['1s']).optional(),
        request_id: requestIdText.optional(),
        ...common,
    }),
};
/** Query parameters of the POST streams (the subscriptions are in the body). */
export const streamPostQuery = z.object(common);
export const pricesBody = z
    .array(z.object({
    chain,
    address: z.string().describe('Token address.'),
    method: z.literal('token_price'),
    request_id: requestId.optional().describe('Default: the index in the array.'),
    filter: z.object({}).loose().optional().describe('Accepted; its keys are currently ignored.'),
}))
    .min(1)
    .max(MAX_BATCH);
export const reservesBody = z
    .array(z.object({
    chain,
    address: z.string().describe('Pool address (pool_reserves) or token address (token_reserves).'),
    method: z.enum(['pool_reserves', 'token_reserves']),
    request_id: requestId.optional().describe('Default: the index in the array.'),
}))
    .min(1)
    .max(MAX_BATCH);
const decimalText = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/).describe('Exact decimal, as text.');
const integerText = z.string().regex(/^[0-9]+$/).describe('Integer, as text.');
const rfc3339 = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
const unixSeconds = z.int().describe('Unix seconds.');
/** Raw integer amount: a number within 2^53, a string beyond. */
const rawAmount = z.union([z.int(), z.string().regex(/^-?[0-9]+$/)]);
const reserveFields = {
    reserve: decimalText,
    delta: decimalText.describe('Against the previous snapshot streamed.'),
    price_usd: z.number(),
    reserve_usd: z.number(),
    delta_usd: z.number(),
};
/** Payload (the `data:` line) of each event, by event name. */
export const eventPayloads = {
    token_price_post: z
        .object({ address: z.string(), chain, price: decimalText.describe('USD price, 18 significant digits.'), timestamp: unixSeconds, timestamp_price: unixSeconds, token_price: unixSeconds })
        .describe('token_price on POST /sse/prices: Unix-second times.'),
    token_price_get: z
        .object({ address: z.string(), chain, price: decimalText.describe('USD price, 18 significant digits.'), timestamp: rfc3339, timestamp_price: rfc3339 })
        .describe('token_price on GET /sse/prices: ISO 8601 times.'),
    pool_reserves: z.object({
        chain,
        pool_id: z.string(),
        block: integerText,
        previous_block: integerText.optional(),
        tokens: z.array(z.object({ token_id: z.string(), ...reserveFields })),
        total_reserve_usd: z.number(),
        total_delta_usd: z.number(),
        timestamp: unixSeconds,
        block_timestamp: unixSeconds,
    }),
    token_reserves: z.object({
        chain,
        token_id: z.string(),
        pool_id: z.string(),
        block: integerText,
        ...reserveFields,
        updated_at: unixSeconds,
        timestamp: unixSeconds,
    }),
    swap: z
        .object({
        chain,
        pool_id: z.string(),
        block_number: integerText,
        block_timestamp: rfc3339,
        tx_hash: z.string(),
        tx_index: z.int(),
        log_index: z.int(),
        sender: z.string(),
        recipient: z.string(),
        token_0: z.string(),
        token_1: z.string(),
        amount_0: rawAmount.describe("Raw amount from the trader's side: negative left the trader's wallet."),
        amount_1: rawAmount,
        amount_0_usd: z.number(),
        amount_1_usd: z.number(),
        price_0_usd: z.number(),
        price_1_usd: z.number(),
        volume_usd: z.number(),
    })
        .describe('Event `pool` (method pool) or `token` (method token).'),
    ohlcv: z.object({
        chain,
        token_id: z.string(),
        interval: z.literal('1s'),
        timestamp: rfc3339.describe('Start of the candle.'),
        open: z.number(),
        high: z.number(),
        low: z.number(),
        close: z.number(),
        avg: z.number(),
        volume_usd: z.number(),
        txns: z.int(),
    }),
    ping: z.object({ time: unixSeconds }).describe('Every 15 s; no id, no request_id, not counted by limit, no credit.'),
    warning: z.object({ message: z.string() }).describe('Non-fatal; the stream goes on.'),
    error: z.object({ message: z.string() }).describe('The stream then ends: reconnect with exponential backoff.'),
};
const CONTROL = { ping: 'ping', warning: 'warning', error: 'error' };
export const STREAM_OPERATIONS = [
    {
        path: '/sse/prices',
        method: 'post',
        operationId: 'streamPrices',
        summary: 'USD prices of 1 to 25 tokens as swaps move them (Unix-second times).',
        query: streamPostQuery,
        body: pricesBody,
        events: { token_price: 'token_price_post', ...CONTROL },
        plans: 'keyless on showcase tokens; any key on any token',
    },
    {
        path: '/sse/prices',
        method: 'get',
        operationId: 'streamPrice',
        summary: 'USD price of one token as swaps move it (ISO 8601 times).',
        query: streamQuery.prices,
        events: { token_price: 'token_price_get', ...CONTROL },
        plans: 'keyless on showcase tokens; any key on any token',
    },
    {
        path: '/sse/reserves',
        method: 'post',
        operationId: 'streamReservesBatch',
        summary: 'Pool reserve snapshots per block (pool_reserves) or a token in each pool that changed (token_reserves), 1 to 25 subscriptions.',
        query: streamPostQuery,
        body: reservesBody,
        events: { pool_reserves: 'pool_reserves', token_reserves: 'token_reserves', ...CONTROL },
        plans: 'free key or better',
    },
    {
        path: '/sse/reserves',
        method: 'get',
        operationId: 'streamReserves',
        summary: "A pool's reserve snapshots (pool_reserves) or a token's state in each pool that changed (token_reserves).",
        query: streamQuery.reserves,
        events: { pool_reserves: 'pool_reserves', token_reserves: 'token_reserves', ...CONTROL },
        plans: 'free key or better',
    },
    {
        path: '/sse/transactions',
        method: 'get',
        operationId: 'streamTransactions',
        summary: 'Every swap of a pool (event pool) or of any pool of a token (event token).',
        query: streamQuery.transactions,
        events: { pool: 'swap', token: 'swap', ...CONTROL },
        plans: 'dev, pro, enterprise (paid stream host)',
    },
    {
        path: '/sse/ohlcv',
        method: 'get',
        operationId: 'streamOhlcv',
        summary: 'Sealed 1 s USD candles of a token, one per second it traded.',
        query: streamQuery.ohlcv,
        events: { ohlcv: 'ohlcv', ...CONTROL },
        plans: 'dev, pro, enterprise (paid stream host)',
    },
];
//# sourceMappingURL=schemas.js.map