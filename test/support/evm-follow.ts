/**
 * A service following one chain on a local anvil, stepped by hand, as the reorganisation tests run
 * it: an engine on a store in a folder (in-thread shards), its EVM source and its REST gateway;
 * opened again on the same folder, it is a restart.
 */
import { Ingest } from '../../engine/ingest/ingest.js';
import { LocalShards } from '../../engine/shards/local.js';
import type { TierPolicy } from '../../engine/shards/tiers.js';
import type { EvmChainConfig } from '../../engine/sources/evm/config.js';
import { createEvmSource } from '../../engine/sources/evm/source.js';
import { EngineViews } from '../../engine/state/views.js';
import { useStoredCandles } from '../../engine/state/read.js';
import { LmdbCandles } from '../../engine/shards/stored-candles.js';
import { openStore, type Store } from '../../engine/store/store.js';
import { startGateway, type Gateway } from '../../gateway/server.js';
import { getJson } from './evm-serve.js';

export interface FollowingService {
  readonly store: Store;
  readonly views: EngineViews;
  readonly ingest: Ingest;
  readonly shards: LocalShards;
  readonly gateway: Gateway;
  readonly source: ReturnType<typeof createEvmSource>;
  readonly now: number;
  /** GET on the gateway: status, parsed body and text. */
  get(path: string): Promise<{ status: number; body: any; text: string }>;
  close(): Promise<void>;
}

export interface FollowingOptions {
  /** The store's folder. */
  readonly dir: string;
  readonly config: EvmChainConfig;
  /** The fixed clock (Unix s). */
  readonly now: number;
  /** The source's log lines. */
  readonly log?: (line: string) => void;
  /** Pools quiet this long give their ring blocks back (none does without). */
  readonly tiers?: TierPolicy;
  /** Loads what the store holds into the fresh engine, before the source starts. */
  readonly restore?: (engine: { store: Store; views: EngineViews; ingest: Ingest; shards: LocalShards }) => Promise<void>;
}

export async function openFollowing(o: FollowingOptions): Promise<FollowingService> {
  const store = openStore(o.dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  // Readers of pools without a ring block sum their windows from the store, as the engine's do.
  useStoredCandles(views, new LmdbCandles(store));
  const shards = new LocalShards(views, store, o.tiers ?? null);
  const ingest = new Ingest(store, views, shards);
  await o.restore?.({ store, views, ingest, shards });
  const source = createEvmSource({ chains: [o.config], store, now: () => o.now, progressIntervalMs: 0, ...(o.log ? { log: o.log } : {}) });
  await ingest.registerNetworks(source.networks);
  const gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => o.now }, { host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${gateway.port}`;
  return {
    store,
    views,
    ingest,
    shards,
    gateway,
    source,
    now: o.now,
    get: (path) => getJson(base + path),
    async close() {
      await gateway.close();
      await store.close();
    },
  };
}

/** Follows the node until caught up, then settles the windows at the clock's time as a live service does (and sweeps the shards' rings, when told to). */
export async function followToHead(s: FollowingService, options: { sweep?: boolean } = {}): Promise<void> {
  s.source.followers[0]!.caughtUp = false;
  for (let i = 0; i < 1000; i++) {
    await (await s.ingest.ingest(await s.source.advance(s.now))).applied;
    if (s.source.followers[0]!.caughtUp) break;
  }
  s.ingest.advanceClock(0, s.now);
  await s.shards.flush();
  if (options.sweep) s.shards.sweep(1);
}
