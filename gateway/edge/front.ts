/**
 * The HTTP front of a host: a TCP listener on the public port that reads each request head
 * (request-head.ts) and passes the request on to the host's uWS app on a loopback port, then passes
 * uWS's answer back. It exists for what uWS v20.30 cannot do itself:
 *  - answer what it cannot parse: uWS stays silent (HTTP/1.0, a missing Host, too many fields) or
 *    closes without a word (unknown methods, bad chunk sizes); the front answers 400, 408, 431,
 *    501 or 505 with a JSON `{error, message}` body and closes (RFC 9112);
 *  - HTTP/1.0: forwarded as HTTP/1.1 (with a Host when missing), answered, then closed; a chunked
 *    answer (a stream) is sent to such a client without the chunk framing, ended by the close;
 *  - pipelining: uWS closes a connection when it reads the next request before the previous answer
 *    ended (an answer waiting on the shard threads), dropping the answers it had. Without the front
 *    the gateway stops reading such a connection until the answer is written, which saves requests
 *    that come in a later read but not those read together with the pending one; the front holds
 *    each request until the answer before it has ended, so answers keep their order;
 *  - shutdown: stop accepting, let the answers in flight end, then close (drain).
 * Invariant per connection: at most one request is inside uWS at a time (`awaiting`), and bytes of
 * the next one wait in `held` with the client socket paused.
 * The peer address reaches uWS as a PROXY protocol v2 header on each upstream connection, so
 * per-address limits see the client, not the front (gateway/http/peer.ts).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { ApiError } from '../errors.js';
import { STATUS_LINES } from '../http/respond.js';
import { ChunkedBody } from './chunked.js';
import { checkPartialHead, parseRequestHead, type RequestHead } from './request-head.js';

/** A connection without a request in flight, or a head not completed, is closed after this long (uWS's own HTTP idle timeout). */
export const FRONT_IDLE_TIMEOUT_MS = 10_000; // 10 s
/** After an error answer, the socket is destroyed if the client has not closed it by then. */
const ERROR_LINGER_MS = 1_000; // 1 s
/** At shutdown, a connection without a request in progress is closed after this long, unless one arrives. */
const DRAIN_IDLE_GRACE_MS = 300;
/** At shutdown, the port stays open until no connection arrived for this long (the kernel's accept queue is empty), at most DRAIN_ACCEPT_MAX_MS. */
const DRAIN_ACCEPT_QUIET_MS = 50;
const DRAIN_ACCEPT_MAX_MS = 1_000; // 1 s
/** An answer's head longer than this from uWS is not an answer: the connection is dropped. */
const MAX_ANSWER_HEAD_BYTES = 64 * 1024; // 64 KiB
const HEAD_END = Buffer.from('\r\n\r\n');
const UWS_LENGTH = Buffer.from('\r\nContent-Length: ');
const UWS_CHUNKED = Buffer.from('\r\nTransfer-Encoding: chunked\r\n');

export interface FrontOptions {
  /** Public address and port (0 = any free port). */
  host: string;
  port: number;
  /** Port of the uWS app on 127.0.0.1 that serves the requests. */
  upstreamPort: number;
}

export interface Front {
  readonly port: number;
  /** Requests passed to uWS whose answer has not ended. */
  readonly inFlight: number;
  /**
   * Stops accepting; each connection closes once the requests it had sent are answered (idle
   * ones at once). Resolves when all are closed, or at `deadlineMs` after destroying the rest.
   */
  drain(deadlineMs: number): Promise<void>;
  /** Closes every connection now. */
  close(): void;
}

/** The answer the front writes itself: a JSON error, then the connection closes. */
export function errorAnswer(err: ApiError): Buffer {
  const line = STATUS_LINES[err.status] ?? `${err.status} Error`;
  return Buffer.concat([
    Buffer.from(`HTTP/1.1 ${line}\r\nContent-Type: application/json\r\nContent-Length: ${err.body.length}\r\nConnection: close\r\n\r\n`, 'latin1'),
    err.body,
  ]);
}

