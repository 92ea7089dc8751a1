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
 *   before the Swap/Mint/Burn of the same tx; concentrated pools as signed swap amounts, mint
 *   amounts, and for a burn, as on a v3 pool, the Burn (which moves no tokens) followed in the same
 *   tx by the Collect that pays its amounts out (a `reserve_delta`): reserves are the pool's balances.
 */
import { PoolProtocol, type ChainEvent, type DexInfo, type NetworkInfo, type TokenInfo } from '../../events/model.js';
import { PPM_NUMBER, arbitrageInput, floorToBigInt } from './amm.js';
import { networkLaunchTime, type NetworkSpec } from './catalog.js';
import { BlockClock } from './clock.js';
import { randomAddress, type AddressFormat } from './encoding.js';
import { LargeUniverse, LAUNCH_SECONDS, LAUNCH_WEIGHT, coreCreatedAt, coreWeight } from './large.js';
import { PoolBook, MIN_RESERVE, type NewPool } from './pools.js';
import { SECONDS_PER_DAY, type SharedPricePaths } from './prices.js';
import { Rng, RngBank, hash2, hashString } from './prng.js';
import { Schedule } from './schedule.js';
import { ChainTokens } from './tokens.js';
import { GENESIS_POOL_HISTORY_SECONDS, planCorePools, planGenesisPools, planNewPool, type PoolPlan, type UniverseBuilder } from './universe.js';
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
/** Large universe: pools that do not live pass through a throwaway pool book of at most this many. */
const SCRATCH_POOLS = 4096;
const ARBITRAGE_BOT_COUNT = 16;

/** Stream tags: distinct keys for the independent random streams of a network. */
const TAG_POOL = 1;
const TAG_POOL_ADDRESS = 2;
const TAG_FACTORY = 5;
const TAG_ROUTER = 6;
const TAG_ACTORS = 7;
const TAG_GENESIS_PLAN = 8;
const TAG_LIVE_PLAN = 9;

export interface ChainContext {
  readonly seed: number;
  readonly genesisTime: number;
  readonly shared: SharedPricePaths;
}

/** What a pool's reserves are made from: its token's address, fair USD price at creation and 10^-decimals. */
interface TokenAtCreation {
  readonly index: number;
  readonly info: TokenInfo;
  readonly priceUsd: number;
  readonly unit: number;
}

/** New pools per second on one network, given the total per hour over all networks. */
export function newPoolsPerSecond(perHourTotal: number, weight: number, totalWeight: number): number {
  return (perHourTotal * weight) / totalWeight / SECONDS_PER_HOUR;
}

export class ChainSim implements UniverseBuilder {
  readonly spec: NetworkSpec;
  readonly info: NetworkInfo;

  private readonly seed: number;
  private readonly chainHash: number;
  private readonly format: AddressFormat;
  private readonly genesis: number;
  private readonly clock: BlockClock;
  /** Start of the first block stamped after genesis: swap history begins here. */
  private readonly historyStart: number;
  private readonly tokens: ChainTokens;
  private readonly pools = new PoolBook();
  private readonly writer: EventWriter;
  /** One stream per pool, parked here between the pool's events. */
  private readonly poolRngs = new RngBank();
  private readonly rng = new Rng(0);
  private readonly routers: string[];
  private readonly traders: string[] = [];
  private readonly arbitrageBots: string[] = [];
  /** (pair, DEX, fee tier) of every pool, to keep new venues distinct. */
  private readonly venues = new Set<number>();

  private readonly schedule = new Schedule();
  /** Noise swap rate and median size (fraction of half the pool's value) per pool. */
  private readonly poolRate: number[] = [];
  private readonly poolNoiseMedian: number[] = [];
  /** Product of the liquidity changes since creation (mints > 1, burns < 1). */
  private readonly poolLiquidityScale: number[] = [];
  /** Activity weight: the noise swap rate is rateScale * weight (small universe: liquidityUsd^RATE_LIQUIDITY_EXPONENT). */
  private readonly poolWeight: number[] = [];
  /** Large universe, pools created after genesis: end of the launch (Infinity: none) and the weight after it (0: stops). */
  private readonly poolUntil: number[] = [];
  private readonly poolAfter: number[] = [];
  /** The large universe's genesis pools (null: the small universe, every pool in the pool book). */
  private readonly large: LargeUniverse | null = null;
  /** Large universe: pool book token index of each long-tail token key made into state. */
  private readonly tokenIndex = new Map<number, number>();
  /** Large universe: keys of the next pool and token created after genesis (beyond the genesis keys). */
  private nextPoolKey = 0;
  private nextTokenKey = 0;
  private genesisPools: number[] = [];
  private genesisEmitted = false;
  private rateScale = 0;
  private readonly livePlanRng: Rng;
  private readonly liveCreationRate: number;
  private nextCreationTime = Infinity;
  /** Fair USD value of one raw unit of the current pool's tokens. */
  private fairUnit0 = 0;
  private fairUnit1 = 0;

