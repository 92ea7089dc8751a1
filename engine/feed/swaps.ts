/**
 * The swap change feed: the shard writer copies out the swaps of watched pools and tokens (the
 * gateway sets the watch flags in `EngineViews.watchPool` / `watchToken` while someone streams them)
 * into the apply task's result, and the dispatcher publishes them here, in chain order per chain.
 * A swap nobody watches costs three byte loads and allocates nothing.
 */
import type { EventKey } from '../events/fb/dex/events/event-key.js';
import { errorText, fallbackLog, type Log } from '../log.js';
import type { Swap } from '../events/fb/dex/events/swap.js';
import { SwapFlags } from '../events/fb/dex/events/swap-flags.js';
import type { U128 } from '../events/fb/dex/events/u128.js';

/** One swap as the shard applied it, with its USD figures at that moment. Plain data: it crosses threads. */
export interface FeedSwap {
  readonly pool: number;
  readonly block: number;
  readonly txIndex: number;
  readonly logIndex: number;
  /** Block time, Unix seconds. */
  readonly time: number;
  readonly txHash: string;
  readonly sender: string;
  readonly recipient: string;
  /** Raw amounts, pool's view (+ received by the pool, - paid out), decimal text. */
  readonly amount0: string;
  readonly amount1: string;
  /** USD prices of token 0 and token 1 after the swap, and the swap's USD volume. */
  readonly price0Usd: number;
  readonly price1Usd: number;
  readonly volumeUsd: number;
}

function u128Text(s: U128): string {
  const w0 = s.w0();
  const w1 = s.w1();
  const w2 = s.w2();
  const w3 = s.w3();
  if (w2 === 0 && w3 === 0 && w1 < 0x20_0000) return `${w1 * 4_294_967_296 + w0}`;
  return ((BigInt(w3) << 96n) | (BigInt(w2) << 64n) | (BigInt(w1) << 32n) | BigInt(w0)).toString();
}

/** The feed record of swap `e` of pool p (called only for watched swaps). */
export function feedSwap(e: Swap, k: EventKey, p: number, scratch: U128, price0Usd: number, price1Usd: number, volumeUsd: number): FeedSwap {
  const flags = e.flags();
  const a0 = u128Text(e.amount0(scratch)!);
  const a1 = u128Text(e.amount1(scratch)!);
  return {
    pool: p,
    block: k.blockNumber(),
    txIndex: k.txIndex(),
    logIndex: k.logIndex(),
    time: e.timestamp(),
    txHash: e.txHash() ?? '',
    sender: e.sender() ?? '',
    recipient: e.recipient() ?? '',
    amount0: (flags & SwapFlags.Amount0Negative) !== 0 && a0 !== '0' ? `-${a0}` : a0,
    amount1: (flags & SwapFlags.Amount1Negative) !== 0 && a1 !== '0' ? `-${a1}` : a1,
    price0Usd,
    price1Usd,
    volumeUsd,
  };
}

export type SwapListener = (swaps: readonly FeedSwap[]) => void;

/** Where dispatchers publish the watched swaps of each applied task; the gateway listens. */
export class SwapFeed {
  private readonly listeners = new Set<SwapListener>();
  private readonly log: Log;

  constructor(log: Log = fallbackLog()) {
    this.log = log;
  }

  subscribe(listener: SwapListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(swaps: readonly FeedSwap[]): void {
    if (swaps.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(swaps);
      } catch (err) {
        this.log.error(`swap feed: listener failed: ${errorText(err)}`);
      }
    }
  }
}