/** PROXY protocol v2 header naming the client (RFC-like spec by HAProxy: signature, PROXY command over TCP). */
function proxyHeader(socket: Socket): Buffer {
  const signature = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
  const remote = socket.remoteAddress ?? '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote)?.[1];
  const v4 = mapped ?? (/^\d+\.\d+\.\d+\.\d+$/.test(remote) ? remote : null);
  if (v4 !== null) {
    const b = Buffer.alloc(28);
    b.set(signature);
    b[12] = 0x21; // version 2, PROXY
    b[13] = 0x11; // TCP over IPv4
    b.writeUInt16BE(12, 14);
    b.set(v4.split('.').map(Number), 16);
    b.set((/^\d+\.\d+\.\d+\.\d+$/.test(socket.localAddress ?? '') ? socket.localAddress! : '127.0.0.1').split('.').map(Number), 20);
    b.writeUInt16BE(socket.remotePort ?? 0, 24);
    b.writeUInt16BE(socket.localPort ?? 0, 26);
    return b;
  }
  const b = Buffer.alloc(52);
  b.set(signature);
  b[12] = 0x21;
  b[13] = 0x21; // TCP over IPv6
  b.writeUInt16BE(36, 14);
  b.set(ipv6Bytes(remote), 16);
  b.set(ipv6Bytes(socket.localAddress ?? '::1'), 32);
  b.writeUInt16BE(socket.remotePort ?? 0, 48);
  b.writeUInt16BE(socket.localPort ?? 0, 50);
  return b;
}

function ipv6Bytes(text: string): Uint8Array {
  const out = new Uint8Array(16);
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const words = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16) || 0));
  const h = words(head);
  const t = tail === undefined ? [] : words(tail);
  const all = [...h, ...new Array<number>(Math.max(0, 8 - h.length - t.length)).fill(0), ...t].slice(0, 8);
  all.forEach((w, i) => {
    out[i * 2] = w >> 8;
    out[i * 2 + 1] = w & 0xff;
  });
  return out;
}

const enum Answer {
  /** Reading an answer's head (or waiting for one). */
  Head,
  Length,
  Chunked,
  /** Delimited by the upstream closing. */
  UntilClose,
}

class Connection {
  private upstream: Socket | null = null;
  /** Bytes of a request head not complete yet. */
  private partial: Buffer | null = null;
  /** Remaining body bytes of the request being forwarded (Content-Length). */
  private bodyLeft = 0;
  private bodyChunks: ChunkedBody | null = null;
  /** The request inside uWS whose answer has not ended. */
  private awaiting: RequestHead | null = null;
  /** Client bytes waiting for `awaiting`'s answer to end. */
  private held: Buffer | null = null;
  /** The error to answer once `awaiting` is answered. */
  private failed: ApiError | null = null;
  /** No request after the current one is read (HTTP/1.0, Connection: close). */
  private last = false;
  /** Shutting down: closed once the requests received so far are answered. */
  private draining = false;
  private clientEnded = false;
  private finished = false;
  // Answer side.
  private answer = Answer.Head;
  private answerHead: Buffer | null = null;
  private answerLeft = 0;
  private answerChunks: ChunkedBody | null = null;
  /** The answer's body is read but not passed on (HEAD). */
  private dropBody = false;
  /** The answer's chunk framing is removed (HTTP/1.0 client). */
  private dechunk = false;
  private answerBegun = false;
  /** The client's socket holds more than its high-water mark: uWS's answer is not read until it drains. */
  private clientFull = false;

  constructor(
    private readonly client: Socket,
    private readonly front: FrontState,
  ) {
    client.setNoDelay(true);
    client.setTimeout(FRONT_IDLE_TIMEOUT_MS);
    client.on('data', (b: Buffer) => this.onClientData(b));
    client.on('end', () => {
      this.clientEnded = true;
      if (this.partial !== null && this.failed === null) this.fail(new ApiError('bad_request', 'malformed HTTP request: the connection ended inside a request head'));
      // A client that hangs up while its answer is under way (a stream) is gone, as uWS takes it; one
      // that only ended its side after a request still gets the answer.
      else if (this.awaiting !== null && this.answerBegun) this.destroy();
      else this.maybeFinish();
    });
    client.on('timeout', () => {
      if (this.awaiting !== null || this.bodyLeft > 0 || this.bodyChunks !== null) return;
      if (this.partial !== null && this.failed === null) this.fail(new ApiError('request_timeout'));
      else this.destroy();
    });
    client.on('error', () => this.destroy());
    client.on('close', () => this.destroy());
  }

