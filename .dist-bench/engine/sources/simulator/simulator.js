import { NETWORKS, networkLaunchTime } from './catalog.js';
import { ChainSim, newPoolsPerSecond } from './chain.js';
import { SharedPricePaths } from './prices.js';
import { hashOf } from './prng.js';
import { loadGraph, saveGraph } from './state.js';
export const DEFAULT_SIMULATOR_OPTIONS = Object.freeze({
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
function validate(options) {
    const { seed, pools, genesisTime, swapsPerSecond, newPoolsPerHour } = options;
    if (!Number.isSafeInteger(seed))
        throw new RangeError(`simulator seed must be a safe integer, got ${seed}`);
    if (!Number.isInteger(pools) || pools < 1 || pools > MAX_POOLS)
        throw new RangeError(`simulator pools must be an integer in [1, ${MAX_POOLS}], got ${pools}`);
    if (!Number.isFinite(genesisTime))
        throw new RangeError(`simulator genesisTime must be finite, got ${genesisTime}`);
    if (!(swapsPerSecond >= 0) || !Number.isFinite(swapsPerSecond))
        throw new RangeError(`simulator swapsPerSecond must be >= 0, got ${swapsPerSecond}`);
    if (!(newPoolsPerHour >= 0) || !Number.isFinite(newPoolsPerHour))
        throw new RangeError(`simulator newPoolsPerHour must be >= 0, got ${newPoolsPerHour}`);
    let specs = [...NETWORKS];
    if (options.networks !== undefined) {
        const wanted = new Set(options.networks);
        for (const id of wanted)
            if (!NETWORKS.some((n) => n.id === id))
                throw new RangeError(`unknown simulator network '${id}'`);
        if (wanted.size === 0)
            throw new RangeError('simulator networks must not be empty');
        specs = specs.filter((n) => wanted.has(n.id));
    }
    for (const spec of specs) {
        const earliest = networkLaunchTime(spec) + MIN_SECONDS_AFTER_LAUNCH;
        if (genesisTime < earliest)
            throw new RangeError(`simulator genesisTime ${genesisTime} precedes ${spec.id}'s block history (needs >= ${Math.ceil(earliest)})`);
    }
    return specs;
}
/** Splits `total` by weight with the largest-remainder method (deterministic, exact sum). */
function apportion(total, weights) {
    const sum = weights.reduce((a, b) => a + b, 0);
    const exact = weights.map((w) => (total * w) / sum);
    const counts = exact.map(Math.floor);
    let left = total - counts.reduce((a, b) => a + b, 0);
    const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
    for (let k = 0; left > 0; k++, left--)
        counts[order[k % order.length].i]++;
    return counts;
}
export function createSimulator(options) {
    const specs = validate(options);
    const seed = hashOf(options.seed);
    const genesisTime = options.genesisTime;
    const shared = new SharedPricePaths(seed, genesisTime);
    const weights = specs.map((s) => s.poolWeight);
    const totalWeight = weights.reduce((a, b) => a + b, 0);
    const genesisCounts = apportion(Math.round(options.pools * GENESIS_POOL_SHARE), weights);
    const chains = specs.map((spec, i) => new ChainSim(spec, { seed, genesisTime, shared }, genesisCounts[i], newPoolsPerSecond(options.newPoolsPerHour, spec.poolWeight, totalWeight)));
    const rateWeight = chains.reduce((sum, c) => sum + c.rateWeight(), 0);
    const rateScale = rateWeight > 0 ? options.swapsPerSecond / rateWeight : 0;
    for (const chain of chains)
        chain.start(rateScale);
    return simulatorOf({ options: { ...options }, chains, time: genesisTime });
}
function simulatorOf(graph) {
    const { chains } = graph;
    const byId = new Map(chains.map((c) => [c.spec.id, c]));
    const networks = Object.freeze(chains.map((c) => c.info));
    return {
        name: 'simulator',
        networks,
        get time() {
            return graph.time;
        },
        pricingAnchors(chain) {
            const c = byId.get(chain);
            if (!c)
                throw new RangeError(`unknown simulator network '${chain}'`);
            return { stablecoins: c.stablecoinAddresses, wrappedNative: c.wrappedNativeAddress };
        },
        advance(until) {
            if (!Number.isFinite(until))
                throw new RangeError(`simulator advance() needs a finite time, got ${until}`);
            if (until <= graph.time)
                return [];
            const batches = [];
            for (const c of chains) {
                const events = c.advance(until);
                if (events.length > 0)
                    batches.push({ chain: c.spec.id, events });
            }
            graph.time = until;
            return batches;
        },
        saveState: () => saveGraph(graph),
        options: () => graph.options,
    };
}
/** A simulator resumed from `saveState()` bytes: it goes on exactly as the saved one would have. */
export function resumeSimulator(state) {
    return simulatorOf(loadGraph(state));
}
//# sourceMappingURL=simulator.js.map