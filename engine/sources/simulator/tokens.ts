/**
 * A network's tokens: the catalogue's (wrapped native, stables, majors) and the generated long
 * tail, with their TokenInfo and fair USD prices.
 */
import { TokenRole, type TokenInfo } from '../../events/model.js';
import type { NetworkSpec, TokenSpec } from './catalog.js';
import { randomAddress } from './encoding.js';
import { tokenName } from './names.js';
import { LocalPriceWalks, type SharedPricePaths } from './prices.js';
import { Rng, hashString } from './prng.js';

/** Stream tags of token randomness. */
const TAG_TOKEN_ADDRESS = 3;
const TAG_TOKEN_PRICE = 4;

/** How a token's fair price is found. */
const PRICE_ONE = 0;
const PRICE_SHARED = 1;
const PRICE_LOCAL = 2;

const LONG_TAIL_MEDIAN_PRICE_USD = 0.02;
const LONG_TAIL_PRICE_SIGMA = 2.5;
const LONG_TAIL_MIN_PRICE_USD = 1e-8;
const LONG_TAIL_MAX_PRICE_USD = 5000;
const LONG_TAIL_DAILY_VOLATILITY = [0.06, 0.15] as const;
/** Market cap of a long-tail token as a multiple of its first pool's liquidity. */
const LONG_TAIL_CAP_TO_LIQUIDITY = [20, 400] as const;
const MIN_SUPPLY_TOKENS = 1e4;
/** Catalogue supplies: market caps of the right order, in USD, or a stable's supply in tokens. */
const CATALOGUE_MARKET_CAP_USD = 2e9;
const CATALOGUE_STABLE_SUPPLY_TOKENS = 5e10;

/** POW10_NEGATIVE[d] = 10^-d: USD of one raw unit = price * 10^-decimals. */
const POW10_NEGATIVE: readonly number[] = Array.from({ length: 40 }, (_, i) => 10 ** -i);

/** A generated token before it is added: its info, 10^-decimals, its price at the start of its walk. */
export interface LongTailToken {
  readonly info: TokenInfo;
  readonly unit: number;
  readonly priceUsd: number;
  readonly dailyVolatility: number;
  readonly key: number;
}

export interface TokenKeys {
  readonly seed: number;
  readonly chainHash: number;
  readonly genesisTime: number;
  readonly shared: SharedPricePaths;
}

export class ChainTokens {
  readonly infos: TokenInfo[] = [];
  /** 10^-decimals per token. */
  readonly unit: number[] = [];
  /** Pools each token is listed in. */
  readonly poolCount: number[] = [];
  readonly native: number;
  /** The first is the primary stable. */
  readonly stables: number[] = [];
  readonly majors: number[] = [];
  readonly longTail: number[] = [];
  /** Tokens below this index are the catalogue's. */
  readonly firstLongTail: number;

  private readonly spec: NetworkSpec;
  private readonly keys: TokenKeys;
  private readonly walks = new LocalPriceWalks();
  private readonly priceKind: number[] = [];
  private readonly priceRef: number[] = [];
  private readonly scratch = new Rng(0);

  constructor(spec: NetworkSpec, keys: TokenKeys) {
    this.spec = spec;
    this.keys = keys;
    this.native = this.addCatalogue(spec.wrappedNative, TokenRole.WrappedNative);
    spec.stables.forEach((s, i) => this.stables.push(this.addCatalogue(s, i === 0 ? TokenRole.PrimaryStable : TokenRole.Stable)));
    for (const m of spec.majors) this.majors.push(this.addCatalogue(m, TokenRole.Other));
    this.firstLongTail = this.infos.length;
  }

  /** Fair USD price of a token at instant t; per token, t must not decrease between calls. */
  priceUsd(token: number, t: number): number {
    const kind = this.priceKind[token]!;
    if (kind === PRICE_ONE) return 1;
    if (kind === PRICE_SHARED) return this.keys.shared.price(this.priceRef[token]!, t);
    return this.walks.price(this.priceRef[token]!, t);
  }

  /**
   * Arbitrage needs a second venue: catalogue tokens trade everywhere, a long-tail token only
   * once it is listed in two pools.
   */
  isArbitraged(token: number): boolean {
    return token < this.firstLongTail || this.poolCount[token]! >= 2;
  }

  /** A generated token; its price walk starts at max(startTime, genesis). */
  addLongTail(rng: Rng, startTime: number, liquidityUsd: number): number {
    return this.addDescribed(this.describeLongTail(rng, liquidityUsd, this.infos.length), startTime);
  }

