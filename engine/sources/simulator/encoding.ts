/**
 * Chain-native text forms of addresses and hashes, generated from an {@link Rng}.
 *
 * EVM: lower-case `0x` + 40 hex digits (20 bytes) for addresses, `0x` + 64 hex digits for hashes.
 * Solana: base58 text of 32 bytes (addresses, block hashes) or 64 bytes (signatures). Instead of
 * encoding random bytes, random base58 digits are drawn directly, which is far cheaper. The
 * leading digit is restricted so that the number always decodes to exactly that many bytes:
 * 44 digits with leading value v in [1, 16] lie in [58^43, 17 * 58^43) and 17 * 58^43 < 2^256;
 * 88 digits with leading value in [1, 4] lie in [58^87, 5 * 58^87) and 5 * 58^87 < 2^512. The
 * lower bounds exceed 2^248 and 2^504, so the top byte is never zero.
 */
import type { Rng } from './prng.js';

export type AddressFormat = 'evm' | 'solana';

export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const HEX_DIGITS = '0123456789abcdef';
const HEX_CODES = Uint8Array.from(HEX_DIGITS, (c) => c.charCodeAt(0));
const BASE58_CODES = Uint8Array.from(BASE58_ALPHABET, (c) => c.charCodeAt(0));
const BASE58_RADIX = 58;
const BASE58_PAIR_COUNT = BASE58_RADIX * BASE58_RADIX;

const EVM_ADDRESS_BYTES = 20;
const EVM_HASH_BYTES = 32;
const SOLANA_ADDRESS_DIGITS = 44;
const SOLANA_ADDRESS_MAX_LEAD = 16;
const SOLANA_SIGNATURE_DIGITS = 88;
const SOLANA_SIGNATURE_MAX_LEAD = 4;

/** One scratch buffer for all text building; strings come out flat (latin1 decode). */
const scratch = Buffer.alloc(2 + 2 * EVM_HASH_BYTES + SOLANA_SIGNATURE_DIGITS);

function hexText(rng: Rng, bytes: number): string {
  const buf = scratch;
  buf[0] = 0x30; // '0'
  buf[1] = 0x78; // 'x'
  let o = 2;
  for (let i = 0; i < bytes; i += 4) {
    const w = rng.nextU32();
    const n = Math.min(4, bytes - i);
    for (let j = 0; j < n; j++) {
      const byte = (w >>> (j * 8)) & 0xff;
      buf[o++] = HEX_CODES[byte >>> 4]!;
      buf[o++] = HEX_CODES[byte & 15]!;
    }
  }
  return buf.toString('latin1', 0, o);
}

function base58Text(rng: Rng, digits: number, maxLead: number): string {
  const buf = scratch;
  buf[0] = BASE58_CODES[1 + rng.nextInt(maxLead)]!;
  let o = 1;
  while (o < digits) {
    // Four digits per word (58^4 < 2^32); the modulo bias stays below 0.3 %.
    const w = rng.nextU32();
    const lo = w % BASE58_PAIR_COUNT;
    const hi = Math.floor(w / BASE58_PAIR_COUNT) % BASE58_PAIR_COUNT;
    buf[o++] = BASE58_CODES[lo % BASE58_RADIX]!;
    if (o < digits) buf[o++] = BASE58_CODES[Math.floor(lo / BASE58_RADIX)]!;
    if (o < digits) buf[o++] = BASE58_CODES[hi % BASE58_RADIX]!;
    if (o < digits) buf[o++] = BASE58_CODES[Math.floor(hi / BASE58_RADIX)]!;
  }
  return buf.toString('latin1', 0, digits);
}

/** An account / contract address in the chain's native form. */
export function randomAddress(rng: Rng, format: AddressFormat): string {
  return format === 'evm' ? hexText(rng, EVM_ADDRESS_BYTES) : base58Text(rng, SOLANA_ADDRESS_DIGITS, SOLANA_ADDRESS_MAX_LEAD);
}

/** A block hash: 32 bytes (EVM hex, Solana base58). */
export function randomBlockHash(rng: Rng, format: AddressFormat): string {
  return format === 'evm' ? hexText(rng, EVM_HASH_BYTES) : base58Text(rng, SOLANA_ADDRESS_DIGITS, SOLANA_ADDRESS_MAX_LEAD);
}

/** A transaction hash: 32-byte hex on EVM, 64-byte base58 signature on Solana. */
export function randomTxHash(rng: Rng, format: AddressFormat): string {
  return format === 'evm' ? hexText(rng, EVM_HASH_BYTES) : base58Text(rng, SOLANA_SIGNATURE_DIGITS, SOLANA_SIGNATURE_MAX_LEAD);
}
