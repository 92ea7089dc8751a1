/**
 * The route table of the REST interface, declared once: every route a GET path can match, by a
 * small id (its index in ROUTES). The router dispatches on the id and the metrics count by it, so
 * a path is classified once per request. A path that matches no route is `other` (a 404).
 */

/**
 * Routes in id order. `removed` is every route withdrawn on 2026-06-30 (rest/removed.ts answers
 * 410 for them); `root` and `usage` are answered only where keys apply (gateway/server.ts).
 */
export const ROUTES = [
  'root',
  'health',
  'usage',
  'stats',
  'openapi',
  'networks',
  'dexes',
  'pool_search',
  'pool',
  'pool_ohlcv',
  'pool_transactions',
  'pool_indicators',
  'token_search',
  'token',
  'token_ohlcv',
  'token_indicators',
  'multi_prices',
  'search',
  'removed',
  'other',
] as const;
export type RouteLabel = (typeof ROUTES)[number];

/** Route ids by label. */
export const ROUTE: Readonly<Record<RouteLabel, number>> = Object.freeze(Object.fromEntries(ROUTES.map((r, i) => [r, i])) as Record<RouteLabel, number>);

/** Length of the `/api` prefix of the agent host's subset paths (rest/api-subset.ts). */
export const API_PREFIX_LENGTH = 4;

/** Positions of a path's slashes (scratch for matchRoute; one thread, read only inside it). */
const SLASHES = new Int32Array(8);

/** Whether segment `k` of `path` (1-based, as in path.split('/')[k]) is `name`; `n` slashes were found. */
function seg(path: string, n: number, k: number, name: string): boolean {
  if (k >= n + 1 || k < 1) return false;
  const from = SLASHES[k - 1]! + 1;
  const to = k < n ? SLASHES[k]! : path.length;
  return to - from === name.length && path.startsWith(name, from);
}

/**
 * Id of the route `path` matches, `other` when none. `from` > 0 skips a prefix (the agent host's
 * `/api`, API_PREFIX_LENGTH). Runs once per request: it reads the path in place (no split, no
 * substring).
 */
export function matchRoute(path: string, from = 0): number {
  // `n` slashes: the path has n segments, path.split('/') would have n + 1 parts.
  let n = 0;
  let i = path.charCodeAt(from) === 47 /* '/' */ ? from : -1;
  while (i >= 0) {
    if (n === SLASHES.length) return ROUTE.other;
    SLASHES[n++] = i;
    i = path.indexOf('/', i + 1);
  }
  const parts = n + 1;
  if (parts === 2) {
    if (SLASHES[0]! + 1 === path.length) return ROUTE.root;
    if (seg(path, n, 1, 'networks')) return ROUTE.networks;
    if (seg(path, n, 1, 'health')) return ROUTE.health;
    if (seg(path, n, 1, 'search')) return ROUTE.search;
    if (seg(path, n, 1, 'stats')) return ROUTE.stats;
    if (seg(path, n, 1, 'usage')) return ROUTE.usage;
    if (seg(path, n, 1, 'openapi.json')) return ROUTE.openapi;
    if (seg(path, n, 1, 'pools')) return ROUTE.removed;
    return ROUTE.other;
  }
  if (parts === 3) {
    if (!seg(path, n, 2, 'search')) return ROUTE.other;
    return seg(path, n, 1, 'pools') ? ROUTE.pool_search : seg(path, n, 1, 'tokens') ? ROUTE.token_search : ROUTE.other;
  }
  if (!seg(path, n, 1, 'networks')) return ROUTE.other;
  const pools = seg(path, n, 3, 'pools');
  const tokens = !pools && seg(path, n, 3, 'tokens');
  if (parts === 4) return seg(path, n, 3, 'dexes') ? ROUTE.dexes : pools ? ROUTE.removed : ROUTE.other;
  if (parts === 5) {
    if (pools) return seg(path, n, 4, 'search') ? ROUTE.pool_search : seg(path, n, 4, 'filter') ? ROUTE.removed : ROUTE.pool;
    if (tokens) return seg(path, n, 4, 'search') ? ROUTE.token_search : seg(path, n, 4, 'filter') || seg(path, n, 4, 'top') ? ROUTE.removed : ROUTE.token;
    return seg(path, n, 3, 'multi') && seg(path, n, 4, 'prices') ? ROUTE.multi_prices : ROUTE.other;
  }
  if (parts === 6) {
    if (seg(path, n, 5, 'pools')) return pools ? ROUTE.other : tokens || seg(path, n, 3, 'dexes') ? ROUTE.removed : ROUTE.other;
    if (pools) return seg(path, n, 5, 'ohlcv') ? ROUTE.pool_ohlcv : seg(path, n, 5, 'transactions') ? ROUTE.pool_transactions : seg(path, n, 5, 'indicators') ? ROUTE.pool_indicators : ROUTE.other;
    if (tokens) return seg(path, n, 5, 'ohlcv') ? ROUTE.token_ohlcv : seg(path, n, 5, 'indicators') ? ROUTE.token_indicators : ROUTE.other;
  }
  return ROUTE.other;
}

/** Segment `k` of `path` (1-based, as path.split('/')[k]), raw; '' when the path has fewer. */
export function pathPart(path: string, k: number): string {
  let at = -1;
  for (let i = 0; i < k; i++) {
    at = path.indexOf('/', at + 1);
    if (at < 0) return '';
  }
  const end = path.indexOf('/', at + 1);
  return path.substring(at + 1, end < 0 ? path.length : end);
}
