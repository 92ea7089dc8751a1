import { authInfoFor, createMcpServer } from '../mcp.js';
import { BODY_TOO_LARGE, PARSE_ERROR, Refusal, rpcError, RpcCode } from '../wire.js';
/** Messages one batch may hold. */
export const MAX_BATCH_MESSAGES = 100;
/** A request the protocol server has not answered by then gets an internal error. */
export const REQUEST_TIMEOUT_MS = 60_000; // 60 s
/** Transport between the HTTP requests of /json-rpc and the one protocol server behind them. */
class RequestMultiplexer {
    onclose;
    onerror;
    onmessage;
    next = 0;
    waiting = new Map();
    async start() { }
    async close() {
        for (const [id, settle] of this.waiting)
            settle({ jsonrpc: '2.0', id, error: { code: RpcCode.internalError, message: 'The service is shutting down' } });
        this.waiting.clear();
        this.onclose?.();
    }
    /** Replies reach their request; notifications and requests of the server have no way back here and are dropped. */
    async send(message) {
        if (!('id' in message) || 'method' in message)
            return;
        const settle = this.waiting.get(String(message.id));
        if (settle === undefined)
            return;
        this.waiting.delete(String(message.id));
        settle(message);
    }
    request(message, extra) {
        const internal = `rpc-${++this.next}`;
        return new Promise((resolve) => {
            const timer = setTimeout(() => {
                if (this.waiting.delete(internal))
                    resolve({ jsonrpc: '2.0', id: message.id, error: { code: RpcCode.internalError, message: 'Internal error: no answer in time; retry' } });
            }, REQUEST_TIMEOUT_MS);
            timer.unref();
            this.waiting.set(internal, (reply) => {
                clearTimeout(timer);
                resolve({ ...reply, id: message.id });
            });
            this.onmessage?.({ ...message, jsonrpc: '2.0', id: internal }, extra);
        });
    }
    notify(message, extra) {
        // A cancellation names the client's request id, which this server never saw.
        if (message.method === 'notifications/cancelled')
            return;
        this.onmessage?.({ ...message, jsonrpc: '2.0' }, extra);
    }
}
function invalid(id, why) {
    return { kind: 'invalid', error: rpcError(RpcCode.invalidRequest, `Invalid Request: ${why}`, id) };
}
/** What one element of a body is, by the rules of JSON-RPC 2.0. */
function classify(m) {
    if (typeof m !== 'object' || m === null || Array.isArray(m))
        return invalid(null, 'a message must be a JSON object');
    const o = m;
    const hasId = 'id' in o;
    const id = o['id'];
    const validId = (typeof id === 'string' && id.length <= 256) || (typeof id === 'number' && Number.isFinite(id));
    const echo = validId ? id : null;
    if (o['jsonrpc'] !== '2.0')
        return invalid(echo, 'jsonrpc must be "2.0"');
    if (typeof o['method'] !== 'string') {
        if (hasId && ('result' in o || 'error' in o))
            return { kind: 'response' };
        return invalid(echo, 'method must be a string');
    }
    const params = o['params'];
    if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
        return invalid(echo, 'params must be an object');
    const method = o['method'];
    if (!hasId)
        return { kind: 'notification', message: params === undefined ? { method } : { method, params } };
    if (!validId)
        return invalid(null, 'id must be a string or a number');
    return { kind: 'request', message: params === undefined ? { id: id, method } : { id: id, method, params } };
}
export class JsonRpcEndpoint {
    server;
    mux = new RequestMultiplexer();
    ready;
    constructor(options) {
        this.server = createMcpServer(options.catalog, options.info, 'json-rpc');
        this.ready = this.server.connect(this.mux);
    }
    close() {
        return this.server.close();
    }
    async post(ex, caller, pending) {
        const read = await pending;
        if (read.kind === 'aborted')
            return;
        if (read.kind === 'too_large') {
            ex.sendJson(413, BODY_TOO_LARGE, { Connection: 'close' });
            return;
        }
        const contentType = ex.header('content-type');
        if (contentType !== '' && !/^application\/(json|json-rpc)\s*(;|$)/i.test(contentType)) {
            ex.sendJson(415, rpcError(RpcCode.serverError, 'Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json', null, { error: Refusal.unsupportedMediaType }));
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
        await this.ready;
        const extra = { authInfo: authInfoFor(caller) };
        if (!Array.isArray(body)) {
            const c = classify(body);
            const reply = await this.answer(c, extra);
            if (reply === undefined)
                ex.send(204, {});
            else
                ex.sendJson(c.kind === 'invalid' ? 400 : 200, reply);
            return;
        }
        if (body.length === 0) {
            ex.sendJson(400, rpcError(RpcCode.invalidRequest, 'Invalid Request: empty batch'));
            return;
        }
        if (body.length > MAX_BATCH_MESSAGES) {
            ex.sendJson(400, rpcError(RpcCode.invalidRequest, `Invalid Request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages`));
            return;
        }
        const replies = (await Promise.all(body.map((m) => this.answer(classify(m), extra)))).filter((r) => r !== undefined);
        if (replies.length === 0)
            ex.send(204, {});
        else
            ex.sendJson(200, replies);
    }
    async answer(c, extra) {
        switch (c.kind) {
            case 'invalid':
                return c.error;
            case 'response':
                return undefined;
            case 'notification':
                this.mux.notify(c.message, extra);
                return undefined;
            case 'request':
                return this.mux.request(c.message, extra);
        }
    }
}
//# sourceMappingURL=json-rpc.js.map