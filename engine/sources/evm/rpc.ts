/**
 * JSON-RPC over HTTP with the fault handling a node or provider needs: per-request timeout, retries
 * of retryable failures (timeouts, 429, 5xx, network errors) with exponential backoff and full
 * jitter, and failover across the configured endpoints. Errors split into retryable and not.
 *
 * Requests go through node's own HTTP client on kept-alive connections, one agent per client: an
 * answer's body arrives as a few dozen buffers joined once. (`fetch` hands the same bytes through
 * web streams, about three times the CPU per log page, on the thread that also decodes the logs.)
 * Compressed answers are asked for and inflated on libuv's threads.
 */
import { isAscii } from 'node:buffer';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { listPage, readLogAnswer, readLogPage, type LogPage } from './log-answer.js';
import type { RpcLog } from './words.js';

export class RpcError extends Error {
  override readonly name: string = 'RpcError';
  /** JSON-RPC error code, or the HTTP status for transport errors, or 0 for network errors and timeouts. */
  readonly code: number;
  readonly retryable: boolean;
  constructor(message: string, code: number, retryable: boolean) {
    super(message);
    this.code = code;
    this.retryable = retryable;
  }
}

/** The node refused an `eth_getLogs` range as too large or too many results: split it, do not retry it. */
export class RangeTooLargeError extends RpcError {
  override readonly name = 'RangeTooLargeError';
}

export interface RpcOptions {
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** First backoff delay; doubles per attempt up to `maxBackoffMs`. */
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Called on each retried failure (for logs and metrics). */
  readonly onRetry?: (err: RpcError, attempt: number, delayMs: number) => void;
  readonly random?: () => number;
}

export interface RpcStats {
  requests: number;
  retries: number;
  failures: number;
  /** Unix ms of the last failed attempt, 0 if none. */
  lastFailureAt: number;
  lastError: string;
  /** Unix ms of the last request answered (an answer with a JSON-RPC error counts: the node is up). */
  lastSuccessAt: number;
}

export interface RpcClient {
  request<T>(method: string, params: readonly unknown[]): Promise<T>;
  /**
   * `eth_getLogs` whose logs are read when the page's `logs()` is called (a page read ahead keeps
   * only the answer's bytes until then); errors are thrown here, as `request` throws them.
   */
  getLogs(params: readonly unknown[]): Promise<LogPage>;
  /** Several calls in one HTTP request (JSON-RPC batch); answers in call order. */
  batch<T>(calls: readonly { method: string; params: readonly unknown[] }[]): Promise<T[]>;
  readonly stats: RpcStats;
}

const DEFAULT_BASE_BACKOFF_MS = 250;
const DEFAULT_MAX_BACKOFF_MS = 30_000; // 30 s
/** Messages nodes and providers use when an eth_getLogs range or answer is too large. */
const RANGE_TOO_LARGE = /(more than \d+ results|query returned more than|block range|range (is )?too (large|wide|big)|too many (blocks|results|logs)|limit exceeded|response size|exceed(s|ed)? (max|maximum)|log response size|range limit)/i;

interface JsonRpcAnswer {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** An HTTP answer: its status and its body, joined once and inflated when it came compressed. */
interface HttpAnswer {
  readonly status: number;
  readonly bytes: Buffer;
  /** Where a redirect points (not followed: a JSON-RPC POST is not re-sent elsewhere unasked). */
  readonly location: string | undefined;
}

/** The encodings asked for, each with the inflater of its bodies. */
const INFLATERS: ReadonlyMap<string, (b: Buffer, done: (err: Error | null, out: Buffer) => void) => void> = new Map([
  ['gzip', gunzip],
  ['deflate', inflate],
  ['br', brotliDecompress],
]);
const ACCEPT_ENCODING = [...INFLATERS.keys()].join(', ');

/** The body of `res`, its chunks joined once, inflated per its content-encoding. */
function readAnswer(res: IncomingMessage): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
    });
    res.once('error', reject);
    res.once('aborted', () => reject(new Error('answer cut off')));
    res.once('end', () => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
      const encoding = res.headers['content-encoding']?.trim().toLowerCase();
      if (encoding === undefined || encoding === 'identity') return resolve({ status, bytes: raw, location });
      const inflater = INFLATERS.get(encoding);
      if (inflater === undefined) return reject(new Error(`answer in an unknown encoding: ${encoding}`));
      inflater(raw, (err, out) => (err !== null ? reject(err) : resolve({ status, bytes: out, location })));
    });
  });
}

/** The scheme, host and port of `location` (relative to `base`), or a word when there is none. */
function hostOf(location: string | undefined, base: URL): string {
  if (location === undefined) return 'an address not given';
  try {
    return new URL(location, base).origin;
  } catch {
    return 'an address that is not a URL';
  }
}

