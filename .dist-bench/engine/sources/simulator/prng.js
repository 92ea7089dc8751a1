/**
 * Seeded pseudo-random numbers for the simulator. Nothing here reads a clock or Math.random:
 * every value is a pure function of the seeds handed in, so equal options give equal output.
 */
const TWO_POW_32 = 4294967296;
const GOLDEN_GAMMA_U32 = 0x9e3779b9;
/** MurmurHash3's 32-bit finaliser: a bijection on uint32 with full avalanche. */
export function mix32(h) {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
}
/** Order-sensitive hash of two uint32 values. */
export function hash2(a, b) {
    return mix32((Math.imul(a ^ 0x3c6ef372, GOLDEN_GAMMA_U32) ^ mix32((b + 0x7f4a7c15) >>> 0)) >>> 0);
}
/** Hash of any number of uint32 values (numbers beyond 32 bits contribute both halves). */
export function hashOf(...parts) {
    let h = 0x12345678;
    for (const p of parts) {
        const lo = p >>> 0;
        const hi = Math.floor(p / TWO_POW_32) >>> 0;
        h = hash2(h, lo);
        if (hi !== 0)
            h = hash2(h, hi);
    }
    return h;
}
/** FNV-1a over UTF-16 code units, finalised with mix32. */
export function hashString(s) {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++)
        h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    return mix32(h >>> 0);
}
/**
 * xoshiro128** (period 2^128 - 1). Streams seeded from different keys do not overlap in
 * practice, which matters because every pool owns one and pools must not mirror each other.
 * The state can be parked in a {@link RngBank} so one instance serves many streams.
 */
export class Rng {
    a = 0;
    b = 0;
    c = 0;
    d = 0;
    constructor(...key) {
        this.reseed(...key);
    }
    /** Sets the state from a key; distinct keys give distinct, well-mixed states. */
    reseed(...key) {
        const h = hashOf(...key);
        let s = h;
        const next = () => {
            s = (s + GOLDEN_GAMMA_U32) >>> 0;
            return mix32(s);
        };
        this.a = next();
        this.b = next() ^ hash2(h, key.length);
        this.c = next();
        this.d = next();
        if ((this.a | this.b | this.c | this.d) === 0)
            this.d = 1;
    }
    /**
     * Seeds the state from four words through a bijection of the 128-bit tuple, so distinct keys
     * give distinct states (used where uniqueness matters), and every word of the key reaches
     * every word of the state.
     */
    setWords(w0, w1, w2, w3) {
        let a = mix32(w0 >>> 0);
        let b = mix32((w1 ^ 0x5bd1e995) >>> 0);
        let c = mix32((w2 ^ 0x1b873593) >>> 0);
        let d = mix32((w3 ^ 0xcc9e2d51) >>> 0);
        // Feistel-style rounds: xoring a function of one word into another is invertible.
        for (let round = 0; round < 2; round++) {
            b ^= mix32(a);
            c ^= mix32(b >>> 0);
            d ^= mix32(c >>> 0);
            a ^= mix32(d >>> 0);
        }
        this.a = a >>> 0;
        this.b = b >>> 0;
        this.c = c >>> 0;
        this.d = d >>> 0;
        if ((this.a | this.b | this.c | this.d) === 0)
            this.d = 1;
    }
    nextU32() {
        const b = this.b;
        const r = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
        const t = b << 9;
        this.c ^= this.a;
        this.d ^= b;
        this.b ^= this.c;
        this.a ^= this.d;
        this.c ^= t;
        this.d = rotl(this.d, 11);
        return r;
    }
    /** Uniform in the open interval (0, 1): safe to take the logarithm of. */
    nextFloat() {
        return (this.nextU32() + 0.5) / TWO_POW_32;
    }
    /** Uniform integer in [0, n). */
    nextInt(n) {
        return Math.floor(this.nextFloat() * n);
    }
    /** Uniform in [lo, hi). */
    nextRange(lo, hi) {
        return lo + (hi - lo) * this.nextFloat();
    }
    /** Standard normal (Box-Muller; the second variate is discarded to keep the state simple). */
    nextGaussian() {
        const u1 = this.nextFloat();
        const u2 = this.nextU32() / TWO_POW_32;
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }
    /** Exponential with mean 1. */
    nextExp() {
        return -Math.log(this.nextFloat());
    }
    /** Log-normal with the given median and log-space standard deviation. */
    nextLogNormal(median, sigma) {
        return median * Math.exp(sigma * this.nextGaussian());
    }
    /** Index drawn with probability proportional to weights[i]. */
    nextWeighted(weights) {
        let total = 0;
        for (const w of weights)
            total += w;
        let r = this.nextFloat() * total;
        for (let i = 0; i < weights.length; i++) {
            r -= weights[i];
            if (r < 0)
                return i;
        }
        return weights.length - 1;
    }
}
function rotl(x, k) {
    return (x << k) | (x >>> (32 - k));
}
const RNG_WORDS = 4;
/** Parked states of many {@link Rng} streams (four uint32 words each), indexed densely. */
export class RngBank {
    words;
    count = 0;
    constructor(initialCapacity = 1024) {
        this.words = new Uint32Array(Math.max(1, initialCapacity) * RNG_WORDS);
    }
    get size() {
        return this.count;
    }
    /** Appends a stream seeded from `key`; returns its index. */
    add(scratch, ...key) {
        if ((this.count + 1) * RNG_WORDS > this.words.length) {
            const grown = new Uint32Array(this.words.length * 2);
            grown.set(this.words);
            this.words = grown;
        }
        scratch.reseed(...key);
        const i = this.count++;
        this.store(scratch, i);
        return i;
    }
    load(into, i) {
        const o = i * RNG_WORDS;
        const w = this.words;
        into.a = w[o];
        into.b = w[o + 1];
        into.c = w[o + 2];
        into.d = w[o + 3];
    }
    store(from, i) {
        const o = i * RNG_WORDS;
        const w = this.words;
        w[o] = from.a;
        w[o + 1] = from.b;
        w[o + 2] = from.c;
        w[o + 3] = from.d;
    }
}
//# sourceMappingURL=prng.js.map