/**
 * The replay window: every data event the hub rendered in the last REPLAY_WINDOW_MS (at most
 * REPLAY_MAX_EVENTS, REPLAY_MAX_BYTES of payload), oldest first, so a client that reconnects with
 * Last-Event-ID gets what it missed for its own subscriptions before live events resume.
 *
 * Event ids are one sequence for the whole process, starting at the wall clock in microseconds, so
 * ids keep growing across restarts and an id from before a restart is recognised as out of reach.
 * The stream threads of one gateway draw them from one shared counter (sharedEventIds), and a swap
 * gets its id once for all of them, so a swap stream resumed on another thread finds its place.
 */

export const REPLAY_WINDOW_MS = 60_000; // 1 min
export const REPLAY_MAX_EVENTS = 200_000;
export const REPLAY_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB
/** Events before the searched position also looked at (ids that arrived out of order). */
const REORDER_SLACK = 256;

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

/**
 * Event e's SSE frame for a stream of event `name`, the GET form or not (`alt`), and `requestId`:
 * made once and kept on e, so the next stream asking for the same one shares the bytes.
 */
export function frameOf(e: RenderedEvent, name: string, alt: boolean, requestId: number): Buffer {
  if (e.frameMethod !== name || e.frameAlt !== alt || e.frameRequestId !== requestId) {
    e.frame = Buffer.from(`id: ${e.id}\nevent: ${name}\nrequest_id: ${requestId}\ndata: ${alt ? e.alt! : e.data}\n\n`, 'utf8');
    e.frameMethod = name;
    e.frameAlt = alt;
    e.frameRequestId = requestId;
  }
  return e.frame;
}

/** Where event ids come from. */
export interface EventIds {
  /** Id of the first event of this process. */
  readonly first: number;
  /** Takes n consecutive ids; returns the first. */
  take(n: number): number;
  /** The id the next take will return. */
  peek(): number;
}

export function localEventIds(first = Date.now() * 1000): EventIds {
  let next = first;
  return {
    first,
    take(n) {
      const id = next;
      next += n;
      return id;
    },
    peek: () => next,
  };
}

/**
 * Ids from a counter in shared memory (BigInt64Array word 0 = next id, word 1 = first id), usable
 * from any thread: pass `buffer` of a counter made elsewhere, or none to make one.
 */
export function sharedEventIds(buffer?: SharedArrayBuffer): EventIds & { readonly buffer: SharedArrayBuffer } {
  const sab = buffer ?? new SharedArrayBuffer(16);
  const words = new BigInt64Array(sab);
  if (buffer === undefined) {
    const first = BigInt(Date.now() * 1000);
    Atomics.store(words, 0, first);
    Atomics.store(words, 1, first);
  }
  return {
    buffer: sab,
    first: Number(Atomics.load(words, 1)),
    take: (n) => Number(Atomics.add(words, 0, BigInt(n))),
    peek: () => Number(Atomics.load(words, 0)),
  };
}

export class ReplayRing {
  private readonly events: (RenderedEvent | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private readonly ids: EventIds;
  /** Highest id dropped from the ring (0 = none yet). */
  private droppedThrough = 0;

  constructor(ids: EventIds | number = localEventIds()) {
    this.ids = typeof ids === 'number' ? localEventIds(ids) : ids;
  }

  /** The id the next event will get. */
  get next(): number {
    return this.ids.peek();
  }

  /** `id`: the event's id when it was given out already (-1: the next one). */
  add(keys: readonly number[], data: string, alt: string | null, pool: number, atMs: number, id = -1): RenderedEvent {
    const e: RenderedEvent = { id: id >= 0 ? id : this.ids.take(1), keys, data, alt, pool, atMs, frameMethod: '', frameAlt: false, frameRequestId: -1, frame: EMPTY };
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
      if (e.id > this.droppedThrough) this.droppedThrough = e.id;
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
    const complete = lastId >= this.droppedThrough && lastId < this.ids.peek() && lastId >= this.ids.first - 1;
    // Binary search for the first event after lastId. Ids given out for several threads at once (swaps)
    // may reach a ring a little after later ones: the search steps back over such neighbours.
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.id <= lastId) lo = mid + 1;
      else hi = mid;
    }
    for (let back = 0; back < REORDER_SLACK && lo > this.head; back++) lo--;
    for (let i = lo; i < this.events.length; i++) {
      const e = this.events[i]!;
      if (e.id <= lastId) continue;
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
