/**
 * One simulated network: its tokens, pools, block clock and event stream.
 *
 * Invariants:
 * - Events are produced in simulated-time order from a schedule of per-pool next-event times, so
 *   blocks, tx indices and log indices only grow. A block is emitted before its first event and
 *   never for a block without events; every event carries its block's timestamp.
 * - A pool's randomness comes from its own stream and is consumed in the pool's event order;
 *   which pool acts next depends only on the schedule. advance() stops at a block boundary, so
 *   the output does not depend on how time is cut into calls.
 * - Reserves change only through the exact integer formulas, and every change is emitted:
 *   constant-product pools as a Sync (new reserves) right before the Swap/Mint/Burn of the same
 *   tx; concentrated pools as signed swap amounts and mint/burn amounts.
 */
import {
  PoolProtocol,
  TokenRole,
  type ChainEvent,
  type DexInfo,
  type EventKey,
  type NetworkInfo,
  type TokenInfo,
} from '../../events/model.js';
import {
  MAX_TICK,
  MIN_TICK,
  PPM,
  PPM_NUMBER,
  afterFee,
  arbitrageInput,
  cpAmountOut,
  floorToBigInt,
  isqrt,
  isqrtNear,
  maxInputForOutput,
  sqrtPriceX96,
  tickAtPrice,
  virtualAmountOut,
} from './amm.js';
import { networkLaunchTime, type NetworkSpec, type TokenSpec } from './catalog.js';
import { BlockClock } from './clock.js';
import { randomAddress, randomBlockHash, randomTxHash, type AddressFormat } from './encoding.js';
import { tokenName } from './names.js';
import { LocalPriceWalks, SECONDS_PER_DAY, type SharedPricePaths } from './prices.js';
import { Rng, RngBank, hash2, hashString } from './prng.js';
import { Schedule } from './schedule.js';
import { GENESIS_POOL_HISTORY_SECONDS, planGenesisPools, planNewPool, type PoolPlan, type UniverseBuilder } from './universe.js';

/** Share of a pool's events that add or remove liquidity instead of swapping. */
export const LIQUIDITY_EVENT_SHARE = 0.03;
/** A pool's noise swap rate is proportional to liquidityUsd^RATE_LIQUIDITY_EXPONENT. */
export const RATE_LIQUIDITY_EXPONENT = 0.6;

/** Informed flow: buy probability 0.5 + MAX_BIAS * tanh(log deviation from fair / SCALE). */
const INFORMED_FLOW_MAX_BIAS = 0.4;
const INFORMED_FLOW_DEVIATION_SCALE = 0.02;
/** Noise swap size: log-normal fraction of half the pool's value. */
const NOISE_FRACTION_SIGMA = 1.0;
const NOISE_MAX_FRACTION = 0.25;
const NOISE_MAX_MEDIAN_FRACTION = 0.02;
/** Noise volume per day as a multiple of liquidity that busy pools aim for. */
const TARGET_DAILY_TURNOVER = 0.4;
/** A concentrated pool never pays out more than this share of its real output reserve in one swap. */
const CONCENTRATED_MAX_OUT_FRACTION = 0.9;
/** A concentrated position is re-centred once one side holds less than this share of its value. */
const REBALANCE_MIN_SIDE_SHARE = 0.03;
const LIQUIDITY_CHANGE_MIN_FRACTION = 0.01;
const LIQUIDITY_CHANGE_MAX_FRACTION = 0.06;
/** Mint probability when liquidity is below / above its initial level (pulls it back). */
const MINT_PROBABILITY_BELOW = 0.65;
const MINT_PROBABILITY_ABOVE = 0.35;
/** Uniswap v2 locks this many LP units on the first mint. */
const CP_MINIMUM_LIQUIDITY = 1000n;
const MIN_INITIAL_RESERVE = 1_000_000n;
const AMPLIFICATION_SCALE = 1_000_000;
const AMPLIFICATION_SCALE_BIG = 1_000_000n;
/** Pre-genesis pools are created at least this long before genesis and after the network's launch. */
const GENESIS_CREATION_MARGIN_SECONDS = 60;
const LAUNCH_MARGIN_SECONDS = 86_400;
const SECONDS_PER_HOUR = 3600;

const TRADER_COUNT = 4096;
const ARBITRAGE_BOT_COUNT = 16;

/** Stream tags: distinct keys for the independent random streams of a network. */
const TAG_POOL = 1;
const TAG_POOL_ADDRESS = 2;
const TAG_TOKEN_ADDRESS = 3;
const TAG_TOKEN_PRICE = 4;
const TAG_FACTORY = 5;
const TAG_ROUTER = 6;
const TAG_ACTORS = 7;
const TAG_GENESIS_PLAN = 8;
const TAG_LIVE_PLAN = 9;
const TAG_BLOCK_HASH = 0x0b10c;
const TAG_TX_HASH = 0x7a5;

const PRICE_ONE = 0;
const PRICE_SHARED = 1;
const PRICE_LOCAL = 2;

const TWO_POW_32 = 4294967296;

export interface ChainContext {
  readonly seed: number;
  readonly genesisTime: number;
  readonly shared: SharedPricePaths;
}

