/**
 * The large universe (tens of millions of pools): every genesis pool and its tokens are pure
 * functions of (seed, network, pool index), drawn from the pool's own stream whenever they are
 * needed, so nothing is kept for a pool that never trades. Only the living pools (and their
 * tokens) are made into state (pools.ts, tokens.ts), as in the small universe.
 *
 * Activity law (named in the README):
 * - A long-tail pool lives with probability LIVING_SHARE; the others never trade in simulated
 *   history (on real chains most pools trade only in their first days, and those days are past).
 * - A living pool's activity weight w is drawn from a Pareto law truncated to
 *   [1, ACTIVITY_WEIGHT_MAX] with shape ACTIVITY_PARETO_SHAPE (P(W > w) ~ w^-shape); sorted by
 *   rank this is Zipf's law with exponent 1 / shape. Its noise swap rate is
 *   swapsPerSecond * w / (sum of the weights of all living pools).
 * - Core pools (catalogue pairs) always live, with w = (liquidity / $12k)^0.6 as in the small universe.
 * - A pool created after genesis trades at LAUNCH_WEIGHT for its first LAUNCH_SECONDS, then lives
 *   on (with a drawn weight) with probability LIVING_SHARE or stops trading.
 *
 * Invariants:
 * - Pool index order is creation-time order: core pools first (coreCreatedAt), then the long
 *   tail evenly spread until a minute before genesis; so creations stream
 *   out in index order, a batch at a time, with nothing sorted or held.
 * - Long-tail pool u launches the token with key firstToken + u (LAUNCH_SHARE of them), or lists
 *   the token launched by an earlier pool: token keys are unique per network and a token's
 *   traits are a function of its key (tokens.ts describeLongTail).
 * - Living pools become state in index order: the k-th living long-tail pool is pool book entry
 *   firstTail + k, so the creation stream finds it by counting.
 */
import { PoolProtocol } from '../../events/model.js';
import type { NetworkSpec } from './catalog.js';
import { Rng } from './prng.js';
import type { ChainTokens, LongTailToken } from './tokens.js';
import { LONG_TAIL_AMPLIFICATION, LONG_TAIL_LIQUIDITY_SIGMA, LONG_TAIL_MEDIAN_LIQUIDITY_USD, clampLiquidity, longTailFee, range, type PoolPlan } from './universe.js';

/** Universes of at least this many pools are large ones (smaller ones keep the small universe). */
export const LARGE_UNIVERSE_MIN_POOLS = 1_000_000;
/** Share of long-tail pools that live (trade in simulated history). */
export const LIVING_SHARE = 0.025;
/** Shape of the truncated Pareto law of living pools' activity weights (Zipf exponent 1 / shape). */
export const ACTIVITY_PARETO_SHAPE = 1.2;
/** Cut-offs of the activity weight: the quietest living pool has 1, the busiest at most this. */
export const ACTIVITY_WEIGHT_MIN = 1;
export const ACTIVITY_WEIGHT_MAX = 10_000;
/** Share of long-tail pools that launch a new token (the rest list an existing one): tokens are about 0.92 x pools. */
export const LAUNCH_SHARE = 0.92;
/** A pool created after genesis trades at this weight for its first two days. */
export const LAUNCH_WEIGHT = 20;
export const LAUNCH_SECONDS = 2 * 86_400; // 2 days
/** Core pools are created this far apart from the start of pool history, before the long tail. */
const CORE_POOL_SPACING_SECONDS = 3_600; // 1 h
/** The long tail starts this long after the first core pool (or when pool history ends, if sooner). */
const TAIL_START_SECONDS = 60 * 86_400; // 60 days
/** Core pools' activity weight: (liquidity / LONG_TAIL_MEDIAN_LIQUIDITY_USD)^CORE_WEIGHT_EXPONENT. */
const CORE_WEIGHT_EXPONENT = 0.6;
/** Share of a listing (not launching) pool's liquidity relative to its token's launch pool. */
const LISTING_LIQUIDITY_SHARE = [0.05, 0.5] as const;

