/**
 * One open stream: its subscriptions, the events waiting for it, and the writes to its socket.
 *
 * Events wait in a queue until the hub's next tick, which writes everything waiting as one chunk
 * inside `cork`. A write that uWS could not hand to the kernel whole marks the stream blocked: no
 * more is written until `onWritable` reports the socket drained, so uWS holds at most one chunk for
 * a slow reader. Meanwhile a price or reserve subscription keeps only its latest event (a newer one
 * replaces the one waiting).
 *
 * A reader is judged by what it fails to read over time, not by the size of a burst: a stream is
 * behind from the moment a write leaves something unsent (events still waiting, or bytes uWS could
 * not hand to the kernel) until everything is out again; one behind for more than SLOW_READER_MS is
 * cut (an `error` event when the socket still takes it, else the connection is closed). A reader that
 * keeps up with a burst of any size catches up within milliseconds. MAX_QUEUED_BYTES only bounds
 * memory: a swap or candle stream with that much waiting is ended at once.
 *
 * Every data event written costs the caller one credit (enterprise: none); when the allowance runs
 * out mid-stream the stream ends with an `error` event. `limit` ends the stream after that many data
 * events. However the stream ends, `onEnd` runs exactly once (the hub then releases its
 * subscriptions and the caller's concurrent-stream count).
 */
import type { HttpResponse } from 'uWebSockets.js';
import { writeCorsHeaders } from '../cors.js';
import { SLOW_READER_MESSAGE, type Channel, type ChannelReader } from './channel.js';
import { frameOf, type RenderedEvent } from './replay.js';
import type { StreamMethod } from './request.js';

/** A stream behind for longer than this is cut (its reader stopped, or reads slower than its events come). */
export const SLOW_READER_MS = 10_000; // 10 s
/** Memory bound: waiting event bytes past which a swap or candle stream (or a channel's slowest reader) is ended whatever the time. */
export const MAX_QUEUED_BYTES = 16 * 1024 * 1024; // 16 MiB
/** Most bytes written to one stream per tick; the rest waits for the next tick. */
export const MAX_CHUNK_BYTES = 256 * 1024; // 256 KiB

const EVENT_NAME: Readonly<Record<StreamMethod, string>> = {
  token_price: 'token_price',
  pool_reserves: 'pool_reserves',
  token_reserves: 'token_reserves',
  pool: 'pool',
  token: 'token',
  ohlcv: 'ohlcv',
};

const NO_SUBSCRIPTIONS: ClientSubscription[] = [];
const NOOP = (): void => {};

/** Methods whose subscriptions keep only their latest waiting event. */
const LATEST_WINS: ReadonlySet<StreamMethod> = new Set(['token_price', 'pool_reserves']);

export interface ClientSubscription {
  readonly client: StreamClient;
  readonly method: StreamMethod;
  readonly requestId: number;
  /** Subscription key in the hub's index. */
  readonly key: number;
  /** Keeps only its latest waiting event (prices, pool reserves). */
  readonly latestWins: boolean;
  /** Index in the client's queue of this subscription's waiting event (latest-wins only), -1 when none. */
  waiting: number;
  /** token_reserves: the waiting event per pool (latest wins per pool). */
  waitingByPool: Map<number, number> | null;
}

interface Waiting {
  /** The SSE frame, encoded once and shared by every stream it goes to. */
  readonly frame: Buffer;
  /** null: a notice (a warning), written in order with the data events but free and not counted by limit. */
  readonly sub: ClientSubscription | null;
  readonly pool: number;
  /** When the hub rendered the event (ms, hub clock). */
  readonly atMs: number;
}

/**
 * What a stream needs from the hub that runs it, shared by every stream (a stream holds one
 * reference rather than closures of its own: memory per stream is what limits how many one process holds).
 */
export interface ClientHost {
  readonly pingIntervalMs: number;
  /** Flush this stream on the next tick. */
  wake(client: StreamClient): void;
  /** The stream ended, for whatever reason (called once). */
  ended(client: StreamClient): void;
  /** Charges up to n credits to the stream's owner; returns how many were charged. */
  spend(client: StreamClient, n: number): number;
  /** Message of the error event sent when the owner's allowance runs out. */
  exhaustedMessage(client: StreamClient): string;
  /** A write went out; its oldest event had waited `delayMs` since the hub rendered it. */
  wrote(delayMs: number): void;
}

