/**
 * Base58 (Bitcoin alphabet) to bytes, for instruction data on the decoding path: a few short strings
 * per swap, where a general codec's per-call set-up dominates. Keys stay strings throughout (they are
 * compared and stored as the network writes them); @solana/kit's codecs serve everything else.
 */

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Char code -> digit value, -1 outside the alphabet. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** 58^5: five digits are folded in at once (58^5 < 2^30, so a 16-bit limb times it stays exact in a double). */
const POW58 = [1, 58, 3_364, 195_112, 11_316_496, 656_356_768];

/**
 * Bytes of a base58 string; null when a character is outside the alphabet. The number is kept in
 * 16-bit limbs, least significant first, and grows by five digits per pass: a tenth of the work of
 * the byte-by-digit method on the long data of event instructions.
 */
export function base58Bytes(s: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < s.length && s.charCodeAt(zeros) === 49) zeros++;
  const limbs = new Uint16Array(Math.ceil(((s.length - zeros) * 0.7322) / 2) + 2);
  let used = 0;
  for (let i = zeros; i < s.length; ) {
    let value = 0;
    let k = 0;
    for (; k < 5 && i < s.length; k++, i++) {
      const c = s.charCodeAt(i);
      const d = c < 128 ? DIGIT[c]! : -1;
      if (d < 0) return null;
      value = value * 58 + d;
    }
    const mult = POW58[k]!;
    let carry = value;
    for (let j = 0; j < used; j++) {
      const t = limbs[j]! * mult + carry;
      carry = Math.floor(t / 65_536);
      limbs[j] = t - carry * 65_536;
    }
    while (carry > 0) {
      const hi = Math.floor(carry / 65_536);
      limbs[used++] = carry - hi * 65_536;
      carry = hi;
    }
  }
  // Limbs to big-endian bytes, without the number's leading zero bytes.
  let bytes = used * 2;
  if (used > 0 && limbs[used - 1]! < 256) bytes--;
  const out = new Uint8Array(zeros + bytes);
  for (let b = 0; b < bytes; b++) {
    const limb = limbs[b >> 1]!;
    out[out.length - 1 - b] = b & 1 ? limb >> 8 : limb & 255;
  }
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
