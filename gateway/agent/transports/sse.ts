/**
 * /sse and /messages: the older MCP HTTP+SSE transport. GET /sse opens an event stream whose first
 * event (`endpoint`) names where to POST: /messages?sessionId=<id>. Messages POSTed there are
 * answered 202 and their replies arrive as `message` events on the stream. The session lives as
 * long as its stream: when the client goes away, its protocol server is closed.
 *
 * Events are queued and written in order, several per write when they pile up; a client that
 * reads slower than it asks (more than MAX_QUEUED_BYTES waiting) is disconnected rather than
 * letting the queue grow without bound.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage, type MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../../auth/access.js';
import { readQuery } from '../../http/query.js';
import type { BodyResult, Exchange } from '../http.js';
import { authInfoFor, createMcpServer } from '../mcp.js';
import { SessionTable, type Session, type SessionLimits } from '../sessions.js';
import type { ToolCatalog } from '../tools/catalog.js';
import type { ServiceInfo } from '../tools/service.js';
import { BODY_TOO_LARGE, BUSY, BUSY_RETRY_AFTER_S, PARSE_ERROR, rpcError, RpcCode, SESSION_OWNER, SSE_MESSAGES_PATH } from '../wire.js';
import { STREAM_KEEP_ALIVE_MS } from './streamable-http.js';

export { SSE_MESSAGES_PATH };
/** Events waiting for a slow reader before it is disconnected. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024; // 8 MiB

const SESSION_PARAM: ReadonlySet<string> = new Set(['sessionId']);

/** The SDK Transport over one uWS event stream. */
export class SseStreamTransport implements Transport {
  readonly sessionId: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly ex: Exchange;
  private queue: string[] = [];
  private queuedBytes = 0;
  private writing = false;
  private closed = false;
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(ex: Exchange, sessionId: string) {
    this.ex = ex;
    this.sessionId = sessionId;
  }

  async start(): Promise<void> {
    this.ex.onAbort(() => {
      void this.close();
    });
    this.ex.startStream(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    this.enqueue(`event: endpoint\ndata: ${SSE_MESSAGES_PATH}?sessionId=${this.sessionId}\n\n`);
    this.keepAlive = setInterval(() => this.enqueue(': keepalive\n\n'), STREAM_KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the event stream of this session is closed');
    this.enqueue(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A message POSTed for this session. */
  deliver(message: JSONRPCMessage, extra: MessageExtraInfo): void {
    this.onmessage?.(message, extra);
  }

  async close(): Promise<void> {
    this.finish(false);
  }

  /** Ends the stream (`drop`: closes the connection without waiting for what is still buffered). */
  private finish(drop: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    this.queue = [];
    if (drop) this.ex.close();
    else this.ex.end();
    this.onclose?.();
  }

  private enqueue(text: string): void {
    if (this.closed) return;
    this.queue.push(text);
    this.queuedBytes += text.length;
    if (this.queuedBytes > MAX_QUEUED_BYTES) {
      this.finish(true);
      return;
    }
    if (!this.writing) void this.flush();
  }

  private async flush(): Promise<void> {
    this.writing = true;
    while (this.queue.length > 0 && !this.closed) {
      const chunk = this.queue.join('');
      this.queue = [];
      this.queuedBytes = 0;
      if (!(await this.ex.write(chunk))) {
        void this.close();
        break;
      }
    }
    this.writing = false;
  }
}

interface SseSession extends Session {
  /** Who opened it (their key's revocation ends it). */
  readonly caller: Caller;
  readonly transport: SseStreamTransport;
  readonly server: Server;
}

export interface SseOptions {
  readonly catalog: ToolCatalog;
  readonly info: ServiceInfo;
  readonly limits: SessionLimits;
}

export class SseEndpoint {
  private readonly options: SseOptions;
  private readonly sessions: SessionTable<SseSession>;

  constructor(options: SseOptions) {
    this.options = options;
    this.sessions = new SessionTable(options.limits);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  close(): Promise<void> {
    return this.sessions.closeAll();
  }

  /** Ends the sessions (and their streams) opened by the callers `closes` picks. */
  closeWhere(closes: (caller: Caller) => boolean): void {
    this.sessions.closeWhere((s) => closes(s.caller));
  }

  /** GET /sse: a new session on this stream. */
  async open(ex: Exchange, caller: Caller): Promise<void> {
    if (!this.sessions.makeRoom(caller.key, ex.remoteAddress)) {
      ex.sendJson(503, BUSY, { 'Retry-After': `${BUSY_RETRY_AFTER_S}` });
      return;
    }
    const id = randomUUID();
    const transport = new SseStreamTransport(ex, id);
    const server = createMcpServer(this.options.catalog, this.options.info, 'sse');
    const session: SseSession = {
      id,
      owner: caller.key,
      address: ex.remoteAddress,
      caller,
      lastActiveMs: Date.now(),
      // The stream itself is held open for the whole session.
      openStreams: 1,
      transport,
      server,
      close: () => server.close(),
    };
    transport.onclose = () => this.sessions.remove(id);
    this.sessions.add(session);
    await server.connect(transport);
  }

  /** POST /messages?sessionId=: messages of a session, delivered to its protocol server. */
  async post(ex: Exchange, caller: Caller, pending: Promise<BodyResult>): Promise<void> {
    const read = await pending;
    if (read.kind === 'aborted') return;
    if (read.kind === 'too_large') {
      ex.sendJson(413, BODY_TOO_LARGE, { Connection: 'close' });
      return;
    }
    const id = readQuery(ex.query, SESSION_PARAM)['sessionId'];
    const s = id === undefined ? undefined : this.sessions.get(id);
    if (s === undefined) {
      ex.sendJson(404, rpcError(RpcCode.sessionNotFound, 'Session not found: its event stream is closed or the sessionId is wrong. Open a new one with GET /sse.'));
      return;
    }
    if (s.owner !== caller.key) {
      ex.sendJson(403, SESSION_OWNER);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(read.body.toString('utf8'));
    } catch {
      ex.sendJson(400, PARSE_ERROR);
      return;
    }
    const list = Array.isArray(body) ? body : [body];
    const messages: JSONRPCMessage[] = [];
    if (list.length === 0) {
      ex.sendJson(400, rpcError(RpcCode.invalidRequest, 'Invalid Request: empty batch'));
      return;
    }
    for (const m of list) {
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) {
        ex.sendJson(400, rpcError(RpcCode.invalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message'));
        return;
      }
      messages.push(parsed.data);
    }
    this.sessions.touch(s, Date.now());
    const extra: MessageExtraInfo = { authInfo: authInfoFor(caller) };
    for (const m of messages) s.transport.deliver(m, extra);
    ex.send(202, { 'Content-Type': 'text/plain; charset=utf-8' }, 'Accepted');
  }
}
