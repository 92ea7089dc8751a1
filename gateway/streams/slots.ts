/**
 * Concurrent-stream counts per subject (an account, or the IP of a keyless caller), in Atomics on a
 * SharedArrayBuffer so other threads can read them. A stream takes its count when it opens and gives
 * it back exactly once when it ends, whatever ended it.
 *
 * Layout: Int32Array, one word per subject slot = streams open now. Slot numbers are handed out on
 * the gateway thread (the only writer); a slot whose count is back to 0 returns to the free list.
 */
export const DEFAULT_STREAM_SLOTS = 65_536;

export class StreamSlots {
  readonly buffer: SharedArrayBuffer;
  private readonly counts: Int32Array;
  private readonly slotOf = new Map<string, number>();
  private readonly free: number[] = [];
  private next = 0;

  constructor(slots = DEFAULT_STREAM_SLOTS) {
    this.buffer = new SharedArrayBuffer(slots * 4);
    this.counts = new Int32Array(this.buffer);
  }

  /** Takes one stream for `key` unless `limit` are open already; returns whether it was taken. */
  acquire(key: string, limit: number): boolean {
    let s = this.slotOf.get(key);
    if (s === undefined) {
      if (limit <= 0) return false;
      s = this.free.pop() ?? (this.next < this.counts.length ? this.next++ : -1);
      if (s < 0) return false;
      this.slotOf.set(key, s);
    }
    if (Atomics.add(this.counts, s, 1) >= limit) {
      this.release(key);
      return false;
    }
    return true;
  }

  release(key: string): void {
    const s = this.slotOf.get(key);
    if (s === undefined) return;
    if (Atomics.sub(this.counts, s, 1) <= 1) {
      Atomics.store(this.counts, s, 0);
      this.slotOf.delete(key);
      this.free.push(s);
    }
  }

  /** Streams open now for `key`. */
  open(key: string): number {
    const s = this.slotOf.get(key);
    return s === undefined ? 0 : Atomics.load(this.counts, s);
  }
}
