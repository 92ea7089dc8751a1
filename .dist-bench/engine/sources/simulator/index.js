/** The deterministic market simulator, the service's embedded default data source. */
export { createSimulator, resumeSimulator, DEFAULT_SIMULATOR_OPTIONS, GENESIS_POOL_SHARE } from './simulator.js';
export { NETWORKS, CHAIN_EPOCH_UNIX_SECONDS } from './catalog.js';
//# sourceMappingURL=index.js.map