const POW10: readonly number[] = Array.from({ length: 40 }, (_, i) => 10 ** -i);

function tickSpacing(feePpm: number): number {
  if (feePpm <= 100) return 1;
  if (feePpm <= 500) return 10;
  if (feePpm <= 1000) return 20;
  if (feePpm <= 3000) return 60;
  return 200;
}

export class ChainSim implements UniverseBuilder {
  readonly spec: NetworkSpec;
  readonly info: NetworkInfo;
  readonly nativeToken = 0;
  readonly stableTokens: number[] = [];
  readonly majorTokens: number[] = [];
  readonly longTailTokens: number[] = [];

  private readonly seed: number;
  private readonly chainHash: number;
  private readonly format: AddressFormat;
  private readonly genesis: number;
  private readonly clock: BlockClock;
  /** Start of the first block stamped after genesis: swap history begins here. */
  private readonly historyStart: number;
  private readonly shared: SharedPricePaths;
  private readonly walks = new LocalPriceWalks();
  private readonly rng = new Rng(0);
  private readonly hashRng = new Rng(0);
  private readonly routers: string[];
  private readonly traders: string[] = [];
  private readonly arbitrageBots: string[] = [];

  // Tokens (structure of arrays, chain-local index).
  private readonly tokenInfos: TokenInfo[] = [];
  private readonly tokenUnit: number[] = [];
  private readonly tokenPriceKind: number[] = [];
  private readonly tokenPriceRef: number[] = [];
  private readonly tokenPoolCount: number[] = [];
  /** Tokens below this index are the catalogue's (wrapped native, stables, majors). */
  private firstLongTailToken = 0;

  // Pools (structure of arrays, chain-local index).
  private readonly poolAddress: string[] = [];
  private readonly poolToken0: number[] = [];
  private readonly poolToken1: number[] = [];
  private readonly poolDex: number[] = [];
  private readonly poolFeePpm: number[] = [];
  private readonly poolFeeComplement: bigint[] = [];
  private readonly poolConcentrated: boolean[] = [];
  private readonly poolAmplification: number[] = [];
  private readonly poolCreatedAt: number[] = [];
  private readonly poolLiquidityUsd: number[] = [];
  private readonly poolRate: number[] = [];
  private readonly poolNoiseMedian: number[] = [];
  /** Product of the liquidity changes since creation (mints > 1, burns < 1). */
  private readonly poolLiquidityScale: number[] = [];
  /** Real reserves (raw units). */
  private readonly reserve0: bigint[] = [];
  private readonly reserve1: bigint[] = [];
  /** Concentrated pools: virtual reserves, x_v * y_v = L^2. Zero for constant-product pools. */
  private readonly virtual0: bigint[] = [];
  private readonly virtual1: bigint[] = [];
  /** Float shadows of the four reserves above (Number of each), for sizing and pricing. */
  private readonly reserve0f: number[] = [];
  private readonly reserve1f: number[] = [];
  private readonly virtual0f: number[] = [];
  private readonly virtual1f: number[] = [];
  /** Concentrated pools: active liquidity L = isqrt(x_v * y_v). Zero for constant-product pools. */
  private readonly poolLiquidity: bigint[] = [];
  /** Constant-product pools: LP token supply. */
  private readonly lpSupply: bigint[] = [];
  private readonly tickLower: number[] = [];
  private readonly tickUpper: number[] = [];
  private readonly poolRngs = new RngBank();
  private readonly pairKeys = new Set<string>();

  private readonly schedule = new Schedule();
  private genesisPools: number[] = [];
  private genesisEmitted = false;
  private rateScale = 0;
  private readonly livePlanRng: Rng;
  private readonly liveCreationRate: number;
  private nextCreationTime = Infinity;

  // Emission state: the block being filled and the next tx / log index in it.
  private out: ChainEvent[] = [];
  private curBlock = -1;
  private curBlockHash = '';
  /** Block of the pool event being processed; becomes current with its first transaction. */
  private pendingBlock = -1;
  private curTimestamp = 0;
  private nextTx = 0;
  private nextLog = 0;
  /** Fair USD value of one raw unit of the current pool's tokens. */
  private fairUnit0 = 0;
  private fairUnit1 = 0;

