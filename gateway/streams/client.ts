/**
 * One open stream: its subscriptions, the events waiting for it, and the writes to its socket.
 *
 * Events wait in a queue until the hub's next tick, which writes everything waiting as one chunk
 * inside `cork`. A write that uWS could not hand to the kernel whole marks the stream blocked: no
 * more is written until `onWritable` reports the socket drained, so uWS holds at most one chunk for
 * a slow reader. Meanwhile a price or reserve subscription keeps only its latest event (a newer one
 * replaces the one waiting); a swap or candle stream whose waiting events pass MAX_QUEUED_BYTES is
 * ended with an `error` event rather than allowed to grow.
 *
 * Every data event written costs the caller one credit (enterprise: none); when the allowance runs
 * out mid-stream the stream ends with an `error` event. `limit` ends the stream after that many data
 * events. However the stream ends, `onEnd` runs exactly once (the hub then releases its
 * subscriptions and the caller's concurrent-stream count).
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { RenderedEvent } from './replay.js';
import type { StreamMethod } from './request.js';

/** Waiting event bytes past which a swap or candle stream is ended. */
export const MAX_QUEUED_BYTES = 1024 * 1024; // 1 MiB
/** Most bytes written to one stream per tick; the rest waits for the next tick. */
export const MAX_CHUNK_BYTES = 256 * 1024; // 256 KiB
/** A stream whose socket has not drained for this long is dropped (its reader is gone). */
export const STALL_TIMEOUT_MS = 60_000; // 1 min

const EVENT_NAME: Readonly<Record<StreamMethod, string>> = {
  token_price: 'token_price',
  pool_reserves: 'pool_reserves',
  token_reserves: 'token_reserves',
  pool: 'pool',
  token: 'token',
  ohlcv: 'ohlcv',
};

/** Methods whose subscriptions keep only their latest waiting event. */
const LATEST_WINS: ReadonlySet<StreamMethod> = new Set(['token_price', 'pool_reserves']);

export interface ClientSubscription {
  readonly client: StreamClient;
  readonly method: StreamMethod;
  readonly requestId: number;
  /** Subscription key in the hub's index. */
  readonly key: number;
  /** Index in the client's queue of this subscription's waiting event (latest-wins only), -1 when none. */
  waiting: number;
  /** token_reserves: the waiting event per pool (latest wins per pool). */
  waitingByPool: Map<number, number> | null;
}

interface Waiting {
  readonly frame: string;
  readonly sub: ClientSubscription;
  readonly pool: number;
}

export interface ClientOptions {
  readonly res: HttpResponse;
  readonly post: boolean;
  readonly limit: number | null;
  readonly plan: string;
  /** Charges up to n credits; returns how many were charged. */
  readonly spend: (n: number) => number;
  /** Message of the error event sent when the allowance runs out. */
  readonly exhaustedMessage: () => string;
  readonly nowMs: number;
  readonly pingIntervalMs: number;
  readonly onEnd: (client: StreamClient) => void;
  /** Asks the hub to flush this client on its next tick. */
  readonly wake: (client: StreamClient) => void;
}

export class StreamClient {
  readonly post: boolean;
  readonly subscriptions: ClientSubscription[] = [];
  readonly openedAtMs: number;
  nextPingMs: number;
  /** Data events written so far. */
  delivered = 0;
  private readonly res: HttpResponse;
  private readonly options: ClientOptions;
  private queue: (Waiting | null)[] = [];
  private live = 0;
  private queuedBytes = 0;
  private blockedSinceMs = -1;
  private ended = false;
  /** The client went away (uWS aborted the response): nothing may be written any more. */
  private aborted = false;

