/** 128-bit unsigned integers held as four little-endian u32 words inside a Uint32Array. */

const W1 = 4_294_967_296; // 2^32
const W2 = 18_446_744_073_709_551_616; // 2^64
const W3 = 79_228_162_514_264_337_593_543_950_336; // 2^96

/** The 128-bit integer a[at..at+3] as a number, into out[i] (a result would be boxed: see u128Into). */
export function u128ToNumberInto(a: Uint32Array, at: number, out: Float64Array, i: number): void {
  out[i] = a[at]! + a[at + 1]! * W1 + a[at + 2]! * W2 + a[at + 3]! * W3;
}

/** An event's 128-bit integer: four little-endian u32 words (a 160-bit one has a fifth). */
interface Words128 {
  w0(): number;
  w1(): number;
  w2(): number;
  w3(): number;
}

/** a[at..at+3] = an event's 128-bit integer (its words are read here, not passed: a word above 2^30 passed to a call is boxed). */
export function setU128(a: Uint32Array, at: number, s: Words128): void {
  a[at] = s.w0();
  a[at + 1] = s.w1();
  a[at + 2] = s.w2();
  a[at + 3] = s.w3();
}

/**
 * An event's 128-bit integer as a number, into out[at]: an array slot rather than a result, since a
 * number returned from a call that is not inlined (or a word above 2^31 passed to one) is boxed, per event.
 */
export function u128Into(s: Words128, out: Float64Array, at: number): void {
  out[at] = s.w0() + s.w1() * W1 + s.w2() * W2 + s.w3() * W3;
}

/** An event's 160-bit integer (a square-root price) as a number, into out[at] (as u128Into). */
export function u160Into(s: Words128 & { w4(): number }, out: Float64Array, at: number): void {
  out[at] = s.w0() + s.w1() * W1 + s.w2() * W2 + s.w3() * W3 + s.w4() * W4;
}

const W4 = 2 ** 128;

/** a[at..at+3] += an event's 128-bit integer s (its words read here, as setU128). Overflow past 128 bits wraps (cannot happen for token balances). */
export function addU128(a: Uint32Array, at: number, w: Words128): void {
  let s = a[at]! + w.w0();
  a[at] = s >>> 0;
  s = a[at + 1]! + w.w1() + (s > 0xffff_ffff ? 1 : 0);
  a[at + 1] = s >>> 0;
  s = a[at + 2]! + w.w2() + (s > 0xffff_ffff ? 1 : 0);
  a[at + 2] = s >>> 0;
  s = a[at + 3]! + w.w3() + (s > 0xffff_ffff ? 1 : 0);
  a[at + 3] = s >>> 0;
}

/** a[at..at+3] -= an event's 128-bit integer w; returns false (and leaves 0) when the result would be negative. */
export function subU128(a: Uint32Array, at: number, w: Words128): boolean {
  let d = a[at]! - w.w0();
  const r0 = d >>> 0;
  d = a[at + 1]! - w.w1() - (d < 0 ? 1 : 0);
  const r1 = d >>> 0;
  d = a[at + 2]! - w.w2() - (d < 0 ? 1 : 0);
  const r2 = d >>> 0;
  d = a[at + 3]! - w.w3() - (d < 0 ? 1 : 0);
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

export function u128ToBigInt(a: Uint32Array, at: number): bigint {
  return BigInt(a[at]!) | (BigInt(a[at + 1]!) << 32n) | (BigInt(a[at + 2]!) << 64n) | (BigInt(a[at + 3]!) << 96n);
}
