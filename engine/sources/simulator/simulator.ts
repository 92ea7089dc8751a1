/**
 * The deterministic market simulator: the embedded default {@link Source}. Builds every
 * network's universe at construction, then produces events on demand. Networks are independent
 * except for the shared price paths of cross-network assets, which are pure functions of time.
 */
import type { ChainEventBatch, NetworkInfo } from '../../events/model.js';
import type { Log } from '../../log.js';
import type { Source } from '../source.js';
import { NETWORKS, networkLaunchTime, type NetworkSpec } from './catalog.js';
import { ChainSim, newPoolsPerSecond } from './chain.js';
import { LARGE_UNIVERSE_MIN_POOLS } from './large.js';
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
  /**
   * `small`: every pool planned and kept, each trading at a rate growing with its liquidity;
   * `large`: pools drawn when needed, activity following a power law (large.ts). By default
   * large from LARGE_UNIVERSE_MIN_POOLS pools.
   */
  universe?: 'small' | 'large';
}

export const DEFAULT_SIMULATOR_OPTIONS: Omit<SimulatorOptions, 'genesisTime'> = Object.freeze({
  seed: 42,
  pools: 20_000,
  swapsPerSecond: 1.5,
  newPoolsPerHour: 2,
});

/** Share of `pools` that exists at genesis; later pools come at newPoolsPerHour. */
export const GENESIS_POOL_SHARE = 0.85;
export const MAX_POOLS = 40_000_000;
/**
 * Genesis pools a large universe emits per advance() call while creating them (about 17,000
 * events). Each batch holds the main thread while it is made, encoded and logged, and REST answers
 * wait for it: with 20,000 a batch, answers took 3.0 to 3.7 s at the median (up to 8.6 s) while
 * 2 M pools were created; 5,000 cut that to 0.75 to 0.82 s (at most 2.2 s) for 3 to 7 % fewer pools
 * a second (bench/RESULTS.md).
 */
export const CREATION_BATCH_POOLS = 5_000;
/** Version of the saved state's shape: a state of another version is not resumed. */
const STATE_VERSION = 2;
const PROGRESS_INTERVAL_MS = 1_000;
/** Genesis must leave every simulated network this long after its launch (block 0). */
const MIN_SECONDS_AFTER_LAUNCH = 2 * 86_400;

/** A {@link Source} whose advance() answers synchronously. */
export interface Simulator extends Source {
  readonly networks: readonly NetworkInfo[];
  /** Pools held as state (all of them in a small universe, the living ones in a large one). */
  readonly poolsInState: number;
  /**
   * Genesis pools whose creation is still to come: while there are, advance() returns the next
   * batch of creations (at most CREATION_BATCH_POOLS) and time stays where it is.
   */
  readonly creationsPending: number;
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

/** Whether the options make a large universe. */
export function isLargeUniverse(options: Pick<SimulatorOptions, 'pools' | 'universe'>): boolean {
  return (options.universe ?? (options.pools >= LARGE_UNIVERSE_MIN_POOLS ? 'large' : 'small')) === 'large';
}

/** `log` hears how the universe was built and, in a large one, how the creation of its pools proceeds. */
export function createSimulator(options: SimulatorOptions, log?: Log): Simulator {
  const started = performance.now();
  const specs = validate(options);
  const large = isLargeUniverse(options);
  const seed = hashOf(options.seed);
  const genesisTime = options.genesisTime;
  const shared = new SharedPricePaths(seed, genesisTime);
  const weights = specs.map((s) => s.poolWeight);
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const genesisCounts = apportion(Math.round(options.pools * GENESIS_POOL_SHARE), weights);
  const chains = specs.map(
    (spec, i) => new ChainSim(spec, { seed, genesisTime, shared }, genesisCounts[i]!, newPoolsPerSecond(options.newPoolsPerHour, spec.poolWeight, totalWeight), large),
  );
  const rateWeight = chains.reduce((sum, c) => sum + c.rateWeight(), 0);
  const rateScale = rateWeight > 0 ? options.swapsPerSecond / rateWeight : 0;
  for (const chain of chains) chain.start(rateScale);
  const genesisPools = genesisCounts.reduce((a, b) => a + b, 0);
  const inState = chains.reduce((sum, c) => sum + c.poolsInState, 0);
  log?.info(
    `simulator: ${genesisPools} pools at genesis (${large ? `large universe, ${inState} living` : 'small universe'}), built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return simulatorOf({ version: STATE_VERSION, options: { ...options }, chains, time: genesisTime, genesisPools }, log);
}

/** What a simulator is made of: all a resumed one needs (state.ts). */
interface SimulatorGraph {
  readonly version: number;
  readonly options: SimulatorOptions;
  readonly chains: ChainSim[];
  time: number;
  readonly genesisPools: number;
}

function simulatorOf(graph: SimulatorGraph, log?: Log): Simulator {
  const { chains } = graph;
  const pending = () => chains.reduce((sum, c) => sum + c.creationsPending, 0);
  const creation = { startedMs: 0, lastLogMs: 0, startedPending: 0 };

  /** The next batch of genesis pool creations, each network's share in proportion to what it has left. */
  const createBatch = (left: number): ChainEventBatch[] => {
    const now = performance.now();
    if (creation.startedMs === 0) Object.assign(creation, { startedMs: now, lastLogMs: now, startedPending: left });
    const batches: ChainEventBatch[] = [];
    for (const c of chains) {
      const share = Math.ceil((CREATION_BATCH_POOLS * c.creationsPending) / left);
      const events = share > 0 ? c.createGenesisPools(share) : [];
      if (events.length > 0) batches.push({ chain: c.spec.id, events });
    }
    const after = performance.now();
    const remaining = pending();
    if (after - creation.lastLogMs >= PROGRESS_INTERVAL_MS || remaining === 0) {
      creation.lastLogMs = after;
      const done = graph.genesisPools - remaining;
      const rate = (creation.startedPending - remaining) / Math.max(1e-3, (after - creation.startedMs) / 1000);
      log?.info(`creating pools: ${done} of ${graph.genesisPools} (${Math.floor((100 * done) / graph.genesisPools)} %), ${Math.round(rate)} pools/s`);
    }
    return batches;
  };
  const byId = new Map(chains.map((c) => [c.spec.id, c]));
  const networks: readonly NetworkInfo[] = Object.freeze(chains.map((c) => c.info));

  return {
    name: 'simulator',
    networks,
    get time(): number {
      return graph.time;
    },
    get poolsInState() {
      return chains.reduce((sum, c) => sum + c.poolsInState, 0);
    },
    get creationsPending() {
      return pending();
    },
    pricingAnchors(chain: string) {
      const c = byId.get(chain);
      if (!c) throw new RangeError(`unknown simulator network '${chain}'`);
      return { stablecoins: c.stablecoinAddresses, wrappedNative: c.wrappedNativeAddress };
    },
    advance(until: number): ChainEventBatch[] {
      if (!Number.isFinite(until)) throw new RangeError(`simulator advance() needs a finite time, got ${until}`);
      if (until <= graph.time) return [];
      const left = pending();
      if (left > 0) return createBatch(left);
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

/**
 * A simulator resumed from `saveState()` bytes: it goes on exactly as the saved one would have.
 * Throws a RangeError for the state of another version of the simulator.
 */
export function resumeSimulator(state: Uint8Array, log?: Log): Simulator {
  const graph = loadGraph<SimulatorGraph>(state);
  if (graph.version !== STATE_VERSION) throw new RangeError(`simulator state of version ${String(graph.version)}, not ${STATE_VERSION}`);
  return simulatorOf(graph, log);
}