  constructor(spec: NetworkSpec, ctx: ChainContext, genesisPoolCount: number, newPoolsPerSecond: number) {
    this.spec = spec;
    this.seed = ctx.seed >>> 0;
    this.chainHash = hashString(spec.id);
    this.format = spec.addressFormat;
    this.genesis = ctx.genesisTime;
    this.shared = ctx.shared;
    this.clock = new BlockClock(spec);
    this.historyStart = this.clock.blockStart(this.clock.firstBlockAfter(ctx.genesisTime));

    // Catalogue addresses depend on the network only, like real deployments.
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

    this.addCatalogToken(spec.wrappedNative, TokenRole.WrappedNative);
    spec.stables.forEach((s, i) => this.stableTokens.push(this.addCatalogToken(s, i === 0 ? TokenRole.PrimaryStable : TokenRole.Stable)));
    for (const m of spec.majors) this.majorTokens.push(this.addCatalogToken(m, TokenRole.Other));
    this.firstLongTailToken = this.tokenInfos.length;

    const latest = ctx.genesisTime - GENESIS_CREATION_MARGIN_SECONDS;
    const earliest = Math.min(latest, Math.max(ctx.genesisTime - GENESIS_POOL_HISTORY_SECONDS, networkLaunchTime(spec) + LAUNCH_MARGIN_SECONDS));
    planGenesisPools(this, new Rng(this.seed, this.chainHash, TAG_GENESIS_PLAN), genesisPoolCount, earliest, latest);
    this.genesisPools = Array.from({ length: this.poolAddress.length }, (_, i) => i);
    this.genesisPools.sort((a, b) => this.poolCreatedAt[a]! - this.poolCreatedAt[b]! || a - b);

    this.livePlanRng = new Rng(this.seed, this.chainHash, TAG_LIVE_PLAN);
    this.liveCreationRate = newPoolsPerSecond;
  }

  get stablecoinAddresses(): string[] {
    return this.stableTokens.map((t) => this.tokenInfos[t]!.address);
  }

  get wrappedNativeAddress(): string {
    return this.tokenInfos[this.nativeToken]!.address;
  }

  get poolCount(): number {
    return this.poolAddress.length;
  }

  /** Sum over genesis pools of liquidityUsd^RATE_LIQUIDITY_EXPONENT, for rate normalisation. */
  rateWeight(): number {
    let sum = 0;
    for (const l of this.poolLiquidityUsd) sum += l ** RATE_LIQUIDITY_EXPONENT;
    return sum;
  }

  /**
   * Starts the schedule: each genesis pool's noise swap rate is rateScale * liquidityUsd^0.6
   * (the same scale on every network, so rates sum to the configured total).
   */
  start(rateScale: number): void {
    this.rateScale = rateScale;
    for (let p = 0; p < this.poolAddress.length; p++) this.activatePool(p, this.historyStart);
    if (this.liveCreationRate > 0) this.nextCreationTime = this.historyStart + this.livePlanRng.nextExp() / this.liveCreationRate;
  }