  /**
   * `large`: the large universe (large.ts): genesis pools are drawn when needed and only the living
   * ones become state; otherwise every pool is planned and kept (universe.ts).
   */
  constructor(spec: NetworkSpec, ctx: ChainContext, genesisPoolCount: number, newPoolsPerSecond: number, large = false) {
    this.spec = spec;
    this.seed = ctx.seed >>> 0;
    this.chainHash = hashString(spec.id);
    this.format = spec.addressFormat;
    this.genesis = ctx.genesisTime;
    this.clock = new BlockClock(spec);
    this.historyStart = this.clock.blockStart(this.clock.firstBlockAfter(ctx.genesisTime));
    this.writer = new EventWriter(this.clock, this.format, hash2(this.seed, this.chainHash));

    // Contract addresses depend on the network only (not the seed), like real deployments.
    const dexes: DexInfo[] = spec.dexes.map((d, i) => {
      this.rng.reseed(this.chainHash, i, TAG_FACTORY);
      return { id: d.id, name: d.name, protocol: d.protocol, poolProtocol: d.poolProtocol, factory: randomAddress(this.rng, this.format) };
    });
    this.routers = spec.dexes.map((_, i) => {
      this.rng.reseed(this.chainHash, i, TAG_ROUTER);
      return randomAddress(this.rng, this.format);
    });
    this.info = { id: spec.id, displayName: spec.displayName, blockTimeSeconds: spec.blockTimeMs / 1000, dexes };

    this.rng.reseed(this.seed, this.chainHash, TAG_ACTORS);
    for (let i = 0; i < TRADER_COUNT; i++) this.traders.push(randomAddress(this.rng, this.format));
    for (let i = 0; i < ARBITRAGE_BOT_COUNT; i++) this.arbitrageBots.push(randomAddress(this.rng, this.format));

    this.tokens = new ChainTokens(spec, { seed: this.seed, chainHash: this.chainHash, genesisTime: ctx.genesisTime, shared: ctx.shared });

    const latest = ctx.genesisTime - GENESIS_CREATION_MARGIN_SECONDS;
    const earliest = Math.min(latest, Math.max(ctx.genesisTime - GENESIS_POOL_HISTORY_SECONDS, networkLaunchTime(spec) + LAUNCH_MARGIN_SECONDS));
    if (large) {
      let core = 0;
      const coreTime = () => coreCreatedAt(core++, earliest, latest);
      const coreCount = planCorePools(this, new Rng(this.seed, this.chainHash, TAG_GENESIS_PLAN), genesisPoolCount, coreTime);
      for (let p = 0; p < coreCount; p++) this.poolWeight[p] = coreWeight(this.pools.liquidityUsd[p]!);
      const universe = new LargeUniverse(spec, this.seed, this.chainHash, genesisPoolCount, coreCount, this.tokens.firstLongTail, earliest, latest);
      this.large = universe;
      for (let u = coreCount; u < genesisPoolCount; u++) if (universe.livingWeight(u) > 0) this.addLargePool(u);
      this.nextPoolKey = genesisPoolCount;
      this.nextTokenKey = universe.firstToken + genesisPoolCount;
    } else {
      planGenesisPools(this, new Rng(this.seed, this.chainHash, TAG_GENESIS_PLAN), genesisPoolCount, earliest, latest);
      const createdAt = this.pools.createdAt;
      this.genesisPools = Array.from({ length: this.pools.size }, (_, i) => i).sort((a, b) => createdAt[a]! - createdAt[b]! || a - b);
    }

    this.livePlanRng = new Rng(this.seed, this.chainHash, TAG_LIVE_PLAN);
    this.liveCreationRate = newPoolsPerSecond;
  }

