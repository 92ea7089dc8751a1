/**
 * Base58 (Bitcoin alphabet) to bytes, for instruction data on the decoding path: a few short strings
 * per swap, where a general codec's per-call set-up (and any allocation) dominates. Keys stay strings throughout (they are
 * compared and stored as the network writes them); @solana/kit's codecs serve everything else.
 */

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Char code -> digit value, -1 outside the alphabet. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** 58^5: five digits are folded in at once (58^5 < 2^30, so a 16-bit limb times it stays exact in a double). */
const POW58 = [1, 58, 3_364, 195_112, 11_316_496, 656_356_768];

/** Limbs of the numbers base58Into decodes without allocating (up to 170 digits: instruction data of swaps and transfers). */
const SCRATCH_LIMBS = new Uint16Array(64);

/**
 * Decodes a base58 string into `out` from its start: the byte count, or -1 when a character is
 * outside the alphabet or `out` is too short. The number is kept in 16-bit limbs, least significant
 * first, and grows by five digits per pass: a tenth of the work of the byte-by-digit method. Nothing
 * is allocated for strings of up to 170 digits.
 */
export function base58Into(s: string, out: Uint8Array): number {
  let zeros = 0;
  while (zeros < s.length && s.charCodeAt(zeros) === 49) zeros++;
  const need = Math.ceil(((s.length - zeros) * 0.7322) / 2) + 2;
  const limbs = need <= SCRATCH_LIMBS.length ? SCRATCH_LIMBS : new Uint16Array(need);
  let used = 0;
  for (let i = zeros; i < s.length; ) {
    let value = 0;
    let k = 0;
    for (; k < 5 && i < s.length; k++, i++) {
      const c = s.charCodeAt(i);
      const d = c < 128 ? DIGIT[c]! : -1;
      if (d < 0) return -1;
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
  const length = zeros + bytes;
  if (length > out.length) return -1;
  for (let z = 0; z < zeros; z++) out[z] = 0;
  for (let b = 0; b < bytes; b++) {
    const limb = limbs[b >> 1]!;
    out[length - 1 - b] = b & 1 ? limb >> 8 : limb & 255;
  }
  return length;
}

/** Bytes of a base58 string (a new array); null when a character is outside the alphabet. */
export function base58Bytes(s: string): Uint8Array | null {
  const out = new Uint8Array(s.length);
  const n = base58Into(s, out);
  return n < 0 ? null : out.subarray(0, n);
}

/** The little-endian u64 at `at`, null when the bytes are too few. */
export function u64le(b: Uint8Array, at: number, length = b.length): bigint | null {
  if (length < at + 8) return null;
  const lo = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
  const hi = (b[at + 4]! | (b[at + 5]! << 8) | (b[at + 6]! << 16)) + b[at + 7]! * 0x1000000;
  // Below 2^53 (every amount but the largest) the number is exact as a double: one BigInt made.
  return hi < 0x200000 ? BigInt(hi * 0x100000000 + lo) : (BigInt(hi) << 32n) | BigInt(lo);
}

/** Hex of bytes [from, to), for discriminators. */
export function hexOf(b: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to && i < b.length; i++) s += (b[i]! < 16 ? '0' : '') + b[i]!.toString(16);
  return s;
}
