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
const EMPTY = Buffer.alloc(0);
/**
 * Event e's SSE frame for a stream of event `name`, the GET form or not (`alt`), and `requestId`:
 * made once and kept on e, so the next stream asking for the same one shares the bytes.
 */
export function frameOf(e, name, alt, requestId) {
    if (e.frameMethod !== name || e.frameAlt !== alt || e.frameRequestId !== requestId) {
        e.frame = Buffer.from(`id: ${e.id}\nevent: ${name}\nrequest_id: ${requestId}\ndata: ${alt ? e.alt : e.data}\n\n`, 'utf8');
        e.frameMethod = name;
        e.frameAlt = alt;
        e.frameRequestId = requestId;
    }
    return e.frame;
}
export function localEventIds(first = Date.now() * 1000) {
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
export function sharedEventIds(buffer) {
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
    events = [];
    head = 0;
    bytes = 0;
    ids;
    /** Highest id dropped from the ring (0 = none yet). */
    droppedThrough = 0;
    constructor(ids = localEventIds()) {
        this.ids = typeof ids === 'number' ? localEventIds(ids) : ids;
    }
    /** The id the next event will get. */
    get next() {
        return this.ids.peek();
    }
    /** `id`: the event's id when it was given out already (-1: the next one). */
    add(keys, data, alt, pool, atMs, id = -1) {
        const e = { id: id >= 0 ? id : this.ids.take(1), keys, data, alt, pool, atMs, frameMethod: '', frameAlt: false, frameRequestId: -1, frame: EMPTY };
        this.events.push(e);
        this.bytes += data.length + (alt?.length ?? 0);
        this.trim(atMs);
        return e;
    }
    trim(nowMs) {
        while (this.head < this.events.length &&
            (this.events.length - this.head > REPLAY_MAX_EVENTS || this.bytes > REPLAY_MAX_BYTES || this.events[this.head].atMs < nowMs - REPLAY_WINDOW_MS)) {
            const e = this.events[this.head];
            this.bytes -= e.data.length + (e.alt?.length ?? 0);
            if (e.id > this.droppedThrough)
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
    since(lastId, keys) {
        const out = [];
        const complete = lastId >= this.droppedThrough && lastId < this.ids.peek() && lastId >= this.ids.first - 1;
        // Binary search for the first event after lastId. Ids given out for several threads at once (swaps)
        // may reach a ring a little after later ones: the search steps back over such neighbours.
        let lo = this.head;
        let hi = this.events.length;
        while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (this.events[mid].id <= lastId)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (let back = 0; back < REORDER_SLACK && lo > this.head; back++)
            lo--;
        for (let i = lo; i < this.events.length; i++) {
            const e = this.events[i];
            if (e.id <= lastId)
                continue;
            for (const k of e.keys) {
                if (keys.has(k)) {
                    out.push(e);
                    break;
                }
            }
        }
        return { events: out, complete };
    }
    get size() {
        return this.events.length - this.head;
    }
}
//# sourceMappingURL=replay.js.map