  get stablecoinAddresses(): string[] {
    return this.tokens.stables.map((t) => this.tokens.infos[t]!.address);
  }

  get wrappedNativeAddress(): string {
    return this.tokens.infos[this.tokens.native]!.address;
  }

  /** Pools in the pool book: all of them in the small universe, the living ones in the large. */
  get poolsInState(): number {
    return this.pools.size;
  }

  /** Large universe: genesis pools whose creation is still to be emitted (0 once all are, or in the small universe). */
  get creationsPending(): number {
    return this.large === null ? 0 : this.large.genesisPools - this.large.created;
  }

  /** Sum over the pools so far of their activity weights, for rate normalisation. */
  rateWeight(): number {
    let sum = 0;
    for (const w of this.poolWeight) sum += w;
    return sum;
  }

  /**
   * Starts the schedule: each pool's noise swap rate is rateScale * liquidityUsd^0.6, the same
   * scale on every network, so that the rates sum to the configured total.
   */
  start(rateScale: number): void {
    this.rateScale = rateScale;
    for (let p = 0; p < this.pools.size; p++) this.activatePool(p, this.historyStart);
    if (this.liveCreationRate > 0) this.nextCreationTime = this.historyStart + this.livePlanRng.nextExp() / this.liveCreationRate;
  }

  /** This network's events in blocks stamped at or before `until` that were not produced before. */
  advance(until: number): ChainEvent[] {
    const clock = this.clock;
    const cutoff = clock.lastBlockAtOrBefore(until);
    if (!this.genesisEmitted) {
      if (this.large !== null) this.emitLargeCreations(Infinity);
      this.genesisEmitted = true;
      for (const p of this.genesisPools) this.emitCreation(p, clock.blockAt(this.pools.createdAt[p]!));
      this.genesisPools = [];
    }
    const schedule = this.schedule;
    for (;;) {
      const tPool = schedule.peekTime();
      const tNew = this.nextCreationTime;
      if (tNew <= tPool) {
        if (tNew === Infinity) break;
        const block = clock.blockAt(tNew);
        if (block > cutoff) break;
        this.createLivePool(tNew, block);
        continue;
      }
      const block = clock.blockAt(tPool);
      if (block > cutoff) break;
      this.processPool(schedule.peekId(), tPool, block);
    }
    return this.writer.take();
  }

  // ---------------------------------------------------------------- UniverseBuilder

  get nativeToken(): number {
    return this.tokens.native;
  }

  get stableTokens(): readonly number[] {
    return this.tokens.stables;
  }

  get majorTokens(): readonly number[] {
    return this.tokens.majors;
  }

  get longTailTokens(): readonly number[] {
    return this.tokens.longTail;
  }

  addLongTailToken(rng: Rng, startTime: number, liquidityUsd: number): number {
    if (this.large === null) return this.tokens.addLongTail(rng, startTime, liquidityUsd);
    return this.tokens.addDescribed(this.tokens.describeLongTail(rng, liquidityUsd, this.nextTokenKey++), startTime);
  }

  hasPool(plan: PoolPlan): boolean {
    return this.venues.has(this.venueKey(plan));
  }

  /**
   * Adds a pool holding half of plan.liquidityUsd on each side at the fair prices (of genesis, for
   * older pools); `key` (unique on the network) makes its address.
   */
  addPool(plan: PoolPlan, key = this.pools.size): number {
    const tokens = this.tokens;
    const p = this.pools.size;
    const t = Math.max(plan.createdAt, this.genesis);
    const at = (index: number): TokenAtCreation => ({ index, info: tokens.infos[index]!, priceUsd: tokens.priceUsd(index, t), unit: tokens.unit[index]! });
    this.poolRngs.add(this.rng, this.seed, this.chainHash, p, TAG_POOL);
    const pool = this.newPool(plan, key, at(plan.tokenA), at(plan.tokenB));
    this.pools.add(pool);
    this.venues.add(this.venueKey(plan));
    tokens.poolCount[pool.token0]!++;
    tokens.poolCount[pool.token1]!++;
    this.poolRate.push(0);
    this.poolNoiseMedian.push(0);
    this.poolLiquidityScale.push(1);
    this.poolWeight.push(plan.liquidityUsd ** RATE_LIQUIDITY_EXPONENT);
    this.poolUntil.push(Infinity);
    this.poolAfter.push(0);
    return p;
  }

