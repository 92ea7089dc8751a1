/**
 * /json-rpc: plain JSON-RPC 2.0 over POST, for clients that want neither sessions nor streams. A
 * body is one message or a batch (an array); the answer is the reply, or the array of replies in
 * the order asked; a body of notifications only is answered 204. Any MCP method works without an
 * initialize first (tools/list, tools/call, ping, ...).
 *
 * One protocol server answers every request. Request ids are made unique on the way in and given
 * back on the way out, so two clients using the same id never meet; the caller (the key of the
 * HTTP request) travels with each message.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../../auth/access.js';
import type { BodyResult, Exchange } from '../http.js';
import { authInfoFor, createMcpServer } from '../mcp.js';
import type { ToolCatalog } from '../tools/catalog.js';
import type { ServiceInfo } from '../tools/service.js';
import { BODY_TOO_LARGE, PARSE_ERROR, Refusal, rpcError, RpcCode, type RpcErrorBody } from '../wire.js';

/** Messages one batch may hold. */
export const MAX_BATCH_MESSAGES = 100;
/** A request the protocol server has not answered by then gets an internal error. */
export const REQUEST_TIMEOUT_MS = 60_000; // 60 s

type RequestId = string | number;
type Reply = { readonly jsonrpc: '2.0'; readonly id: RequestId | null; readonly result?: unknown; readonly error?: unknown };

/** Transport between the HTTP requests of /json-rpc and the one protocol server behind them. */
class RequestMultiplexer implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private next = 0;
  private readonly waiting = new Map<string, (reply: Reply) => void>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    for (const [id, settle] of this.waiting) settle({ jsonrpc: '2.0', id, error: { code: RpcCode.internalError, message: 'The service is shutting down' } });
    this.waiting.clear();
    this.onclose?.();
  }

  /** Replies reach their request; notifications and requests of the server have no way back here and are dropped. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || 'method' in message) return;
    const settle = this.waiting.get(String(message.id));
    if (settle === undefined) return;
    this.waiting.delete(String(message.id));
    settle(message as Reply);
  }

  request(message: { readonly id: RequestId; readonly method: string; readonly params?: unknown }, extra: MessageExtraInfo): Promise<Reply> {
    const internal = `rpc-${++this.next}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.waiting.delete(internal)) resolve({ jsonrpc: '2.0', id: message.id, error: { code: RpcCode.internalError, message: 'Internal error: no answer in time; retry' } });
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(internal, (reply) => {
        clearTimeout(timer);
        resolve({ ...reply, id: message.id });
      });
      this.onmessage?.({ ...message, jsonrpc: '2.0', id: internal } as JSONRPCMessage, extra);
    });
  }

  notify(message: { readonly method: string; readonly params?: unknown }, extra: MessageExtraInfo): void {
    // A cancellation names the client's request id, which this server never saw.
    if (message.method === 'notifications/cancelled') return;
    this.onmessage?.({ ...message, jsonrpc: '2.0' } as JSONRPCMessage, extra);
  }
}

type Classified =
  | { readonly kind: 'request'; readonly message: { readonly id: RequestId; readonly method: string; readonly params?: unknown } }
  | { readonly kind: 'notification'; readonly message: { readonly method: string; readonly params?: unknown } }
  | { readonly kind: 'response' }
  | { readonly kind: 'invalid'; readonly error: RpcErrorBody };

function invalid(id: RequestId | null, why: string): Classified {
  return { kind: 'invalid', error: rpcError(RpcCode.invalidRequest, `Invalid Request: ${why}`, id) };
}

/** What one element of a body is, by the rules of JSON-RPC 2.0. */
function classify(m: unknown): Classified {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return invalid(null, 'a message must be a JSON object');
  const o = m as Record<string, unknown>;
  const hasId = 'id' in o;
  const id = o['id'];
  const validId = (typeof id === 'string' && id.length <= 256) || (typeof id === 'number' && Number.isFinite(id));
  const echo = validId ? (id as RequestId) : null;
  if (o['jsonrpc'] !== '2.0') return invalid(echo, 'jsonrpc must be "2.0"');
  if (typeof o['method'] !== 'string') {
    if (hasId && ('result' in o || 'error' in o)) return { kind: 'response' };
    return invalid(echo, 'method must be a string');
  }
  const params = o['params'];
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return invalid(echo, 'params must be an object');
  const method = o['method'];
  if (!hasId) return { kind: 'notification', message: params === undefined ? { method } : { method, params } };
  if (!validId) return invalid(null, 'id must be a string or a number');
  return { kind: 'request', message: params === undefined ? { id: id as RequestId, method } : { id: id as RequestId, method, params } };
}

export interface JsonRpcOptions {
  readonly catalog: ToolCatalog;
  readonly info: ServiceInfo;
}

export class JsonRpcEndpoint {
  private readonly server: Server;
  private readonly mux = new RequestMultiplexer();
  private readonly ready: Promise<void>;

  constructor(options: JsonRpcOptions) {
    this.server = createMcpServer(options.catalog, options.info, 'json-rpc');
    this.ready = this.server.connect(this.mux);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  async post(ex: Exchange, caller: Caller, pending: Promise<BodyResult>): Promise<void> {
    const read = await pending;
    if (read.kind === 'aborted') return;
    if (read.kind === 'too_large') {
      ex.sendJson(413, BODY_TOO_LARGE, { Connection: 'close' });
      return;
    }
    const contentType = ex.header('content-type');
    if (contentType !== '' && !/^application\/(json|json-rpc)\s*(;|$)/i.test(contentType)) {
      ex.sendJson(415, rpcError(RpcCode.serverError, 'Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json', null, { error: Refusal.unsupportedMediaType }));
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(read.body.toString('utf8'));
    } catch {
      ex.sendJson(400, PARSE_ERROR);
      return;
    }
    await this.ready;
    const extra: MessageExtraInfo = { authInfo: authInfoFor(caller) };
    if (!Array.isArray(body)) {
      const c = classify(body);
      const reply = await this.answer(c, extra);
      if (reply === undefined) ex.send(204, {});
      else ex.sendJson(c.kind === 'invalid' ? 400 : 200, reply);
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
    if (replies.length === 0) ex.send(204, {});
    else ex.sendJson(200, replies);
  }

  private async answer(c: Classified, extra: MessageExtraInfo): Promise<Reply | RpcErrorBody | undefined> {
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
