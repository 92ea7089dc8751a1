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
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { readQuery } from '../../http/query.js';
import { authInfoFor, createMcpServer } from '../mcp.js';
import { SessionTable } from '../sessions.js';
import { BODY_TOO_LARGE, BUSY, BUSY_RETRY_AFTER_S, PARSE_ERROR, rpcError, RpcCode, SESSION_OWNER } from '../wire.js';
import { STREAM_KEEP_ALIVE_MS } from './streamable-http.js';
/** Where the clients of /sse POST their messages. */
export const SSE_MESSAGES_PATH = '/messages';
/** Events waiting for a slow reader before it is disconnected. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024; // 8 MiB
const SESSION_PARAM = new Set(['sessionId']);
/** The SDK Transport over one uWS event stream. */
export class SseStreamTransport {
    sessionId;
    onclose;
    onerror;
    onmessage;
    ex;
    queue = [];
    queuedBytes = 0;
    writing = false;
    closed = false;
    keepAlive;
    constructor(ex, sessionId) {
        this.ex = ex;
        this.sessionId = sessionId;
    }
    async start() {
        this.ex.onAbort(() => {
            void this.close();
        });
        this.ex.startStream(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
        this.enqueue(`event: endpoint\ndata: ${SSE_MESSAGES_PATH}?sessionId=${this.sessionId}\n\n`);
        this.keepAlive = setInterval(() => this.enqueue(': keepalive\n\n'), STREAM_KEEP_ALIVE_MS);
        this.keepAlive.unref();
    }
    async send(message) {
        if (this.closed)
            throw new Error('the event stream of this session is closed');
        this.enqueue(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    }
    /** A message POSTed for this session. */
    deliver(message, extra) {
        this.onmessage?.(message, extra);
    }
    async close() {
        this.finish(false);
    }
    /** Ends the stream (`drop`: closes the connection without waiting for what is still buffered). */
    finish(drop) {
        if (this.closed)
            return;
        this.closed = true;
        clearInterval(this.keepAlive);
        this.queue = [];
        if (drop)
            this.ex.close();
        else
            this.ex.end();
        this.onclose?.();
    }
    enqueue(text) {
        if (this.closed)
            return;
        this.queue.push(text);
        this.queuedBytes += text.length;
        if (this.queuedBytes > MAX_QUEUED_BYTES) {
            this.finish(true);
            return;
        }
        if (!this.writing)
            void this.flush();
    }
    async flush() {
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
export class SseEndpoint {
    options;
    sessions;
    constructor(options) {
        this.options = options;
        this.sessions = new SessionTable(options.limits);
    }
    get sessionCount() {
        return this.sessions.size;
    }
    close() {
        return this.sessions.closeAll();
    }
    /** Ends the sessions (and their streams) opened by the callers `closes` picks. */
    closeWhere(closes) {
        this.sessions.closeWhere((s) => closes(s.caller));
    }
    /** GET /sse: a new session on this stream. */
    async open(ex, caller) {
        if (!this.sessions.makeRoom(caller.key, ex.remoteAddress)) {
            ex.sendJson(503, BUSY, { 'Retry-After': `${BUSY_RETRY_AFTER_S}` });
            return;
        }
        const id = randomUUID();
        const transport = new SseStreamTransport(ex, id);
        const server = createMcpServer(this.options.catalog, this.options.info, 'sse');
        const session = {
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
    async post(ex, caller, pending) {
        const read = await pending;
        if (read.kind === 'aborted')
            return;
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
        let body;
        try {
            body = JSON.parse(read.body.toString('utf8'));
        }
        catch {
            ex.sendJson(400, PARSE_ERROR);
            return;
        }
        const list = Array.isArray(body) ? body : [body];
        const messages = [];
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
        const extra = { authInfo: authInfoFor(caller) };
        for (const m of messages)
            s.transport.deliver(m, extra);
        ex.send(202, { 'Content-Type': 'text/plain; charset=utf-8' }, 'Accepted');
    }
}
//# sourceMappingURL=sse.js.map