/**
 * "Fair" USD prices that arbitrage pulls pools towards. Log prices follow Ornstein-Uhlenbeck
 * processes (a random walk with a very weak pull back to the genesis level), so prices wander
 * realistically over weeks without drifting to absurd levels over years of live running.
 *
 * Two evaluation schemes keep results independent of how time is cut into advance() calls:
 * - {@link SharedPricePaths}: assets present on several networks (ETH, BTC, ...) are sampled on
 *   a fixed grid from genesis, always generated in grid order, and linearly interpolated, so a
 *   price is a pure function of time whichever network asks first.
 * - {@link LocalPriceWalks}: tokens of a single network are sampled exactly at the instants they
 *   are asked for. A network's events are produced in time order, so the sequence of instants,
 *   and hence every draw, is the same however time is cut.
 */
import { Rng, RngBank } from './prng.js';
export const SECONDS_PER_DAY = 86_400;
/** Grid step of shared price paths. */
export const SHARED_PATH_STEP_SECONDS = 300;
/** Mean reversion of volatile log prices, per day (a half-life of about 1.9 years for majors). */
export const MAJOR_MEAN_REVERSION_PER_DAY = 1 / 1000;
export const LONG_TAIL_MEAN_REVERSION_PER_DAY = 1 / 120;
/** Stablecoins: strong pull to 1, small stationary deviation, hard band. */
export const STABLE_MEAN_REVERSION_PER_DAY = 2;
export const STABLE_STATIONARY_DEVIATION = 0.0008;
export const STABLE_MAX_DEVIATION = 0.003;
const INITIAL_PATH_CAPACITY_STEPS = 4096;
/** Exact OU transition over dtDays for daily volatility sigma and reversion theta per day. */
function ouStep(sigma, thetaPerDay, dtDays) {
    const keep = Math.exp(-thetaPerDay * dtDays);
    const sd = sigma * Math.sqrt((1 - keep * keep) / (2 * thetaPerDay));
    return { keep, sd };
}
/** Price paths of cross-network assets, on a grid anchored at genesis. */
export class SharedPricePaths {
    seed;
    origin;
    keys = new Map();
    logP0 = [];
    keep = [];
    sd = [];
    rngs = [];
    /** paths[a][k] = log deviation at origin + k * step; paths[a][0] = 0. */
    paths = [];
    lengths = [];
    constructor(seed, genesisTime) {
        this.seed = seed;
        this.origin = genesisTime;
    }
    /** Registers an asset (idempotent per key); returns its index. */
    register(key, keyHash, priceUsd, dailyVolatility) {
        const known = this.keys.get(key);
        if (known !== undefined)
            return known;
        const a = this.logP0.length;
        this.keys.set(key, a);
        const step = ouStep(dailyVolatility, MAJOR_MEAN_REVERSION_PER_DAY, SHARED_PATH_STEP_SECONDS / SECONDS_PER_DAY);
        this.logP0.push(Math.log(priceUsd));
        this.keep.push(step.keep);
        this.sd.push(step.sd);
        this.rngs.push(new Rng(this.seed, keyHash, 0x5a4ed));
        const path = new Float64Array(INITIAL_PATH_CAPACITY_STEPS);
        this.paths.push(path);
        this.lengths.push(1);
        return a;
    }
    /** USD price of asset a at instant t (flat before genesis). */
    price(a, t) {
        const u = (t - this.origin) / SHARED_PATH_STEP_SECONDS;
        if (!(u > 0))
            return Math.exp(this.logP0[a]);
        const k = Math.floor(u);
        if (k + 1 >= this.lengths[a])
            this.extend(a, k + 2);
        const path = this.paths[a];
        const x0 = path[k];
        return Math.exp(this.logP0[a] + x0 + (u - k) * (path[k + 1] - x0));
    }
    /** Generates grid points in order up to (excluding) index `length`. */
    extend(a, length) {
        let path = this.paths[a];
        if (length > path.length) {
            let cap = path.length;
            while (cap < length)
                cap *= 2;
            const grown = new Float64Array(cap);
            grown.set(path);
            path = grown;
            this.paths[a] = path;
        }
        const rng = this.rngs[a];
        const keep = this.keep[a];
        const sd = this.sd[a];
        let n = this.lengths[a];
        let x = path[n - 1];
        while (n < length) {
            x = keep * x + sd * rng.nextGaussian();
            path[n++] = x;
        }
        this.lengths[a] = n;
    }
}
/** Price walks of one network's own tokens, sampled exactly at the instants asked for. */
export class LocalPriceWalks {
    rngs = new RngBank();
    scratch = new Rng(0);
    stable = [];
    logP0 = [];
    sigma = [];
    theta = [];
    lastT = [];
    deviation = [];
    /** A volatile token: log price = ln(priceUsd) + OU deviation starting at 0 at `startTime`. */
    addVolatile(priceUsd, dailyVolatility, startTime, ...key) {
        return this.add(false, Math.log(priceUsd), dailyVolatility, LONG_TAIL_MEAN_REVERSION_PER_DAY, startTime, key);
    }
    /** A stablecoin: price = 1 + deviation, the deviation held within STABLE_MAX_DEVIATION. */
    addStable(startTime, ...key) {
        const sigma = STABLE_STATIONARY_DEVIATION * Math.sqrt(2 * STABLE_MEAN_REVERSION_PER_DAY);
        return this.add(true, 0, sigma, STABLE_MEAN_REVERSION_PER_DAY, startTime, key);
    }
    /**
     * USD price at t. Calls for one walk must come with non-decreasing t (earlier instants are
     * answered with the latest state); this is what keeps the draws independent of chunking.
     */
    price(w, t) {
        let dev = this.deviation[w];
        const last = this.lastT[w];
        if (t > last) {
            const theta = this.theta[w];
            const keep = Math.exp((-theta * (t - last)) / SECONDS_PER_DAY);
            const sd = this.sigma[w] * Math.sqrt((1 - keep * keep) / (2 * theta));
            const rng = this.scratch;
            this.rngs.load(rng, w);
            dev = keep * dev + sd * rng.nextGaussian();
            this.rngs.store(rng, w);
            this.deviation[w] = dev;
            this.lastT[w] = t;
        }
        if (this.stable[w]) {
            return 1 + (dev > STABLE_MAX_DEVIATION ? STABLE_MAX_DEVIATION : dev < -STABLE_MAX_DEVIATION ? -STABLE_MAX_DEVIATION : dev);
        }
        return Math.exp(this.logP0[w] + dev);
    }
    add(stable, logP0, sigma, theta, startTime, key) {
        const w = this.rngs.add(this.scratch, ...key);
        this.stable.push(stable);
        this.logP0.push(logP0);
        this.sigma.push(sigma);
        this.theta.push(theta);
        this.lastT.push(startTime);
        this.deviation.push(0);
        return w;
    }
}
//# sourceMappingURL=prices.js.map