/** Stream tags (distinct from chain.ts's and tokens.ts's). */
const TAG_LARGE_POOL = 0x1a7e01;
const TAG_LARGE_TOKEN = 0x1a7e02;

/** What a long-tail pool of the large universe is, drawn from its stream. */
export interface LargePool {
  /** Token keys (firstToken + launching pool) or catalogue token indices (below firstToken). */
  readonly token: number;
  readonly quote: number;
  readonly dex: number;
  readonly feePpm: number;
  readonly liquidityUsd: number;
  readonly amplification: number;
  readonly createdAt: number;
  readonly living: boolean;
  /** Activity weight (0 for pools that do not live). */
  readonly weight: number;
}

/** Activity weight for a uniform u in (0, 1): the inverse of the truncated Pareto law's distribution function. */
export function paretoWeight(u: number): number {
  const tail = 1 - (ACTIVITY_WEIGHT_MIN / ACTIVITY_WEIGHT_MAX) ** ACTIVITY_PARETO_SHAPE;
  return ACTIVITY_WEIGHT_MIN * (1 - u * tail) ** (-1 / ACTIVITY_PARETO_SHAPE);
}

/** When the long tail of pools created between `earliest` and `latest` starts. */
function tailStart(earliest: number, latest: number): number {
  return Math.min(latest, earliest + TAIL_START_SECONDS);
}

/** Creation instant of the k-th core pool: CORE_POOL_SPACING_SECONDS apart, always before the long tail starts. */
export function coreCreatedAt(k: number, earliest: number, latest: number): number {
  const span = tailStart(earliest, latest) - earliest;
  return earliest + Math.min(CORE_POOL_SPACING_SECONDS * k, span * (1 - 1 / (k + 2)));
}

/** Activity weight of a core pool. */
export function coreWeight(liquidityUsd: number): number {
  return (liquidityUsd / LONG_TAIL_MEDIAN_LIQUIDITY_USD) ** CORE_WEIGHT_EXPONENT;
}

export class LargeUniverse {
  /** Genesis pools of the network: core pools [0, firstTail), long tail [firstTail, genesisPools). */
  readonly genesisPools: number;
  readonly firstTail: number;
  /** Key of the token launched by long-tail pool u: firstToken + u (catalogue tokens are below). */
  readonly firstToken: number;
  /** Genesis pools whose creation was emitted. */
  created = 0;
  /** Living long-tail pools met by the creation stream so far. */
  livingCreated = 0;

  private readonly seed: number;
  private readonly chainHash: number;
  private readonly spec: NetworkSpec;
  private readonly dexWeights: number[];
  private readonly tailStart: number;
  private readonly tailSpan: number;
  private readonly rng = new Rng(0);

  constructor(spec: NetworkSpec, seed: number, chainHash: number, genesisPools: number, firstTail: number, firstToken: number, earliest: number, latest: number) {
    this.spec = spec;
    this.seed = seed;
    this.chainHash = chainHash;
    this.genesisPools = genesisPools;
    this.firstTail = firstTail;
    this.firstToken = firstToken;
    this.dexWeights = spec.dexes.map((d) => d.weight);
    this.tailStart = tailStart(earliest, latest);
    this.tailSpan = latest - this.tailStart;
  }

  /** Creation instant of long-tail pool u (whole seconds, non-decreasing in u). */
  createdAt(u: number): number {
    return this.tailStart + Math.floor(((u - this.firstTail) * this.tailSpan) / Math.max(1, this.genesisPools - this.firstTail));
  }

  /** Starts pool u's stream; its first draw says whether it launches a token, its second whether it lives. */
  private open(u: number): Rng {
    this.rng.setWords(this.seed ^ TAG_LARGE_POOL, this.chainHash, u, 0);
    return this.rng;
  }

  /** Whether long-tail pool u launches a new token (the first long-tail pool always does). */
  launches(u: number): boolean {
    return u === this.firstTail || this.open(u).nextFloat() < LAUNCH_SHARE;
  }