  /** The pool of `plan` (tokens ordered by address, reserves at their prices), its address made from `key`. */
  private newPool(plan: PoolPlan, key: number, a: TokenAtCreation, b: TokenAtCreation): NewPool {
    const [x, y] = a.info.address < b.info.address ? [a, b] : [b, a];
    this.rng.reseed(this.seed, this.chainHash, key, TAG_POOL_ADDRESS);
    const address = randomAddress(this.rng, this.format);
    const half = plan.liquidityUsd / 2;
    const r0 = floorToBigInt(half / (x.priceUsd * x.unit));
    const r1 = floorToBigInt(half / (y.priceUsd * y.unit));
    return {
      address,
      token0: x.index,
      token1: y.index,
      dex: plan.dex,
      feePpm: plan.feePpm,
      concentrated: this.spec.dexes[plan.dex]!.poolProtocol === PoolProtocol.Concentrated,
      amplification: plan.amplification,
      createdAt: plan.createdAt,
      liquidityUsd: plan.liquidityUsd,
      reserve0: r0 < MIN_RESERVE ? MIN_RESERVE : r0,
      reserve1: r1 < MIN_RESERVE ? MIN_RESERVE : r1,
    };
  }

  // ---------------------------------------------------------------- large universe

  /** The creations of up to `limit` more genesis pools of the large universe (see emitLargeCreations). */
  createGenesisPools(limit: number): ChainEvent[] {
    this.emitLargeCreations(limit);
    return this.writer.take();
  }

  /** Pool book index of a large-universe token key, making the token into state when it is not yet. */
  private tokenOfKey(key: number): number {
    const universe = this.large!;
    if (key < universe.firstToken) return key;
    let i = this.tokenIndex.get(key);
    if (i === undefined) {
      i = this.tokens.addDescribed(universe.token(key, this.tokens), this.genesis);
      this.tokenIndex.set(key, i);
    }
    return i;
  }

  /** Makes living long-tail pool u into state (in index order: see large.ts). */
  private addLargePool(u: number): void {
    const universe = this.large!;
    const pool = universe.pool(u, this.tokens);
    const p = this.addPool(universe.plan(pool, this.tokenOfKey(pool.token), this.tokenOfKey(pool.quote)), u);
    this.poolWeight[p] = pool.weight;
  }

  /** A token of a long-tail pool that is not in state, as it stands at genesis. */
  private tokenAtGenesis(key: number): TokenAtCreation {
    const universe = this.large!;
    if (key < universe.firstToken) return { index: key, info: this.tokens.infos[key]!, priceUsd: this.tokens.priceUsd(key, this.genesis), unit: this.tokens.unit[key]! };
    const token = universe.token(key, this.tokens);
    // As a price walk at its start gives it (prices.ts).
    return { index: -1, info: token.info, priceUsd: Math.exp(Math.log(token.priceUsd)), unit: token.unit };
  }

  /**
   * Emits the creation of up to `limit` more genesis pools of the large universe, in index (and
   * time) order; the pools that do not live go through a throwaway pool book.
   */
  private emitLargeCreations(limit: number): void {
    const universe = this.large!;
    const end = Math.min(universe.genesisPools, universe.created + Math.min(limit, universe.genesisPools));
    const clock = this.clock;
    let scratch = new PoolBook();
    for (let u = universe.created; u < end; u++) {
      if (u < universe.firstTail) {
        this.emitCreation(u, clock.blockAt(this.pools.createdAt[u]!));
        continue;
      }
      const pool = universe.pool(u, this.tokens);
      const block = clock.blockAt(pool.createdAt);
      if (pool.living) {
        const p = universe.firstTail + universe.livingCreated++;
        this.emitCreation(p, block, this.pools, this.tokens.infos[this.pools.token0[p]!]!, this.tokens.infos[this.pools.token1[p]!]!, u);
        continue;
      }
      const a = this.tokenAtGenesis(pool.token);
      const b = this.tokenAtGenesis(pool.quote);
      const created = this.newPool(universe.plan(pool, a.index, b.index), u, a, b);
      if (scratch.size >= SCRATCH_POOLS) scratch = new PoolBook();
      const s = scratch.add(created);
      const [info0, info1] = a.info.address < b.info.address ? [a.info, b.info] : [b.info, a.info];
      this.emitCreation(s, block, scratch, info0, info1, u);
    }
    universe.created = end;
    if (end === universe.genesisPools) this.genesisEmitted = true;
  }

