/**
 * The deterministic market simulator: the embedded default {@link Source}. Builds every
 * network's universe at construction, then produces events on demand. Networks are independent
 * except for the shared price paths of cross-network assets, which are pure functions of time.
 */
import type { ChainEventBatch, NetworkInfo } from '../../events/model.js';
import type { Source } from '../source.js';
import { NETWORKS, networkLaunchTime, type NetworkSpec } from './catalog.js';
import { ChainSim, newPoolsPerSecond } from './chain.js';
import { SharedPricePaths } from './prices.js';
import { hashOf } from './prng.js';
import { loadGraph, saveGraph } from './state.js';

export interface SimulatorOptions {
  /** Integer seed; equal options give byte-identical event sequences. */
  seed: number;
  /**
   * Size of the universe over all networks: round(pools * GENESIS_POOL_SHARE) pools exist at
   * genesis (created during the two years before it); after genesis new pools appear at
   * newPoolsPerHour, through history and on into live time.
   */
  pools: number;
  /** Unix seconds where swap history starts. */
  genesisTime: number;
  /** Average noise swaps per simulated second over all pools; arbitrage swaps come on top. */
  swapsPerSecond: number;
  /** Pools created after genesis per simulated hour, over all networks (continues live). */
  newPoolsPerHour: number;
  /** Subset of network ids to simulate (default: all). */
  networks?: readonly string[];
}

export const DEFAULT_SIMULATOR_OPTIONS: Omit<SimulatorOptions, 'genesisTime'> = Object.freeze({
  seed: 42,
  pools: 20_000,
  swapsPerSecond: 1.5,
  newPoolsPerHour: 2,
});

/** Share of `pools` that exists at genesis; later pools come at newPoolsPerHour. */
export const GENESIS_POOL_SHARE = 0.85;
export const MAX_POOLS = 10_000_000;
/** Genesis must leave every simulated network this long after its launch (block 0). */
const MIN_SECONDS_AFTER_LAUNCH = 2 * 86_400;

/** A {@link Source} whose advance() answers synchronously. */
export interface Simulator extends Source {
  readonly networks: readonly NetworkInfo[];
  advance(until: number): ChainEventBatch[];
  /** Its whole state as of `time` (resumeSimulator makes it run on from there). */
  saveState(): Uint8Array;
  /** The options it was made with. */
  options(): SimulatorOptions;
}

function validate(options: SimulatorOptions): NetworkSpec[] {
  const { seed, pools, genesisTime, swapsPerSecond, newPoolsPerHour } = options;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`simulator seed must be a safe integer, got ${seed}`);
  if (!Number.isInteger(pools) || pools < 1 || pools > MAX_POOLS) throw new RangeError(`simulator pools must be an integer in [1, ${MAX_POOLS}], got ${pools}`);
  if (!Number.isFinite(genesisTime)) throw new RangeError(`simulator genesisTime must be finite, got ${genesisTime}`);
  if (!(swapsPerSecond >= 0) || !Number.isFinite(swapsPerSecond)) throw new RangeError(`simulator swapsPerSecond must be >= 0, got ${swapsPerSecond}`);
  if (!(newPoolsPerHour >= 0) || !Number.isFinite(newPoolsPerHour)) throw new RangeError(`simulator newPoolsPerHour must be >= 0, got ${newPoolsPerHour}`);
  let specs: NetworkSpec[] = [...NETWORKS];
  if (options.networks !== undefined) {
    const wanted = new Set(options.networks);
    for (const id of wanted) if (!NETWORKS.some((n) => n.id === id)) throw new RangeError(`unknown simulator network '${id}'`);
    if (wanted.size === 0) throw new RangeError('simulator networks must not be empty');
    specs = specs.filter((n) => wanted.has(n.id));
  }
  for (const spec of specs) {
    const earliest = networkLaunchTime(spec) + MIN_SECONDS_AFTER_LAUNCH;
    if (genesisTime < earliest) throw new RangeError(`simulator genesisTime ${genesisTime} precedes ${spec.id}'s block history (needs >= ${Math.ceil(earliest)})`);
  }
  return specs;
}

/** Splits `total` by weight with the largest-remainder method (deterministic, exact sum). */
function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (total * w) / sum);
  const counts = exact.map(Math.floor);
  let left = total - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (let k = 0; left > 0; k++, left--) counts[order[k % order.length]!.i]!++;
  return counts;
}

export function createSimulator(options: SimulatorOptions): Simulator {
  const specs = validate(options);
  const seed = hashOf(options.seed);
  const genesisTime = options.genesisTime;
  const shared = new SharedPricePaths(seed, genesisTime);
  const weights = specs.map((s) => s.poolWeight);
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const genesisCounts = apportion(Math.round(options.pools * GENESIS_POOL_SHARE), weights);
  const chains = specs.map(
    (spec, i) => new ChainSim(spec, { seed, genesisTime, shared }, genesisCounts[i]!, newPoolsPerSecond(options.newPoolsPerHour, spec.poolWeight, totalWeight)),
  );
  const rateWeight = chains.reduce((sum, c) => sum + c.rateWeight(), 0);
  const rateScale = rateWeight > 0 ? options.swapsPerSecond / rateWeight : 0;
  for (const chain of chains) chain.start(rateScale);
  return simulatorOf({ options: { ...options }, chains, time: genesisTime });
}

/** What a simulator is made of: all a resumed one needs (state.ts). */
interface SimulatorGraph {
  readonly options: SimulatorOptions;
  readonly chains: ChainSim[];
  time: number;
}

function simulatorOf(graph: SimulatorGraph): Simulator {
  const { chains } = graph;
  const byId = new Map(chains.map((c) => [c.spec.id, c]));
  const networks: readonly NetworkInfo[] = Object.freeze(chains.map((c) => c.info));

  return {
    name: 'simulator',
    networks,
    get time(): number {
      return graph.time;
    },
    pricingAnchors(chain: string) {
      const c = byId.get(chain);
      if (!c) throw new RangeError(`unknown simulator network '${chain}'`);
      return { stablecoins: c.stablecoinAddresses, wrappedNative: c.wrappedNativeAddress };
    },
    advance(until: number): ChainEventBatch[] {
      if (!Number.isFinite(until)) throw new RangeError(`simulator advance() needs a finite time, got ${until}`);
      if (until <= graph.time) return [];
      const batches: ChainEventBatch[] = [];
      for (const c of chains) {
        const events = c.advance(until);
        if (events.length > 0) batches.push({ chain: c.spec.id, events });
      }
      graph.time = until;
      return batches;
    },
    saveState: () => saveGraph(graph),
    options: () => graph.options,
  };
}

/** A simulator resumed from `saveState()` bytes: it goes on exactly as the saved one would have. */
export function resumeSimulator(state: Uint8Array): Simulator {
  return simulatorOf(loadGraph<SimulatorGraph>(state));
}