  /** Whether long-tail pool u lives, and its weight (two draws after the launch draw). */
  livingWeight(u: number): number {
    const rng = this.open(u);
    rng.nextFloat();
    if (rng.nextFloat() >= LIVING_SHARE) return 0;
    return paretoWeight(rng.nextFloat());
  }

  /** Key of the token launched by the nearest launching pool at or before long-tail pool v. */
  private launchedAtOrBefore(v: number): number {
    while (!this.launches(v)) v--;
    return this.firstToken + v;
  }

  /** Long-tail pool u's traits. */
  pool(u: number, tokens: ChainTokens): LargePool {
    const launch = this.launches(u);
    const rng = this.open(u);
    rng.nextFloat();
    const living = rng.nextFloat() < LIVING_SHARE;
    const weight = paretoWeight(rng.nextFloat());
    const pick = rng.nextFloat();
    const quoteDraw = rng.nextFloat();
    const quotePick = rng.nextFloat();
    const dex = rng.nextWeighted(this.dexWeights);
    const dexSpec = this.spec.dexes[dex]!;
    const feePpm = longTailFee(rng, dexSpec);
    const listingShare = range(rng, LISTING_LIQUIDITY_SHARE);
    const amplification = dexSpec.poolProtocol === PoolProtocol.Concentrated ? range(rng, LONG_TAIL_AMPLIFICATION) : 1;
    // Draws above are all made before any lookback, which reuses the stream.
    const earlier = (x: number) => this.firstTail + Math.floor(x * (u - this.firstTail));
    const token = launch ? this.firstToken + u : this.launchedAtOrBefore(earlier(pick));
    // Quote: 55 % wrapped native, 30 % primary stable, 5 % second stable, 5 % a major, 5 % an older long-tail token.
    let quote: number;
    if (quoteDraw < 0.55) quote = tokens.native;
    else if (quoteDraw < 0.85) quote = tokens.stables[0]!;
    else if (quoteDraw < 0.9) quote = tokens.stables[1] ?? tokens.stables[0]!;
    else if (quoteDraw < 0.95 && tokens.majors.length > 0) quote = tokens.majors[Math.floor(quotePick * tokens.majors.length)]!;
    else quote = u > this.firstTail ? this.launchedAtOrBefore(earlier(quotePick)) : tokens.native;
    if (quote === token) quote = tokens.native;
    const launchLiquidity = this.tokenLaunchLiquidity(token);
    return {
      token,
      quote,
      dex,
      feePpm,
      liquidityUsd: launch ? launchLiquidity : clampLiquidity(launchLiquidity * listingShare),
      amplification,
      createdAt: this.createdAt(u),
      living,
      weight: living ? weight : 0,
    };
  }

  /** The plan of a long-tail pool whose tokens are the given pool book token indices. */
  plan(p: LargePool, tokenA: number, tokenB: number): PoolPlan {
    return { tokenA, tokenB, dex: p.dex, feePpm: p.feePpm, liquidityUsd: p.liquidityUsd, amplification: p.amplification, createdAt: p.createdAt };
  }

  /** Starts token key's stream; its first draw is its launch pool's liquidity. */
  private openToken(key: number): Rng {
    this.rng.setWords(this.seed ^ TAG_LARGE_TOKEN, this.chainHash, key, 0);
    return this.rng;
  }

  private tokenLaunchLiquidity(key: number): number {
    return clampLiquidity(this.openToken(key).nextLogNormal(LONG_TAIL_MEDIAN_LIQUIDITY_USD, LONG_TAIL_LIQUIDITY_SIGMA));
  }

  /** The long-tail token of `key` (>= firstToken). */
  token(key: number, tokens: ChainTokens): LongTailToken {
    const rng = this.openToken(key);
    const liquidity = clampLiquidity(rng.nextLogNormal(LONG_TAIL_MEDIAN_LIQUIDITY_USD, LONG_TAIL_LIQUIDITY_SIGMA));
    return tokens.describeLongTail(rng, liquidity, key);
  }
}
