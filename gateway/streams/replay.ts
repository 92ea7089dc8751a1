/**
 * The replay window: every data event the hub rendered in the last REPLAY_WINDOW_MS (at most
 * REPLAY_MAX_EVENTS, REPLAY_MAX_BYTES of payload), oldest first, so a client that reconnects with
 * Last-Event-ID gets what it missed for its own subscriptions before live events resume.
 *
 * Event ids are one sequence for the whole process, starting at the wall clock in microseconds, so
 * ids keep growing across restarts and an id from before a restart is recognised as out of reach.
 */

export const REPLAY_WINDOW_MS = 60_000; // 1 min
export const REPLAY_MAX_EVENTS = 200_000;
export const REPLAY_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB

/** A rendered event: which subscription keys it belongs to, its payload (and the GET form of a price). */
export interface RenderedEvent {
  readonly id: number;
  /** Subscription keys (see hub.ts keyOf) the event is for. */
  readonly keys: readonly number[];
  readonly data: string;
  /** token_price only: the GET stream's form. */
  readonly alt: string | null;
  /** token_reserves: the pool the event is about (a subscription keeps the latest per pool); else -1. */
  readonly pool: number;
  readonly atMs: number;
  /** The last SSE frame made of this event, and for which (event name, form, request_id): most subscribers share it. */
  frameMethod: string;
  frameAlt: boolean;
  frameRequestId: number;
  frame: Buffer;
}

const EMPTY = Buffer.alloc(0);

export class ReplayRing {
  private readonly events: (RenderedEvent | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private nextId: number;
  /** Id of the first event of this process. */
  private readonly firstId: number;
  /** Highest id dropped from the ring (0 = none yet). */
  private droppedThrough = 0;

  constructor(firstId = Date.now() * 1000) {
    this.nextId = firstId;
    this.firstId = firstId;
  }

  /** The id the next event will get. */
  get next(): number {
    return this.nextId;
  }

  add(keys: readonly number[], data: string, alt: string | null, pool: number, atMs: number): RenderedEvent {
    const e: RenderedEvent = { id: this.nextId++, keys, data, alt, pool, atMs, frameMethod: '', frameAlt: false, frameRequestId: -1, frame: EMPTY };
    this.events.push(e);
    this.bytes += data.length + (alt?.length ?? 0);
    this.trim(atMs);
    return e;
  }

  trim(nowMs: number): void {
    while (
      this.head < this.events.length &&
      (this.events.length - this.head > REPLAY_MAX_EVENTS || this.bytes > REPLAY_MAX_BYTES || this.events[this.head]!.atMs < nowMs - REPLAY_WINDOW_MS)
    ) {
      const e = this.events[this.head]!;
      this.bytes -= e.data.length + (e.alt?.length ?? 0);
      this.droppedThrough = e.id;
      this.events[this.head++] = undefined;
    }
    if (this.head > 4096 && this.head * 2 > this.events.length) {
      this.events.splice(0, this.head);
      this.head = 0;
    }
  }

  /**
   * Events after `lastId` for any of `keys`, oldest first; `complete` is false when some events after
   * `lastId` are no longer held (or the id is not one of this process's).
   */
  since(lastId: number, keys: ReadonlySet<number>): { events: RenderedEvent[]; complete: boolean } {
    const out: RenderedEvent[] = [];
    const complete = lastId >= this.droppedThrough && lastId < this.nextId && lastId >= this.firstId - 1;
    // Binary search for the first event after lastId.
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.id <= lastId) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.events.length; i++) {
      const e = this.events[i]!;
      for (const k of e.keys) {
        if (keys.has(k)) {
          out.push(e);
          break;
        }
      }
    }
    return { events: out, complete };
  }

  get size(): number {
    return this.events.length - this.head;
  }
}
