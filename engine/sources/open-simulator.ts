import type { Config } from '../config.js';
import type { Store } from '../store/store.js';
import { createSimulator } from './simulator/index.js';
import type { Source } from './source.js';

const PARAMS_KEY = 'simulator.params';

interface SavedParams {
  readonly seed: number;
  readonly pools: number;
  readonly swapsPerSecond: number;
  readonly newPoolsPerHour: number;
  readonly networks: readonly string[] | null;
  readonly genesisTime: number;
}

/**
 * Opens the simulator for a data directory. Its timeline is fixed at first start (genesis = then
 * minus the backfill span) and stored, so a restart regenerates the same events and ingest skips the
 * ones already in the log. Starting a data directory with different simulator settings is refused.
 */
export function openSimulator(store: Store, cfg: Config['simulator'], now: number): Source {
  const params = {
    seed: cfg.seed,
    pools: cfg.pools,
    swapsPerSecond: cfg.swapsPerSecond,
    newPoolsPerHour: cfg.newPoolsPerHour,
    networks: cfg.networks ?? null,
  };
  const saved = store.meta.get(PARAMS_KEY) as SavedParams | undefined;
  if (saved) {
    const { genesisTime: _genesis, ...savedParams } = saved;
    if (JSON.stringify(savedParams) !== JSON.stringify(params))
      throw new Error(
        `data directory ${store.path} holds a simulation made with ${JSON.stringify(savedParams)}; ` +
          `start with those settings or with a new --data-dir`,
      );
  }
  const genesisTime = saved?.genesisTime ?? cfg.genesisTime ?? Math.floor(now / 60) * 60 - Math.round(cfg.backfillDays * 86_400);
  if (!saved) store.meta.putSync(PARAMS_KEY, { ...params, genesisTime } satisfies SavedParams);
  return createSimulator({ ...params, networks: params.networks ?? undefined, genesisTime });
}
