/** Search routes beyond pool search: token search (per network and global) and GET /search. */
import type { GatewayContext } from '../context.js';
import type { PoolStatics } from './pool-static.js';
import type { RouteSet } from './route.js';

export function createSearchRoutes(_ctx: GatewayContext, _statics: PoolStatics): RouteSet {
  return () => null;
}