/** One endpoint: its URL and the agent keeping its connections open. */
interface Endpoint {
  readonly url: URL;
  readonly agent: HttpAgent;
  readonly request: typeof httpRequest;
}

/**
 * A connection idle this long is closed on our side: before a server's own idle timeout (commonly
 * 5 s) can close it under a request just sent on it. A server's `Keep-Alive: timeout` hint is taken as well.
 */
const IDLE_CONNECTION_MS = 4_000;

function endpoint(url: string): Endpoint {
  const u = new URL(url);
  const kept = { keepAlive: true, scheduling: 'lifo', timeout: IDLE_CONNECTION_MS } as const;
  if (u.protocol === 'https:') return { url: u, agent: new HttpsAgent(kept), request: httpsRequest };
  if (u.protocol === 'http:') return { url: u, agent: new HttpAgent(kept), request: httpRequest };
  throw new RpcError(`RPC URL ${u.protocol}//${u.host}: only http and https are supported`, 0, false);
}

/** POSTs `body` (JSON) to endpoint e; rejects on network errors, or with `timeout` when `timeoutMs` passed before the whole answer arrived. */
function post(e: Endpoint, body: string, timeoutMs: number, timeout: Error): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const length = Buffer.byteLength(body);
    const req = e.request(e.url, {
      method: 'POST',
      agent: e.agent,
      headers: { 'content-type': 'application/json', 'content-length': length, 'accept-encoding': ACCEPT_ENCODING },
    });
    const timer = setTimeout(() => {
      reject(timeout);
      req.destroy(timeout);
    }, timeoutMs);
    const settle = <T>(f: (x: T) => void) => (x: T) => {
      clearTimeout(timer);
      f(x);
    };
    req.once('error', settle(reject));
    req.once('response', (res) => readAnswer(res).then(settle(resolve), settle(reject)));
    req.end(body);
  });
}

/** An eth_getLogs answer as a page left in its bytes, else as read from them at once, else null (JSON.parse). */
const readPageOrAnswer = (bytes: Buffer): LogPage | { result: RpcLog[] } | null => readLogPage(bytes) ?? readLogAnswer(bytes);

/** Classifies a JSON-RPC error object; execution reverts and bad params are not retryable. */
function fromRpcError(method: string, e: { code: number; message: string }): RpcError {
  const msg = `${method}: ${e.message} (code ${e.code})`;
  if (method === 'eth_getLogs' && (RANGE_TOO_LARGE.test(e.message) || e.code === -32005)) return new RangeTooLargeError(msg, e.code, false);
  // -32005 limit exceeded, -32603 internal error, -32000 generic server error (header not found, ...), -32016 rate limited
  const retryable = e.code === -32005 || e.code === -32603 || e.code === -32016 || (e.code === -32000 && !/revert|execution/i.test(e.message)) || /rate|timeout|busy|try again/i.test(e.message);
  return new RpcError(msg, e.code, retryable);
}

/** The client of one chain's nodes as its follower uses it: retries told to the chain's log. */
export function chainRpcClient(config: { readonly id: string; readonly rpcUrls: readonly string[]; readonly requestTimeoutMs: number; readonly maxRetries: number }, log: (line: string) => void): RpcClient {
  return createRpcClient({
    urls: config.rpcUrls,
    timeoutMs: config.requestTimeoutMs,
    maxRetries: config.maxRetries,
    onRetry: (err, attempt, delay) => log(`${config.id}: RPC attempt ${attempt} failed (${err.message}); retrying in ${delay} ms`),
  });
}

