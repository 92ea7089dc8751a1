/**
 * A network's block clock with a constant block time. Block n starts at
 * `epoch + (n - epochBlock) * blockTime` and its timestamp is that instant floored to whole
 * seconds, so timestamps never decrease with n (several sub-second blocks share a second).
 */
import { CHAIN_EPOCH_UNIX_SECONDS } from './catalog.js';
const MS_PER_SECOND = 1000;
export class BlockClock {
    epochBlock;
    blockTimeMs;
    constructor(spec) {
        this.epochBlock = spec.epochBlock;
        this.blockTimeMs = spec.blockTimeMs;
    }
    /**
     * Block containing simulated instant t (Unix seconds, fractional): the n with
     * blockStart(n) <= t < blockStart(n + 1), exactly as blockStart computes it. Monotone in t.
     */
    blockAt(t) {
        let n = this.epochBlock + Math.floor(((t - CHAIN_EPOCH_UNIX_SECONDS) * MS_PER_SECOND) / this.blockTimeMs);
        if (this.blockStart(n) > t)
            n--;
        else if (this.blockStart(n + 1) <= t)
            n++;
        return n;
    }
    /** Exact start of block n, Unix seconds (fractional). */
    blockStart(n) {
        return CHAIN_EPOCH_UNIX_SECONDS + ((n - this.epochBlock) * this.blockTimeMs) / MS_PER_SECOND;
    }
    /** Block timestamp: whole seconds, integer arithmetic on exact integers. */
    timestampOf(n) {
        return CHAIN_EPOCH_UNIX_SECONDS + Math.floor(((n - this.epochBlock) * this.blockTimeMs) / MS_PER_SECOND);
    }
    /** Highest block whose timestamp is at or before `until` (Unix seconds). */
    lastBlockAtOrBefore(until) {
        const u = Math.floor(until);
        let n = this.epochBlock + Math.ceil(((u - CHAIN_EPOCH_UNIX_SECONDS + 1) * MS_PER_SECOND) / this.blockTimeMs) - 1;
        while (this.timestampOf(n) > u)
            n--;
        while (this.timestampOf(n + 1) <= u)
            n++;
        return n;
    }
    /** First block whose timestamp is strictly after `t`. */
    firstBlockAfter(t) {
        return this.lastBlockAtOrBefore(t) + 1;
    }
}
//# sourceMappingURL=clock.js.map