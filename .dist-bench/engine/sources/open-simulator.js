import { createSimulator, resumeSimulator } from './simulator/index.js';
const PARAMS_KEY = 'simulator.params';
/**
 * Opens the simulator for a data directory. Its timeline is fixed at first start (genesis = then
 * minus the backfill span) and stored. A restart resumes from the state kept with the snapshot it
 * loaded (`resume`), or else regenerates the same events from genesis; either way ingest skips the
 * ones already in the log. Starting a data directory with different simulator settings is refused.
 */
export function openSimulator(store, cfg, now, resume = null) {
    const params = {
        seed: cfg.seed,
        pools: cfg.pools,
        swapsPerSecond: cfg.swapsPerSecond,
        newPoolsPerHour: cfg.newPoolsPerHour,
        networks: cfg.networks ?? null,
    };
    const saved = store.meta.get(PARAMS_KEY);
    if (saved) {
        const { genesisTime: _genesis, ...savedParams } = saved;
        if (JSON.stringify(savedParams) !== JSON.stringify(params))
            throw new Error(`data directory ${store.path} holds a simulation made with ${JSON.stringify(savedParams)}; ` +
                `start with those settings or with a new --data-dir`);
    }
    const genesisTime = saved?.genesisTime ?? cfg.genesisTime ?? Math.floor(now / 60) * 60 - Math.round(cfg.backfillDays * 86_400);
    if (!saved)
        store.meta.putSync(PARAMS_KEY, { ...params, genesisTime });
    const options = { ...params, networks: params.networks ?? undefined, genesisTime };
    if (resume !== null) {
        const resumed = resumeSimulator(resume);
        // A state made with other settings (the snapshot of another simulation) is not resumed.
        const canonical = (o) => JSON.stringify(o, Object.keys(o).sort());
        if (canonical(resumed.options()) === canonical(options))
            return resumed;
    }
    return createSimulator(options);
}
//# sourceMappingURL=open-simulator.js.map