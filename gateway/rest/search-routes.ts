/**
 * Search routes beyond pool search: token search (per network and global) and GET /search.
 *   GET /tokens/search                      token search over `chains` (all networks by default)
 *   GET /networks/{network}/tokens/search   token search on one network
 *   GET /search?query=                      tokens, pools and DEXes matching free text
 */
import type { ServeContext } from '../context.js';
import { createGlobalSearch } from './global-search.js';
import type { PoolStatics } from './pool-static.js';
import type { RouteSet } from './route.js';
import { createTokenSearch } from './token-search.js';
import { segment } from '../http/path.js';

export function createSearchRoutes(ctx: ServeContext, statics: PoolStatics): RouteSet {
  const tokens = createTokenSearch(ctx);
  const search = createGlobalSearch(ctx, statics);
  return (s, query) => {
    if (s.length === 2 && s[1] === 'search') return search(query);
    if (s.length === 3 && s[1] === 'tokens' && s[2] === 'search') return tokens.global(query);
    if (s.length === 5 && s[1] === 'networks' && s[3] === 'tokens' && s[4] === 'search') return tokens.network(segment(s[2]!, 'network'), query);
    return null;
  };
}