  /** Produces this network's events in blocks stamped at or before `until` (and after the previous call). */
  advance(until: number): ChainEvent[] {
    const out: ChainEvent[] = [];
    this.out = out;
    const clock = this.clock;
    const cutoff = clock.lastBlockAtOrBefore(until);
    if (!this.genesisEmitted) {
      this.genesisEmitted = true;
      this.emitGenesisPools();
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
    this.out = [];
    return out;
  }

  // ---------------------------------------------------------------- universe building

  addLongTailToken(rng: Rng, startTime: number, liquidityUsd: number): number {
    const i = this.tokenInfos.length;
    const { name, symbol } = tokenName(rng);
    const decimals = this.longTailDecimals(rng);
    const priceUsd = Math.min(5000, Math.max(1e-8, rng.nextLogNormal(0.02, 2.5)));
    const dailyVolatility = rng.nextRange(0.06, 0.15);
    const supplyTokens = Math.max(1e4, (liquidityUsd * rng.nextRange(20, 400)) / priceUsd);
    this.hashRng.reseed(this.seed, this.chainHash, i, TAG_TOKEN_ADDRESS);
    const address = randomAddress(this.hashRng, this.format);
    this.tokenInfos.push({ address, name, symbol, decimals, totalSupply: roundedSupply(supplyTokens, decimals), role: TokenRole.Other });
    this.tokenUnit.push(POW10[decimals]!);
    this.tokenPriceKind.push(PRICE_LOCAL);
    this.tokenPoolCount.push(0);
    this.tokenPriceRef.push(this.walks.addVolatile(priceUsd, dailyVolatility, Math.max(startTime, this.genesis), this.seed, this.chainHash, i, TAG_TOKEN_PRICE));
    this.longTailTokens.push(i);
    return i;
  }

  addPool(plan: PoolPlan): number {
    const p = this.poolAddress.length;
    const tokens = this.tokenInfos;
    const aFirst = tokens[plan.tokenA]!.address < tokens[plan.tokenB]!.address;
    const t0 = aFirst ? plan.tokenA : plan.tokenB;
    const t1 = aFirst ? plan.tokenB : plan.tokenA;
    const dex = this.spec.dexes[plan.dex]!;
    const concentrated = dex.poolProtocol === PoolProtocol.Concentrated;

    this.poolRngs.add(this.rng, this.seed, this.chainHash, p, TAG_POOL);
    this.hashRng.reseed(this.seed, this.chainHash, p, TAG_POOL_ADDRESS);
    this.poolAddress.push(randomAddress(this.hashRng, this.format));
    this.poolToken0.push(t0);
    this.poolToken1.push(t1);
    this.poolDex.push(plan.dex);
    this.poolFeePpm.push(plan.feePpm);
    this.poolFeeComplement.push(PPM - BigInt(plan.feePpm));
    this.poolConcentrated.push(concentrated);
    this.poolAmplification.push(concentrated ? plan.amplification : 1);
    this.poolCreatedAt.push(plan.createdAt);
    this.poolLiquidityUsd.push(plan.liquidityUsd);
    this.poolRate.push(0);
    this.poolNoiseMedian.push(0);
    this.poolLiquidityScale.push(1);
    this.pairKeys.add(pairKey(plan));
    this.tokenPoolCount[t0]!++;
    this.tokenPoolCount[t1]!++;

    // Initial deposit: half the liquidity on each side at the fair prices (of genesis, for older pools).
    const t = Math.max(plan.createdAt, this.genesis);
    const half = plan.liquidityUsd / 2;
    let r0 = floorToBigInt(half / (this.priceUsd(t0, t) * this.tokenUnit[t0]!));
    let r1 = floorToBigInt(half / (this.priceUsd(t1, t) * this.tokenUnit[t1]!));
    if (r0 < MIN_INITIAL_RESERVE) r0 = MIN_INITIAL_RESERVE;
    if (r1 < MIN_INITIAL_RESERVE) r1 = MIN_INITIAL_RESERVE;
    this.reserve0.push(r0);
    this.reserve1.push(r1);
    this.reserve0f.push(Number(r0));
    this.reserve1f.push(Number(r1));
    if (concentrated) {
      const amp = BigInt(Math.round(plan.amplification * AMPLIFICATION_SCALE));
      const v0 = (r0 * amp) / AMPLIFICATION_SCALE_BIG;
      const v1 = (r1 * amp) / AMPLIFICATION_SCALE_BIG;
      this.virtual0.push(v0);
      this.virtual1.push(v1);
      this.virtual0f.push(Number(v0));
      this.virtual1f.push(Number(v1));
      this.poolLiquidity.push(isqrt(v0 * v1));
      this.lpSupply.push(0n);
      this.tickLower.push(0);
      this.tickUpper.push(0);
      this.setTickRange(p);
    } else {
      this.virtual0.push(0n);
      this.virtual1.push(0n);
      this.virtual0f.push(0);
      this.virtual1f.push(0);
      this.poolLiquidity.push(0n);
      this.lpSupply.push(isqrt(r0 * r1));
      this.tickLower.push(MIN_TICK);
      this.tickUpper.push(MAX_TICK);
    }
    return p;
  }

  hasPool(plan: PoolPlan): boolean {
    return this.pairKeys.has(pairKey(plan));
  }

  private addCatalogToken(spec: TokenSpec, role: TokenRole): number {
    const i = this.tokenInfos.length;
    this.rng.reseed(this.chainHash, i, TAG_TOKEN_ADDRESS);
    const address = randomAddress(this.rng, this.format);
    // Catalogue supplies: round figures of the right order for each kind of token.
    const supplyTokens = role === TokenRole.Other || role === TokenRole.WrappedNative ? 2e9 / Math.max(spec.priceUsd, 1e-6) : 5e10;
    this.tokenInfos.push({ address, name: spec.name, symbol: spec.symbol, decimals: spec.decimals, totalSupply: roundedSupply(supplyTokens, spec.decimals), role });
    this.tokenUnit.push(POW10[spec.decimals]!);
    this.tokenPoolCount.push(0);
    if (role === TokenRole.PrimaryStable) {
      this.tokenPriceKind.push(PRICE_ONE);
      this.tokenPriceRef.push(0);
    } else if (role === TokenRole.Stable) {
      this.tokenPriceKind.push(PRICE_LOCAL);
      this.tokenPriceRef.push(this.walks.addStable(this.genesis, this.seed, this.chainHash, i, TAG_TOKEN_PRICE));
    } else {
      const asset = spec.asset ?? spec.symbol;
      this.tokenPriceKind.push(PRICE_SHARED);
      this.tokenPriceRef.push(this.shared.register(asset, hashString(asset), spec.priceUsd, spec.dailyVolatility));
    }
    return i;
  }

  private longTailDecimals(rng: Rng): number {
    const r = rng.nextFloat();
    if (this.format === 'solana') return r < 0.55 ? 6 : r < 0.9 ? 9 : r < 0.95 ? 8 : 5;
    return r < 0.85 ? 18 : r < 0.9 ? 9 : r < 0.95 ? 8 : 6;
  }

  private priceUsd(token: number, t: number): number {
    const kind = this.tokenPriceKind[token]!;
    if (kind === PRICE_ONE) return 1;
    if (kind === PRICE_SHARED) return this.shared.price(this.tokenPriceRef[token]!, t);
    return this.walks.price(this.tokenPriceRef[token]!, t);
  }

  /** The v3 range of a concentrated position centred on its current price, rounded outwards to tick spacing. */
  private setTickRange(p: number): void {
    const price = this.virtual1f[p]! / this.virtual0f[p]!;
    const shrink = 1 - 1 / this.poolAmplification[p]!;
    const spacing = tickSpacing(this.poolFeePpm[p]!);
    this.tickLower[p] = Math.max(MIN_TICK, Math.floor(tickAtPrice(price * shrink * shrink) / spacing) * spacing);
    this.tickUpper[p] = Math.min(MAX_TICK, Math.ceil(tickAtPrice(price / (shrink * shrink)) / spacing) * spacing);
  }

  private activatePool(p: number, from: number): void {
    const noiseRate = this.rateScale * this.poolLiquidityUsd[p]! ** RATE_LIQUIDITY_EXPONENT;
    this.poolRate[p] = noiseRate / (1 - LIQUIDITY_EVENT_SHARE);
    const meanFraction = (2 * TARGET_DAILY_TURNOVER) / (noiseRate * SECONDS_PER_DAY);
    const median = meanFraction / Math.exp((NOISE_FRACTION_SIGMA * NOISE_FRACTION_SIGMA) / 2);
    this.poolNoiseMedian[p] = Math.min(NOISE_MAX_MEDIAN_FRACTION, median);
    const rng = this.rng;
    this.poolRngs.load(rng, p);
    const first = from + rng.nextExp() / this.poolRate[p]!;
    this.poolRngs.store(rng, p);
    this.schedule.push(first, p);
  }

  // ---------------------------------------------------------------- event production

  private emitGenesisPools(): void {
    for (const p of this.genesisPools) this.emitCreation(p, this.clock.blockAt(this.poolCreatedAt[p]!));
    this.genesisPools = [];
  }

  private createLivePool(t: number, block: number): void {
    const p = this.addPool(planNewPool(this, this.livePlanRng, t));
    this.emitCreation(p, block);
    this.activatePool(p, t);
    this.nextCreationTime = t + this.livePlanRng.nextExp() / this.liveCreationRate;
  }

  /** PoolCreated (factory tx), then the initial deposit in the next tx. */
  private emitCreation(p: number, block: number): void {
    this.pendingBlock = block;
    const dexIndex = this.poolDex[p]!;
    const dex = this.info.dexes[dexIndex]!;
    const tx = this.beginTx();
    this.out.push({
      kind: 'pool_created',
      key: this.key(tx),
      timestamp: this.curTimestamp,
      pool: this.poolAddress[p]!,
      dexId: dex.id,
      factory: dex.factory,
      protocol: dex.poolProtocol,
      feePpm: this.poolFeePpm[p]!,
      token0: this.tokenInfos[this.poolToken0[p]!]!,
      token1: this.tokenInfos[this.poolToken1[p]!]!,
    });
    const r0 = this.reserve0[p]!;
    const r1 = this.reserve1[p]!;
    const owner = this.traders[hash2(this.chainHash, p) % TRADER_COUNT]!;
    if (this.poolConcentrated[p]) {
      this.emitMint(p, r0, r1, this.poolLiquidity[p]!, owner);
    } else {
      const lp = this.lpSupply[p]!;
      this.emitMint(p, r0, r1, lp > CP_MINIMUM_LIQUIDITY ? lp - CP_MINIMUM_LIQUIDITY : lp, owner);
    }
  }

  /** One scheduled pool event at instant t in `block`: a liquidity change, or a noise swap plus its arbitrage. */
  private processPool(p: number, t: number, block: number): void {
    const rng = this.rng;
    this.poolRngs.load(rng, p);
    this.pendingBlock = block;
    if (rng.nextFloat() < LIQUIDITY_EVENT_SHARE) {
      this.changeLiquidity(p);
    } else {
      const t0 = this.poolToken0[p]!;
      const t1 = this.poolToken1[p]!;
      this.fairUnit0 = this.priceUsd(t0, t) * this.tokenUnit[t0]!;
      this.fairUnit1 = this.priceUsd(t1, t) * this.tokenUnit[t1]!;
      this.noiseSwap(p);
      if (this.isArbitraged(t0) && this.isArbitraged(t1)) this.arbitrage(p);
    }
    if (this.poolConcentrated[p]) this.maybeRecentre(p);
    const next = t + rng.nextExp() / this.poolRate[p]!;
    this.poolRngs.store(rng, p);
    this.schedule.replaceTop(next, p);
  }

  /**
   * Arbitrage needs a second venue: catalogue tokens trade everywhere, a long-tail token only
   * once it has two pools. A single-venue token's pool price follows its informed flow alone.
   */
  private isArbitraged(token: number): boolean {
    return token < this.firstLongTailToken || this.tokenPoolCount[token]! >= 2;
  }

  /** log(fair price / pool price) of token0 in token1: positive when token0 is cheap in the pool. */
  private fairDeviation(p: number): number {
    const concentrated = this.poolConcentrated[p]!;
    const x = concentrated ? this.virtual0f[p]! : this.reserve0f[p]!;
    const y = concentrated ? this.virtual1f[p]! : this.reserve1f[p]!;
    return Math.log((this.fairUnit0 * x) / (this.fairUnit1 * y));
  }

  /**
   * A retail swap. Its direction leans towards the fair price (informed flow), which is how
   * single-venue tokens track their fair value; its size is a log-normal fraction of half the
   * pool's value.
   */
  private noiseSwap(p: number): void {
    const rng = this.rng;
    const buyProbability = 0.5 + INFORMED_FLOW_MAX_BIAS * Math.tanh(this.fairDeviation(p) / INFORMED_FLOW_DEVIATION_SCALE);
    // Buying token0 means paying token1 in.
    const zeroForOne = rng.nextFloat() >= buyProbability;
    let fraction = this.poolNoiseMedian[p]! * Math.exp(NOISE_FRACTION_SIGMA * rng.nextGaussian());
    if (fraction > NOISE_MAX_FRACTION) fraction = NOISE_MAX_FRACTION;
    const trader = this.traders[rng.nextInt(TRADER_COUNT)]!;
    const sender = this.format === 'evm' ? this.routers[this.poolDex[p]!]! : trader;
    if (!this.poolConcentrated[p]) {
      const reserveIn = zeroForOne ? this.reserve0f[p]! : this.reserve1f[p]!;
      this.swapConstantProduct(p, zeroForOne, floorToBigInt(fraction * reserveIn), sender, trader);
      return;
    }
    const x = this.reserve0f[p]!;
    const y = this.reserve1f[p]!;
    const price = this.virtual1f[p]! / this.virtual0f[p]!;
    const halfValueIn = zeroForOne ? (x + y / price) / 2 : (y + x * price) / 2;
    this.swapConcentrated(p, zeroForOne, fraction * halfValueIn, sender, trader);
  }

  /**
   * Moves the pool to the fair price ratio of its tokens when the deviation exceeds the fee and
   * the profit pays for the transaction: this keeps pools of one pair consistent with each other.
   */
  private arbitrage(p: number): void {
    const unit0 = this.fairUnit0;
    const unit1 = this.fairUnit1;
    const target = unit0 / unit1;
    const concentrated = this.poolConcentrated[p]!;
    const x = concentrated ? this.virtual0f[p]! : this.reserve0f[p]!;
    const y = concentrated ? this.virtual1f[p]! : this.reserve1f[p]!;
    const feeFraction = this.poolFeePpm[p]! / PPM_NUMBER;
    const excess = Math.abs(Math.log((target * x) / y)) - feeFraction;
    if (!(excess > 0)) return;
    const depthUsd = x * unit0 + y * unit1;
    // Profit of closing a small gap d on x*y=k is about depth * d^2 / 8.
    if ((depthUsd * excess * excess) / 8 < this.spec.arbitrageGasUsd) return;
    const input = arbitrageInput(x, y, target, feeFraction);
    const bot = this.arbitrageBots[this.rng.nextInt(ARBITRAGE_BOT_COUNT)]!;
    const zeroForOne = input < 0;
    const amount = zeroForOne ? -input : input;
    if (concentrated) this.swapConcentrated(p, zeroForOne, amount, bot, bot);
    else this.swapConstantProduct(p, zeroForOne, floorToBigInt(amount), bot, bot);
  }

  private swapConstantProduct(p: number, zeroForOne: boolean, amountIn: bigint, sender: string, recipient: string): void {
    if (amountIn <= 0n) return;
    const r0 = this.reserve0[p]!;
    const r1 = this.reserve1[p]!;
    const fee = this.poolFeeComplement[p]!;
    let amount0: bigint;
    let amount1: bigint;
    if (zeroForOne) {
      const out = cpAmountOut(amountIn, r0, r1, fee);
      if (out <= 0n) return;
      amount0 = amountIn;
      amount1 = -out;
    } else {
      const out = cpAmountOut(amountIn, r1, r0, fee);
      if (out <= 0n) return;
      amount0 = -out;
      amount1 = amountIn;
    }
    const n0 = r0 + amount0;
    const n1 = r1 + amount1;
    this.setReserves(p, n0, n1);
    const tx = this.beginTx();
    const txHash = this.txHash(tx);
    const pool = this.poolAddress[p]!;
    this.out.push({ kind: 'sync', key: this.key(tx), timestamp: this.curTimestamp, pool, reserve0: n0, reserve1: n1 });
    this.out.push({
      kind: 'swap',
      key: this.key(tx),
      timestamp: this.curTimestamp,
      pool,
      amount0,
      amount1,
      sqrtPriceX96: 0n,
      liquidity: 0n,
      tick: 0,
      txHash,
      sender,
      recipient,
    });
  }

  /** A swap along the virtual curve, its size (float, fee-inclusive) capped so real reserves stay positive. */
  private swapConcentrated(p: number, zeroForOne: boolean, amountInFloat: number, sender: string, recipient: string): void {
    const v0 = this.virtual0[p]!;
    const v1 = this.virtual1[p]!;
    const realOut = zeroForOne ? this.reserve1[p]! : this.reserve0[p]!;
    const feeFraction = this.poolFeePpm[p]! / PPM_NUMBER;
    const v0f = this.virtual0f[p]!;
    const v1f = this.virtual1f[p]!;
    const realOutF = zeroForOne ? this.reserve1f[p]! : this.reserve0f[p]!;
    const cap = maxInputForOutput(zeroForOne ? v0f : v1f, zeroForOne ? v1f : v0f, CONCENTRATED_MAX_OUT_FRACTION * realOutF, feeFraction);
    const amountIn = floorToBigInt(amountInFloat < cap ? amountInFloat : cap);
    const effective = afterFee(amountIn, this.poolFeeComplement[p]!);
    if (effective <= 0n) return;
    const out = zeroForOne ? virtualAmountOut(effective, v0, v1) : virtualAmountOut(effective, v1, v0);
    if (out <= 0n || out > realOut) return;
    let amount0: bigint;
    let amount1: bigint;
    let n0: bigint;
    let n1: bigint;
    if (zeroForOne) {
      amount0 = amountIn;
      amount1 = -out;
      n0 = v0 + effective;
      n1 = v1 - out;
    } else {
      amount0 = -out;
      amount1 = amountIn;
      n0 = v0 - out;
      n1 = v1 + effective;
    }
    this.setConcentrated(p, this.reserve0[p]! + amount0, this.reserve1[p]! + amount1, n0, n1);
    const tx = this.beginTx();
    this.out.push({
      kind: 'swap',
      key: this.key(tx),
      timestamp: this.curTimestamp,
      pool: this.poolAddress[p]!,
      amount0,
      amount1,
      sqrtPriceX96: sqrtPriceX96(n0, n1),
      liquidity: this.poolLiquidity[p]!,
      tick: tickAtPrice(this.virtual1f[p]! / this.virtual0f[p]!),
      txHash: this.txHash(tx),
      sender,
      recipient,
    });
  }

  /** Adds or removes a few per cent of the pool's liquidity at the current price. */
  private changeLiquidity(p: number): void {
    const rng = this.rng;
    const scale = this.poolLiquidityScale[p]!;
    const mint = rng.nextFloat() < (scale < 1 ? MINT_PROBABILITY_BELOW : MINT_PROBABILITY_ABOVE);
    const fraction = rng.nextRange(LIQUIDITY_CHANGE_MIN_FRACTION, LIQUIDITY_CHANGE_MAX_FRACTION);
    const partPpm = BigInt(Math.round(fraction * PPM_NUMBER));
    const owner = this.traders[rng.nextInt(TRADER_COUNT)]!;
    const r0 = this.reserve0[p]!;
    const r1 = this.reserve1[p]!;
    if (this.poolConcentrated[p]) {
      const v0 = this.virtual0[p]!;
      const v1 = this.virtual1[p]!;
      const d0 = (r0 * partPpm) / PPM;
      const d1 = (r1 * partPpm) / PPM;
      const dv0 = (v0 * partPpm) / PPM;
      const dv1 = (v1 * partPpm) / PPM;
      if (dv0 <= 0n || dv1 <= 0n) return;
      const before = this.poolLiquidity[p]!;
      if (mint) {
        this.setConcentrated(p, r0 + d0, r1 + d1, v0 + dv0, v1 + dv1);
        this.emitMint(p, d0, d1, this.poolLiquidity[p]! - before, owner);
      } else {
        this.setConcentrated(p, r0 - d0, r1 - d1, v0 - dv0, v1 - dv1);
        this.emitBurn(p, d0, d1, before - this.poolLiquidity[p]!, owner);
      }
    } else {
      const supply = this.lpSupply[p]!;
      if (mint) {
        const d0 = (r0 * partPpm) / PPM;
        const d1 = (d0 * r1) / r0;
        const minted = minBig((d0 * supply) / r0, (d1 * supply) / r1);
        if (minted <= 0n) return;
        this.setReserves(p, r0 + d0, r1 + d1);
        this.lpSupply[p] = supply + minted;
        this.emitMint(p, d0, d1, minted, owner);
      } else {
        const burned = (supply * partPpm) / PPM;
        const d0 = (burned * r0) / supply;
        const d1 = (burned * r1) / supply;
        if (burned <= 0n || d0 <= 0n || d1 <= 0n) return;
        this.setReserves(p, r0 - d0, r1 - d1);
        this.lpSupply[p] = supply - burned;
        this.emitBurn(p, d0, d1, burned, owner);
      }
    }
    this.poolLiquidityScale[p] = scale * (mint ? 1 + fraction : 1 - fraction);
  }

  /**
   * An LP whose concentrated position drifted (almost) out of range withdraws it and deposits
   * the same value again centred on the current price, so the pool keeps trading both ways.
   */
  private maybeRecentre(p: number): void {
    const x = this.reserve0f[p]!;
    const y = this.reserve1f[p]!;
    const price = this.virtual1f[p]! / this.virtual0f[p]!;
    const value1 = x * price + y;
    const share0 = (x * price) / value1;
    if (share0 >= REBALANCE_MIN_SIDE_SHARE && share0 <= 1 - REBALANCE_MIN_SIDE_SHARE) return;
    const n0 = floorToBigInt(value1 / 2 / price);
    const n1 = floorToBigInt(value1 / 2);
    if (n0 < MIN_INITIAL_RESERVE || n1 < MIN_INITIAL_RESERVE) return;
    const owner = this.traders[this.rng.nextInt(TRADER_COUNT)]!;
    const r0 = this.reserve0[p]!;
    const r1 = this.reserve1[p]!;
    this.emitBurn(p, r0, r1, this.poolLiquidity[p]!, owner);
    const amp = BigInt(Math.round(this.poolAmplification[p]! * AMPLIFICATION_SCALE));
    this.setConcentrated(p, n0, n1, (n0 * amp) / AMPLIFICATION_SCALE_BIG, (n1 * amp) / AMPLIFICATION_SCALE_BIG);
    this.setTickRange(p);
    this.emitMint(p, n0, n1, this.poolLiquidity[p]!, owner);
  }

  private setReserves(p: number, r0: bigint, r1: bigint): void {
    this.reserve0[p] = r0;
    this.reserve1[p] = r1;
    this.reserve0f[p] = Number(r0);
    this.reserve1f[p] = Number(r1);
  }

  private setConcentrated(p: number, r0: bigint, r1: bigint, v0: bigint, v1: bigint): void {
    this.setReserves(p, r0, r1);
    this.virtual0[p] = v0;
    this.virtual1[p] = v1;
    this.virtual0f[p] = Number(v0);
    this.virtual1f[p] = Number(v1);
    this.poolLiquidity[p] = isqrtNear(v0 * v1, this.poolLiquidity[p]!);
  }

  private emitMint(p: number, amount0: bigint, amount1: bigint, liquidity: bigint, owner: string): void {
    const tx = this.beginTx();
    const pool = this.poolAddress[p]!;
    if (!this.poolConcentrated[p]) {
      this.out.push({ kind: 'sync', key: this.key(tx), timestamp: this.curTimestamp, pool, reserve0: this.reserve0[p]!, reserve1: this.reserve1[p]! });
    }
    this.out.push({
      kind: 'mint',
      key: this.key(tx),
      timestamp: this.curTimestamp,
      pool,
      amount0,
      amount1,
      liquidity,
      tickLower: this.tickLower[p]!,
      tickUpper: this.tickUpper[p]!,
      owner,
      txHash: this.txHash(tx),
    });
  }

  private emitBurn(p: number, amount0: bigint, amount1: bigint, liquidity: bigint, owner: string): void {
    const tx = this.beginTx();
    const pool = this.poolAddress[p]!;
    if (!this.poolConcentrated[p]) {
      this.out.push({ kind: 'sync', key: this.key(tx), timestamp: this.curTimestamp, pool, reserve0: this.reserve0[p]!, reserve1: this.reserve1[p]! });
    }
    this.out.push({
      kind: 'burn',
      key: this.key(tx),
      timestamp: this.curTimestamp,
      pool,
      amount0,
      amount1,
      liquidity,
      tickLower: this.tickLower[p]!,
      tickUpper: this.tickUpper[p]!,
      owner,
      txHash: this.txHash(tx),
    });
  }

  /**
   * Opens a transaction in the pending block, first emitting that block's Block event when it
   * is new; so blocks without transactions are never emitted. Blocks only move forward.
   */
  private beginTx(): number {
    const block = this.pendingBlock;
    if (block !== this.curBlock) this.enterBlock(block);
    return this.nextTx++;
  }

  private enterBlock(block: number): void {
    const parentHash = block - 1 === this.curBlock ? this.curBlockHash : this.blockHash(block - 1);
    const hash = this.blockHash(block);
    this.curBlock = block;
    this.curBlockHash = hash;
    this.curTimestamp = this.clock.timestampOf(block);
    this.nextTx = 0;
    this.nextLog = 0;
    this.out.push({ kind: 'block', number: block, hash, parentHash, timestamp: this.curTimestamp });
  }

  private key(txIndex: number): EventKey {
    return { blockNumber: this.curBlock, txIndex, logIndex: this.nextLog++ };
  }

  private blockHash(block: number): string {
    const rng = this.hashRng;
    rng.setWords(hash2(this.seed, this.chainHash), block >>> 0, Math.floor(block / TWO_POW_32) >>> 0, TAG_BLOCK_HASH);
    return randomBlockHash(rng, this.format);
  }

  /** Unique per (network, block, tx index): the state is an injective function of those. */
  private txHash(txIndex: number): string {
    const rng = this.hashRng;
    const block = this.curBlock;
    rng.setWords(hash2(this.seed, this.chainHash) ^ TAG_TX_HASH, block >>> 0, Math.floor(block / TWO_POW_32) >>> 0, txIndex);
    return randomTxHash(rng, this.format);
  }
}

function pairKey(plan: PoolPlan): string {
  const a = Math.min(plan.tokenA, plan.tokenB);
  const b = Math.max(plan.tokenA, plan.tokenB);
  return `${a}:${b}:${plan.dex}:${plan.feePpm}`;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/** Total supply in raw units: `tokens` rounded to three significant digits, times 10^decimals. */
function roundedSupply(tokens: number, decimals: number): bigint {
  const magnitude = Math.max(0, Math.floor(Math.log10(tokens)) - 2);
  const mantissa = Math.round(tokens / 10 ** magnitude);
  return BigInt(mantissa) * 10n ** BigInt(magnitude + decimals);
}

/** New pools per second on one network, given the total per hour over all networks. */
export function newPoolsPerSecond(perHourTotal: number, weight: number, totalWeight: number): number {
  return (perHourTotal * weight) / totalWeight / SECONDS_PER_HOUR;
}