  /** Packs (token pair, DEX, fee tier) into one number: tokens < 2^22, DEX < 8, tier < 4 per DEX. */
  private venueKey(plan: PoolPlan): number {
    const lo = Math.min(plan.tokenA, plan.tokenB);
    const hi = Math.max(plan.tokenA, plan.tokenB);
    const tier = this.spec.dexes[plan.dex]!.feeTiersPpm.indexOf(plan.feePpm);
    return ((lo * 4_194_304 + hi) * 8 + plan.dex) * 4 + tier;
  }

  // ---------------------------------------------------------------- behaviour

  /** Sets pool p's event rate and noise swap size from its activity weight. */
  private setRate(p: number, weight: number): void {
    this.poolWeight[p] = weight;
    const noiseRate = this.rateScale * weight;
    this.poolRate[p] = noiseRate / (1 - LIQUIDITY_EVENT_SHARE);
    const meanFraction = (2 * TARGET_DAILY_TURNOVER) / (noiseRate * SECONDS_PER_DAY);
    const median = meanFraction / Math.exp((NOISE_FRACTION_SIGMA * NOISE_FRACTION_SIGMA) / 2);
    this.poolNoiseMedian[p] = Math.min(NOISE_MAX_MEDIAN_FRACTION, median);
  }

  private activatePool(p: number, from: number): void {
    this.setRate(p, this.poolWeight[p]!);
    const rng = this.rng;
    this.poolRngs.load(rng, p);
    const first = from + rng.nextExp() / this.poolRate[p]!;
    this.poolRngs.store(rng, p);
    this.schedule.push(first, p);
  }

  private createLivePool(t: number, block: number): void {
    const large = this.large;
    const key = large === null ? this.pools.size : this.nextPoolKey++;
    const p = this.addPool(planNewPool(this, this.livePlanRng, t), key);
    if (large !== null) {
      // A launch, then the pool lives on (with its weight) or stops trading.
      this.poolWeight[p] = LAUNCH_WEIGHT;
      this.poolUntil[p] = t + LAUNCH_SECONDS;
      this.poolAfter[p] = large.livingWeight(key);
    }
    this.emitCreation(p, block);
    this.activatePool(p, t);
    this.nextCreationTime = t + this.livePlanRng.nextExp() / this.liveCreationRate;
  }

  /** One scheduled pool event at instant t in `block`: a liquidity change, or a noise swap plus its arbitrage. */
  private processPool(p: number, t: number, block: number): void {
    const rng = this.rng;
    const pools = this.pools;
    this.poolRngs.load(rng, p);
    this.writer.moveTo(block);
    if (rng.nextFloat() < LIQUIDITY_EVENT_SHARE) {
      this.changeLiquidity(p);
    } else {
      const tokens = this.tokens;
      const t0 = pools.token0[p]!;
      const t1 = pools.token1[p]!;
      this.fairUnit0 = tokens.priceUsd(t0, t) * tokens.unit[t0]!;
      this.fairUnit1 = tokens.priceUsd(t1, t) * tokens.unit[t1]!;
      this.noiseSwap(p);
      // A single-venue token's pool price follows its informed flow alone.
      if (tokens.isArbitraged(t0) && tokens.isArbitraged(t1)) this.arbitrage(p);
    }
    if (pools.concentrated[p] && pools.planRecentre(p)) this.recentre(p);
    let next = t + rng.nextExp() / this.poolRate[p]!;
    if (next > this.poolUntil[p]!) next = this.endLaunch(p);
    this.poolRngs.store(rng, p);
    if (next === Infinity) this.schedule.pop();
    else this.schedule.replaceTop(next, p);
  }

  /** Pool p's launch is over: it goes on at its living weight (the next event after the launch) or stops (Infinity). */
  private endLaunch(p: number): number {
    const until = this.poolUntil[p]!;
    const after = this.poolAfter[p]!;
    this.poolUntil[p] = Infinity;
    if (!(after > 0)) return Infinity;
    this.setRate(p, after);
    return until + this.rng.nextExp() / this.poolRate[p]!;
  }

