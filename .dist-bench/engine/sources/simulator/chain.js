/**
 * One simulated network: what happens in its pools and when, turned into its event stream.
 *
 * Invariants:
 * - Pool events are taken from the schedule in (time, pool) order and new pools are created in
 *   time order, so blocks, tx indices and log indices only grow.
 * - A pool's randomness comes from its own stream and is consumed in the pool's event order;
 *   which pool acts next depends only on the schedule. advance() stops at a block boundary, so
 *   the output does not depend on how time is cut into calls.
 * - Every reserve change is emitted: constant-product pools as a Sync (new reserves) right
 *   before the Swap/Mint/Burn of the same tx; concentrated pools as signed swap amounts and
 *   mint/burn amounts.
 */
import { PoolProtocol } from '../../events/model.js';
import { PPM_NUMBER, arbitrageInput, floorToBigInt } from './amm.js';
import { networkLaunchTime } from './catalog.js';
import { BlockClock } from './clock.js';
import { randomAddress } from './encoding.js';
import { PoolBook, MIN_RESERVE } from './pools.js';
import { SECONDS_PER_DAY } from './prices.js';
import { Rng, RngBank, hash2, hashString } from './prng.js';
import { Schedule } from './schedule.js';
import { ChainTokens } from './tokens.js';
import { GENESIS_POOL_HISTORY_SECONDS, planGenesisPools, planNewPool } from './universe.js';
import { EventWriter } from './writer.js';
/** Share of a pool's events that add or remove liquidity instead of swapping. */
const LIQUIDITY_EVENT_SHARE = 0.03;
/** A pool's noise swap rate is proportional to liquidityUsd^RATE_LIQUIDITY_EXPONENT. */
const RATE_LIQUIDITY_EXPONENT = 0.6;
/** Informed flow: buy probability 0.5 + MAX_BIAS * tanh(log deviation from fair / SCALE). */
const INFORMED_FLOW_MAX_BIAS = 0.4;
const INFORMED_FLOW_DEVIATION_SCALE = 0.02;
/** Noise swap size: log-normal fraction of half the pool's value. */
const NOISE_FRACTION_SIGMA = 1.0;
const NOISE_MAX_FRACTION = 0.25;
const NOISE_MAX_MEDIAN_FRACTION = 0.02;
/** Noise volume per day, as a multiple of liquidity, that busy pools aim for. */
const TARGET_DAILY_TURNOVER = 0.25;
const LIQUIDITY_CHANGE_MIN_FRACTION = 0.01;
const LIQUIDITY_CHANGE_MAX_FRACTION = 0.06;
/** Mint probability when liquidity is below / above its initial level (pulls it back). */
const MINT_PROBABILITY_BELOW = 0.65;
const MINT_PROBABILITY_ABOVE = 0.35;
/** Pre-genesis pools are created at least this long before genesis and after the network's launch. */
const GENESIS_CREATION_MARGIN_SECONDS = 60;
const LAUNCH_MARGIN_SECONDS = 86_400;
const SECONDS_PER_HOUR = 3600;
const TRADER_COUNT = 4096;
const ARBITRAGE_BOT_COUNT = 16;
/** Stream tags: distinct keys for the independent random streams of a network. */
const TAG_POOL = 1;
const TAG_POOL_ADDRESS = 2;
const TAG_FACTORY = 5;
const TAG_ROUTER = 6;
const TAG_ACTORS = 7;
const TAG_GENESIS_PLAN = 8;
const TAG_LIVE_PLAN = 9;
/** New pools per second on one network, given the total per hour over all networks. */
export function newPoolsPerSecond(perHourTotal, weight, totalWeight) {
    return (perHourTotal * weight) / totalWeight / SECONDS_PER_HOUR;
}
export class ChainSim {
    spec;
    info;
    seed;
    chainHash;
    format;
    genesis;
    clock;
    /** Start of the first block stamped after genesis: swap history begins here. */
    historyStart;
    tokens;
    pools = new PoolBook();
    writer;
    /** One stream per pool, parked here between the pool's events. */
    poolRngs = new RngBank();
    rng = new Rng(0);
    routers;
    traders = [];
    arbitrageBots = [];
    /** (pair, DEX, fee tier) of every pool, to keep new venues distinct. */
    venues = new Set();
    schedule = new Schedule();
    /** Noise swap rate and median size (fraction of half the pool's value) per pool. */
    poolRate = [];
    poolNoiseMedian = [];
    /** Product of the liquidity changes since creation (mints > 1, burns < 1). */
    poolLiquidityScale = [];
    genesisPools = [];
    genesisEmitted = false;
    rateScale = 0;
    livePlanRng;
    liveCreationRate;
    nextCreationTime = Infinity;
    /** Fair USD value of one raw unit of the current pool's tokens. */
    fairUnit0 = 0;
    fairUnit1 = 0;
    constructor(spec, ctx, genesisPoolCount, newPoolsPerSecond) {
        this.spec = spec;
        this.seed = ctx.seed >>> 0;
        this.chainHash = hashString(spec.id);
        this.format = spec.addressFormat;
        this.genesis = ctx.genesisTime;
        this.clock = new BlockClock(spec);
        this.historyStart = this.clock.blockStart(this.clock.firstBlockAfter(ctx.genesisTime));
        this.writer = new EventWriter(this.clock, this.format, hash2(this.seed, this.chainHash));
        // Contract addresses depend on the network only (not the seed), like real deployments.
        const dexes = spec.dexes.map((d, i) => {
            this.rng.reseed(this.chainHash, i, TAG_FACTORY);
            return { id: d.id, name: d.name, protocol: d.protocol, poolProtocol: d.poolProtocol, factory: randomAddress(this.rng, this.format) };
        });
        this.routers = spec.dexes.map((_, i) => {
            this.rng.reseed(this.chainHash, i, TAG_ROUTER);
            return randomAddress(this.rng, this.format);
        });
        this.info = { id: spec.id, displayName: spec.displayName, blockTimeSeconds: spec.blockTimeMs / 1000, dexes };
        this.rng.reseed(this.seed, this.chainHash, TAG_ACTORS);
        for (let i = 0; i < TRADER_COUNT; i++)
            this.traders.push(randomAddress(this.rng, this.format));
        for (let i = 0; i < ARBITRAGE_BOT_COUNT; i++)
            this.arbitrageBots.push(randomAddress(this.rng, this.format));
        this.tokens = new ChainTokens(spec, { seed: this.seed, chainHash: this.chainHash, genesisTime: ctx.genesisTime, shared: ctx.shared });
        const latest = ctx.genesisTime - GENESIS_CREATION_MARGIN_SECONDS;
        const earliest = Math.min(latest, Math.max(ctx.genesisTime - GENESIS_POOL_HISTORY_SECONDS, networkLaunchTime(spec) + LAUNCH_MARGIN_SECONDS));
        planGenesisPools(this, new Rng(this.seed, this.chainHash, TAG_GENESIS_PLAN), genesisPoolCount, earliest, latest);
        const createdAt = this.pools.createdAt;
        this.genesisPools = Array.from({ length: this.pools.size }, (_, i) => i).sort((a, b) => createdAt[a] - createdAt[b] || a - b);
        this.livePlanRng = new Rng(this.seed, this.chainHash, TAG_LIVE_PLAN);
        this.liveCreationRate = newPoolsPerSecond;
    }
    get stablecoinAddresses() {
        return this.tokens.stables.map((t) => this.tokens.infos[t].address);
    }
    get wrappedNativeAddress() {
        return this.tokens.infos[this.tokens.native].address;
    }
    /** Sum over the pools so far of liquidityUsd^RATE_LIQUIDITY_EXPONENT, for rate normalisation. */
    rateWeight() {
        let sum = 0;
        for (const l of this.pools.liquidityUsd)
            sum += l ** RATE_LIQUIDITY_EXPONENT;
        return sum;
    }
    /**
     * Starts the schedule: each pool's noise swap rate is rateScale * liquidityUsd^0.6, the same
     * scale on every network, so that the rates sum to the configured total.
     */
    start(rateScale) {
        this.rateScale = rateScale;
        for (let p = 0; p < this.pools.size; p++)
            this.activatePool(p, this.historyStart);
        if (this.liveCreationRate > 0)
            this.nextCreationTime = this.historyStart + this.livePlanRng.nextExp() / this.liveCreationRate;
    }
    /** This network's events in blocks stamped at or before `until` that were not produced before. */
    advance(until) {
        const clock = this.clock;
        const cutoff = clock.lastBlockAtOrBefore(until);
        if (!this.genesisEmitted) {
            this.genesisEmitted = true;
            for (const p of this.genesisPools)
                this.emitCreation(p, clock.blockAt(this.pools.createdAt[p]));
            this.genesisPools = [];
        }
        const schedule = this.schedule;
        for (;;) {
            const tPool = schedule.peekTime();
            const tNew = this.nextCreationTime;
            if (tNew <= tPool) {
                if (tNew === Infinity)
                    break;
                const block = clock.blockAt(tNew);
                if (block > cutoff)
                    break;
                this.createLivePool(tNew, block);
                continue;
            }
            const block = clock.blockAt(tPool);
            if (block > cutoff)
                break;
            this.processPool(schedule.peekId(), tPool, block);
        }
        return this.writer.take();
    }
    // ---------------------------------------------------------------- UniverseBuilder
    get nativeToken() {
        return this.tokens.native;
    }
    get stableTokens() {
        return this.tokens.stables;
    }
    get majorTokens() {
        return this.tokens.majors;
    }
    get longTailTokens() {
        return this.tokens.longTail;
    }
    addLongTailToken(rng, startTime, liquidityUsd) {
        return this.tokens.addLongTail(rng, startTime, liquidityUsd);
    }
    hasPool(plan) {
        return this.venues.has(this.venueKey(plan));
    }
    /** Adds a pool holding half of plan.liquidityUsd on each side at the fair prices (of genesis, for older pools). */
    addPool(plan) {
        const tokens = this.tokens;
        const p = this.pools.size;
        const aFirst = tokens.infos[plan.tokenA].address < tokens.infos[plan.tokenB].address;
        const t0 = aFirst ? plan.tokenA : plan.tokenB;
        const t1 = aFirst ? plan.tokenB : plan.tokenA;
        this.poolRngs.add(this.rng, this.seed, this.chainHash, p, TAG_POOL);
        this.rng.reseed(this.seed, this.chainHash, p, TAG_POOL_ADDRESS);
        const address = randomAddress(this.rng, this.format);
        const t = Math.max(plan.createdAt, this.genesis);
        const half = plan.liquidityUsd / 2;
        const r0 = floorToBigInt(half / (tokens.priceUsd(t0, t) * tokens.unit[t0]));
        const r1 = floorToBigInt(half / (tokens.priceUsd(t1, t) * tokens.unit[t1]));
        this.pools.add({
            address,
            token0: t0,
            token1: t1,
            dex: plan.dex,
            feePpm: plan.feePpm,
            concentrated: this.spec.dexes[plan.dex].poolProtocol === PoolProtocol.Concentrated,
            amplification: plan.amplification,
            createdAt: plan.createdAt,
            liquidityUsd: plan.liquidityUsd,
            reserve0: r0 < MIN_RESERVE ? MIN_RESERVE : r0,
            reserve1: r1 < MIN_RESERVE ? MIN_RESERVE : r1,
        });
        this.venues.add(this.venueKey(plan));
        tokens.poolCount[t0]++;
        tokens.poolCount[t1]++;
        this.poolRate.push(0);
        this.poolNoiseMedian.push(0);
        this.poolLiquidityScale.push(1);
        return p;
    }
    /** Packs (token pair, DEX, fee tier) into one number: tokens < 2^22, DEX < 8, tier < 4 per DEX. */
    venueKey(plan) {
        const lo = Math.min(plan.tokenA, plan.tokenB);
        const hi = Math.max(plan.tokenA, plan.tokenB);
        const tier = this.spec.dexes[plan.dex].feeTiersPpm.indexOf(plan.feePpm);
        return ((lo * 4_194_304 + hi) * 8 + plan.dex) * 4 + tier;
    }
    // ---------------------------------------------------------------- behaviour
    activatePool(p, from) {
        const noiseRate = this.rateScale * this.pools.liquidityUsd[p] ** RATE_LIQUIDITY_EXPONENT;
        this.poolRate[p] = noiseRate / (1 - LIQUIDITY_EVENT_SHARE);
        const meanFraction = (2 * TARGET_DAILY_TURNOVER) / (noiseRate * SECONDS_PER_DAY);
        const median = meanFraction / Math.exp((NOISE_FRACTION_SIGMA * NOISE_FRACTION_SIGMA) / 2);
        this.poolNoiseMedian[p] = Math.min(NOISE_MAX_MEDIAN_FRACTION, median);
        const rng = this.rng;
        this.poolRngs.load(rng, p);
        const first = from + rng.nextExp() / this.poolRate[p];
        this.poolRngs.store(rng, p);
        this.schedule.push(first, p);
    }
    createLivePool(t, block) {
        const p = this.addPool(planNewPool(this, this.livePlanRng, t));
        this.emitCreation(p, block);
        this.activatePool(p, t);
        this.nextCreationTime = t + this.livePlanRng.nextExp() / this.liveCreationRate;
    }
    /** One scheduled pool event at instant t in `block`: a liquidity change, or a noise swap plus its arbitrage. */
    processPool(p, t, block) {
        const rng = this.rng;
        const pools = this.pools;
        this.poolRngs.load(rng, p);
        this.writer.moveTo(block);
        if (rng.nextFloat() < LIQUIDITY_EVENT_SHARE) {
            this.changeLiquidity(p);
        }
        else {
            const tokens = this.tokens;
            const t0 = pools.token0[p];
            const t1 = pools.token1[p];
            this.fairUnit0 = tokens.priceUsd(t0, t) * tokens.unit[t0];
            this.fairUnit1 = tokens.priceUsd(t1, t) * tokens.unit[t1];
            this.noiseSwap(p);
            // A single-venue token's pool price follows its informed flow alone.
            if (tokens.isArbitraged(t0) && tokens.isArbitraged(t1))
                this.arbitrage(p);
        }
        if (pools.concentrated[p] && pools.planRecentre(p))
            this.recentre(p);
        const next = t + rng.nextExp() / this.poolRate[p];
        this.poolRngs.store(rng, p);
        this.schedule.replaceTop(next, p);
    }
    /**
     * A retail swap. Its direction leans towards the fair price (informed flow), which is how
     * single-venue tokens track their fair value; its size is a log-normal fraction of half the
     * pool's value.
     */
    noiseSwap(p) {
        const rng = this.rng;
        const pools = this.pools;
        const deviation = Math.log((this.fairUnit0 * pools.curve0(p)) / (this.fairUnit1 * pools.curve1(p)));
        const buyProbability = 0.5 + INFORMED_FLOW_MAX_BIAS * Math.tanh(deviation / INFORMED_FLOW_DEVIATION_SCALE);
        // Buying token0 (deviation > 0: token0 is cheap in the pool) means paying token1 in.
        const zeroForOne = rng.nextFloat() >= buyProbability;
        let fraction = this.poolNoiseMedian[p] * Math.exp(NOISE_FRACTION_SIGMA * rng.nextGaussian());
        if (fraction > NOISE_MAX_FRACTION)
            fraction = NOISE_MAX_FRACTION;
        const trader = this.traders[rng.nextInt(TRADER_COUNT)];
        const sender = this.format === 'evm' ? this.routers[pools.dex[p]] : trader;
        if (!pools.concentrated[p]) {
            const reserveIn = zeroForOne ? pools.reserve0f[p] : pools.reserve1f[p];
            if (pools.swapConstantProduct(p, zeroForOne, floorToBigInt(fraction * reserveIn)))
                this.emitSwap(p, sender, trader);
            return;
        }
        const x = pools.reserve0f[p];
        const y = pools.reserve1f[p];
        const price = pools.price(p);
        const halfValueIn = zeroForOne ? (x + y / price) / 2 : (y + x * price) / 2;
        if (pools.swapConcentrated(p, zeroForOne, fraction * halfValueIn))
            this.emitSwap(p, sender, trader);
    }
    /**
     * Moves the pool to the fair price ratio of its tokens when the deviation exceeds the fee and
     * the profit pays for the transaction: this keeps pools of one pair consistent with each other.
     */
    arbitrage(p) {
        const pools = this.pools;
        const unit0 = this.fairUnit0;
        const unit1 = this.fairUnit1;
        const target = unit0 / unit1;
        const x = pools.curve0(p);
        const y = pools.curve1(p);
        const feeFraction = pools.feePpm[p] / PPM_NUMBER;
        const excess = Math.abs(Math.log((target * x) / y)) - feeFraction;
        if (!(excess > 0))
            return;
        // Closing a small gap d on x*y=k earns about depth * d^2 / 8.
        const depthUsd = x * unit0 + y * unit1;
        if ((depthUsd * excess * excess) / 8 < this.spec.arbitrageGasUsd)
            return;
        const input = arbitrageInput(x, y, target, feeFraction);
        const bot = this.arbitrageBots[this.rng.nextInt(ARBITRAGE_BOT_COUNT)];
        const zeroForOne = input < 0;
        const amount = zeroForOne ? -input : input;
        const swapped = pools.concentrated[p] ? pools.swapConcentrated(p, zeroForOne, amount) : pools.swapConstantProduct(p, zeroForOne, floorToBigInt(amount));
        if (swapped)
            this.emitSwap(p, bot, bot);
    }
    /** Adds or removes a few per cent of the pool's liquidity, leaning back towards its initial level. */
    changeLiquidity(p) {
        const rng = this.rng;
        const scale = this.poolLiquidityScale[p];
        const mint = rng.nextFloat() < (scale < 1 ? MINT_PROBABILITY_BELOW : MINT_PROBABILITY_ABOVE);
        const fraction = rng.nextRange(LIQUIDITY_CHANGE_MIN_FRACTION, LIQUIDITY_CHANGE_MAX_FRACTION);
        const owner = this.traders[rng.nextInt(TRADER_COUNT)];
        if (!this.pools.changeLiquidity(p, mint, BigInt(Math.round(fraction * PPM_NUMBER))))
            return;
        this.emitLiquidity(p, mint ? 'mint' : 'burn', owner);
        this.poolLiquidityScale[p] = scale * (mint ? 1 + fraction : 1 - fraction);
    }
    /**
     * An LP whose concentrated position drifted (almost) out of range withdraws all of it and
     * deposits the same value centred on the current price, so the pool keeps trading both ways.
     */
    recentre(p) {
        const pools = this.pools;
        const owner = this.traders[this.rng.nextInt(TRADER_COUNT)];
        pools.amount0 = pools.reserve0[p];
        pools.amount1 = pools.reserve1[p];
        pools.liquidityDelta = pools.liquidity[p];
        this.emitLiquidity(p, 'burn', owner);
        pools.applyRecentre(p);
        this.emitLiquidity(p, 'mint', owner);
    }
    // ---------------------------------------------------------------- events
    /** PoolCreated (factory tx), then the initial deposit in the next tx. */
    emitCreation(p, block) {
        const w = this.writer;
        const pools = this.pools;
        const dex = this.info.dexes[pools.dex[p]];
        w.moveTo(block);
        const tx = w.beginTx();
        w.write({
            kind: 'pool_created',
            key: w.key(tx),
            timestamp: w.timestamp,
            pool: pools.address[p],
            dexId: dex.id,
            factory: dex.factory,
            protocol: dex.poolProtocol,
            feePpm: pools.feePpm[p],
            token0: this.tokens.infos[pools.token0[p]],
            token1: this.tokens.infos[pools.token1[p]],
        });
        pools.amount0 = pools.reserve0[p];
        pools.amount1 = pools.reserve1[p];
        pools.liquidityDelta = pools.initialMintLiquidity(p);
        this.emitLiquidity(p, 'mint', this.traders[hash2(this.chainHash, p) % TRADER_COUNT]);
    }
    /** The last swap of pool p (amounts from the pool book), preceded by a Sync for constant-product pools. */
    emitSwap(p, sender, recipient) {
        const w = this.writer;
        const pools = this.pools;
        const tx = w.beginTx();
        const txHash = w.txHash(tx);
        const pool = pools.address[p];
        const concentrated = pools.concentrated[p];
        if (!concentrated) {
            w.write({ kind: 'sync', key: w.key(tx), timestamp: w.timestamp, pool, reserve0: pools.reserve0[p], reserve1: pools.reserve1[p] });
        }
        w.write({
            kind: 'swap',
            key: w.key(tx),
            timestamp: w.timestamp,
            pool,
            amount0: pools.amount0,
            amount1: pools.amount1,
            sqrtPriceX96: concentrated ? pools.sqrtPriceX96(p) : 0n,
            liquidity: pools.liquidity[p],
            tick: concentrated ? pools.tick(p) : 0,
            txHash,
            sender,
            recipient,
        });
    }
    /** A Mint or Burn of the amounts in the pool book, preceded by a Sync for constant-product pools. */
    emitLiquidity(p, kind, owner) {
        const w = this.writer;
        const pools = this.pools;
        const tx = w.beginTx();
        const pool = pools.address[p];
        if (!pools.concentrated[p]) {
            w.write({ kind: 'sync', key: w.key(tx), timestamp: w.timestamp, pool, reserve0: pools.reserve0[p], reserve1: pools.reserve1[p] });
        }
        w.write({
            kind,
            key: w.key(tx),
            timestamp: w.timestamp,
            pool,
            amount0: pools.amount0,
            amount1: pools.amount1,
            liquidity: pools.liquidityDelta,
            tickLower: pools.tickLower[p],
            tickUpper: pools.tickUpper[p],
            owner,
            txHash: w.txHash(tx),
        });
    }
}
//# sourceMappingURL=chain.js.map