/** What the gateway reads from: the engine's shared views, the registry's side tables and the store. */
import type { Registry } from '../engine/ingest/registry.js';
import type { EngineViews } from '../engine/state/views.js';
import type { Store } from '../engine/store/store.js';

export interface GatewayContext {
  views: EngineViews;
  registry: Registry;
  store: Store;
  /** Unix seconds. */
  now(): number;
}
