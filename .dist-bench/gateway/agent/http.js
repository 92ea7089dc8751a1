import { peerAddressText } from '../http/peer.js';
const STATUS_TEXT = {
    200: 'OK',
    202: 'Accepted',
    204: 'No Content',
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    406: 'Not Acceptable',
    409: 'Conflict',
    413: 'Payload Too Large',
    415: 'Unsupported Media Type',
    429: 'Too Many Requests',
    500: 'Internal Server Error',
    503: 'Service Unavailable',
};
/** CORS: keys travel in a header, never in cookies, so any origin may call (DNS rebinding is checked on Host). */
export const CORS_HEADERS = {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, Mcp-Protocol-Version, X-Api-Plan, Retry-After',
};
/** Added to CORS_HEADERS (which every answer carries) on preflight answers. */
export const PREFLIGHT_HEADERS = {
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
    'Access-Control-Max-Age': '86400',
};
/** Response headers uWS writes itself, or that do not apply to a re-framed body. */
const SKIPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const NOOP = () => { };
export class Exchange {
    method;
    path;
    query;
    /** Request headers, names lower case (the Authorization value is kept only in `authorization`). */
    headers;
    authorization;
    remoteAddress;
    aborted = false;
    /** Headers added to every answer of this exchange (X-Api-Plan once the caller is known). */
    extraHeaders = { ...CORS_HEADERS };
    res;
    abortHandlers = [];
    drained = null;
    watchingWritable = false;
    finished = false;
    started = false;
    /** Must run inside the uWS request callback: it copies what the request holds and registers onAborted. */
    constructor(res, req) {
        this.res = res;
        res.onAborted(() => {
            this.aborted = true;
            const drained = this.drained;
            this.drained = null;
            drained?.();
            for (const h of this.abortHandlers.splice(0))
                h();
        });
        this.method = req.getMethod();
        this.path = req.getUrl();
        this.query = req.getQuery() ?? '';
        const headers = new Map();
        let authorization = '';
        req.forEach((name, value) => {
            if (name === 'authorization')
                authorization = value;
            else
                headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
        });
        this.headers = headers;
        this.authorization = authorization;
        this.remoteAddress = peerAddressText(res);
    }
    /** Whether an answer has begun (or the client is gone): nothing else may be sent. */
    get answered() {
        return this.aborted || this.started;
    }
    header(name) {
        return this.headers.get(name) ?? '';
    }
    /** Runs `fn` when the client goes away before the answer ended (at once if it already has). */
    onAbort(fn) {
        if (this.aborted)
            fn();
        else
            this.abortHandlers.push(fn);
    }
    /**
     * The request body, at most `maxBytes`. Must be called inside the uWS request callback. A declared
     * Content-Length over the bound is refused before anything is read.
     */
    readBody(maxBytes) {
        const declared = Number(this.header('content-length'));
        if (declared > maxBytes)
            return Promise.resolve({ kind: 'too_large' });
        return new Promise((resolve) => {
            const chunks = [];
            let size = 0;
            let done = false;
            this.onAbort(() => {
                if (!done) {
                    done = true;
                    resolve({ kind: 'aborted' });
                }
            });
            this.res.onData((chunk, isLast) => {
                if (done)
                    return;
                if (this.started) {
                    // Answered already (refused before the body was needed): the rest is not kept.
                    done = true;
                    resolve({ kind: 'aborted' });
                    return;
                }
                size += chunk.byteLength;
                if (size > maxBytes) {
                    done = true;
                    resolve({ kind: 'too_large' });
                    return;
                }
                // The chunk's memory is reused by uWS once this callback returns.
                chunks.push(Buffer.from(chunk.slice(0)));
                if (isLast) {
                    done = true;
                    resolve({ kind: 'body', body: Buffer.concat(chunks, size) });
                }
            });
        });
    }
    /** One whole answer. */
    send(status, headers, body = '') {
        if (this.aborted || this.started)
            return;
        this.finished = true;
        this.res.cork(() => {
            this.writeHead(status, headers);
            this.res.end(body);
        });
    }
    sendJson(status, value, headers = {}) {
        this.send(status, { 'Content-Type': 'application/json', ...headers }, JSON.stringify(value));
    }
    /** Starts a streamed answer (server-sent events): status and headers now, then `write` per chunk and `end`. */
    startStream(status, headers) {
        if (this.aborted || this.started)
            return;
        this.res.cork(() => {
            this.writeHead(status, headers);
        });
    }
    /**
     * Writes one chunk of a started stream; resolves when the next may follow (at once unless the
     * socket is full), false once the client is gone.
     */
    async write(chunk) {
        if (this.aborted || this.finished)
            return false;
        let ok = true;
        this.res.cork(() => {
            ok = this.res.write(chunk);
        });
        if (!ok)
            await this.drain();
        return !this.aborted;
    }
    /** Ends a started stream. */
    end() {
        if (this.aborted || this.finished)
            return;
        this.finished = true;
        this.res.cork(() => {
            this.res.end();
        });
    }
    /** Drops the connection at once, whatever is still buffered for it (a client too slow to read). */
    close() {
        if (this.aborted)
            return;
        this.finished = true;
        this.res.close();
    }
    /** Writes a web-standard Response: whole bodies at once, event streams chunk by chunk with backpressure. */
    async sendResponse(response, options = {}) {
        const headers = {};
        response.headers.forEach((value, name) => {
            if (!SKIPPED_HEADERS.has(name))
                headers[name] = value;
        });
        const body = response.body;
        if (body === null) {
            this.send(response.status, headers);
            return;
        }
        if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
            const bytes = new Uint8Array(await response.arrayBuffer());
            this.send(response.status, headers, bytes);
            return;
        }
        const reader = body.getReader();
        this.onAbort(() => {
            reader.cancel().catch(NOOP);
        });
        if (this.aborted)
            return;
        this.startStream(response.status, headers);
        // A comment line sends the headers now, so a client waiting for them is not held until the first event.
        if (options.flushHeaders === true && !(await this.write(': stream open\n\n')))
            return;
        for (;;) {
            let next;
            try {
                next = await reader.read();
            }
            catch {
                break;
            }
            if (next.done)
                break;
            if (!(await this.write(next.value)))
                return;
        }
        this.end();
    }
    writeHead(status, headers) {
        this.started = true;
        this.res.writeStatus(`${status} ${STATUS_TEXT[status] ?? 'Error'}`);
        for (const [name, value] of Object.entries(this.extraHeaders))
            this.res.writeHeader(name, value);
        for (const [name, value] of Object.entries(headers))
            this.res.writeHeader(name, value);
    }
    drain() {
        if (this.aborted)
            return Promise.resolve();
        if (!this.watchingWritable) {
            this.watchingWritable = true;
            this.res.onWritable(() => {
                const drained = this.drained;
                this.drained = null;
                drained?.();
                return true;
            });
        }
        return new Promise((resolve) => {
            this.drained = resolve;
        });
    }
}
//# sourceMappingURL=http.js.map