  /**
   * A retail swap. Its direction leans towards the fair price (informed flow), which is how
   * single-venue tokens track their fair value; its size is a log-normal fraction of half the
   * pool's value.
   */
  private noiseSwap(p: number): void {
    const rng = this.rng;
    const pools = this.pools;
    const deviation = Math.log((this.fairUnit0 * pools.curve0(p)) / (this.fairUnit1 * pools.curve1(p)));
    const buyProbability = 0.5 + INFORMED_FLOW_MAX_BIAS * Math.tanh(deviation / INFORMED_FLOW_DEVIATION_SCALE);
    // Buying token0 (deviation > 0: token0 is cheap in the pool) means paying token1 in.
    const zeroForOne = rng.nextFloat() >= buyProbability;
    let fraction = this.poolNoiseMedian[p]! * Math.exp(NOISE_FRACTION_SIGMA * rng.nextGaussian());
    if (fraction > NOISE_MAX_FRACTION) fraction = NOISE_MAX_FRACTION;
    const trader = this.traders[rng.nextInt(TRADER_COUNT)]!;
    const sender = this.format === 'evm' ? this.routers[pools.dex[p]!]! : trader;
    if (!pools.concentrated[p]) {
      const reserveIn = zeroForOne ? pools.reserve0f[p]! : pools.reserve1f[p]!;
      if (pools.swapConstantProduct(p, zeroForOne, floorToBigInt(fraction * reserveIn))) this.emitSwap(p, sender, trader);
      return;
    }
    const x = pools.reserve0f[p]!;
    const y = pools.reserve1f[p]!;
    const price = pools.price(p);
    const halfValueIn = zeroForOne ? (x + y / price) / 2 : (y + x * price) / 2;
    if (pools.swapConcentrated(p, zeroForOne, fraction * halfValueIn)) this.emitSwap(p, sender, trader);
  }

  /**
   * Moves the pool to the fair price ratio of its tokens when the deviation exceeds the fee and
   * the profit pays for the transaction: this keeps pools of one pair consistent with each other.
   */
  private arbitrage(p: number): void {
    const pools = this.pools;
    const unit0 = this.fairUnit0;
    const unit1 = this.fairUnit1;
    const target = unit0 / unit1;
    const x = pools.curve0(p);
    const y = pools.curve1(p);
    const feeFraction = pools.feePpm[p]! / PPM_NUMBER;
    const excess = Math.abs(Math.log((target * x) / y)) - feeFraction;
    if (!(excess > 0)) return;
    // Closing a small gap d on x*y=k earns about depth * d^2 / 8.
    const depthUsd = x * unit0 + y * unit1;
    if ((depthUsd * excess * excess) / 8 < this.spec.arbitrageGasUsd) return;
    const input = arbitrageInput(x, y, target, feeFraction);
    const bot = this.arbitrageBots[this.rng.nextInt(ARBITRAGE_BOT_COUNT)]!;
    const zeroForOne = input < 0;
    const amount = zeroForOne ? -input : input;
    const swapped = pools.concentrated[p] ? pools.swapConcentrated(p, zeroForOne, amount) : pools.swapConstantProduct(p, zeroForOne, floorToBigInt(amount));
    if (swapped) this.emitSwap(p, bot, bot);
  }

  /** Adds or removes a few per cent of the pool's liquidity, leaning back towards its initial level. */
  private changeLiquidity(p: number): void {
    const rng = this.rng;
    const scale = this.poolLiquidityScale[p]!;
    const mint = rng.nextFloat() < (scale < 1 ? MINT_PROBABILITY_BELOW : MINT_PROBABILITY_ABOVE);
    const fraction = rng.nextRange(LIQUIDITY_CHANGE_MIN_FRACTION, LIQUIDITY_CHANGE_MAX_FRACTION);
    const owner = this.traders[rng.nextInt(TRADER_COUNT)]!;
    if (!this.pools.changeLiquidity(p, mint, BigInt(Math.round(fraction * PPM_NUMBER)))) return;
    this.emitLiquidity(p, mint ? 'mint' : 'burn', owner);
    this.poolLiquidityScale[p] = scale * (mint ? 1 + fraction : 1 - fraction);
  }