  /**
   * A generated token's traits drawn from `rng`; `key` (unique on the network) makes its address
   * and its price walk's stream. A pure function of the stream and the key: a large universe
   * describes a token whenever it needs it and keeps nothing of the tokens that do not trade.
   */
  describeLongTail(rng: Rng, liquidityUsd: number, key: number): LongTailToken {
    const { name, symbol } = tokenName(rng);
    const decimals = this.longTailDecimals(rng);
    const priceUsd = Math.min(LONG_TAIL_MAX_PRICE_USD, Math.max(LONG_TAIL_MIN_PRICE_USD, rng.nextLogNormal(LONG_TAIL_MEDIAN_PRICE_USD, LONG_TAIL_PRICE_SIGMA)));
    const dailyVolatility = rng.nextRange(LONG_TAIL_DAILY_VOLATILITY[0], LONG_TAIL_DAILY_VOLATILITY[1]);
    const supplyTokens = Math.max(MIN_SUPPLY_TOKENS, (liquidityUsd * rng.nextRange(LONG_TAIL_CAP_TO_LIQUIDITY[0], LONG_TAIL_CAP_TO_LIQUIDITY[1])) / priceUsd);
    this.scratch.reseed(this.keys.seed, this.keys.chainHash, key, TAG_TOKEN_ADDRESS);
    const address = randomAddress(this.scratch, this.spec.addressFormat);
    return {
      info: { address, name, symbol, decimals, totalSupply: roundedSupply(supplyTokens, decimals), role: TokenRole.Other },
      unit: POW10_NEGATIVE[decimals]!,
      priceUsd,
      dailyVolatility,
      key,
    };
  }

  /** Adds a described token; its price walk starts at max(startTime, genesis). */
  addDescribed(token: LongTailToken, startTime: number): number {
    const i = this.infos.length;
    const { seed, chainHash, genesisTime } = this.keys;
    this.infos.push(token.info);
    this.unit.push(token.unit);
    this.poolCount.push(0);
    this.priceKind.push(PRICE_LOCAL);
    this.priceRef.push(this.walks.addVolatile(token.priceUsd, token.dailyVolatility, Math.max(startTime, genesisTime), seed, chainHash, token.key, TAG_TOKEN_PRICE));
    this.longTail.push(i);
    return i;
  }

  /** Catalogue addresses depend on the network only (not the seed), like real deployments. */
  private addCatalogue(spec: TokenSpec, role: TokenRole): number {
    const i = this.infos.length;
    const { seed, chainHash, genesisTime, shared } = this.keys;
    this.scratch.reseed(chainHash, i, TAG_TOKEN_ADDRESS);
    const address = randomAddress(this.scratch, this.spec.addressFormat);
    const stable = role === TokenRole.PrimaryStable || role === TokenRole.Stable;
    const supplyTokens = stable ? CATALOGUE_STABLE_SUPPLY_TOKENS : CATALOGUE_MARKET_CAP_USD / spec.priceUsd;
    this.infos.push({ address, name: spec.name, symbol: spec.symbol, decimals: spec.decimals, totalSupply: roundedSupply(supplyTokens, spec.decimals), role });
    this.unit.push(POW10_NEGATIVE[spec.decimals]!);
    this.poolCount.push(0);
    if (role === TokenRole.PrimaryStable) {
      this.priceKind.push(PRICE_ONE);
      this.priceRef.push(0);
    } else if (role === TokenRole.Stable) {
      this.priceKind.push(PRICE_LOCAL);
      this.priceRef.push(this.walks.addStable(genesisTime, seed, chainHash, i, TAG_TOKEN_PRICE));
    } else {
      const asset = spec.asset ?? spec.symbol;
      this.priceKind.push(PRICE_SHARED);
      this.priceRef.push(shared.register(asset, hashString(asset), spec.priceUsd, spec.dailyVolatility));
    }
    return i;
  }

  /** EVM tokens mostly use 18 decimals; Solana SPL tokens mostly 6 or 9. */
  private longTailDecimals(rng: Rng): number {
    const r = rng.nextFloat();
    if (this.spec.addressFormat === 'solana') return r < 0.55 ? 6 : r < 0.9 ? 9 : r < 0.95 ? 8 : 5;
    return r < 0.85 ? 18 : r < 0.9 ? 9 : r < 0.95 ? 8 : 6;
  }
}

/** POW10_BIG[k] = 10n ** k, grown on demand (a large universe describes millions of tokens). */
const POW10_BIG: bigint[] = [1n];

function pow10Big(k: number): bigint {
  while (POW10_BIG.length <= k) POW10_BIG.push(POW10_BIG[POW10_BIG.length - 1]! * 10n);
  return POW10_BIG[k]!;
}

/** Total supply in raw units: `tokens` rounded to three significant digits, times 10^decimals. */
function roundedSupply(tokens: number, decimals: number): bigint {
  const magnitude = Math.max(0, Math.floor(Math.log10(tokens)) - 2);
  const mantissa = Math.round(tokens / 10 ** magnitude);
  return BigInt(mantissa) * pow10Big(magnitude + decimals);
}
