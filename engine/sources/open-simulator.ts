import type { Config } from '../config.js';
import type { Log } from '../log.js';
import type { Store } from '../store/store.js';
import { createSimulator, resumeSimulator, type Simulator } from './simulator/index.js';
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
 * minus the backfill span) and stored. A restart resumes from the state kept with the snapshot it
 * loaded (`resume`), or else regenerates the same events from genesis; either way ingest skips the
 * ones already in the log. Starting a data directory with different simulator settings is refused.
 * `log` hears how the universe is built and how the creation of a large one's pools proceeds.
 */
export function openSimulator(store: Store, cfg: Config['simulator'], now: number, resume: Uint8Array | null = null, log?: Log): Source {
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
  const options = { ...params, networks: params.networks ?? undefined, genesisTime };
  if (resume !== null) {
    const resumed = resumedSimulator(resume, log);
    // A state made with other settings (the snapshot of another simulation) is not resumed.
    const canonical = (o: object) => JSON.stringify(o, Object.keys(o).sort());
    if (resumed !== null && canonical(resumed.options()) === canonical(options)) return resumed;
  }
  return createSimulator(options, log);
}

/** The simulator of a saved state, or null for the state of another version (then it is made again from its settings). */
function resumedSimulator(state: Uint8Array, log?: Log): Simulator | null {
  try {
    return resumeSimulator(state, log);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    log?.warn(`the snapshot's ${err.message}: the simulation is made again from its settings`);
    return null;
  }
}
