/**
 * The engine's read surface: the one engine module the gateway imports.
 *
 * - EngineReader (reader.ts): lookups (the catalog), pool and token state copied out, window
 *   figures, prices, chain clocks and reorganisation counters, stream reads, transactions, search.
 *   It hides which tier a pool is in: callers never touch a column, a ring block or LMDB.
 * - PoolCandles (candles.ts): a pool's candles over a range, the ring and the store joined once.
 * - attachEngineReader (attach.ts): a reader on another thread, over the same shared buffers.
 *
 * The rest of this file passes on the engine's shared vocabulary the gateway speaks in (interval
 * and window names, plans, the log, record and event types, indicator maths, search figures), so
 * the gateway's engine imports stay in this one folder.
 */
export { EngineReader, createPoolReserves, createSecondCandle, type EngineParts, type PoolReserves, type SecondCandle, type StoredTransaction } from './reader.js';
export { PoolCandles, type CandleSink } from './candles.js';
export { attachEngineReader, readerBuffers, type ReaderBuffers } from './attach.js';

// Copy-out structs the reader fills (engine/state/read.ts).
export { createPoolState, createRingCandles, createTokenPriceState, ROW, ROW_LENGTH, type PoolState, type RingCandles, type TokenPriceState } from '../state/read.js';
// Interval and window names (engine/state/layout.ts).
export { INTERVALS, INTERVAL_SECONDS, intervalIndex, TOKEN_SECOND_SLOTS, Win } from '../state/layout.js';
// Prices as shown.
export { u128BigInt, type PriceTexts } from '../state/exact-price.js';
// The catalog's types and address rules.
export { normalizeAddress, SearchText, TextMatch, type Catalog, type CatalogBuffers, type NetworkEntry } from '../catalog/catalog.js';
// Records and keys of the store; Store itself for the gateway's own databases (keys, credit ledgers, feedback).
export type { CandleRecord, DexRecord, NetworkRecord, PoolRecord, Store, TokenRecord, TxKey } from '../store/store.js';
// The swap feed.
export type { FeedSwap, SwapFeed } from '../feed/swaps.js';
// Search: figures, queries, ranking helpers.
export { figureIndex, POOL_FIGURES } from '../search/figures.js';
export { RANKING_TTL_MS, type RankQuery } from '../search/rank-index.js';
export { TopK } from '../search/top-k.js';
export type { PoolRanker } from '../search/ranker.js';
// Indicator maths.
export { INDICATOR_NAMES } from '../indicators/names.js';
export { bbands } from '../indicators/bbands.js';
export { ema } from '../indicators/ema.js';
export { macd } from '../indicators/macd.js';
export { rsi } from '../indicators/rsi.js';
export { sma } from '../indicators/sma.js';
// Configuration types and plan names; the log.
export { DEFAULT_PLANS, PAID_PLANS, PLAN_NAMES, type ListenerRole, type PlanLimits, type PlanName } from '../config.js';
export { createLog, errorText, fallbackLog, threadLogOptions, type Log, type LogOptions } from '../log.js';
