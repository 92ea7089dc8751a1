/**
 * The one rule for a token's USD price as the interface shows it, shared by the REST answers
 * (token details, batch prices) and the price streams, so both show the same digits for the same
 * state of the views.
 *
 * The engine prices a token when its route pool moves: the pool's ratio times the counterpart's
 * USD price at that moment (`tokenPriceUsd`, a float; a counterpart that moves later does not
 * reprice it). The price shown is that same quantity, exact where the views allow: the ratio of the
 * route pool's raw reserves (decimals applied) times the counterpart's price, itself exact down the
 * chain of such route pools to the reference stablecoin (1 USD by definition). A concentrated-
 * liquidity pool on the way contributes its price to 15 significant digits. Where the exact value
 * of the engine's price cannot be had, the engine's float price is shown to 15 significant digits:
 * without a route, past MAX_ROUTE_HOPS, or when the counterpart's price was set after the token's
 * (the counterpart has moved since, and its price at the token's moment is not kept). The result is
 * cut to PRICE_DIGITS significant digits, in plain notation (decimal.js: never a float's noise).
 */
import { Decimal } from 'decimal.js';
/** Significant digits of a shown price. */
export const PRICE_DIGITS = 18;
/** Hops followed from a token to the reference stablecoin before the engine's float price is used. */
export const MAX_ROUTE_HOPS = 4;
const Exact = Decimal.clone({ precision: 60, toExpNeg: -100, toExpPos: 100 });
const POW10 = Array.from({ length: 78 }, (_, i) => new Exact(10).pow(i));
const ONE = new Exact(1);
const W32 = 4294967296n;
/** Raw u128 in words[at..at+3] (little-endian u32 words) as a bigint. */
export function u128BigInt(words, at) {
    return ((BigInt(words[at + 3]) * W32 + BigInt(words[at + 2])) * W32 + BigInt(words[at + 1])) * W32 + BigInt(words[at]);
}
const rawScratch = new Uint32Array(8);
/** Copies pool p's raw reserves consistently (seqlock); false when the writer kept it busy. */
function readRaw(v, p, out) {
    for (let attempt = 0; attempt < 10_000; attempt++) {
        const s = Atomics.load(v.poolSeq, p);
        if ((s & 1) !== 0)
            continue;
        for (let k = 0; k < 8; k++)
            out[k] = v.reserveRaw[p * 8 + k];
        if (Atomics.load(v.poolSeq, p) === s)
            return true;
    }
    return false;
}
function floatDecimal(x) {
    return new Exact(x.toPrecision(15));
}
/** USD price of token t as an exact decimal where the route allows (see the file comment). */
export function exactPrice(v, t, hops = 0) {
    if (v.tokenRole[t] === 0)
        return ONE;
    const fallback = floatDecimal(v.tokenPriceUsd[t]);
    const route = v.tokenRoutePool[t] - 1;
    if (route < 0 || hops >= MAX_ROUTE_HOPS)
        return fallback;
    const tokenIs0 = v.poolToken0[route] === t;
    const other = tokenIs0 ? v.poolToken1[route] : v.poolToken0[route];
    if (v.tokenRole[other] !== 0 && v.tokenPriceTime[other] > v.tokenPriceTime[t])
        return fallback;
    const otherPrice = exactPrice(v, other, hops + 1);
    if (v.poolProtocol[route] !== 0) {
        const ratio = v.ratio[route]; // token 0 in token 1
        if (!(ratio > 0))
            return fallback;
        const r = floatDecimal(ratio);
        return tokenIs0 ? r.mul(otherPrice) : otherPrice.div(r);
    }
    if (!readRaw(v, route, rawScratch))
        return fallback;
    const r0 = u128BigInt(rawScratch, 0);
    const r1 = u128BigInt(rawScratch, 4);
    if (r0 === 0n || r1 === 0n)
        return fallback;
    const d0 = v.poolDecimals0[route];
    const d1 = v.poolDecimals1[route];
    // price(token) = (other reserve / 10^d_other) / (token reserve / 10^d_token) * price(other)
    const [mine, theirs, dMine, dTheirs] = tokenIs0 ? [r0, r1, d0, d1] : [r1, r0, d1, d0];
    return new Exact(theirs.toString()).mul(POW10[dMine]).div(new Exact(mine.toString()).mul(POW10[dTheirs])).mul(otherPrice);
}
export function priceText(d) {
    return d.toSignificantDigits(PRICE_DIGITS).toFixed();
}
/**
 * The versions a token's price text depends on: the token's and its route pool's version words,
 * then the counterpart's, down the route (a route change bumps the token's word). Written into
 * `out` (pairs), returns how many words; -1 while a writer is inside an update.
 */
function routeStamp(v, t, out) {
    let n = 0;
    for (let hops = 0; hops <= MAX_ROUTE_HOPS; hops++) {
        const ts = Atomics.load(v.tokenSeq, t);
        if ((ts & 1) !== 0)
            return -1;
        out[n++] = ts;
        if (v.tokenRole[t] === 0)
            break;
        const route = v.tokenRoutePool[t] - 1;
        if (route < 0)
            break;
        const ps = Atomics.load(v.poolSeq, route);
        if ((ps & 1) !== 0)
            return -1;
        out[n++] = ps;
        t = v.poolToken0[route] === t ? v.poolToken1[route] : v.poolToken0[route];
    }
    return n;
}
const STAMP_WORDS = 2 * (MAX_ROUTE_HOPS + 1);
/** Tokens whose price text is kept between calls (per thread); cleared whole when full. */
const MAX_CACHED = 65_536;
/**
 * Price text per token, kept while none of the version words it depends on moved (a REST answer or
 * a stream event reads a price far more often than the market moves it). One per thread.
 */
export class PriceTexts {
    cache = new Map();
    stamp = new Int32Array(STAMP_WORDS);
    after = new Int32Array(STAMP_WORDS);
    v;
    constructor(views) {
        this.v = views;
    }
    /** Token t's price as shown (PRICE_DIGITS significant digits, plain notation). */
    text(t) {
        const v = this.v;
        const n = routeStamp(v, t, this.stamp);
        const hit = this.cache.get(t);
        if (n > 0 && hit !== undefined && hit.n === n && sameWords(hit.stamp, this.stamp, n))
            return hit.text;
        const text = priceText(exactPrice(v, t));
        // Cached only when nothing moved while it was computed.
        if (n > 0 && routeStamp(v, t, this.after) === n && sameWords(this.after, this.stamp, n)) {
            if (this.cache.size >= MAX_CACHED)
                this.cache.clear();
            this.cache.set(t, { stamp: this.stamp.slice(0, n), n, text });
        }
        return text;
    }
}
function sameWords(a, b, n) {
    for (let i = 0; i < n; i++)
        if (a[i] !== b[i])
            return false;
    return true;
}
//# sourceMappingURL=exact-price.js.map