  constructor(options: ClientOptions) {
    this.options = options;
    this.res = options.res;
    this.post = options.post;
    this.openedAtMs = options.nowMs;
    this.nextPingMs = options.nowMs + options.pingIntervalMs;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get isBlocked(): boolean {
    return this.blockedSinceMs >= 0;
  }

  /** Events waiting and their bytes (for tests and the bench). */
  get backlog(): { events: number; bytes: number } {
    return { events: this.live, bytes: this.queuedBytes };
  }

  subscribe(method: StreamMethod, requestId: number, key: number): ClientSubscription {
    const sub: ClientSubscription = { client: this, method, requestId, key, waiting: -1, waitingByPool: method === 'token_reserves' ? new Map() : null };
    this.subscriptions.push(sub);
    return sub;
  }

  /** Called inside the uWS request callback: status, headers, and the first bytes of the stream. */
  open(): void {
    const res = this.res;
    res.onWritable(() => {
      this.blockedSinceMs = -1;
      if (this.live > 0) this.options.wake(this);
      return true;
    });
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'text/event-stream');
    res.writeHeader('Cache-Control', 'no-cache, no-transform');
    res.writeHeader('X-Accel-Buffering', 'no');
    res.writeHeader('X-Api-Plan', this.options.plan);
    // The reconnection delay a client starts its backoff from; also sends the headers now.
    if (!res.write('retry: 1000\n\n')) this.blockedSinceMs = this.options.nowMs;
  }

  /** The client went away: no more writes; the hub releases everything. */
  gone(): void {
    this.aborted = true;
    this.finish();
  }

  /** Queues event `e` for `sub` (`replay`: an event missed before a reconnect, kept whatever follows). */
  push(sub: ClientSubscription, e: RenderedEvent, replay = false): void {
    if (this.ended) return;
    const pool = e.pool;
    const alt = !this.post && e.alt !== null;
    if (e.frameMethod !== sub.method || e.frameAlt !== alt || e.frameRequestId !== sub.requestId) {
      e.frame = `id: ${e.id}\nevent: ${EVENT_NAME[sub.method]}\nrequest_id: ${sub.requestId}\ndata: ${alt ? e.alt! : e.data}\n\n`;
      e.frameMethod = sub.method;
      e.frameAlt = alt;
      e.frameRequestId = sub.requestId;
    }
    const frame = e.frame;
    if (replay) {
      // Missed events are all sent again, however many (the replay window bounds them).
      this.queue.push({ frame, sub, pool });
      this.live++;
      this.queuedBytes += frame.length;
      this.options.wake(this);
      return;
    }
    if (LATEST_WINS.has(sub.method) && sub.waiting >= 0) this.drop(sub.waiting);
    else if (sub.waitingByPool !== null) {
      const at = sub.waitingByPool.get(pool);
      if (at !== undefined) this.drop(at);
    }
    // Replaced events leave holes: close them up before they outnumber the events waiting.
    if (this.queue.length >= 64 && this.queue.length > 2 * this.live) this.compact();
    const at = this.queue.length;
    this.queue.push({ frame, sub, pool });
    this.live++;
    this.queuedBytes += frame.length;
    if (LATEST_WINS.has(sub.method)) sub.waiting = at;
    else if (sub.waitingByPool !== null) sub.waitingByPool.set(pool, at);
    else if (this.queuedBytes > MAX_QUEUED_BYTES) {
      this.fail('the stream was closed because the client did not read its events fast enough');
      return;
    }
    this.options.wake(this);
  }

  /** Removes the holes of the queue and re-points the subscriptions at their waiting events. */
  private compact(): void {
    const kept: (Waiting | null)[] = [];
    for (const w of this.queue) if (w !== null && w !== undefined) kept.push(w);
    this.reindex(kept);
  }

  private reindex(queue: (Waiting | null)[]): void {
    this.queue = queue;
    for (const s of this.subscriptions) {
      s.waiting = -1;
      s.waitingByPool?.clear();
    }
    for (let k = 0; k < queue.length; k++) {
      const w = queue[k];
      if (w === null || w === undefined) continue;
      if (w.sub.waitingByPool !== null) w.sub.waitingByPool.set(w.pool, k);
      else if (LATEST_WINS.has(w.sub.method)) w.sub.waiting = k;
    }
  }

