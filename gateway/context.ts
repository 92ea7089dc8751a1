/** What the gateway reads from: the engine's shared views, the catalog (ids, addresses, names) and the store. */
import type { SwapFeed } from '../engine/feed/swaps.js';
import type { Catalog } from '../engine/catalog/catalog.js';
import type { PoolRanker } from '../engine/search/ranker.js';
import type { Log } from '../engine/log.js';
import type { EngineViews } from '../engine/state/views.js';
import type { Store } from '../engine/store/store.js';

export interface GatewayContext {
  views: EngineViews;
  /** The catalog: networks, DEXes, pool and token ids, addresses and names. */
  registry: Catalog;
  store: Store;
  /** Runs ranked pool searches on the shard threads. */
  ranker: PoolRanker;
  /** Unix seconds. */
  now(): number;
  /** Swaps of watched pools and tokens as the shards apply them (the transaction streams); none without it. */
  swaps?: SwapFeed;
  /** The engine's own figures for /stats (`engine`: log, snapshots); absent without it. */
  engineStats?: () => object;
  /** The service's log (engine/log.ts); nothing is logged without it. */
  log?: Log;
}
