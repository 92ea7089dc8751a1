/**
 * What a stream request asks for: its subscriptions (from the query of a GET, or the JSON array
 * body of a POST), the event count `limit` and the id to resume after. Everything is checked before
 * the stream opens: one invalid subscription rejects the whole request with 400.
 */
import type { Catalog, NetworkEntry } from '../../engine/read/index.js';
import { ApiError, invalidParameter } from '../errors.js';
import { readQuery } from '../http/query.js';

export type Endpoint = 'prices' | 'reserves' | 'transactions' | 'ohlcv';
export type StreamMethod = 'token_price' | 'pool_reserves' | 'token_reserves' | 'pool' | 'token' | 'ohlcv';

/** Methods each endpoint accepts; the first is the default where `method` may be left out. */
export const METHODS: Readonly<Record<Endpoint, readonly StreamMethod[]>> = {
  prices: ['token_price'],
  reserves: ['pool_reserves', 'token_reserves'],
  transactions: ['pool', 'token'],
  ohlcv: ['ohlcv'],
};

/** Methods whose asset is a pool (the others name a token). */
export const POOL_METHODS: ReadonlySet<StreamMethod> = new Set(['pool_reserves', 'pool']);

export const MAX_BATCH = 25;
export const MAX_REQUEST_ID = 4_294_967_295;
/** Largest POST body read. */
export const MAX_BODY_BYTES = 64 * 1024; // 64 KiB

export interface Subscription {
  readonly method: StreamMethod;
  readonly network: NetworkEntry;
  /** Pool id for pool methods, token id otherwise. */
  readonly asset: number;
  readonly requestId: number;
}

export interface StreamRequest {
  /** POST streams send Unix-second times; GET streams ISO 8601 (token_price). */
  readonly post: boolean;
  readonly subscriptions: readonly Subscription[];
  /** Data events after which the stream ends; null = no end. */
  readonly limit: number | null;
  /** Event id the client saw last (Last-Event-ID), null when none. */
  readonly lastEventId: number | null;
}

/** The api.md wording, word for word. */
export const REQUEST_ID_ERROR = new ApiError('invalid_parameter', 'invalid query parameters: request_id (must be a number)', { param: 'request_id' });
const LIMIT_ERROR = invalidParameter('limit', 'must be an integer of at least 1');
const INTERVAL_ERROR = invalidParameter('interval', 'must be 1s', ['1s']);

function assetNotFound(index: number | null): ApiError {
  return new ApiError('invalid_parameter', 'asset not found', index === null ? { param: 'address' } : { param: 'address', index });
}

function unsupportedChain(registry: Catalog, index: number | null): ApiError {
  const accepted = registry.networks.map((n) => n.id);
  return new ApiError('invalid_parameter', 'unsupported chain', index === null ? { param: 'chain', accepted } : { param: 'chain', accepted, index });
}

function missing(param: string, index: number | null): ApiError {
  if (index === null) return invalidParameter(param, 'is required');
  return new ApiError('invalid_parameter', `invalid body: subscription ${index}: ${param} is required`, { param, index });
}

function badMethod(endpoint: Endpoint, index: number | null): ApiError {
  const accepted = METHODS[endpoint];
  const text = `must be one of ${accepted.join(', ')}`;
  if (index === null) return invalidParameter('method', text, accepted);
  return new ApiError('invalid_parameter', `invalid body: subscription ${index}: method ${text}`, { param: 'method', accepted, index });
}

/** EVM hex addresses match in any case; others (base58) exactly. */
function resolve(registry: Catalog, method: StreamMethod, chain: string, address: string, requestId: number, index: number | null): Subscription {
  const network = registry.networkOf(chain);
  if (network === undefined) throw unsupportedChain(registry, index);
  // The catalog reads 0x addresses in any case, others exactly.
  const asset = POOL_METHODS.has(method) ? registry.poolId(network.index, address) : registry.tokenId(network.index, address);
  if (asset < 0) throw assetNotFound(index);
  return { method, network, asset, requestId };
}

/** A request_id from a query: a non-negative integer up to 2^32 - 1; absent = `fallback`. */
function queryRequestId(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,10}$/.test(text)) throw REQUEST_ID_ERROR;
  const n = Number(text);
  if (n > MAX_REQUEST_ID) throw REQUEST_ID_ERROR;
  return n;
}