  get inFlight(): boolean {
    return this.awaiting !== null;
  }

  /**
   * Shutdown: no request after the one in progress. A connection with none gets DRAIN_IDLE_GRACE_MS
   * for a request the client sent before the shutdown but the front has not read yet.
   */
  drain(): void {
    this.draining = true;
    if (this.awaiting === null && this.partial === null && this.held === null) setTimeout(() => this.maybeFinish(), DRAIN_IDLE_GRACE_MS).unref();
  }

  destroy(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.awaiting !== null) this.front.answered();
    this.awaiting = null;
    this.client.destroy();
    this.upstream?.destroy();
    this.front.connections.delete(this);
  }

  private onClientData(buf: Buffer): void {
    if (this.finished || this.failed !== null) return;
    if (this.held !== null) {
      // Read before the pause took hold (or resumed by the upstream draining): kept, and paused again.
      this.held = Buffer.concat([this.held, buf]);
      this.client.pause();
      return;
    }
    this.readRequests(buf);
  }

  private readRequests(buf: Buffer): void {
    let i = 0;
    while (i < buf.length && this.failed === null && !this.finished) {
      if (this.bodyChunks !== null) {
        let end: number;
        try {
          end = this.bodyChunks.scan(buf, i);
        } catch (err) {
          this.fail(new ApiError('bad_request', `malformed HTTP request: ${(err as Error).message}`));
          return;
        }
        this.toUpstream(buf.subarray(i, end < 0 ? buf.length : end));
        if (end < 0) return;
        this.bodyChunks = null;
        i = end;
        continue;
      }
      if (this.bodyLeft > 0) {
        const take = Math.min(this.bodyLeft, buf.length - i);
        this.toUpstream(buf.subarray(i, i + take));
        this.bodyLeft -= take;
        i += take;
        continue;
      }
      if (this.last) return; // bytes after the last request are not read
      if (this.awaiting !== null) {
        // The next request waits until uWS has answered this one (uWS closes on a pipelined request).
        this.held = Buffer.from(buf.subarray(i));
        this.client.pause();
        return;
      }
      const prior = this.partial === null ? 0 : this.partial.length;
      const data = this.partial === null ? buf.subarray(i) : Buffer.concat([this.partial, buf.subarray(i)]);
      const end = data.indexOf(HEAD_END, Math.max(0, prior - 3));
      if (end < 0) {
        this.partial = Buffer.from(data);
        try {
          checkPartialHead(this.partial);
        } catch (err) {
          this.fail(err as ApiError);
        }
        return;
      }
      this.partial = null;
      let head: RequestHead;
      try {
        head = parseRequestHead(data.subarray(0, end + 4), this.front.hostName);
      } catch (err) {
        this.fail(err instanceof ApiError ? err : new ApiError('bad_request'));
        return;
      }
      i += end + 4 - prior;
      this.awaiting = head;
      this.front.inFlight++;
      this.answerBegun = false;
      if (head.close) this.last = true;
      if (head.chunked) this.bodyChunks = new ChunkedBody();
      else this.bodyLeft = head.contentLength;
      this.toUpstream(head.forward);
    }
  }

  private toUpstream(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.upstream === null) {
      const up = createConnection({ host: '127.0.0.1', port: this.front.upstreamPort, noDelay: true });
      this.upstream = up;
      // The PROXY header and the first request leave in one write.
      up.cork();
      up.write(proxyHeader(this.client));
      process.nextTick(() => up.uncork());
      up.on('data', (b: Buffer) => this.onAnswer(b));
      up.on('drain', () => {
        if (this.held === null) this.client.resume();
      });
      up.on('error', () => undefined);
      up.on('close', () => this.onUpstreamClose());
    }
    if (!this.upstream.write(bytes)) this.client.pause();
  }

  private onUpstreamClose(): void {
    if (this.finished) return;
    if (this.awaiting !== null && !this.answerBegun) {
      // uWS closed without answering: it could not read what the front passed on.
      this.front.answered();
      this.awaiting = null;
      this.upstream = null;
      if (this.failed === null) this.failed = this.front.stopping ? new ApiError('unavailable') : new ApiError('bad_request', 'malformed HTTP request: the request could not be read');
      this.writeError();
      return;
    }
    // An answer delimited by the close, or a close after the last answer: the client gets the rest, then the close.
    if (this.awaiting !== null) this.front.answered();
    this.awaiting = null;
    this.finished = true;
    this.front.connections.delete(this);
    this.client.end();
    setTimeout(() => this.client.destroy(), ERROR_LINGER_MS).unref();
  }

  /** A slow client pauses the reading of uWS's answer, so uWS sees the backpressure itself. */
  private toClient(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (!this.client.write(bytes) && !this.clientFull) {
      this.clientFull = true;
      this.upstream?.pause();
      this.client.once('drain', () => {
        this.clientFull = false;
        this.upstream?.resume();
      });
    }
  }

  /** One read from uWS is written to the client in one system call (an answer's head and body together). */
  private onAnswer(buf: Buffer): void {
    this.client.cork();
    try {
      this.readAnswers(buf);
    } finally {
      this.client.uncork();
    }
  }

  private readAnswers(buf: Buffer): void {
    let i = 0;
    while (i < buf.length) {
      this.answerBegun = true;
      switch (this.answer) {
        case Answer.Head: {
          const prior = this.answerHead === null ? 0 : this.answerHead.length;
          const data = this.answerHead === null ? buf.subarray(i) : Buffer.concat([this.answerHead, buf.subarray(i)]);
          const end = data.indexOf(HEAD_END, Math.max(0, prior - 3));
          if (end < 0) {
            if (data.length > MAX_ANSWER_HEAD_BYTES) return this.destroy();
            this.answerHead = Buffer.from(data);
            return;
          }
          this.answerHead = null;
          i += end + 4 - prior;
          this.beginAnswer(data.subarray(0, end + 4));
          break;
        }
        case Answer.Length: {
          const take = Math.min(this.answerLeft, buf.length - i);
          if (!this.dropBody) this.toClient(buf.subarray(i, i + take));
          this.answerLeft -= take;
          i += take;
          if (this.answerLeft === 0) this.answerEnded();
          break;
        }
        case Answer.Chunked: {
          let end: number;
          try {
            end = this.answerChunks!.scan(buf, i);
          } catch {
            return this.destroy();
          }
          const stop = end < 0 ? buf.length : end;
          if (!this.dechunk) this.toClient(buf.subarray(i, stop));
          i = stop;
          if (end >= 0) this.answerEnded();
          break;
        }
        case Answer.UntilClose:
          this.toClient(buf.subarray(i));
          return;
      }
    }
  }

  private beginAnswer(head: Buffer): void {
    const text = head.toString('latin1');
    const status = Number(text.slice(9, 12));
    const request = this.awaiting;
    if (status >= 100 && status < 200) {
      // Interim answer (100 Continue): passed on, the final one follows.
      if (request !== null && !request.ancient) this.toClient(head);
      return;
    }
    // uWS writes these two fields itself, in this case; any other spelling is read the slow way.
    let length: number | null = null;
    let chunked = head.indexOf(UWS_CHUNKED) >= 0;
    const at = chunked ? -1 : head.indexOf(UWS_LENGTH);
    if (at >= 0) length = Number(text.slice(at + UWS_LENGTH.length, text.indexOf('\r', at + UWS_LENGTH.length)));
    else if (!chunked) {
      const lower = text.toLowerCase();
      const m = /\r\ncontent-length: *(\d+)/.exec(lower);
      if (m !== null) length = Number(m[1]);
      chunked = /\r\ntransfer-encoding: *chunked/.test(lower);
    }
    this.dropBody = request?.method === 'HEAD';
    this.dechunk = false;
    let out = head;
    if (chunked && request?.ancient === true) {
      // An HTTP/1.0 client reads the body until the close: the chunk framing is removed.
      this.dechunk = true;
      out = Buffer.from(text.replace(/\r\ntransfer-encoding: *chunked/i, ''), 'latin1');
    }
    this.toClient(out);
    if (chunked) {
      this.answer = Answer.Chunked;
      this.answerChunks = new ChunkedBody(this.dechunk ? (b, s, e) => this.toClient(b.subarray(s, e)) : undefined);
    } else if (length !== null) {
      this.answerLeft = length;
      this.answer = Answer.Length;
      if (this.answerLeft === 0) this.answerEnded();
    } else if (status === 204 || status === 304) this.answerEnded();
    else this.answer = Answer.UntilClose;
  }

  private answerEnded(): void {
    this.answer = Answer.Head;
    this.answerChunks = null;
    if (this.awaiting !== null) this.front.answered();
    this.awaiting = null;
    if (this.failed !== null) return this.writeError();
    if (this.maybeFinish()) return;
    if (this.held !== null) {
      const h = this.held;
      this.held = null;
      this.client.resume();
      this.readRequests(h);
    }
  }

  /**
   * Ends the connection once nothing more will be answered on it; true when it did. Shutting down
   * (`draining`), the requests already received, held ones included, are answered first.
   */
  private maybeFinish(): boolean {
    if (this.finished || this.awaiting !== null || this.bodyLeft > 0 || this.bodyChunks !== null) return false;
    const idle = this.held === null && this.partial === null;
    if (!((this.last && this.held === null) || ((this.clientEnded || this.draining) && idle))) return false;
    this.finished = true;
    this.front.connections.delete(this);
    this.client.end();
    this.upstream?.end();
    setTimeout(() => this.client.destroy(), ERROR_LINGER_MS).unref();
    return true;
  }

  private fail(err: ApiError): void {
    this.failed = err;
    this.held = null;
    this.partial = null;
    if (this.bodyLeft > 0 || this.bodyChunks !== null) {
      // The request inside uWS will never be complete: drop it, unless its answer has begun.
      this.bodyLeft = 0;
      this.bodyChunks = null;
      if (this.awaiting !== null && !this.answerBegun) {
        this.front.answered();
        this.awaiting = null;
        this.upstream?.destroy();
        this.upstream = null;
      }
    }
    if (this.awaiting === null) this.writeError();
  }

  private writeError(): void {
    if (this.finished) return;
    this.finished = true;
    this.front.connections.delete(this);
    this.client.end(errorAnswer(this.failed ?? new ApiError('bad_request')));
    this.upstream?.destroy();
    setTimeout(() => this.client.destroy(), ERROR_LINGER_MS).unref();
  }
}

