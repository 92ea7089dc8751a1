/**
 * Structured output of the agent tools: one schema per answer shape, published as each tool's
 * outputSchema. Objects are open (extra fields may appear, as on the REST interface) and list the
 * fields every answer carries as required, with their JSON types. Tools whose REST answer is an
 * array wrap it under a named key (structured output must be an object).
 */
import { z } from 'zod';
const num = () => z.number();
const int = () => z.number().int();
/** RFC 3339 time, or null where the time is unknown. */
const timeOrNull = () => z.string().nullable();
export const tokenRef = z
    .looseObject({ id: z.string().describe('Token contract address.'), name: z.string(), symbol: z.string(), chain: z.string() })
    .describe('A token of a pool.');
const poolRowFields = {
    id: z.string().describe('Pool address: pass it as pool_address.'),
    dex_id: z.string().describe('DEX id: pass it as dex to getDexPools.'),
    dex_name: z.string(),
    chain: z.string().describe('Network id.'),
    volume_usd_24h: num(),
    volume_usd_7d: num(),
    volume_usd_30d: num(),
    liquidity_usd: num(),
    price_usd: num().describe('USD price of the first token.'),
    transactions_24h: num(),
    price_change_percentage_24h: num(),
    price_change_percentage_48h: num(),
    price_change_percentage_6h: num(),
    price_change_percentage_1h: num(),
    price_change_percentage_5m: num(),
    created_at: timeOrNull(),
    created_at_block_number: int(),
    fee: num().describe('Fee in millionths of the amount traded (3000 = 0.3 %).'),
    tokens: z.array(tokenRef),
};
export const poolRow = z.looseObject(poolRowFields);
const queryEcho = z.record(z.string(), z.unknown()).describe('The parameters actually applied.');
function cursorPage(row) {
    return z.looseObject({
        results: z.array(row),
        has_next_page: z.boolean(),
        next_cursor: z.string().nullable().describe('Pass as cursor to get the next page; null on the last page.'),
        query: queryEcho,
    });
}
export const poolPage = cursorPage(poolRow);
export const tokenRow = z.looseObject({
    id: z.string().describe('Token contract address: pass it as token_address.'),
    address: z.string(),
    chain: z.string(),
    name: z.string(),
    symbol: z.string(),
    decimals: int(),
    price_usd: num(),
    fdv_usd: num(),
    liquidity_usd: num(),
    volume_usd_24h: num(),
    volume_usd_7d: num(),
    volume_usd_30d: num(),
    txns_24h: num(),
    price_change_percentage_24h: num(),
    created_at: timeOrNull(),
    pools_count: int(),
});
export const tokenPage = cursorPage(tokenRow);
export const networkList = z.looseObject({
    networks: z.array(z.looseObject({
        id: z.string().describe('Network id: pass it as network.'),
        display_name: z.string(),
        volume_usd_24h: num(),
        txns_24h: num(),
        pools_count: int(),
    })),
});
export const stats = z.looseObject({ chains: int(), factories: int(), pools: int(), tokens: int() });
export const dexList = z.looseObject({
    dexes: z.array(z.looseObject({
        dex_id: z.string().describe('DEX id: pass it as dex to getDexPools.'),
        dex_name: z.string(),
        chain: z.string(),
        protocol: z.string(),
        volume_usd_24h: num(),
        txns_24h: num(),
        pools_count: int(),
    })),
    page_info: z.looseObject({ limit: int(), page: int(), total_items: int(), total_pages: int() }),
});
const poolWindow = z.looseObject({
    last_price_usd_change: num(),
    volume_usd: num(),
    buy_usd: num(),
    sell_usd: num(),
    buys: num(),
    sells: num(),
    txns: num(),
});
export const poolDetails = z.looseObject({
    id: z.string(),
    chain: z.string(),
    dex_id: z.string(),
    dex_name: z.string(),
    factory_id: z.string().describe('Address of the DEX factory that created the pool.'),
    created_at: timeOrNull(),
    created_at_block_number: int(),
    fee: num(),
    tokens: z.array(z.looseObject({ id: z.string(), name: z.string(), symbol: z.string(), chain: z.string(), decimals: int(), added_at: timeOrNull() })),
    last_price: num().describe('First token in units of the second.'),
    last_price_usd: num().describe('USD price of the first token.'),
    volume_usd: num().describe('24 h volume in USD.'),
    price_time: timeOrNull(),
    token_reserves: z.array(z.looseObject({ token_id: z.string(), reserve: z.string(), reserve_normalized: num(), reserve_usd: num() })),
    liquidity_usd: num(),
    transactions: num(),
    '24h': poolWindow,
    '6h': poolWindow,
    '1h': poolWindow,
    '30m': poolWindow,
    '15m': poolWindow,
    '5m': poolWindow,
});
const candle = z.looseObject({
    timestamp: z.string(),
    time_open: z.string(),
    time_close: z.string(),
    open: num(),
    high: num(),
    low: num(),
    close: num(),
    volume: num().describe('Volume in USD.'),
});
export const candles = z.looseObject({ ohlcv: z.array(candle).describe('Candles, oldest first; only intervals with trades appear.') });
export const transactions = z.looseObject({
    transactions: z
        .array(z.looseObject({
        id: z.string().describe('Transaction id; pass the last one as cursor for older transactions.'),
        transaction_hash: z.string(),
        type: z.enum(['swap', 'add', 'remove']),
        token_0_symbol: z.string(),
        token_1_symbol: z.string(),
        pool_id: z.string(),
        token_0: z.string(),
        token_1: z.string(),
        price_0: num(),
        price_1: num(),
        price_0_usd: num(),
        price_1_usd: num(),
        created_at: z.string(),
        created_at_block_number: int(),
        transaction_index: int(),
        log_index: int(),
        sender: z.string(),
        recipient: z.string(),
        amount_0: z.string().describe('Decimal amount of token 0 from the pool\'s side: positive into the pool.'),
        amount_1: z.string(),
        volume_usd: num(),
    }))
        .describe('Newest first, at most 7 days old.'),
    page_info: z.looseObject({ page: int(), limit: int() }),
    next_cursor: z.string().nullable().describe('Pass as cursor for older transactions; null when this page was not full.'),
});
const nullableNumber = () => z.number().nullable();
const indicatorRow = z.looseObject({
    timestamp: z.string(),
    time_open: z.string(),
    time_close: z.string(),
    close: num(),
    sma: nullableNumber().optional(),
    ema: nullableNumber().optional(),
    rsi: nullableNumber().optional(),
    macd: z.looseObject({ macd: nullableNumber(), signal: nullableNumber(), histogram: nullableNumber() }).optional(),
    bbands: z.looseObject({ upper: nullableNumber(), middle: nullableNumber(), lower: nullableNumber() }).optional(),
});
export const indicators = z.looseObject({
    indicators: z.array(indicatorRow).describe('One entry per candle, oldest first; null where too little history exists yet.'),
});
const tokenWindow = z.looseObject({
    volume: num(),
    volume_usd: num(),
    buy_usd: num(),
    sell_usd: num(),
    buys: num(),
    sells: num(),
    txns: num(),
    last_price_usd_change: num(),
});
export const tokenDetails = z.looseObject({
    id: z.string(),
    name: z.string(),
    symbol: z.string(),
    chain: z.string(),
    decimals: int(),
    total_supply: z.union([z.number(), z.string()]).describe('Raw integer supply: a number, or text beyond 2^53.'),
    description: z.string(),
    website: z.string(),
    explorer: z.string(),
    telegram: z.string(),
    twitter: z.string(),
    has_image: z.boolean(),
    added_at: timeOrNull(),
    last_updated: timeOrNull(),
    fdv: num(),
    price_usd: num(),
    summary: z.looseObject({
        price_usd: num(),
        fdv: num(),
        liquidity_usd: num(),
        pools: int(),
        '24h': tokenWindow,
        '6h': tokenWindow,
        '1h': tokenWindow,
        '30m': tokenWindow,
        '15m': tokenWindow,
        '5m': tokenWindow,
        '1m': tokenWindow,
    }),
});
export const multiPrices = z.looseObject({
    prices: z.array(z.looseObject({ id: z.string(), chain: z.string(), price_usd: num() })).describe('Tokens with a price, in the order asked.'),
    missing_tokens: z.array(z.string()).describe('Addresses asked for that have no price: unknown on this network, or never traded.'),
});
export const searchResult = z.looseObject({
    tokens: z.array(z.looseObject({
        id: z.string(),
        name: z.string(),
        symbol: z.string(),
        chain: z.string(),
        decimals: int(),
        total_supply: z.union([z.number(), z.string()]),
        price_usd: num(),
        fdv: num(),
        liquidity_usd: num(),
        volume_usd: num(),
        price_usd_change: num(),
    })),
    pools: z.array(z.looseObject({
        id: z.string(),
        factory_id: z.string().describe('Address of the DEX factory that created the pool.'),
        dex_id: z.string(),
        dex_name: z.string(),
        chain: z.string(),
        created_at: timeOrNull(),
        created_at_block_number: int(),
        volume_usd: num(),
        transactions: num(),
        price_usd: num(),
        last_price_change_usd_5m: num(),
        last_price_change_usd_1h: num(),
        last_price_change_usd_24h: num(),
        fee: num(),
        tokens: z.array(tokenRef),
    })),
    dexes: z.array(z.looseObject({
        id: z.string(),
        dex_id: z.string(),
        dex_name: z.string(),
        chain: z.string(),
        protocol: z.string(),
        volume_usd_24h: num(),
        txns_24h: num(),
        pools_count: int(),
        created_at: timeOrNull(),
    })),
});
export const feedbackReceipt = z.looseObject({
    id: z.string().describe('Reference of the stored feedback.'),
    status: z.literal('stored'),
    received_at: z.string(),
});
const toolCost = z.looseObject({
    name: z.string(),
    credits: z.string().describe('Credits one call costs.'),
    needs_paid_plan: z.boolean(),
});
export const capabilities = z.looseObject({
    service: z.looseObject({ name: z.string(), version: z.string(), description: z.string() }),
    plan: z
        .looseObject({
        name: z.string(),
        requests_per_minute: int(),
        credits_limit: int(),
        credits_used: int(),
        credits_remaining: int(),
        period_started_at: z.string(),
        resets_at: z.string(),
        ohlcv_finest_interval: z.string(),
        ohlcv_history_days: z.number().nullable().describe('How far back candles reach; null = no limit.'),
        paid_tools_allowed: z.boolean(),
    })
        .describe('The plan of this connection, from the key in its Authorization header (keyless without one).'),
    networks: z.array(z.looseObject({ id: z.string(), display_name: z.string() })),
    network_synonyms: z.record(z.string(), z.string()).describe('Short names accepted as network, to the network id.'),
    limits: z.record(z.string(), z.number()),
    intervals: z.array(z.string()),
    pool_sort_by: z.array(z.string()),
    token_sort_by: z.array(z.string()),
    indicators: z.array(z.string()),
    tools: z.array(toolCost),
    workflows: z.record(z.string(), z.array(z.string())),
    notes: z.array(z.string()),
});
//# sourceMappingURL=outputs.js.map