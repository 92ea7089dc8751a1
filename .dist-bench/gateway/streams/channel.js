/**
 * A channel: the events shared by every stream that writes the same frames, one asset's swaps or 1 s
 * candles under one request_id (such a stream has that one subscription, so it needs nothing else).
 * An event is appended once, whatever the number of streams, and each stream keeps a cursor into the
 * log: queueing costs nothing per stream, and streams at the same cursor write the same bytes, joined
 * once (`chunk`) for all of them.
 *
 * Log invariant: entries [base + head, end) are held, every cursor lies in [base + head, end], and
 * base + head is the lowest cursor (`atHead` streams stand there); `bytesBefore[i]` is the total
 * size of the entries before entry i since the channel began. A stream whose unread bytes pass
 * maxBytes is ended (a memory bound: readers are otherwise judged by time, client.ts), so a channel
 * holds at most that much.
 */
import { frameOf } from './replay.js';
const EMPTY = Buffer.alloc(0);
export const SLOW_READER_MESSAGE = 'the stream was closed because the client did not read its events fast enough';
export class Channel {
    readers = new Set();
    /** The event name and request_id of its frames. */
    eventName;
    requestId;
    maxBytes;
    wake;
    frames = [];
    atMs = [];
    bytesBefore = [];
    /** Absolute position of frames[0]. */
    base = 0;
    /** Index of the oldest entry held. */
    head = 0;
    totalBytes = 0;
    atHead = 0;
    /** The last chunk joined, for the next stream at the same cursor. */
    chunkFrom = -1;
    chunkTo = -1;
    chunkBytes = EMPTY;
    constructor(eventName, requestId, maxBytes, wake) {
        this.eventName = eventName;
        this.requestId = requestId;
        this.maxBytes = maxBytes;
        this.wake = wake;
    }
    /** Position after the newest entry. */
    get end() {
        return this.base + this.frames.length;
    }
    /** Entries held (those some stream has not written yet). */
    get held() {
        return this.frames.length - this.head;
    }
    /** Bytes of entries [from, to). */
    bytes(from, to) {
        return this.offset(to) - this.offset(from);
    }
    /** When entry `at` was rendered (ms, hub clock). */
    atMsOf(at) {
        return this.atMs[at - this.base];
    }
    /** The SSE frame of entry `at`. */
    frame(at) {
        return this.frames[at - this.base];
    }
    /** The last position p in (from, to] with entries [from, p) within `maxBytes` (at least one entry). */
    fitting(from, to, maxBytes) {
        const limit = this.offset(from) + maxBytes;
        if (this.offset(to) <= limit)
            return to;
        let lo = from + 1;
        let hi = to;
        while (lo < hi) {
            const mid = (lo + hi + 1) >>> 1;
            if (this.offset(mid) <= limit)
                lo = mid;
            else
                hi = mid - 1;
        }
        return lo;
    }
    /** Entries [from, to) as one buffer; the same bytes for every stream at the same cursor. */
    chunk(from, to) {
        if (to - from === 1)
            return this.frame(from);
        if (from === this.chunkFrom && to === this.chunkTo)
            return this.chunkBytes;
        const out = Buffer.allocUnsafe(this.bytes(from, to));
        let at = 0;
        for (let k = from - this.base; k < to - this.base; k++)
            at += this.frames[k].copy(out, at);
        this.chunkFrom = from;
        this.chunkTo = to;
        this.chunkBytes = out;
        return out;
    }
    /** Stream r reads from the next entry appended on. */
    join(r) {
        r.cursor = this.end;
        this.readers.add(r);
        if (r.cursor === this.base + this.head)
            this.atHead++;
    }
    leave(r) {
        if (!this.readers.delete(r))
            return;
        if (r.cursor === this.base + this.head && --this.atHead === 0)
            this.rescan();
    }
    /** Stream r wrote the entries up to `to`. */
    advance(r, to) {
        const from = r.cursor;
        r.cursor = to;
        if (to !== from && from === this.base + this.head && --this.atHead === 0)
            this.rescan();
    }
    /** Appends event e (its frame made once for the channel, or shared with the stream that made the same one). */
    append(e) {
        const frame = frameOf(e, this.eventName, false, this.requestId);
        this.bytesBefore.push(this.totalBytes);
        this.frames.push(frame);
        this.atMs.push(e.atMs);
        this.totalBytes += frame.length;
        if (this.totalBytes - this.offset(this.base + this.head) > this.maxBytes)
            this.endSlowReaders();
        this.wake(this);
    }
    /** Total size of the entries before position `at`. */
    offset(at) {
        const k = at - this.base;
        return k < this.frames.length ? this.bytesBefore[k] : this.totalBytes;
    }
    /** Ends the streams more than maxBytes behind (rescan() follows as they leave). */
    endSlowReaders() {
        const slow = [];
        for (const r of this.readers)
            if (this.totalBytes - this.offset(r.cursor) > this.maxBytes)
                slow.push(r);
        for (const r of slow)
            r.fail(SLOW_READER_MESSAGE);
    }
    /** Finds the lowest cursor and drops the entries before it. */
    rescan() {
        let low = this.end;
        let n = 0;
        for (const r of this.readers) {
            if (r.cursor < low) {
                low = r.cursor;
                n = 1;
            }
            else if (r.cursor === low)
                n++;
        }
        this.atHead = n;
        const head = low - this.base;
        for (let k = this.head; k < head; k++)
            this.frames[k] = EMPTY;
        this.head = head;
        if (head === this.frames.length) {
            // Everything was read: start over with empty arrays (positions go on).
            this.base = low;
            this.head = 0;
            this.frames = [];
            this.atMs = [];
            this.bytesBefore = [];
        }
        else if (this.head > 1024 && this.head * 2 > this.frames.length) {
            this.frames.splice(0, this.head);
            this.atMs.splice(0, this.head);
            this.bytesBefore.splice(0, this.head);
            this.base = low;
            this.head = 0;
        }
        if (this.chunkFrom < low) {
            this.chunkFrom = -1;
            this.chunkTo = -1;
            this.chunkBytes = EMPTY;
        }
    }
}
//# sourceMappingURL=channel.js.map