interface FrontState {
  readonly upstreamPort: number;
  readonly hostName: string;
  readonly connections: Set<Connection>;
  inFlight: number;
  stopping: boolean;
  answered(): void;
}

export function startFront(o: FrontOptions): Promise<Front> {
  const state: FrontState = {
    upstreamPort: o.upstreamPort,
    hostName: '',
    connections: new Set(),
    inFlight: 0,
    stopping: false,
    answered() {
      state.inFlight--;
    },
  };
  const server: Server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    const c = new Connection(socket, state);
    state.connections.add(c);
    if (state.stopping) c.drain();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : o.port;
      (state as { hostName: string }).hostName = `${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`;
      resolve({
        port,
        get inFlight() {
          return state.inFlight;
        },
        async drain(deadlineMs: number) {
          state.stopping = true;
          for (const c of [...state.connections]) c.drain();
          // Connections the kernel completed before the shutdown wait in its accept queue, taken a few
          // per turn of a busy loop: the port stays open (they are served like the others) until the
          // connections are done and none came for DRAIN_ACCEPT_QUIET_MS, DRAIN_ACCEPT_MAX_MS at most.
          const started = performance.now();
          let lastAccepted = started;
          server.on('connection', () => (lastAccepted = performance.now()));
          for (;;) {
            await new Promise((r) => setTimeout(r, 5));
            // Immediates run after the loop's poll phase: connections ready by now have been accepted.
            await new Promise((r) => setImmediate(r));
            const now = performance.now();
            if ((state.connections.size === 0 && now - lastAccepted >= DRAIN_ACCEPT_QUIET_MS) || now - started >= DRAIN_ACCEPT_MAX_MS) break;
          }
          server.close();
          if (state.connections.size === 0) return;
          return new Promise<void>((done) => {
            const timer = setTimeout(() => {
              for (const c of [...state.connections]) c.destroy();
              done();
            }, Math.max(0, deadlineMs - performance.now()));
            const poll = setInterval(() => {
              if (state.connections.size > 0) return;
              clearInterval(poll);
              clearTimeout(timer);
              done();
            }, 10);
          });
        },
        close() {
          state.stopping = true;
          server.close();
          for (const c of [...state.connections]) c.destroy();
        },
      });
    });
  });
}
