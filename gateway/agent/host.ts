/**
 * The agent-protocol side of the agent host: the Model Context Protocol over three transports,
 * next to the /api REST subset the gateway serves on the same host.
 *
 *   POST GET DELETE  /streamable-http   Streamable HTTP (transports/streamable-http.ts)
 *   GET              /sse               HTTP+SSE event stream (transports/sse.ts)
 *   POST             /messages          its message endpoint (?sessionId=)
 *   POST             /json-rpc          plain JSON-RPC 2.0, single or batch (transports/json-rpc.ts)
 *   OPTIONS          each of them       CORS preflight
 *
 * Every request is evaluated against the plan of the key in its Authorization header (the whole
 * value is the key; a leading "Bearer " is also accepted here, as MCP clients add it), keyless by
 * address without one; tools are metered per call like the REST request they stand for. When the
 * host listens on a loopback address, requests must name a local or configured host (Host header),
 * which keeps web pages from reaching it by DNS rebinding.
 *
 * The tool catalog and the transports (endpoints.ts: the protocol's SDK and the tools' schemas) are
 * imported on the first agent request, not at start: a start listens sooner without them, and the
 * first request waits for them once.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { createTrustedProxies } from '../http/forwarded.js';
import { errorText, fallbackLog, type PlanLimits, type PlanName } from '../../engine/read/index.js';
import { resolveCaller, type Caller } from '../auth/access.js';
import type { KeyStore } from '../auth/key-store.js';
import type { ServeContext } from '../context.js';
import { ApiError } from '../errors.js';
import { createHostGuard } from '../http/host-header.js';
import type { Meter } from '../metering/meter.js';
import type { AgentEndpoints } from './endpoints.js';
import { openFeedbackStore } from './feedback.js';
import { Exchange, PREFLIGHT_HEADERS, type BodyResult } from './http.js';
import { DEFAULT_SESSION_LIMITS, type SessionLimits } from './sessions.js';
import { QueryLayer, type QueryRoute } from './tools/query.js';
import type { ServiceInfo } from './tools/service.js';
import { apiErrorData, FORBIDDEN_HOST_RPC, MAX_BODY_BYTES, rpcError, RpcCode, SSE_MESSAGES_PATH } from './wire.js';

export const STREAMABLE_HTTP_PATH = '/streamable-http';
export const SSE_PATH = '/sse';
export const JSON_RPC_PATH = '/json-rpc';
export { SSE_MESSAGES_PATH };

/** How often idle Streamable HTTP sessions are looked for. */
const SWEEP_INTERVAL_MS = 60_000; // 1 min

export interface AgentHostOptions {
  readonly ctx: ServeContext;
  /** The main router of the gateway (createRouter in server.ts). */
  readonly route: QueryRoute;
  readonly keys: KeyStore;
  readonly meter: Meter;
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
  /** Version of the interface, told in initialize and getCapabilities. */
  readonly version: string;
  /** Address the host listens on; on a loopback address the Host header is checked. */
  readonly listenHost: string;
  /** Public names of the agent host (accepted in the Host header). */
  readonly hostNames?: readonly string[];
  readonly sessionLimits?: SessionLimits;
  /** Reverse proxies whose forwarding headers name the client (gateway/http/forwarded.ts). */
  readonly trustedProxies?: readonly string[];
}

export interface AgentHost {
  /** Adds the agent-protocol routes to the agent host's app; call before its catch-all route. */
  register(app: TemplatedApp): void;
  /** The DNS-rebinding guard: whether a Host header value names this host (the /api subset asks it too). */
  hostAllowed(hostHeader: string): boolean;
  /** Ends the sessions (and their streams) of the callers `closes` picks (their key was revoked or replaced). */
  closeSessionsOf(closes: (caller: Caller) => boolean): void;
  /** Open sessions per transport. */
  sessions(): { readonly streamableHttp: number; readonly sse: number };
  /**
   * Loads the agent protocol's modules and makes its endpoints; resolves once they are made (or
   * could not be: logged, and tried again by the first agent request). The agent port listens after
   * it, so requests are answered synchronously where they can be (uWS closes a connection whose
   * pipelined request is answered later).
   */
  prepare(): Promise<void>;
  /** Ends every session and stream. */
  close(): Promise<void>;
}

type Handler = (ex: Exchange, caller: Caller, body: Promise<BodyResult>) => Promise<void>;

const NO_BODY: Promise<BodyResult> = Promise.resolve({ kind: 'body', body: Buffer.alloc(0) });