  /**
   * An LP whose concentrated position drifted (almost) out of range withdraws all of it and
   * deposits the same value centred on the current price, so the pool keeps trading both ways.
   */
  private recentre(p: number): void {
    const pools = this.pools;
    const owner = this.traders[this.rng.nextInt(TRADER_COUNT)]!;
    pools.amount0 = pools.reserve0[p]!;
    pools.amount1 = pools.reserve1[p]!;
    pools.liquidityDelta = pools.liquidity[p]!;
    this.emitLiquidity(p, 'burn', owner);
    pools.applyRecentre(p);
    this.emitLiquidity(p, 'mint', owner);
  }

  // ---------------------------------------------------------------- events

  /**
   * PoolCreated (factory tx), then the initial deposit in the next tx, of pool p of `pools` (this
   * network's pool book, or a throwaway one for large-universe pools that do not live).
   */
  private emitCreation(
    p: number,
    block: number,
    pools = this.pools,
    token0 = this.tokens.infos[pools.token0[p]!]!,
    token1 = this.tokens.infos[pools.token1[p]!]!,
    ownerKey = p,
  ): void {
    const w = this.writer;
    const dex = this.info.dexes[pools.dex[p]!]!;
    w.moveTo(block);
    const tx = w.beginTx();
    w.write({
      kind: 'pool_created',
      key: w.key(tx),
      timestamp: w.timestamp,
      pool: pools.address[p]!,
      dexId: dex.id,
      factory: dex.factory,
      protocol: dex.poolProtocol,
      feePpm: pools.feePpm[p]!,
      token0,
      token1,
    });
    pools.amount0 = pools.reserve0[p]!;
    pools.amount1 = pools.reserve1[p]!;
    pools.liquidityDelta = pools.initialMintLiquidity(p);
    this.emitLiquidity(p, 'mint', this.traders[hash2(this.chainHash, ownerKey) % TRADER_COUNT]!, pools);
  }

  /** The last swap of pool p (amounts from the pool book), preceded by a Sync for constant-product pools. */
  private emitSwap(p: number, sender: string, recipient: string): void {
    const w = this.writer;
    const pools = this.pools;
    const tx = w.beginTx();
    const txHash = w.txHash(tx);
    const pool = pools.address[p]!;
    const concentrated = pools.concentrated[p]!;
    if (!concentrated) {
      w.write({ kind: 'sync', key: w.key(tx), timestamp: w.timestamp, pool, reserve0: pools.reserve0[p]!, reserve1: pools.reserve1[p]! });
    }
    w.write({
      kind: 'swap',
      key: w.key(tx),
      timestamp: w.timestamp,
      pool,
      amount0: pools.amount0,
      amount1: pools.amount1,
      sqrtPriceX96: concentrated ? pools.sqrtPriceX96(p) : 0n,
      liquidity: pools.liquidity[p]!,
      tick: concentrated ? pools.tick(p) : 0,
      txHash,
      sender,
      recipient,
    });
  }

  /**
   * A Mint or Burn of the amounts in the pool book, preceded by a Sync for constant-product pools; a
   * concentrated pool's Burn is followed by its Collect.
   */
  private emitLiquidity(p: number, kind: 'mint' | 'burn', owner: string, pools = this.pools): void {
    const w = this.writer;
    const tx = w.beginTx();
    const pool = pools.address[p]!;
    if (!pools.concentrated[p]) {
      w.write({ kind: 'sync', key: w.key(tx), timestamp: w.timestamp, pool, reserve0: pools.reserve0[p]!, reserve1: pools.reserve1[p]! });
    }
    w.write({
      kind,
      key: w.key(tx),
      timestamp: w.timestamp,
      pool,
      amount0: pools.amount0,
      amount1: pools.amount1,
      liquidity: pools.liquidityDelta,
      tickLower: pools.tickLower[p]!,
      tickUpper: pools.tickUpper[p]!,
      owner,
      txHash: w.txHash(tx),
    });
    // A v3 Burn only credits the position; the position's Collect pays the tokens out (no fees
    // are modelled, so it collects exactly the burned amounts).
    if (kind === 'burn' && pools.concentrated[p]) {
      w.write({ kind: 'reserve_delta', key: w.key(tx), timestamp: w.timestamp, pool, amount0: -pools.amount0, amount1: -pools.amount1 });
    }
  }
}
