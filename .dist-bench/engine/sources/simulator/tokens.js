/**
 * A network's tokens: the catalogue's (wrapped native, stables, majors) and the generated long
 * tail, with their TokenInfo and fair USD prices.
 */
import { TokenRole } from '../../events/model.js';
import { randomAddress } from './encoding.js';
import { tokenName } from './names.js';
import { LocalPriceWalks } from './prices.js';
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
const LONG_TAIL_DAILY_VOLATILITY = [0.06, 0.15];
/** Market cap of a long-tail token as a multiple of its first pool's liquidity. */
const LONG_TAIL_CAP_TO_LIQUIDITY = [20, 400];
const MIN_SUPPLY_TOKENS = 1e4;
/** Catalogue supplies: market caps of the right order, in USD, or a stable's supply in tokens. */
const CATALOGUE_MARKET_CAP_USD = 2e9;
const CATALOGUE_STABLE_SUPPLY_TOKENS = 5e10;
/** POW10_NEGATIVE[d] = 10^-d: USD of one raw unit = price * 10^-decimals. */
const POW10_NEGATIVE = Array.from({ length: 40 }, (_, i) => 10 ** -i);
export class ChainTokens {
    infos = [];
    /** 10^-decimals per token. */
    unit = [];
    /** Pools each token is listed in. */
    poolCount = [];
    native;
    /** The first is the primary stable. */
    stables = [];
    majors = [];
    longTail = [];
    /** Tokens below this index are the catalogue's. */
    firstLongTail;
    spec;
    keys;
    walks = new LocalPriceWalks();
    priceKind = [];
    priceRef = [];
    scratch = new Rng(0);
    constructor(spec, keys) {
        this.spec = spec;
        this.keys = keys;
        this.native = this.addCatalogue(spec.wrappedNative, TokenRole.WrappedNative);
        spec.stables.forEach((s, i) => this.stables.push(this.addCatalogue(s, i === 0 ? TokenRole.PrimaryStable : TokenRole.Stable)));
        for (const m of spec.majors)
            this.majors.push(this.addCatalogue(m, TokenRole.Other));
        this.firstLongTail = this.infos.length;
    }
    /** Fair USD price of a token at instant t; per token, t must not decrease between calls. */
    priceUsd(token, t) {
        const kind = this.priceKind[token];
        if (kind === PRICE_ONE)
            return 1;
        if (kind === PRICE_SHARED)
            return this.keys.shared.price(this.priceRef[token], t);
        return this.walks.price(this.priceRef[token], t);
    }
    /**
     * Arbitrage needs a second venue: catalogue tokens trade everywhere, a long-tail token only
     * once it is listed in two pools.
     */
    isArbitraged(token) {
        return token < this.firstLongTail || this.poolCount[token] >= 2;
    }
    /** A generated token; its price walk starts at max(startTime, genesis). */
    addLongTail(rng, startTime, liquidityUsd) {
        const i = this.infos.length;
        const { name, symbol } = tokenName(rng);
        const decimals = this.longTailDecimals(rng);
        const priceUsd = Math.min(LONG_TAIL_MAX_PRICE_USD, Math.max(LONG_TAIL_MIN_PRICE_USD, rng.nextLogNormal(LONG_TAIL_MEDIAN_PRICE_USD, LONG_TAIL_PRICE_SIGMA)));
        const dailyVolatility = rng.nextRange(LONG_TAIL_DAILY_VOLATILITY[0], LONG_TAIL_DAILY_VOLATILITY[1]);
        const supplyTokens = Math.max(MIN_SUPPLY_TOKENS, (liquidityUsd * rng.nextRange(LONG_TAIL_CAP_TO_LIQUIDITY[0], LONG_TAIL_CAP_TO_LIQUIDITY[1])) / priceUsd);
        const { seed, chainHash, genesisTime } = this.keys;
        this.scratch.reseed(seed, chainHash, i, TAG_TOKEN_ADDRESS);
        const address = randomAddress(this.scratch, this.spec.addressFormat);
        this.infos.push({ address, name, symbol, decimals, totalSupply: roundedSupply(supplyTokens, decimals), role: TokenRole.Other });
        this.unit.push(POW10_NEGATIVE[decimals]);
        this.poolCount.push(0);
        this.priceKind.push(PRICE_LOCAL);
        this.priceRef.push(this.walks.addVolatile(priceUsd, dailyVolatility, Math.max(startTime, genesisTime), seed, chainHash, i, TAG_TOKEN_PRICE));
        this.longTail.push(i);
        return i;
    }
    /** Catalogue addresses depend on the network only (not the seed), like real deployments. */
    addCatalogue(spec, role) {
        const i = this.infos.length;
        const { seed, chainHash, genesisTime, shared } = this.keys;
        this.scratch.reseed(chainHash, i, TAG_TOKEN_ADDRESS);
        const address = randomAddress(this.scratch, this.spec.addressFormat);
        const stable = role === TokenRole.PrimaryStable || role === TokenRole.Stable;
        const supplyTokens = stable ? CATALOGUE_STABLE_SUPPLY_TOKENS : CATALOGUE_MARKET_CAP_USD / spec.priceUsd;
        this.infos.push({ address, name: spec.name, symbol: spec.symbol, decimals: spec.decimals, totalSupply: roundedSupply(supplyTokens, spec.decimals), role });
        this.unit.push(POW10_NEGATIVE[spec.decimals]);
        this.poolCount.push(0);
        if (role === TokenRole.PrimaryStable) {
            this.priceKind.push(PRICE_ONE);
            this.priceRef.push(0);
        }
        else if (role === TokenRole.Stable) {
            this.priceKind.push(PRICE_LOCAL);
            this.priceRef.push(this.walks.addStable(genesisTime, seed, chainHash, i, TAG_TOKEN_PRICE));
        }
        else {
            const asset = spec.asset ?? spec.symbol;
            this.priceKind.push(PRICE_SHARED);
            this.priceRef.push(shared.register(asset, hashString(asset), spec.priceUsd, spec.dailyVolatility));
        }
        return i;
    }
    /** EVM tokens mostly use 18 decimals; Solana SPL tokens mostly 6 or 9. */
    longTailDecimals(rng) {
        const r = rng.nextFloat();
        if (this.spec.addressFormat === 'solana')
            return r < 0.55 ? 6 : r < 0.9 ? 9 : r < 0.95 ? 8 : 5;
        return r < 0.85 ? 18 : r < 0.9 ? 9 : r < 0.95 ? 8 : 6;
    }
}
/** Total supply in raw units: `tokens` rounded to three significant digits, times 10^decimals. */
function roundedSupply(tokens, decimals) {
    const magnitude = Math.max(0, Math.floor(Math.log10(tokens)) - 2);
    const mantissa = Math.round(tokens / 10 ** magnitude);
    return BigInt(mantissa) * 10n ** BigInt(magnitude + decimals);
}
//# sourceMappingURL=tokens.js.map