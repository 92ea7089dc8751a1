/**
 * ABI words and log fields read by hand: the hot path of decoding (every log goes through these), so
 * no ABI library; the families' decoders (families/*) and the token reader use them.
 */

/** A log as `eth_getLogs` returns it. */
export interface RpcLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly blockNumber: string;
  readonly blockHash: string;
  readonly transactionHash: string;
  readonly transactionIndex: string;
  readonly logIndex: string;
  readonly removed?: boolean;
}

const TWO_256 = 1n << 256n;
const TWO_255 = 1n << 255n;

/** The i-th 32-byte word of ABI data as an unsigned integer. */
export function word(data: string, i: number): bigint {
  const start = 2 + i * 64;
  const hex = data.slice(start, start + 64);
  if (hex.length !== 64) throw new Error(`ABI data too short for word ${i}`);
  return BigInt(`0x${hex}`);
}

/** Two's-complement reading of a 256-bit word (int256, int24, ... are sign-extended to 256 bits). */
export function signed(w: bigint): bigint {
  return w >= TWO_255 ? w - TWO_256 : w;
}

/** The address held in the low 20 bytes of a topic or word, lowercase. */
export function topicAddress(topic: string): string {
  return `0x${topic.slice(-40).toLowerCase()}`;
}

export function wordAddress(data: string, i: number): string {
  return topicAddress(data.slice(2 + i * 64, 2 + (i + 1) * 64));
}

export function hexNumber(hex: string): number {
  // A digit loop for the short quantities nodes send (block numbers, indexes): about twice as fast
  // as parseInt here, where every log carries several; anything unusual goes to parseInt.
  const n = hex.length;
  if (n > 2 && n <= 15 && hex.charCodeAt(0) === 48 && (hex.charCodeAt(1) | 32) === 120) {
    let v = 0;
    for (let i = 2; i < n; i++) {
      const c = hex.charCodeAt(i) | 32;
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) return Number.parseInt(hex, 16);
      v = v * 16 + d;
    }
    return v;
  }
  return Number.parseInt(hex, 16);
}
