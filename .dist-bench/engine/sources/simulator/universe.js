/**
 * Which pools a network has: the core pairs (wrapped native, stables and majors, each on several
 * DEXes), a heavy-tailed long tail of generated tokens, and the pools that keep being created
 * after genesis. Liquidity is log-normal in USD: a few core pools hold $10M-$300M, most long-tail
 * pools less than $50k.
 */
import { PoolProtocol } from '../../events/model.js';
export const SECONDS_PER_YEAR = 365 * 86_400;
/** Pools that exist at genesis were created during this span before it. */
export const GENESIS_POOL_HISTORY_SECONDS = 2 * SECONDS_PER_YEAR;
const CORE_LIQUIDITY_SIGMA = 0.8;
const LONG_TAIL_MEDIAN_LIQUIDITY_USD = 12_000;
const LONG_TAIL_LIQUIDITY_SIGMA = 1.7;
const NEW_POOL_MEDIAN_LIQUIDITY_USD = 6_000;
const NEW_POOL_LIQUIDITY_SIGMA = 1.4;
const MIN_POOL_LIQUIDITY_USD = 300;
const MAX_POOL_LIQUIDITY_USD = 300_000_000;
/** Probability that a non-stable core pair also has a pool in the DEX's next fee tier. */
const SECONDARY_TIER_PROBABILITY = 0.5;
/** Secondary fee tiers of a core pair hold this share of the main tier's liquidity. */
const SECONDARY_TIER_LIQUIDITY_SHARE = 0.3;
/** Probability that a core pair is also listed on a DEX beyond the top constant-product and concentrated ones. */
const CORE_EXTRA_DEX_PROBABILITY = 0.6;
/** Most long-tail tokens trade on one pool only; the others on two or three DEXes. */
const SINGLE_VENUE_PROBABILITY = 0.8;
/** Share of long-tail tokens quoted in both the wrapped native token and the primary stable. */
const SECOND_QUOTE_PROBABILITY = 0.08;
/** Amplification (virtual / real reserves) of concentrated pools, by pair kind. */
const STABLE_PAIR_AMPLIFICATION = [15, 20];
const CORE_PAIR_AMPLIFICATION = [4, 10];
const LONG_TAIL_AMPLIFICATION = [3, 8];
/**
 * Core pairs with the median USD liquidity of their main pool on the network's top DEX (before
 * the network's liquidityScale): native/stable pairs deepest, then stable/stable, then majors.
 */
function corePairs(b) {
    const n = b.nativeToken;
    const s = b.stableTokens;
    const pairs = [];
    const add = (x, y, medianUsd, stable = false) => {
        if (x !== undefined && y !== undefined)
            pairs.push({ a: x, b: y, medianUsd, stable });
    };
    add(n, s[0], 80e6);
    add(s[0], s[1], 12e6, true);
    add(n, s[1], 10e6);
    add(s[0], s[2], 4e6, true);
    add(n, s[2], 2e6);
    add(s[1], s[2], 1.5e6, true);
    b.majorTokens.forEach((m, j) => {
        add(m, n, 8e6 / (1 + 0.6 * j));
        add(m, s[0], 3e6 / (1 + 0.6 * j));
        if (j < 2)
            add(m, s[1], 1e6 / (1 + j));
    });
    // Stable sort: the most important pairs first, so a small pool budget keeps them.
    return pairs.sort((x, y) => y.medianUsd - x.medianUsd);
}
function topDex(dexes, protocol) {
    let best = -1;
    dexes.forEach((d, i) => {
        if (d.poolProtocol === protocol && (best < 0 || d.weight > dexes[best].weight))
            best = i;
    });
    return best;
}
function range(rng, bounds) {
    return rng.nextRange(bounds[0], bounds[1]);
}
function clampLiquidity(usd) {
    return Math.min(MAX_POOL_LIQUIDITY_USD, Math.max(MIN_POOL_LIQUIDITY_USD, usd));
}
/** Fee tier of a long-tail pool: mostly the 0.3 % / 1 % tiers. */
function longTailFee(rng, dex) {
    const tiers = dex.feeTiersPpm;
    if (tiers.length === 1)
        return tiers[0];
    const r = rng.nextFloat();
    if (r < 0.35)
        return tiers[tiers.length - 1];
    if (r < 0.9)
        return tiers[tiers.length - 2];
    return tiers[Math.min(1, tiers.length - 1)];
}
function weightedDex(rng, dexes, exclude) {
    const weights = dexes.map((d, i) => (exclude.has(i) ? 0 : d.weight));
    return rng.nextWeighted(weights);
}
/**
 * Adds `count` pools that exist at genesis, created between `earliest` and `latest`. Core
 * pools come first (and are older); the long tail fills the rest.
 */
