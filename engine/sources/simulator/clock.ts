/**
 * A network's block clock with a constant block time. Block n starts at
 * `epoch + (n - epochBlock) * blockTime` and its timestamp is that instant floored to whole
 * seconds, so timestamps never decrease with n (several sub-second blocks share a second).
 */
import { CHAIN_EPOCH_UNIX_SECONDS, type NetworkSpec } from './catalog.js';

const MS_PER_SECOND = 1000;

export class BlockClock {
  private readonly epochBlock: number;
  private readonly blockTimeMs: number;

  constructor(spec: NetworkSpec) {
    this.epochBlock = spec.epochBlock;
    this.blockTimeMs = spec.blockTimeMs;
  }

  /**
   * Block containing simulated instant t (Unix seconds, fractional): the n with
   * blockStart(n) <= t < blockStart(n + 1), exactly as blockStart computes it. Monotone in t.
   */
  blockAt(t: number): number {
    let n = this.epochBlock + Math.floor(((t - CHAIN_EPOCH_UNIX_SECONDS) * MS_PER_SECOND) / this.blockTimeMs);
    if (this.blockStart(n) > t) n--;
    else if (this.blockStart(n + 1) <= t) n++;
    return n;
  }

  /** Exact start of block n, Unix seconds (fractional). */
  blockStart(n: number): number {
    return CHAIN_EPOCH_UNIX_SECONDS + ((n - this.epochBlock) * this.blockTimeMs) / MS_PER_SECOND;
  }

  /** Block timestamp: whole seconds, integer arithmetic on exact integers. */
  timestampOf(n: number): number {
    return CHAIN_EPOCH_UNIX_SECONDS + Math.floor(((n - this.epochBlock) * this.blockTimeMs) / MS_PER_SECOND);
  }

  /** Highest block whose timestamp is at or before `until` (Unix seconds). */
  lastBlockAtOrBefore(until: number): number {
    const u = Math.floor(until);
    let n = this.epochBlock + Math.ceil(((u - CHAIN_EPOCH_UNIX_SECONDS + 1) * MS_PER_SECOND) / this.blockTimeMs) - 1;
    while (this.timestampOf(n) > u) n--;
    while (this.timestampOf(n + 1) <= u) n++;
    return n;
  }

  /** First block whose timestamp is strictly after `t`. */
  firstBlockAfter(t: number): number {
    return this.lastBlockAtOrBefore(t) + 1;
  }
}