export function createAgentHost(options: AgentHostOptions): AgentHost {
  const { ctx, keys, plans } = options;
  const log = ctx.log ?? fallbackLog();
  const proxies = createTrustedProxies(options.trustedProxies ?? []);
  const info: ServiceInfo = {
    name: 'dexdata',
    version: options.version,
    description: 'DEX market data: networks, DEXes, pools, tokens, USD prices, OHLCV candles, transactions and indicators.',
  };
  const limits = options.sessionLimits ?? DEFAULT_SESSION_LIMITS;
  const query = new QueryLayer({ ctx, route: options.route, meter: options.meter, plans });
  const feedback = openFeedbackStore(ctx.store);
  /** The endpoints once made (null before the first agent request: no session exists then). */
  let made: AgentEndpoints | null = null;
  let making: Promise<AgentEndpoints> | null = null;
  const endpoints = (): Promise<AgentEndpoints> =>
    (making ??= import('./endpoints.js').then(
      (m) => (made = m.createAgentEndpoints(query, feedback, info, limits, log)),
      (err: unknown) => {
        // Tried again by the next request.
        making = null;
        throw err;
      },
    ));
  /** Runs `use` on the endpoints: at once when they are made, so an answer that can be given synchronously is. */
  const withEndpoints = <T>(use: (e: AgentEndpoints) => Promise<T>): Promise<T> => (made !== null ? use(made) : endpoints().then(use));
  const sweeper = setInterval(() => made?.streamable.sweep(Date.now()), SWEEP_INTERVAL_MS);
  sweeper.unref();

  const hostAllowed = createHostGuard(options.listenHost, options.hostNames ?? []);

  function callerOf(ex: Exchange): Caller {
    const key = ex.authorization.trim().replace(/^bearer\s+/i, '');
    // Only keyless callers are counted by address.
    // Keyless callers are limited per address: the client a trusted proxy names, else the peer.
    const address = key === '' ? (proxies.clientOf(ex.remoteAddress, ex.header('x-forwarded-for'), ex.header('forwarded')) ?? ex.remoteAddress) : '';
    return resolveCaller(keys, plans, key, address, false, ctx.now());
  }

  /** An unexpected failure: logged (the path only: query strings and headers may carry credentials), answered 500. */
  function failed(ex: Exchange, err: unknown): void {
    // The path only: query strings and headers may carry credentials.
    log.error({ path: ex.path }, `agent: request failed: ${errorText(err)}`);
    if (!ex.answered) ex.sendJson(500, rpcError(RpcCode.internalError, 'Internal error'));
    else ex.end();
  }

  function serve(handler: Handler, readsBody: boolean) {
    return (res: HttpResponse, req: HttpRequest): void => {
      const ex = new Exchange(res, req);
      // The body must be subscribed to before this callback returns, even if it is refused below.
      const body = readsBody ? ex.readBody(MAX_BODY_BYTES) : NO_BODY;
      let caller: Caller;
      try {
        if (!hostAllowed(ex.header('host'))) {
          ex.sendJson(403, FORBIDDEN_HOST_RPC);
          return;
        }
        caller = callerOf(ex);
      } catch (err) {
        if (err instanceof ApiError) {
          ex.sendJson(err.status, rpcError(RpcCode.serverError, `${err.message}: send the API key as the Authorization header value, or no header for the keyless plan`, null, { error: err.code }));
        } else failed(ex, err);
        return;
      }
      ex.extraHeaders['X-Api-Plan'] = caller.plan;
      handler(ex, caller, body).catch((err: unknown) => {
        // A refusal from the registry (a query parameter that cannot be read) is the caller's to fix.
        if (err instanceof ApiError && !ex.answered) ex.sendJson(err.status, rpcError(err.status === 400 ? RpcCode.invalidParams : RpcCode.serverError, err.message, null, apiErrorData(err)));
        else failed(ex, err);
      });
    };
  }

  const preflight = (res: HttpResponse, req: HttpRequest): void => {
    new Exchange(res, req).send(204, PREFLIGHT_HEADERS);
  };
  const notAllowed = (allow: string) => (res: HttpResponse, req: HttpRequest): void => {
    new Exchange(res, req).sendJson(405, rpcError(RpcCode.serverError, `Method not allowed: use ${allow}`), { Allow: allow });
  };

  return {
    prepare() {
      return endpoints().then(
        () => undefined,
        (err: unknown) => log.warn(`agent: the agent protocol could not be loaded: ${errorText(err)}`),
      );
    },
    register(app) {
      app.post(STREAMABLE_HTTP_PATH, serve((ex, caller, body) => withEndpoints((e) => e.streamable.post(ex, caller, body)), true));
      app.get(STREAMABLE_HTTP_PATH, serve((ex, caller) => withEndpoints((e) => e.streamable.get(ex, caller)), false));
      app.del(STREAMABLE_HTTP_PATH, serve((ex, caller) => withEndpoints((e) => e.streamable.delete(ex, caller)), false));
      app.options(STREAMABLE_HTTP_PATH, preflight);
      app.any(STREAMABLE_HTTP_PATH, notAllowed('GET, POST, DELETE'));

      app.get(SSE_PATH, serve((ex, caller) => withEndpoints((e) => e.sse.open(ex, caller)), false));
      app.options(SSE_PATH, preflight);
      app.any(SSE_PATH, notAllowed('GET'));
      app.post(SSE_MESSAGES_PATH, serve((ex, caller, body) => withEndpoints((e) => e.sse.post(ex, caller, body)), true));
      app.options(SSE_MESSAGES_PATH, preflight);
      app.any(SSE_MESSAGES_PATH, notAllowed('POST'));

      app.post(JSON_RPC_PATH, serve((ex, caller, body) => withEndpoints((e) => e.jsonRpc.post(ex, caller, body)), true));
      app.options(JSON_RPC_PATH, preflight);
      app.any(JSON_RPC_PATH, notAllowed('POST'));
    },
    hostAllowed,
    closeSessionsOf(closes) {
      made?.streamable.closeWhere(closes);
      made?.sse.closeWhere(closes);
    },
    sessions: () => ({ streamableHttp: made?.streamable.sessionCount ?? 0, sse: made?.sse.sessionCount ?? 0 }),
    async close() {
      clearInterval(sweeper);
      // Endpoints still being made are closed once made: a request that was waiting for them ends.
      const e = made ?? (making === null ? null : await making.catch(() => null));
      if (e !== null) await Promise.all([e.streamable.close(), e.sse.close(), e.jsonRpc.close()]);
    },
  };
}
