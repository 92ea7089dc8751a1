/** Pieces of hand-written JSON: numbers that are never NaN or Infinity, strings, times. */
import { rfc3339 } from './time.js';
/** A finite number as JSON; anything else as 0. */
export function num(x) {
    return x - x === 0 ? `${x}` : '0';
}
/** A JSON string literal. */
export function str(s) {
    return JSON.stringify(s);
}
/** An RFC 3339 string literal of Unix seconds, or null when the time is unknown (0 or not finite). */
export function timeOrNull(unixSeconds) {
    return unixSeconds > 0 && unixSeconds - unixSeconds === 0 ? `"${rfc3339(unixSeconds)}"` : 'null';
}
const W1 = 1n << 32n;
/** Decimal text of the unsigned 128-bit integer in words[at..at+3] (little-endian u32). */
export function u128Text(words, at) {
    const w0 = words[at];
    const w1 = words[at + 1];
    const w2 = words[at + 2];
    const w3 = words[at + 3];
    if (w2 === 0 && w3 === 0 && w1 < 0x20_0000)
        return `${w1 * 4_294_967_296 + w0}`;
    return (((BigInt(w3) * W1 + BigInt(w2)) * W1 + BigInt(w1)) * W1 + BigInt(w0)).toString();
}
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** A raw integer amount given as decimal text: a JSON number while exact, a string beyond 2^53. */
export function integerJson(decimalText) {
    const raw = BigInt(decimalText);
    return raw <= MAX_SAFE && raw >= -MAX_SAFE ? raw.toString() : `"${raw.toString()}"`;
}
//# sourceMappingURL=json.js.map