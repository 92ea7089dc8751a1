/** The deterministic market simulator, the service's embedded default data source. */
export {
  createSimulator,
  resumeSimulator,
  isLargeUniverse,
  DEFAULT_SIMULATOR_OPTIONS,
  GENESIS_POOL_SHARE,
  MAX_POOLS,
  CREATION_BATCH_POOLS,
  type Simulator,
  type SimulatorOptions,
} from './simulator.js';
export { NETWORKS, CHAIN_EPOCH_UNIX_SECONDS, type NetworkSpec, type DexSpec, type TokenSpec } from './catalog.js';
