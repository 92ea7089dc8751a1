export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const HEX_DIGITS = '0123456789abcdef';
const BASE58_RADIX = 58;
const BASE58_PAIR_COUNT = BASE58_RADIX * BASE58_RADIX;
const EVM_ADDRESS_BYTES = 20;
const EVM_HASH_BYTES = 32;
const SOLANA_ADDRESS_DIGITS = 44;
const SOLANA_ADDRESS_MAX_LEAD = 16;
const SOLANA_SIGNATURE_DIGITS = 88;
const SOLANA_SIGNATURE_MAX_LEAD = 4;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Two characters as one uint16 in host byte order, so text is written a pair at a time. */
function charPair(first, second) {
    const a = first.charCodeAt(0);
    const b = second.charCodeAt(0);
    return LITTLE_ENDIAN ? a | (b << 8) : (a << 8) | b;
}
/** HEX_PAIRS[b] = the two hex digits of byte b. */
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, b) => charPair(HEX_DIGITS[b >>> 4], HEX_DIGITS[b & 15]));
/** BASE58_PAIRS[i] = base58 digits i % 58 then floor(i / 58). */
const BASE58_PAIRS = Uint16Array.from({ length: BASE58_PAIR_COUNT }, (_, i) => charPair(BASE58_ALPHABET[i % BASE58_RADIX], BASE58_ALPHABET[Math.floor(i / BASE58_RADIX)]));
const PREFIX_0X = charPair('0', 'x');
/** One scratch buffer for all text building; strings come out flat (latin1 decode). */
const scratch = Buffer.alloc(2 + 2 * EVM_HASH_BYTES + SOLANA_SIGNATURE_DIGITS);
const scratchPairs = new Uint16Array(scratch.buffer, scratch.byteOffset, scratch.length >>> 1);
/** `0x` + 2 * bytes hex digits; bytes is a multiple of 4. */
function hexText(rng, bytes) {
    const pairs = scratchPairs;
    pairs[0] = PREFIX_0X;
    let o = 1;
    for (let i = 0; i < bytes; i += 4) {
        const w = rng.nextU32();
        pairs[o++] = HEX_PAIRS[w & 0xff];
        pairs[o++] = HEX_PAIRS[(w >>> 8) & 0xff];
        pairs[o++] = HEX_PAIRS[(w >>> 16) & 0xff];
        pairs[o++] = HEX_PAIRS[w >>> 24];
    }
    return scratch.toString('latin1', 0, 2 * o);
}
/** `digits` base58 digits (an even count), the leading one in [1, maxLead]. */
function base58Text(rng, digits, maxLead) {
    const pairs = scratchPairs;
    const half = digits >>> 1;
    // Leading digit value v in [1, maxLead] is pair index v + 58 * (second digit).
    pairs[0] = BASE58_PAIRS[1 + rng.nextInt(maxLead) + BASE58_RADIX * rng.nextInt(BASE58_RADIX)];
    let o = 1;
    while (o < half) {
        // Four digits per word (58^4 < 2^32); the modulo bias stays below 0.3 %.
        const w = rng.nextU32();
        pairs[o++] = BASE58_PAIRS[w % BASE58_PAIR_COUNT];
        if (o < half)
            pairs[o++] = BASE58_PAIRS[Math.floor(w / BASE58_PAIR_COUNT) % BASE58_PAIR_COUNT];
    }
    return scratch.toString('latin1', 0, digits);
}
/** An account / contract address in the chain's native form. */
export function randomAddress(rng, format) {
    return format === 'evm' ? hexText(rng, EVM_ADDRESS_BYTES) : base58Text(rng, SOLANA_ADDRESS_DIGITS, SOLANA_ADDRESS_MAX_LEAD);
}
/** A block hash: 32 bytes (EVM hex, Solana base58). */
export function randomBlockHash(rng, format) {
    return format === 'evm' ? hexText(rng, EVM_HASH_BYTES) : base58Text(rng, SOLANA_ADDRESS_DIGITS, SOLANA_ADDRESS_MAX_LEAD);
}
/** A transaction hash: 32-byte hex on EVM, 64-byte base58 signature on Solana. */
export function randomTxHash(rng, format) {
    return format === 'evm' ? hexText(rng, EVM_HASH_BYTES) : base58Text(rng, SOLANA_SIGNATURE_DIGITS, SOLANA_SIGNATURE_MAX_LEAD);
}
//# sourceMappingURL=encoding.js.map