const COMMON = ['limit', 'last_event_id'];
const GET_PARAMS: Readonly<Record<Endpoint, ReadonlySet<string>>> = {
  prices: new Set([...COMMON, 'method', 'address', 'chain', 'request_id']),
  reserves: new Set([...COMMON, 'method', 'address', 'chain', 'request_id']),
  transactions: new Set([...COMMON, 'method', 'address', 'chain', 'request_id']),
  ohlcv: new Set([...COMMON, 'chain', 'token_id', 'address', 'interval', 'request_id']),
};
const POST_PARAMS: ReadonlySet<string> = new Set(COMMON);

function parseLimit(text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^[0-9]{1,15}$/.test(text)) throw LIMIT_ERROR;
  const n = Number(text);
  if (n < 1) throw LIMIT_ERROR;
  return n;
}

/** Last-Event-ID header, else `last_event_id` in the query; anything but a decimal id counts as none. */
function parseLastEventId(header: string, query: string | undefined): number | null {
  const text = header !== '' ? header.trim() : query;
  if (text === undefined || !/^[0-9]{1,16}$/.test(text)) return null;
  return Number(text);
}

/** GET /sse/{endpoint}?... */
export function parseGet(registry: Catalog, endpoint: Endpoint, query: string, lastEventIdHeader: string): StreamRequest {
  const q = readQuery(query, GET_PARAMS[endpoint]);
  const requestId = queryRequestId(q['request_id'], 0);
  const limit = parseLimit(q['limit']);
  let method: StreamMethod;
  let address: string | undefined;
  if (endpoint === 'ohlcv') {
    method = 'ohlcv';
    if (q['interval'] !== undefined && q['interval'] !== '1s') throw INTERVAL_ERROR;
    address = q['token_id'] ?? q['address'];
    if (address === undefined) throw missing('token_id', null);
  } else {
    const m = q['method'] ?? (endpoint === 'prices' ? 'token_price' : undefined);
    if (m === undefined) throw invalidParameter('method', `is required: one of ${METHODS[endpoint].join(', ')}`, METHODS[endpoint]);
    if (!(METHODS[endpoint] as readonly string[]).includes(m)) throw badMethod(endpoint, null);
    method = m as StreamMethod;
    address = q['address'];
    if (address === undefined) throw missing('address', null);
  }
  const chain = q['chain'];
  if (chain === undefined) throw missing('chain', null);
  const sub = resolve(registry, method, chain, address, requestId, null);
  return { post: false, subscriptions: [sub], limit, lastEventId: parseLastEventId(lastEventIdHeader, q['last_event_id']) };
}

const BODY_ERROR = invalidParameter('body', `must be a JSON array of 1 to ${MAX_BATCH} subscriptions`);

/** POST /sse/prices or /sse/reserves: the body is a JSON array of subscription objects. */
export function parsePost(registry: Catalog, endpoint: 'prices' | 'reserves', query: string, body: Buffer, lastEventIdHeader: string): StreamRequest {
  const q = readQuery(query, POST_PARAMS);
  const limit = parseLimit(q['limit']);
  let items: unknown;
  try {
    items = JSON.parse(body.toString('utf8'));
  } catch {
    throw BODY_ERROR;
  }
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH) throw BODY_ERROR;
  const subscriptions = items.map((item: unknown, i): Subscription => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new ApiError('invalid_parameter', `invalid body: subscription ${i} must be an object`, { param: 'body', index: i });
    }
    const o = item as Record<string, unknown>;
    const rid = o['request_id'];
    let requestId = i;
    if (rid !== undefined) {
      if (typeof rid !== 'number' || !Number.isInteger(rid) || rid < 0 || rid > MAX_REQUEST_ID) throw REQUEST_ID_ERROR;
      requestId = rid;
    }
    const m = o['method'] ?? (endpoint === 'prices' ? 'token_price' : undefined);
    if (m === undefined) throw missing('method', i);
    if (typeof m !== 'string' || !(METHODS[endpoint] as readonly string[]).includes(m)) throw badMethod(endpoint, i);
    const chain = o['chain'];
    if (typeof chain !== 'string' || chain === '') throw missing('chain', i);
    const address = o['address'];
    if (typeof address !== 'string' || address === '') throw missing('address', i);
    const filter = o['filter'];
    if (filter !== undefined && (typeof filter !== 'object' || filter === null || Array.isArray(filter))) {
      throw new ApiError('invalid_parameter', `invalid body: subscription ${i}: filter must be an object`, { param: 'filter', index: i });
    }
    return resolve(registry, m as StreamMethod, chain, address, requestId, i);
  });
  return { post: true, subscriptions, limit, lastEventId: parseLastEventId(lastEventIdHeader, q['last_event_id']) };
}
