/**
 * Addresses as bytes. An EVM address (`0x` and 40 hex digits, any case) is its 20 bytes and reads
 * back in lower case; any other address (base58 on Solana, or anything a source names a pool by) is
 * kept exactly, as UTF-8, after the one normalisation the service has always applied: a `0x` prefix
 * makes the whole text lower case.
 */

/** Bytes of an EVM address. */
export const EVM_ADDRESS_BYTES = 20;

/** EVM hex addresses compare case-insensitively; base58 (Solana) addresses are case-sensitive. */
export function normalizeAddress(address: string): string {
  return /^0x/i.test(address) ? address.toLowerCase() : address;
}

/** How a key was encoded into an AddressKey's bytes. */
export const enum KeyKind {
  /** 20 bytes of an EVM address. */
  Evm = 0,
  /** The normalised text as UTF-8. */
  Text = 1,
}

const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_VALUE[65 + i] = HEX_VALUE[97 + i] = 10 + i;

const encoder = new TextEncoder();

/**
 * A reusable encoding of one address (no allocation for EVM addresses): `kind`, and `bytes[0, length)`.
 * `hash` covers kind and bytes; the table mixes the chain in.
 */
export class AddressKey {
  kind: KeyKind = KeyKind.Evm;
  length = 0;
  hash = 0;
  bytes = new Uint8Array(64);

  /** Encodes `address` as the catalog stores it. */
  set(address: string): this {
    if (address.length === 2 + 2 * EVM_ADDRESS_BYTES && address.charCodeAt(0) === 48 && (address.charCodeAt(1) | 32) === 120 && this.setHex(address)) return this;
    const text = normalizeAddress(address);
    if (this.bytes.length < 3 * text.length) this.bytes = new Uint8Array(3 * text.length);
    this.kind = KeyKind.Text;
    this.length = encoder.encodeInto(text, this.bytes).written;
    this.hash = hashBytes(this.bytes, 0, this.length, KeyKind.Text);
    return this;
  }

  private setHex(address: string): boolean {
    const b = this.bytes;
    // hashBytes(b, 0, 20, KeyKind.Evm), computed as the bytes are decoded.
    let hash = (0x811c9dc5 ^ KeyKind.Evm) >>> 0;
    for (let i = 0; i < EVM_ADDRESS_BYTES; i++) {
      const hi = address.charCodeAt(2 + 2 * i);
      const lo = address.charCodeAt(3 + 2 * i);
      const h = hi < 128 ? HEX_VALUE[hi]! : -1;
      const l = lo < 128 ? HEX_VALUE[lo]! : -1;
      if (h < 0 || l < 0) return false;
      const byte = (h << 4) | l;
      b[i] = byte;
      hash = Math.imul(hash ^ byte, 0x01000193);
    }
    this.kind = KeyKind.Evm;
    this.length = EVM_ADDRESS_BYTES;
    this.hash = hash >>> 0;
    return true;
  }
}

/** FNV-1a over bytes[from, to), seeded with the key kind. */
export function hashBytes(bytes: Uint8Array, from: number, to: number, kind: KeyKind): number {
  let h = (0x811c9dc5 ^ kind) >>> 0;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** Mixes a chain index into a key hash (the tables hold every chain's keys). */
export function chainHash(hash: number, chain: number): number {
  let h = Math.imul(hash ^ Math.imul(chain + 1, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** Whether lower-case hex text `q` is a prefix of the 20 bytes at `at` rendered as `0x…` (1), equal to it (2), or neither (0). */
export function hexPrefixMatch(bytes: Uint8Array, at: number, q: string): 0 | 1 | 2 {
  const n = q.length;
  if (n > 2 + 2 * EVM_ADDRESS_BYTES) return 0;
  if (n >= 1 && q.charCodeAt(0) !== 48) return 0;
  if (n >= 2 && q.charCodeAt(1) !== 120) return 0;
  for (let k = 2; k < n; k++) {
    const c = q.charCodeAt(k);
    const v = c < 128 ? HEX_VALUE[c]! : -1;
    // Upper-case digits never match: the query is lower case and so is a rendered address.
    if (v < 0 || (c >= 65 && c <= 70)) return 0;
    const i = k - 2;
    const byte = bytes[at + (i >> 1)]!;
    if (((i & 1) === 0 ? byte >> 4 : byte & 15) !== v) return 0;
  }
  return n === 2 + 2 * EVM_ADDRESS_BYTES ? 2 : 1;
}
