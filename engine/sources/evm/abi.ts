/**
 * The ABI pieces the source reads: the event topics of every protocol family (declared in each
 * family's folder, collected here) and ERC-20 metadata answers (strings, bytes32 strings, integers).
 * Topics are keccak-256 of the event signatures (checked against a keccak implementation in test/evm.test.ts).
 */
import { FAMILY_LIST } from './families/index.js';
import { word } from './words.js';

export { hexNumber, signed, topicAddress, word, wordAddress, type RpcLog } from './words.js';

/** Every family's events by name: topic (keccak-256 of the signature) and signature. */
const EVENTS = Object.fromEntries(FAMILY_LIST.flatMap((f) => Object.entries(f.events)));
export const TOPICS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(EVENTS).map(([k, e]) => [k, e.topic]));
export const SIGNATURES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(EVENTS).map(([k, e]) => [k, e.signature]));

/** ERC-20 function selectors (first 4 bytes of keccak-256 of the signature). */
export const SELECTORS = {
  name: '0x06fdde03',
  symbol: '0x95d89b41',
  decimals: '0x313ce567',
  totalSupply: '0x18160ddd',
} as const;

/** Readable text only: NULs and other control characters dropped, trimmed. */
function clean(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f\ufffd]/g, '').trim();
}

/**
 * An ERC-20 `name()` / `symbol()` answer: an ABI `string`, or a `bytes32` holding the text padded
 * with zeros (MKR, SAI and other early tokens). Returns null when it is neither.
 */
export function decodeStringOrBytes32(data: string): string | null {
  if (!/^0x[0-9a-fA-F]*$/.test(data) || data.length < 66) return null;
  const bytes = Buffer.from(data.slice(2), 'hex');
  if (bytes.length >= 64) {
    const offset = word(data, 0);
    if (offset <= BigInt(bytes.length - 32) && offset % 32n === 0n) {
      const at = Number(offset);
      const len = BigInt(`0x${bytes.subarray(at, at + 32).toString('hex')}`);
      if (len <= BigInt(bytes.length - at - 32)) return clean(bytes.subarray(at + 32, at + 32 + Number(len)).toString('utf8'));
    }
  }
  if (bytes.length === 32) return clean(bytes.toString('utf8'));
  return null;
}
