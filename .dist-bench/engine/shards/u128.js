/** 128-bit unsigned integers held as four little-endian u32 words inside a Uint32Array. */
const W1 = 4_294_967_296; // 2^32
const W2 = 18_446_744_073_709_551_616; // 2^64
const W3 = 79_228_162_514_264_337_593_543_950_336; // 2^96
export function u128ToNumber(a, at) {
    return a[at] + a[at + 1] * W1 + a[at + 2] * W2 + a[at + 3] * W3;
}
export function wordsToNumber(w0, w1, w2, w3) {
    return w0 + w1 * W1 + w2 * W2 + w3 * W3;
}
/** a[at..at+3] += (w0..w3). Overflow past 128 bits wraps (cannot happen for token balances). */
export function addU128(a, at, w0, w1, w2, w3) {
    let s = a[at] + w0;
    a[at] = s >>> 0;
    s = a[at + 1] + w1 + (s > 0xffff_ffff ? 1 : 0);
    a[at + 1] = s >>> 0;
    s = a[at + 2] + w2 + (s > 0xffff_ffff ? 1 : 0);
    a[at + 2] = s >>> 0;
    s = a[at + 3] + w3 + (s > 0xffff_ffff ? 1 : 0);
    a[at + 3] = s >>> 0;
}
/** a[at..at+3] -= (w0..w3); returns false (and leaves 0) when the result would be negative. */
export function subU128(a, at, w0, w1, w2, w3) {
    let d = a[at] - w0;
    const r0 = d >>> 0;
    d = a[at + 1] - w1 - (d < 0 ? 1 : 0);
    const r1 = d >>> 0;
    d = a[at + 2] - w2 - (d < 0 ? 1 : 0);
    const r2 = d >>> 0;
    d = a[at + 3] - w3 - (d < 0 ? 1 : 0);
    if (d < 0) {
        a[at] = 0;
        a[at + 1] = 0;
        a[at + 2] = 0;
        a[at + 3] = 0;
        return false;
    }
    a[at] = r0;
    a[at + 1] = r1;
    a[at + 2] = r2;
    a[at + 3] = d >>> 0;
    return true;
}
export function u128ToBigInt(a, at) {
    return BigInt(a[at]) | (BigInt(a[at + 1]) << 32n) | (BigInt(a[at + 2]) << 64n) | (BigInt(a[at + 3]) << 96n);
}
//# sourceMappingURL=u128.js.map