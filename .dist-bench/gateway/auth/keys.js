/**
 * API key text: `api_` and 32 base62 characters drawn uniformly from crypto.randomBytes
 * (about 190 bits). Only a peppered SHA-256 of a key is ever stored; a key is shown once, when made.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
export const KEY_PREFIX = 'api_';
export const KEY_RANDOM_CHARS = 32;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes >= this are dropped so that `byte % 62` is uniform (248 = 4 x 62). */
const UNBIASED_BYTE_LIMIT = 248;
const KEY_SHAPE = /^api_[0-9A-Za-z]{32}$/;
export function generateKey() {
    let out = KEY_PREFIX;
    while (out.length < KEY_PREFIX.length + KEY_RANDOM_CHARS) {
        for (const b of randomBytes(KEY_RANDOM_CHARS)) {
            if (b >= UNBIASED_BYTE_LIMIT)
                continue;
            out += BASE62[b % 62];
            if (out.length === KEY_PREFIX.length + KEY_RANDOM_CHARS)
                break;
        }
    }
    return out;
}
/** Whether the text has the shape of a key; anything else is rejected without hashing. */
export function looksLikeKey(text) {
    return text.length === KEY_PREFIX.length + KEY_RANDOM_CHARS && KEY_SHAPE.test(text);
}
/** pepper || key, assembled in one reused buffer (keys are short: a few dozen bytes). */
let hashInput = Buffer.alloc(256);
/** SHA-256 of pepper || key: 32 bytes. */
export function hashKey(pepper, key) {
    return Buffer.from(hashKeyText(pepper, key), 'latin1');
}
/** hashKey as a 32-character latin1 string (one-shot, no buffer or hasher object per call). */
export function hashKeyText(pepper, key) {
    const n = pepper.length + key.length;
    if (n > hashInput.length)
        hashInput = Buffer.alloc(n);
    pepper.copy(hashInput, 0);
    hashInput.write(key, pepper.length, 'latin1');
    const digest = hash('sha256', hashInput.subarray(0, n), 'binary');
    hashInput.fill(0, pepper.length, n);
    return digest;
}
/** Constant-time equality of two hashes given as hex (unequal lengths are simply unequal). */
export function sameHash(a, bHex) {
    const b = Buffer.from(bHex, 'hex');
    return a.length === b.length && timingSafeEqual(a, b);
}
//# sourceMappingURL=keys.js.map