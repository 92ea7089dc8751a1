/**
 * History routes built on stored candles and transactions: pool transactions, token OHLCV and
 * pool and token indicators.
 */
import type { GatewayContext } from '../context.js';
import type { ResponseCache } from '../http/cache.js';
import type { RouteSet } from './route.js';

export function createHistoryRoutes(_ctx: GatewayContext, _cache: ResponseCache): RouteSet {
  return () => null;
}