export interface ClientOptions {
  readonly res: HttpResponse;
  readonly post: boolean;
  readonly limit: number | null;
  readonly plan: string;
  /** Who pays for the stream and holds its concurrency count (opaque to the stream). */
  readonly owner: unknown;
  readonly nowMs: number;
  /** The request asked for `Connection: close` (host.ts Facts): uWS then closes after the response without being told. */
  readonly connectionClose?: boolean;
  /** The request came from a web page: the stream's headers carry CORS (read by `open`, not kept). */
  readonly cors?: boolean;
}

export class StreamClient implements ChannelReader {
  readonly post: boolean;
  /** Made at the first subscription as a one-element array (an empty array that grows reserves room for 17). */
  subscriptions: ClientSubscription[] = NO_SUBSCRIPTIONS;
  nextPingMs: number;
  /** Data events written so far. */
  delivered = 0;
  readonly owner: unknown;
  readonly plan: string;
  private readonly limit: number | null;
  private readonly connectionClose: boolean;
  private readonly res: HttpResponse;
  private readonly host: ClientHost;
  /**
   * A stream whose one subscription is a swap or candle one reads its events from the channel it
   * shares with the other streams of that asset and request_id, from `cursor` on; its own queue then
   * holds only what must go out before them (replayed events, warnings).
   */
  private channel: Channel<StreamClient> | null = null;
  cursor = 0;
  private queue: (Waiting | null)[] = [];
  private live = 0;
  private queuedBytes = 0;
  private blockedSinceMs = -1;
  /** Since when (ms, hub clock) something written or queued has not left (-1: caught up). */
  private behindSinceMs = -1;
  private watchingWritable = false;
  private ended = false;
  /** The client went away (uWS aborted the response): nothing may be written any more. */
  private aborted = false;