  private drop(at: number): void {
    const w = this.queue[at];
    if (w === null || w === undefined) return;
    this.queue[at] = null;
    this.live--;
    this.queuedBytes -= w.frame.length;
  }

  /** Writes what waits, as one chunk, if the socket is not blocked. */
  flush(nowMs: number): void {
    if (this.ended || this.live === 0) return;
    if (this.blockedSinceMs >= 0) {
      if (nowMs - this.blockedSinceMs > STALL_TIMEOUT_MS) this.dropStalled();
      return;
    }
    let allowed = this.live;
    const limit = this.options.limit;
    if (limit !== null) allowed = Math.min(allowed, limit - this.delivered);
    const parts: string[] = [];
    let bytes = 0;
    let i = 0;
    let n = 0;
    for (; i < this.queue.length && n < allowed && bytes < MAX_CHUNK_BYTES; i++) {
      const w = this.queue[i];
      if (w === null || w === undefined) continue;
      parts.push(w.frame);
      bytes += w.frame.length;
      n++;
    }
    const charged = n === 0 ? 0 : this.options.spend(n);
    const exhausted = charged < n;
    if (exhausted) {
      // Only the events paid for go out.
      let kept = 0;
      let keptBytes = 0;
      for (; kept < charged; kept++) keptBytes += parts[kept]!.length;
      parts.length = charged;
      bytes = keptBytes;
    }
    // The waiting events taken out of the queue.
    this.live -= n;
    this.queuedBytes -= bytes;
    if (exhausted) this.queuedBytes = 0;
    this.reindex(i >= this.queue.length ? [] : this.queue.slice(i));
    this.delivered += charged;
    const done = limit !== null && this.delivered >= limit;
    const chunk = parts.join('');
    if (exhausted) {
      this.endWith(chunk + errorFrame(this.options.exhaustedMessage()));
      return;
    }
    if (done) {
      this.endWith(chunk);
      return;
    }
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    if (!ok) this.blockedSinceMs = nowMs;
    else if (this.live > 0) this.options.wake(this);
  }

  /** A keep-alive: not a data event (no id, no request_id, no credit, not counted by limit). */
  ping(nowMs: number, unixSeconds: number): void {
    this.nextPingMs = nowMs + this.options.pingIntervalMs;
    if (this.ended) return;
    if (this.blockedSinceMs >= 0) {
      if (nowMs - this.blockedSinceMs > STALL_TIMEOUT_MS) this.dropStalled();
      return;
    }
    this.write(`event: ping\ndata: {"time":${Math.floor(unixSeconds)}}\n\n`, nowMs);
  }

  /** A non-fatal notice. */
  warn(message: string, nowMs: number): void {
    if (this.ended) return;
    this.write(`event: warning\ndata: ${JSON.stringify({ message })}\n\n`, nowMs);
  }

  /** Ends the stream with an `error` event. */
  fail(message: string): void {
    if (this.ended) return;
    this.endWith(errorFrame(message));
  }

  private write(text: string, nowMs: number): void {
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(text);
    });
    if (!ok && this.blockedSinceMs < 0) this.blockedSinceMs = nowMs;
  }

  private endWith(text: string): void {
    if (this.ended) return;
    this.finish();
    if (this.aborted) return;
    // Ends the response (the last chunk of the body): the client sees the stream end. Not end(text,
    // true): once a body has begun, uWS 20.30 writes its Connection: close header into the body.
    this.res.cork(() => {
      this.res.end(text);
    });
  }

  /** Drops the connection of a reader that stopped reading. */
  private dropStalled(): void {
    if (this.ended) return;
    this.finish();
    if (!this.aborted) this.res.close();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue = [];
    this.live = 0;
    this.queuedBytes = 0;
    this.options.onEnd(this);
  }
}

export function errorFrame(message: string): string {
  return `event: error\ndata: ${JSON.stringify({ message })}\n\n`;
}
