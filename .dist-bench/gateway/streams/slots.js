/**
 * Concurrent-stream counts per subject (an account, or the IP of a keyless caller), in Atomics on a
 * SharedArrayBuffer shared by every stream thread. A stream takes its count when it opens and gives
 * it back exactly once when it ends, whatever ended it, from whichever thread holds it.
 *
 * Layout: Int32Array, one word per subject slot = streams open now. Slot numbers are handed out,
 * and counts taken, on the gateway's main thread only (acquire); any thread gives a count back
 * (releaseSlot: one Atomics.sub). A slot whose count is 0 has no holder, so the main thread may
 * return it to the free list (sweep) without racing a release.
 */
export const DEFAULT_STREAM_SLOTS = 65_536;
export class StreamSlots {
    buffer;
    counts;
    slotOf = new Map();
    free = [];
    next = 0;
    constructor(slots = DEFAULT_STREAM_SLOTS) {
        this.buffer = typeof slots === 'number' ? new SharedArrayBuffer(slots * 4) : slots;
        this.counts = new Int32Array(this.buffer);
    }
    /** Takes one stream for `key` unless `limit` are open already; returns whether it was taken. */
    acquire(key, limit) {
        return this.acquireSlot(key, limit) >= 0;
    }
    /** Takes one stream for `key` unless `limit` are open already: the slot that holds it, or -1. Main thread only. */
    acquireSlot(key, limit) {
        let s = this.slotOf.get(key);
        if (s === undefined) {
            if (limit <= 0)
                return -1;
            s = this.free.pop() ?? (this.next < this.counts.length ? this.next++ : -1);
            if (s < 0) {
                this.sweep();
                s = this.free.pop() ?? -1;
                if (s < 0)
                    return -1;
            }
            this.slotOf.set(key, s);
        }
        if (Atomics.add(this.counts, s, 1) >= limit) {
            this.release(key);
            return -1;
        }
        return s;
    }
    /** Gives back one stream of `key`. Main thread only. */
    release(key) {
        const s = this.slotOf.get(key);
        if (s === undefined)
            return;
        if (Atomics.sub(this.counts, s, 1) <= 1) {
            Atomics.store(this.counts, s, 0);
            this.slotOf.delete(key);
            this.free.push(s);
        }
    }
    /** Gives back one stream held in slot `s` (any thread). */
    releaseSlot(s) {
        Atomics.sub(this.counts, s, 1);
    }
    /** Returns the slots no stream holds any more (released from other threads) to the free list. Main thread only. */
    sweep() {
        for (const [key, s] of this.slotOf) {
            if (Atomics.load(this.counts, s) > 0)
                continue;
            this.slotOf.delete(key);
            this.free.push(s);
        }
    }
    /** Streams open now for `key`. */
    open(key) {
        const s = this.slotOf.get(key);
        return s === undefined ? 0 : Atomics.load(this.counts, s);
    }
}
//# sourceMappingURL=slots.js.map