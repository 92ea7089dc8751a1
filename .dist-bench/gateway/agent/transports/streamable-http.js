/**
 * /streamable-http: the MCP Streamable HTTP transport. Each session is the SDK's web-standard
 * transport (WebStandardStreamableHTTPServerTransport) with its own protocol server; this module
 * turns uWS exchanges into web Requests for it and writes its Responses back (event streams chunk
 * by chunk, with backpressure).
 *
 *   POST    initialize without Mcp-Session-Id      opens a session (the id comes back in Mcp-Session-Id)
 *   POST    with Mcp-Session-Id                    requests, notifications and responses of that session
 *   POST    anything else without a session id     answered on its own, without a session
 *   GET     with Mcp-Session-Id                    the session's stream of server messages
 *   DELETE  with Mcp-Session-Id                    ends the session
 *
 * Answers are event streams when the client accepts text/event-stream at initialize (as every MCP
 * client does), and plain JSON otherwise; that choice holds for the session. A session belongs to
 * the caller that opened it (the same key, or the same address when keyless).
 */
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { authInfoFor, createMcpServer } from '../mcp.js';
import { SessionTable } from '../sessions.js';
import { BODY_TOO_LARGE, BUSY, BUSY_RETRY_AFTER_S, PARSE_ERROR, rpcError, RpcCode, SESSION_OWNER } from '../wire.js';
/** Keep-alive comments on open event streams, so proxies do not drop an idle one. */
export const STREAM_KEEP_ALIVE_MS = 15_000; // 15 s
/** Request headers the SDK transport reads. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'origin', 'user-agent'];
function isInitialize(message) {
    const one = (m) => typeof m === 'object' && m !== null && m.method === 'initialize';
    return Array.isArray(message) ? message.some(one) : one(message);
}
/** Whether a client accepts event-stream answers; without that it gets JSON. */
function acceptsEventStream(accept) {
    return /(^|[\s,])text\/event-stream(\s*(;|,|$))/i.test(accept) && !/text\/event-stream\s*;\s*q\s*=\s*0(\.0*)?\s*(,|$)/i.test(accept);
}
export class StreamableHttpEndpoint {
    options;
    sessions;
    constructor(options) {
        this.options = options;
        this.sessions = new SessionTable(options.limits);
    }
    get sessionCount() {
        return this.sessions.size;
    }
    sweep(nowMs) {
        this.sessions.sweep(nowMs);
    }
    close() {
        return this.sessions.closeAll();
    }
    /** Ends the sessions (and their streams) opened by the callers `closes` picks. */
    closeWhere(closes) {
        this.sessions.closeWhere((s) => closes(s.caller));
    }
    async post(ex, caller, pending) {
        const read = await pending;
        if (read.kind === 'aborted')
            return;
        if (read.kind === 'too_large') {
            ex.sendJson(413, BODY_TOO_LARGE, { Connection: 'close' });
            return;
        }
        let message;
        try {
            message = JSON.parse(read.body.toString('utf8'));
        }
        catch {
            ex.sendJson(400, PARSE_ERROR);
            return;
        }
        const sessionId = ex.header('mcp-session-id');
        if (sessionId !== '') {
            const s = this.sessionOf(ex, caller, sessionId);
            if (s !== undefined)
                await this.relay(ex, s, caller, 'POST', message);
            return;
        }
        if (isInitialize(message)) {
            await this.open(ex, caller, message);
            return;
        }
        await this.answerWithoutSession(ex, caller, message);
    }
    async get(ex, caller) {
        const sessionId = ex.header('mcp-session-id');
        if (sessionId === '') {
            ex.sendJson(400, rpcError(RpcCode.serverError, 'Bad Request: the Mcp-Session-Id header is required; open a session with an initialize POST first'));
            return;
        }
        const s = this.sessionOf(ex, caller, sessionId);
        if (s !== undefined)
            await this.relay(ex, s, caller, 'GET', undefined);
    }
    async delete(ex, caller) {
        const sessionId = ex.header('mcp-session-id');
        if (sessionId === '') {
            ex.sendJson(400, rpcError(RpcCode.serverError, 'Bad Request: the Mcp-Session-Id header is required'));
            return;
        }
        const s = this.sessionOf(ex, caller, sessionId);
        if (s !== undefined)
            await this.relay(ex, s, caller, 'DELETE', undefined);
    }
    /** The session a request names, or undefined after answering 404 (unknown) or 403 (another caller's). */
    sessionOf(ex, caller, id) {
        const s = this.sessions.get(id);
        if (s === undefined) {
            ex.sendJson(404, rpcError(RpcCode.sessionNotFound, 'Session not found: it ended or expired. Start a new session with an initialize request (no Mcp-Session-Id header).'));
            return undefined;
        }
        if (s.owner !== caller.key) {
            ex.sendJson(403, SESSION_OWNER);
            return undefined;
        }
        return s;
    }
    /** One request of a session, handed to its SDK transport; the answer written back as it comes. */
    async relay(ex, s, caller, method, message) {
        s.openStreams++;
        this.sessions.touch(s, Date.now());
        try {
            const response = await s.transport.handleRequest(this.webRequest(ex, method), {
                authInfo: authInfoFor(caller),
                ...(method === 'POST' ? { parsedBody: message } : {}),
            });
            await ex.sendResponse(response, { flushHeaders: method === 'GET' });
        }
        finally {
            s.openStreams--;
            this.sessions.touch(s, Date.now());
        }
    }
    async open(ex, caller, message) {
        if (!this.sessions.makeRoom(caller.key, ex.remoteAddress)) {
            ex.sendJson(503, BUSY, { 'Retry-After': `${BUSY_RETRY_AFTER_S}` });
            return;
        }
        const json = !acceptsEventStream(ex.header('accept'));
        const server = createMcpServer(this.options.catalog, this.options.info, 'streamable-http');
        let session;
        const transport = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            enableJsonResponse: json,
            keepAliveMs: STREAM_KEEP_ALIVE_MS,
            onsessioninitialized: (id) => {
                session = {
                    id,
                    owner: caller.key,
                    address: ex.remoteAddress,
                    caller,
                    lastActiveMs: Date.now(),
                    openStreams: 0,
                    transport,
                    server,
                    close: () => server.close(),
                };
                this.sessions.add(session);
            },
        });
        transport.onclose = () => {
            if (session !== undefined)
                this.sessions.remove(session.id);
        };
        await server.connect(transport);
        const response = await transport.handleRequest(this.webRequest(ex, 'POST'), { authInfo: authInfoFor(caller), parsedBody: message });
        if (session === undefined) {
            // The initialize was refused (malformed, or batched with other messages): nothing to keep.
            await server.close();
        }
        else {
            session.openStreams++;
        }
        try {
            await ex.sendResponse(response);
        }
        finally {
            if (session !== undefined) {
                session.openStreams--;
                this.sessions.touch(session, Date.now());
            }
        }
    }
    /** A request outside any session: a protocol server of its own, closed once the answer is out. */
    async answerWithoutSession(ex, caller, message) {
        const json = !acceptsEventStream(ex.header('accept'));
        const server = createMcpServer(this.options.catalog, this.options.info, 'streamable-http');
        const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: json, keepAliveMs: STREAM_KEEP_ALIVE_MS });
        await server.connect(transport);
        try {
            const response = await transport.handleRequest(this.webRequest(ex, 'POST'), { authInfo: authInfoFor(caller), parsedBody: message });
            await ex.sendResponse(response);
        }
        finally {
            await server.close();
        }
    }
    /**
     * The web Request the SDK transport reads (the body is passed parsed). A POST always declares that
     * it accepts both answer kinds: which one is sent was fixed when the session opened.
     */
    webRequest(ex, method) {
        const headers = new Headers();
        for (const name of FORWARDED_HEADERS) {
            const value = ex.header(name);
            if (value !== '')
                headers.set(name, value);
        }
        if (method === 'POST') {
            headers.set('accept', 'application/json, text/event-stream');
            if (!headers.has('content-type'))
                headers.set('content-type', 'application/json');
        }
        return new Request(`http://localhost${ex.path}${ex.query === '' ? '' : `?${ex.query}`}`, { method, headers });
    }
}
//# sourceMappingURL=streamable-http.js.map