export function createRpcClient(options: RpcOptions): RpcClient {
  if (options.urls.length === 0) throw new RpcError('no RPC URL', 0, false);
  const endpoints = options.urls.map(endpoint);
  const random = options.random ?? Math.random;
  const base = options.baseBackoffMs ?? DEFAULT_BASE_BACKOFF_MS;
  const cap = options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
  const stats: RpcStats = { requests: 0, retries: 0, failures: 0, lastFailureAt: 0, lastError: '', lastSuccessAt: 0 };
  let urlIndex = 0;
  let nextId = 1;

  /** Posts a JSON-RPC body; the answer parsed by `read` when it takes it (null: not), else as JSON. */
  async function call(body: unknown, label: string, read?: (bytes: Buffer) => unknown): Promise<unknown> {
    const e = endpoints[urlIndex % endpoints.length]!;
    const timeout = new RpcError(`${label}: timed out after ${options.timeoutMs} ms`, 0, true);
    let res: HttpAnswer;
    try {
      res = await post(e, JSON.stringify(body), options.timeoutMs, timeout);
    } catch (err) {
      if (err === timeout) throw timeout;
      throw new RpcError(`${label}: network error: ${err instanceof Error ? err.message : String(err)}`, 0, true);
    }
    const { status, bytes } = res;
    if (status < 500 && status !== 429) stats.lastSuccessAt = Date.now();
    if (status === 429 || status >= 500) throw new RpcError(`${label}: HTTP ${status}`, status, true);
    if (status === 413 && label === 'eth_getLogs') throw new RangeTooLargeError(`${label}: HTTP 413`, 413, false);
    // Retried as a node that does not answer (the service stays up and reports it); only the host
    // is told, as a provider's path often holds its key.
    if (status >= 300 && status < 400) throw new RpcError(`${label}: HTTP ${status}, moved to ${hostOf(res.location, e.url)}: configure the URL it points to`, status, true);
    let taken: unknown;
    try {
      taken = status < 400 ? read?.(bytes) : undefined;
    } catch (err) {
      if (err instanceof RpcError) throw err;
      throw new RpcError(`${label}: ${String(err)}`, 0, true);
    }
    if (taken !== undefined && taken !== null) return taken;
    try {
      // JSON answers are ASCII (hex quantities) but for rare text: decoded as UTF-8 only then.
      return JSON.parse(isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')) as unknown;
    } catch {
      if (status >= 400) throw new RpcError(`${label}: HTTP ${status}`, status, false);
      throw new RpcError(`${label}: answer is not JSON`, status, true);
    }
  }

  /** Runs `attempt` until it succeeds, fails with a non-retryable error, or runs out of retries. */
  async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 0; ; n++) {
      stats.requests++;
      try {
        return await attempt();
      } catch (err) {
        const e = err instanceof RpcError ? err : new RpcError(String(err), 0, false);
        stats.failures++;
        stats.lastFailureAt = Date.now();
        stats.lastError = e.message;
        if (!e.retryable || n >= options.maxRetries) throw e;
        // Full jitter: uniform in [0, min(cap, base * 2^n)].
        const delay = Math.round(random() * Math.min(cap, base * 2 ** n));
        stats.retries++;
        options.onRetry?.(e, n + 1, delay);
        if (options.urls.length > 1) urlIndex++;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  return {
    stats,
    request<T>(method: string, params: readonly unknown[]): Promise<T> {
      return withRetries(async () => {
        // Log answers are read from their bytes (log-answer.ts): they are most of what a backfill reads.
        const answer = (await call({ jsonrpc: '2.0', id: nextId++, method, params }, method, method === 'eth_getLogs' ? readLogAnswer : undefined)) as JsonRpcAnswer;
        if (answer.error) throw fromRpcError(method, answer.error);
        if (!('result' in answer)) throw new RpcError(`${method}: answer without result`, 0, true);
        return answer.result as T;
      });
    },
    getLogs(params: readonly unknown[]): Promise<LogPage> {
      return withRetries(async () => {
        // An answer not left in its bytes is read as `request` reads it.
        const answer = await call({ jsonrpc: '2.0', id: nextId++, method: 'eth_getLogs', params }, 'eth_getLogs', readPageOrAnswer);
        if (typeof (answer as Partial<LogPage>).logs === 'function') return answer as LogPage;
        const a = answer as JsonRpcAnswer;
        if (a.error) throw fromRpcError('eth_getLogs', a.error);
        if (!('result' in a)) throw new RpcError('eth_getLogs: answer without result', 0, true);
        if (!Array.isArray(a.result)) throw new RpcError('eth_getLogs: result is not a list of logs', 0, false);
        return listPage(a.result as RpcLog[]);
      });
    },
    batch<T>(calls: readonly { method: string; params: readonly unknown[] }[]): Promise<T[]> {
      if (calls.length === 0) return Promise.resolve([]);
      return withRetries(async () => {
        const first = nextId;
        const body = calls.map((c) => ({ jsonrpc: '2.0', id: nextId++, method: c.method, params: c.params }));
        const answer = await call(body, calls[0]!.method);
        if (!Array.isArray(answer)) {
          const single = answer as JsonRpcAnswer;
          throw single.error ? fromRpcError(calls[0]!.method, single.error) : new RpcError('batch answer is not an array', 0, true);
        }
        const out = new Array<T>(calls.length);
        const seen = new Array<boolean>(calls.length).fill(false);
        for (const a of answer as JsonRpcAnswer[]) {
          const i = (a.id ?? -1) - first;
          if (i < 0 || i >= calls.length) continue;
          if (a.error) throw fromRpcError(calls[i]!.method, a.error);
          out[i] = a.result as T;
          seen[i] = true;
        }
        if (seen.some((s) => !s)) throw new RpcError('batch answer misses calls', 0, true);
        return out;
      });
    },
  };
}
