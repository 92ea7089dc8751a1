/**
 * JSON-RPC over HTTP with the fault handling a node or provider needs: per-request timeout, retries
 * of retryable failures (timeouts, 429, 5xx, network errors) with exponential backoff and full
 * jitter, and failover across the configured endpoints. Errors split into retryable and not.
 */
import { isAscii } from 'node:buffer';
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
  readonly fetch?: typeof fetch;
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

/**
 * An answer's body as one buffer, its chunks joined once: `Response.arrayBuffer()` joins them and
 * then copies the whole body again, a second pass over every log answer (megabytes per range).
 */
async function bodyBytes(res: Response): Promise<Buffer> {
  const body = res.body;
  if (body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.byteLength;
  }
  if (chunks.length === 1) return Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength);
  return Buffer.concat(chunks, length);
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
  const doFetch = options.fetch ?? fetch;
  const random = options.random ?? Math.random;
  const base = options.baseBackoffMs ?? DEFAULT_BASE_BACKOFF_MS;
  const cap = options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
  const stats: RpcStats = { requests: 0, retries: 0, failures: 0, lastFailureAt: 0, lastError: '', lastSuccessAt: 0 };
  let urlIndex = 0;
  let nextId = 1;

  /** Posts a JSON-RPC body; the answer parsed by `read` when it takes it (null: not), else as JSON. */
  async function post(body: unknown, label: string, read?: (bytes: Buffer) => unknown): Promise<unknown> {
    const url = options.urls[urlIndex % options.urls.length]!;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    let res: Response;
    try {
      res = await doFetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal });
    } catch (err) {
      clearTimeout(timer);
      const timedOut = controller.signal.aborted;
      throw new RpcError(`${label}: ${timedOut ? `timed out after ${options.timeoutMs} ms` : `network error: ${err instanceof Error ? err.message : String(err)}`}`, 0, true);
    }
    try {
      const bytes = await bodyBytes(res);
      if (res.status < 500 && res.status !== 429) stats.lastSuccessAt = Date.now();
      if (res.status === 429 || res.status >= 500) throw new RpcError(`${label}: HTTP ${res.status}`, res.status, true);
      if (res.status === 413 && label === 'eth_getLogs') throw new RangeTooLargeError(`${label}: HTTP 413`, 413, false);
      const taken = res.status < 400 ? read?.(bytes) : undefined;
      if (taken !== undefined && taken !== null) return taken;
      try {
        // JSON answers are ASCII (hex quantities) but for rare text: decoded as UTF-8 only then.
        return JSON.parse(isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')) as unknown;
      } catch {
        if (res.status >= 400) throw new RpcError(`${label}: HTTP ${res.status}`, res.status, false);
        throw new RpcError(`${label}: answer is not JSON`, res.status, true);
      }
    } catch (err) {
      if (err instanceof RpcError) throw err;
      throw new RpcError(`${label}: ${controller.signal.aborted ? `timed out after ${options.timeoutMs} ms` : String(err)}`, 0, true);
    } finally {
      clearTimeout(timer);
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
        const answer = (await post({ jsonrpc: '2.0', id: nextId++, method, params }, method, method === 'eth_getLogs' ? readLogAnswer : undefined)) as JsonRpcAnswer;
        if (answer.error) throw fromRpcError(method, answer.error);
        if (!('result' in answer)) throw new RpcError(`${method}: answer without result`, 0, true);
        return answer.result as T;
      });
    },
    getLogs(params: readonly unknown[]): Promise<LogPage> {
      return withRetries(async () => {
        // An answer not left in its bytes is read as `request` reads it.
        const answer = await post({ jsonrpc: '2.0', id: nextId++, method: 'eth_getLogs', params }, 'eth_getLogs', readPageOrAnswer);
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
        const answer = await post(body, calls[0]!.method);
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