export function planGenesisPools(b, rng, count, earliest, latest) {
    const dexes = b.spec.dexes;
    const scale = b.spec.liquidityScale;
    const maxWeight = Math.max(...dexes.map((d) => d.weight));
    const topCp = topDex(dexes, PoolProtocol.ConstantProduct);
    const topCl = topDex(dexes, PoolProtocol.Concentrated);
    const span = Math.max(0, latest - earliest);
    const coreTime = () => earliest + span * 0.6 * rng.nextFloat();
    const tailTime = () => earliest + span * rng.nextFloat();
    let added = 0;
    for (const pair of corePairs(b)) {
        for (let d = 0; d < dexes.length && added < count; d++) {
            const dex = dexes[d];
            if (d !== topCp && d !== topCl && rng.nextFloat() >= CORE_EXTRA_DEX_PROBABILITY)
                continue;
            const base = pair.medianUsd * scale * (dex.weight / maxWeight);
            const concentrated = dex.poolProtocol === PoolProtocol.Concentrated;
            const tiers = dex.feeTiersPpm;
            const mainFee = !concentrated ? tiers[0] : pair.stable ? tiers[0] : tiers[Math.min(1, tiers.length - 1)];
            const amplification = () => (!concentrated ? 1 : range(rng, pair.stable ? STABLE_PAIR_AMPLIFICATION : CORE_PAIR_AMPLIFICATION));
            b.addPool({
                tokenA: pair.a,
                tokenB: pair.b,
                dex: d,
                feePpm: mainFee,
                liquidityUsd: clampLiquidity(rng.nextLogNormal(base, CORE_LIQUIDITY_SIGMA)),
                amplification: amplification(),
                createdAt: coreTime(),
            });
            added++;
            if (concentrated && !pair.stable && tiers.length > 2 && added < count && rng.nextFloat() < SECONDARY_TIER_PROBABILITY) {
                b.addPool({
                    tokenA: pair.a,
                    tokenB: pair.b,
                    dex: d,
                    feePpm: tiers[2],
                    liquidityUsd: clampLiquidity(rng.nextLogNormal(base * SECONDARY_TIER_LIQUIDITY_SHARE, CORE_LIQUIDITY_SIGMA)),
                    amplification: amplification(),
                    createdAt: coreTime(),
                });
                added++;
            }
        }
        if (added >= count)
            return;
    }
    const primaryStable = b.stableTokens[0];
    while (added < count) {
        const liquidity = clampLiquidity(rng.nextLogNormal(LONG_TAIL_MEDIAN_LIQUIDITY_USD, LONG_TAIL_LIQUIDITY_SIGMA));
        const createdAt = tailTime();
        const earlierTail = b.longTailTokens.length;
        const token = b.addLongTailToken(rng, latest, liquidity);
        // Quote: 55 % wrapped native, 30 % primary stable, 5 % second stable, 5 % a major, 5 % an older long-tail token.
        const r = rng.nextFloat();
        let quote;
        if (r < 0.55)
            quote = b.nativeToken;
        else if (r < 0.85)
            quote = primaryStable;
        else if (r < 0.9)
            quote = b.stableTokens[1] ?? primaryStable;
        else if (r < 0.95 && b.majorTokens.length > 0)
            quote = b.majorTokens[rng.nextInt(b.majorTokens.length)];
        else
            quote = earlierTail > 0 ? b.longTailTokens[rng.nextInt(earlierTail)] : b.nativeToken;
        const venues = Math.min(dexes.length, rng.nextFloat() < SINGLE_VENUE_PROBABILITY ? 1 : rng.nextFloat() < 0.7 ? 2 : 3);
        const used = new Set();
        for (let v = 0; v < venues && added < count; v++) {
            const d = weightedDex(rng, dexes, used);
            used.add(d);
            const dex = dexes[d];
            b.addPool({
                tokenA: token,
                tokenB: quote,
                dex: d,
                feePpm: longTailFee(rng, dex),
                liquidityUsd: clampLiquidity(v === 0 ? liquidity : liquidity * rng.nextRange(0.05, 0.5)),
                amplification: dex.poolProtocol === PoolProtocol.Concentrated ? range(rng, LONG_TAIL_AMPLIFICATION) : 1,
                createdAt: v === 0 ? createdAt : createdAt + (latest - createdAt) * rng.nextFloat(),
            });
            added++;
        }
        // Some tokens are quoted in both the native token and the primary stable.
        if (added < count && (quote === b.nativeToken || quote === primaryStable) && rng.nextFloat() < SECOND_QUOTE_PROBABILITY) {
            const d = weightedDex(rng, dexes, new Set());
            const dex = dexes[d];
            b.addPool({
                tokenA: token,
                tokenB: quote === b.nativeToken ? primaryStable : b.nativeToken,
                dex: d,
                feePpm: longTailFee(rng, dex),
                liquidityUsd: clampLiquidity(liquidity * rng.nextRange(0.05, 0.4)),
                amplification: dex.poolProtocol === PoolProtocol.Concentrated ? range(rng, LONG_TAIL_AMPLIFICATION) : 1,
                createdAt: createdAt + (latest - createdAt) * rng.nextFloat(),
            });
            added++;
        }
    }
}
/** Share of post-genesis pools that list an existing token on a new venue (the rest launch a token). */
const NEW_VENUE_PROBABILITY = 0.2;
/** Attempts to find an unused venue for an existing token before launching a new one instead. */
const NEW_VENUE_ATTEMPTS = 3;
/** Post-genesis pools quote the wrapped native token with this probability, else the primary stable. */
const NEW_POOL_NATIVE_QUOTE_PROBABILITY = 0.6;
/** A pool created at `t` after genesis: mostly a newly launched token, sometimes a new venue for an old one. */
export function planNewPool(b, rng, t) {
    const dexes = b.spec.dexes;
    const primaryStable = b.stableTokens[0];
    const liquidity = clampLiquidity(rng.nextLogNormal(NEW_POOL_MEDIAN_LIQUIDITY_USD, NEW_POOL_LIQUIDITY_SIGMA));
    const plan = (token) => {
        const d = weightedDex(rng, dexes, new Set());
        const dex = dexes[d];
        return {
            tokenA: token,
            tokenB: rng.nextFloat() < NEW_POOL_NATIVE_QUOTE_PROBABILITY ? b.nativeToken : primaryStable,
            dex: d,
            feePpm: longTailFee(rng, dex),
            liquidityUsd: liquidity,
            amplification: dex.poolProtocol === PoolProtocol.Concentrated ? range(rng, LONG_TAIL_AMPLIFICATION) : 1,
            createdAt: t,
        };
    };
    if (b.longTailTokens.length > 0 && rng.nextFloat() < NEW_VENUE_PROBABILITY) {
        for (let attempt = 0; attempt < NEW_VENUE_ATTEMPTS; attempt++) {
            const candidate = plan(b.longTailTokens[rng.nextInt(b.longTailTokens.length)]);
            if (!b.hasPool(candidate))
                return candidate;
        }
    }
    return plan(b.addLongTailToken(rng, t, liquidity));
}
//# sourceMappingURL=universe.js.map