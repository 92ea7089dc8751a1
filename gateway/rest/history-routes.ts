/**
 * History routes built on stored candles and transactions: pool transactions, token OHLCV and
 * pool and token indicators.
 *
 *   /networks/{network}/pools/{pool_address}/transactions   transactions.ts
 *   /networks/{network}/pools/{pool_address}/indicators     indicators.ts
 *   /networks/{network}/tokens/{token_address}/ohlcv        token-ohlcv.ts
 *   /networks/{network}/tokens/{token_address}/indicators   indicators.ts
 */
import type { ServeContext } from '../context.js';
import type { ResponseCache } from '../http/cache.js';
import { createPoolIndicators, createTokenIndicators } from './indicators.js';
import type { RouteSet } from './route.js';
import { createTokenOhlcv } from './token-ohlcv.js';
import { createPoolTransactions } from './transactions.js';
import { segment } from '../http/path.js';

// The cache is not used yet: these bodies depend on several pools or on LMDB rows no seqlock covers.
export function createHistoryRoutes(ctx: ServeContext, _cache: ResponseCache): RouteSet {
  const transactions = createPoolTransactions(ctx);
  const poolIndicators = createPoolIndicators(ctx);
  const tokenOhlcv = createTokenOhlcv(ctx);
  const tokenIndicators = createTokenIndicators(ctx);

  return (s, query, gate) => {
    if (s.length !== 6 || s[1] !== 'networks') return null;
    const kind = s[3];
    const leaf = s[5];
    if (kind === 'pools') {
      if (leaf === 'transactions') return transactions(segment(s[2]!, 'network'), segment(s[4]!, 'pool'), query);
      if (leaf === 'indicators') return poolIndicators(segment(s[2]!, 'network'), segment(s[4]!, 'pool'), query, gate);
    } else if (kind === 'tokens') {
      if (leaf === 'ohlcv') return tokenOhlcv(segment(s[2]!, 'network'), segment(s[4]!, 'token'), query);
      if (leaf === 'indicators') return tokenIndicators(segment(s[2]!, 'network'), segment(s[4]!, 'token'), query);
    }
    return null;
  };
}
