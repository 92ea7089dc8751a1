/**
 * Base58 (Bitcoin alphabet) to bytes, for instruction data on the decoding path: a few short strings
 * per swap, where a general codec's per-call set-up dominates. Keys stay strings throughout (they are
 * compared and stored as the network writes them); @solana/kit's codecs serve everything else.
 */

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Char code -> digit value, -1 outside the alphabet. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** Bytes of a base58 string; null when a character is outside the alphabet. */
export function base58Bytes(s: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < s.length && s.charCodeAt(zeros) === 49) zeros++;
  // log(58) / log(256) ~ 0.7322: bytes needed for the digits after the leading ones.
  const size = Math.floor((s.length - zeros) * 0.7322) + 1;
  const b = new Uint8Array(size);
  let length = 0;
  for (let i = zeros; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let carry = c < 128 ? DIGIT[c]! : -1;
    if (carry < 0) return null;
    let k = 0;
    for (let j = size - 1; (carry !== 0 || k < length) && j >= 0; j--, k++) {
      carry += 58 * b[j]!;
      b[j] = carry & 255;
      carry >>= 8;
    }
    length = k;
  }
  const out = new Uint8Array(zeros + length);
  out.set(b.subarray(size - length), zeros);
  return out;
}

/** The little-endian u64 at `at`, null when the bytes are too few. */
export function u64le(b: Uint8Array, at: number): bigint | null {
  if (b.length < at + 8) return null;
  const lo = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
  const hi = (b[at + 4]! | (b[at + 5]! << 8) | (b[at + 6]! << 16)) + b[at + 7]! * 0x1000000;
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Hex of bytes [from, to), for discriminators. */
export function hexOf(b: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to && i < b.length; i++) s += (b[i]! < 16 ? '0' : '') + b[i]!.toString(16);
  return s;
}