  constructor(host: ClientHost, options: ClientOptions) {
    this.host = host;
    this.res = options.res;
    this.post = options.post;
    this.limit = options.limit;
    this.connectionClose = options.connectionClose ?? false;
    this.plan = options.plan;
    this.owner = options.owner;
    this.nextPingMs = options.nowMs + host.pingIntervalMs;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get isBlocked(): boolean {
    return this.blockedSinceMs >= 0;
  }

  /** Events waiting and their bytes (for tests and the bench). */
  get backlog(): { events: number; bytes: number } {
    const ch = this.channel;
    if (ch === null) return { events: this.live, bytes: this.queuedBytes };
    return { events: this.live + ch.end - this.cursor, bytes: this.queuedBytes + ch.bytes(this.cursor, ch.end) };
  }

  /** Reads the events of `channel` appended from now on (the hub's part: see Channel). */
  attach(channel: Channel<StreamClient>): void {
    this.channel = channel;
    channel.join(this);
  }

  /** Events of the channel not written yet. */
  private get unread(): boolean {
    return this.channel !== null && this.cursor < this.channel.end;
  }

  /**
   * Moves the channel's unread events into the stream's own queue, so what is queued next goes out
   * after them.
   */
  private takeUnread(): void {
    const ch = this.channel!;
    const end = ch.end;
    if (this.cursor === end) return;
    const sub = this.subscriptions[0]!;
    for (let at = this.cursor; at < end; at++) {
      const frame = ch.frame(at);
      this.queue.push({ frame, sub, pool: -1, atMs: ch.atMsOf(at) });
      this.live++;
      this.queuedBytes += frame.length;
    }
    ch.advance(this, end);
  }

  subscribe(method: StreamMethod, requestId: number, key: number): ClientSubscription {
    const sub: ClientSubscription = {
      client: this,
      method,
      requestId,
      key,
      latestWins: LATEST_WINS.has(method),
      waiting: -1,
      waitingByPool: method === 'token_reserves' ? new Map() : null,
    };
    if (this.subscriptions === NO_SUBSCRIPTIONS) this.subscriptions = [sub];
    else this.subscriptions.push(sub);
    return sub;
  }

  /**
   * Called inside the uWS request callback: status, headers, and the first bytes of the stream.
   * `watchAbort`: register the abort handler here (the caller has not registered one); `cors`: the
   * request came from a web page.
   */
  open(watchAbort: boolean, nowMs: number, cors = false): void {
    const res = this.res;
    if (watchAbort) res.onAborted(() => this.gone());
    res.writeStatus('200 OK');
    if (cors) writeCorsHeaders(res);
    res.writeHeader('Content-Type', 'text/event-stream');
    res.writeHeader('Cache-Control', 'no-cache, no-transform');
    res.writeHeader('X-Accel-Buffering', 'no');
    res.writeHeader('X-Api-Plan', this.plan);
    // Every stream ends with its connection closed by the server (limit, error, shutdown): a client
    // must not queue another request behind it.
    res.writeHeader('Connection', 'close');
    // The reconnection delay a client starts its backoff from; also sends the headers now.
    if (!res.write('retry: 1000\n\n')) this.blocked(nowMs);
  }

  /**
   * A write found the socket full: nothing more is written until uWS reports it drained. The
   * handler is registered on the first backpressure only (most streams never see any).
   */
  private blocked(nowMs: number): void {
    this.blockedSinceMs = nowMs;
    if (this.behindSinceMs < 0) this.behindSinceMs = nowMs;
    if (this.watchingWritable) return;
    this.watchingWritable = true;
    this.res.onWritable(() => {
      this.blockedSinceMs = -1;
      if (this.live > 0 || this.unread) this.host.wake(this);
      else {
        this.behindSinceMs = -1;
        // uWS does not drain its own buffer while an onWritable handler is registered: a cork
        // (an empty write) makes it send what it still holds of the last write.
        this.res.cork(NOOP);
      }
      return true;
    });
  }

  /** Whether the stream has been behind for too long; if so it is cut (with an `error` event if the socket takes one). */
  private tooSlow(nowMs: number): boolean {
    if (this.behindSinceMs < 0 || nowMs - this.behindSinceMs <= SLOW_READER_MS) return false;
    if (this.blockedSinceMs >= 0) this.dropStalled();
    else this.fail(SLOW_READER_MESSAGE);
    return true;
  }

  /** After a write: caught up when everything left, else behind from now (if not already). */
  private wroteAll(nowMs: number, ok: boolean): void {
    if (ok && this.live === 0 && !this.unread) this.behindSinceMs = -1;
    else if (this.behindSinceMs < 0) this.behindSinceMs = nowMs;
  }

  /** The client went away: no more writes; the hub releases everything. */
  gone(): void {
    this.aborted = true;
    this.finish();
  }

  /** Queues event `e` for `sub` (`replay`: an event missed before a reconnect, kept whatever follows). */
  push(sub: ClientSubscription, e: RenderedEvent, replay = false): void {
    if (this.ended) return;
    if (this.channel !== null) this.takeUnread();
    const pool = e.pool;
    const frame = frameOf(e, EVENT_NAME[sub.method], !this.post && e.alt !== null, sub.requestId);
    if (replay) {
      // Missed events are all sent again, however many (the replay window bounds them).
      this.queue.push({ frame, sub, pool, atMs: e.atMs });
      this.live++;
      this.queuedBytes += frame.length;
      this.host.wake(this);
      return;
    }
    if (sub.latestWins && sub.waiting >= 0) this.drop(sub.waiting);
    else if (sub.waitingByPool !== null) {
      const at = sub.waitingByPool.get(pool);
      if (at !== undefined) this.drop(at);
    }
    // Replaced events leave holes: close them up before they outnumber the events waiting.
    if (this.queue.length >= 64 && this.queue.length > 2 * this.live) this.compact();
    const at = this.queue.length;
    this.queue.push({ frame, sub, pool, atMs: e.atMs });
    this.live++;
    this.queuedBytes += frame.length;
    if (sub.latestWins) sub.waiting = at;
    else if (sub.waitingByPool !== null) sub.waitingByPool.set(pool, at);
    else if (this.queuedBytes > MAX_QUEUED_BYTES) {
      this.fail(SLOW_READER_MESSAGE);
      return;
    }
    this.host.wake(this);
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
      if (w === null || w === undefined || w.sub === null) continue;
      if (w.sub.waitingByPool !== null) w.sub.waitingByPool.set(w.pool, k);
      else if (w.sub.latestWins) w.sub.waiting = k;
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
    if (this.ended || (this.live === 0 && !this.unread)) return;
    if (this.tooSlow(nowMs) || this.blockedSinceMs >= 0) return;
    if (this.live === 0) {
      this.flushChannel(nowMs);
      return;
    }
    const limit = this.limit;
    const allowed = limit === null ? Infinity : limit - this.delivered;
    // What goes out now: up to `allowed` data events (and the notices among them), about MAX_CHUNK_BYTES.
    const q = this.queue;
    let bytes = 0;
    let end = 0;
    let n = 0;
    let items = 0;
    for (; end < q.length && bytes < MAX_CHUNK_BYTES; end++) {
      const w = q[end];
      if (w === null || w === undefined) continue;
      if (w.sub !== null) {
        if (n >= allowed) break;
        n++;
      }
      bytes += w.frame.length;
      items++;
    }
    const charged = n === 0 ? 0 : this.host.spend(this, n);
    if (items > 0) {
      let first = 0;
      while (q[first] === null) first++;
      this.host.wrote(nowMs - q[first]!.atMs);
    }
    const exhausted = charged < n;
    // Only the events paid for go out (all of them unless the allowance ran out), with the notices before them.
    let writeEnd = end;
    if (exhausted) {
      let paid = 0;
      for (writeEnd = 0; writeEnd < end; writeEnd++) {
        const w = q[writeEnd];
        if (w === null || w === undefined || w.sub === null) continue;
        if (paid === charged) break;
        paid++;
      }
    }
    this.live -= items;
    this.queuedBytes -= bytes;
    this.delivered += charged;
    const finished = exhausted || (limit !== null && this.delivered >= limit);
    // Each frame written as it is (shared by every stream it goes to), all in one cork: one send.
    const ok = corkedFrames(this.res, q, writeEnd);
    if (end >= q.length) {
      q.length = 0;
      for (const sub of this.subscriptions) {
        sub.waiting = -1;
        sub.waitingByPool?.clear();
      }
    } else this.reindex(q.slice(end));
    if (exhausted) {
      this.endWith(errorFrame(this.host.exhaustedMessage(this)));
      return;
    }
    if (finished) {
      this.endWith('');
      return;
    }
    this.wroteAll(nowMs, ok);
    if (!ok) this.blocked(nowMs);
    else if (this.live > 0 || this.unread) this.host.wake(this);
  }

  /** Writes the channel's unread events (those paid for, up to `limit` and about MAX_CHUNK_BYTES) as one chunk. */
  private flushChannel(nowMs: number): void {
    const ch = this.channel!;
    const from = this.cursor;
    const limit = this.limit;
    let to = ch.fitting(from, limit === null ? ch.end : Math.min(ch.end, from + (limit - this.delivered)), MAX_CHUNK_BYTES);
    const n = to - from;
    const charged = this.host.spend(this, n);
    this.host.wrote(nowMs - ch.atMsOf(from));
    const exhausted = charged < n;
    if (exhausted) to = from + charged;
    this.delivered += charged;
    const ok = to === from || corkedWrite(this.res, ch.chunk(from, to));
    ch.advance(this, to);
    if (exhausted) {
      this.endWith(errorFrame(this.host.exhaustedMessage(this)));
      return;
    }
    if (limit !== null && this.delivered >= limit) {
      this.endWith('');
      return;
    }
    this.wroteAll(nowMs, ok);
    if (!ok) this.blocked(nowMs);
    else if (this.cursor < ch.end) this.host.wake(this);
  }

  /** A keep-alive: not a data event (no id, no request_id, no credit, not counted by limit). */
  ping(nowMs: number, unixSeconds: number): void {
    this.nextPingMs = nowMs + this.host.pingIntervalMs;
    if (this.ended || this.tooSlow(nowMs) || this.blockedSinceMs >= 0) return;
    this.write(`event: ping\ndata: {"time":${Math.floor(unixSeconds)}}\n\n`, nowMs);
  }

  /**
   * A `warning` queued in order with the data events waiting (those before it go out before it,
   * those pushed later after it): free, not counted by limit.
   */
  warnInOrder(message: string, nowMs: number): void {
    if (this.ended) return;
    if (this.channel !== null) this.takeUnread();
    const frame = Buffer.from(warningFrame(message), 'utf8');
    this.queue.push({ frame, sub: null, pool: -1, atMs: nowMs });
    this.live++;
    this.queuedBytes += frame.length;
    this.host.wake(this);
  }

  /** A non-fatal notice, written at once (before any data event waiting). */
  warn(message: string, nowMs: number): void {
    if (this.ended) return;
    this.write(warningFrame(message), nowMs);
  }

  /** Ends the stream with an `error` event. */
  fail(message: string): void {
    if (this.ended) return;
    this.endWith(errorFrame(message));
  }

  private write(text: string, nowMs: number): void {
    if (!corkedWrite(this.res, text) && this.blockedSinceMs < 0) this.blocked(nowMs);
  }

  private endWith(text: string): void {
    if (this.ended) return;
    this.finish();
    if (this.aborted) return;
    const res = this.res;
    if (this.connectionClose) res.cork(() => res.end(text));
    else res.cork(() => endAndClose(res, text));
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
    this.host.ended(this);
  }
}

// Corked writes without a closure per call (a write happens per stream per tick).
let framesRes: HttpResponse | null = null;
let framesQueue: readonly (Waiting | null)[] = [];
let framesEnd = 0;
let framesOk = true;
/** Where a stream's waiting frames are gathered for its write (uWS copies what it keeps, so it is reused). */
const scratch = Buffer.allocUnsafe(2 * MAX_CHUNK_BYTES + 64 * 1024);
const framesList: Buffer[] = [];
function doFrames(): void {
  const res = framesRes!;
  let bytes = 0;
  let single: Buffer | null = null;
  let fits = true;
  for (let k = 0, taken = 0; k < framesEnd; k++) {
    const w = framesQueue[k];
    if (w === null || w === undefined) continue;
    const f = w.frame;
    if (taken === 0) single = f;
    if (fits && bytes + f.length <= scratch.length) f.copy(scratch, bytes);
    else fits = false;
    framesList.push(f);
    bytes += f.length;
    taken++;
  }
  // One write: a write costs far more than the bytes it copies.
  const chunk = framesList.length === 1 ? single! : fits ? scratch.subarray(0, bytes) : Buffer.concat(framesList, bytes);
  framesOk = res.write(chunk);
  framesList.length = 0;
}

/** Writes the frames of queue[0..end) in one cork; false on backpressure. */
function corkedFrames(res: HttpResponse, queue: readonly (Waiting | null)[], end: number): boolean {
  let any = false;
  for (let k = 0; k < end && !any; k++) any = queue[k] !== null && queue[k] !== undefined;
  if (!any) return true;
  framesRes = res;
  framesQueue = queue;
  framesEnd = end;
  framesOk = true;
  try {
    res.cork(doFrames);
  } finally {
    framesRes = null;
    framesQueue = [];
  }
  return framesOk;
}

let writeRes: HttpResponse | null = null;
let writeText: string | Buffer = '';
let writeOk = true;
function doWrite(): void {
  writeOk = writeRes!.write(writeText);
}

/** res.write inside res.cork; false when uWS could not hand everything to the kernel (backpressure). */
function corkedWrite(res: HttpResponse, text: string | Buffer): boolean {
  writeRes = res;
  writeText = text;
  writeOk = true;
  try {
    res.cork(doWrite);
  } finally {
    writeRes = null;
    writeText = '';
  }
  return writeOk;
}

/** `Connection: close\r\n`, as uWS writes it: 19 bytes. */
const CLOSE_LINE_BYTES = 19;
/** writeHeader(key, value) writes `${key}: ${value}\r\n`: this pair makes the chunk size line `\r\n13;e=": "\r\n`. */
const CLOSE_CHUNK_KEY = `\r\n${CLOSE_LINE_BYTES.toString(16)};e="`;
const CLOSE_CHUNK_VALUE = '"';

/**
 * Ends a stream's response with the chunked body's terminator and has uWS close the connection once
 * everything written has left (the stream announced `Connection: close` in its headers).
 *
 * uWS 20.30 closes a connection after a response only when the request asked for it or the
 * response is ended with end(body, true), and end(body, true) first writes its `Connection: close`
 * header line raw, wherever the body stands: in a chunked body it lands between two chunks and
 * breaks the framing (and close() after end() is refused, while close() alone cuts the body
 * short). So that line is made part of the body: a chunk header declaring its 19 bytes is written
 * before it, through writeHeader (which also writes raw bytes; the ": " it puts between key and
 * value sits in a quoted chunk extension), and the chunk before it is a lone ":", so an SSE reader
 * sees the comment line `:Connection: close`, which it ignores. On the wire:
 *
 *   \r\n1\r\n:  \r\n13;e=": "\r\n  Connection: close\r\n  \r\n<size>\r\n<text>  \r\n0\r\n\r\n
 *
 * uWS then shuts the socket down as soon as its buffer is empty (at once, or when a slow reader
 * drained it). test/streams-close.test.ts reads these bytes from a raw socket.
 *
 * When the request itself said `Connection: close`, uWS writes no header line and closes anyway:
 * the stream ends with a plain end(text) (StreamClient.endWith). An HTTP/1.0 request (which uWS
 * also answers with a chunked body it cannot read) is not told apart.
 */
function endAndClose(res: HttpResponse, text: string): void {
  res.write(':');
  res.writeHeader(CLOSE_CHUNK_KEY, CLOSE_CHUNK_VALUE);
  res.end(text, true);
}

export function warningFrame(message: string): string {
  return `event: warning\ndata: ${JSON.stringify({ message })}\n\n`;
}

export function errorFrame(message: string): string {
  return `event: error\ndata: ${JSON.stringify({ message })}\n\n`;
}
