/**
 * The HTTP gateway: one uWS app per host role on the calling thread, answering every route through
 * the engine's read surface (engine/read: an EngineReader over the shared views, the catalog and the
 * store) without waiting on anything, so each request is answered inside its own callback. Unknown
 * paths and methods other than GET get 404 JSON (HEAD and OPTIONS /health answer as GET /health
 * does, HEAD without a body); no exception escapes a uWS callback.
 *
 * With `access` set, every request is evaluated against a plan (gateway/auth) and metered
 * (gateway/metering): health first (no key, never metered), then the edge page of the paid host,
 * the key, the host, the per-minute limit and the credits, then the route; credits are charged for
 * 200 answers only. The agent host answers only /health and the /api subset (rest/api-subset.ts),
 * each subset request rewritten to a main path before the paid-only check and metering.
 * Without `access`, everyone is keyless and nothing is limited.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { errorText, fallbackLog, type ListenerRole, type PlanLimits, type PlanName } from '../engine/read/index.js';
import { addressText, checkHost, EDGE_PAGE, keylessCaller, keylessCallerAt, resolveCaller, type Caller, type RestRole } from './auth/access.js';
import { checkPaidOnly } from './auth/paid-only.js';
import { openKeyStore, type KeyStore } from './auth/key-store.js';
import { KEY_REVOKED_MESSAGE, watchRevokedKeys } from './auth/key-watch.js';
import { serveContext, type GatewayContext, type ServeContext } from './context.js';
import { fromPage, preflight, sendJsonToPage } from './cors.js';
import { issueExplorerKey } from './explorer/key.js';
import { createExplorer, type Explorer, type ExplorerOptions } from './explorer/serve.js';
import { ApiError, FORBIDDEN_HOST, INTERNAL_ERROR, routeNotFound } from './errors.js';
import { ResponseCache } from './http/cache.js';
import { num, str } from './http/json.js';
import { readQuery } from './http/query.js';
import { PLAN_KEYLESS, sendJson } from './http/respond.js';
import { rfc3339 } from './http/time.js';
import { createMeter, DEFAULT_METER_SLOTS, RateLimited, type Meter } from './metering/meter.js';
import { createNetworkHandlers } from './rest/networks.js';
import { createPoolOhlcv, type OhlcvPlanGate } from './rest/ohlcv.js';
import { PoolStatics } from './rest/pool-static.js';
import { createPoolDetails } from './rest/pools.js';
import { createApiSubset } from './rest/api-subset.js';
import { createMultiPrices } from './rest/prices.js';
import { removedRoute } from './rest/removed.js';
import { createPoolSearch } from './rest/search.js';
import { createHistoryRoutes } from './rest/history-routes.js';
import { createSearchRoutes } from './rest/search-routes.js';
import { createStats } from './rest/stats.js';
import { createTokenDetails } from './rest/tokens.js';
import { segment } from './http/path.js';
import { peerAddress } from './http/peer.js';
import { startFront, type Front } from './edge/front.js';
import { createAgentHost, type AgentHost } from './agent/host.js';
import { createStreamAdmission, createStreamHost, type StreamHost, type StreamHostOptions, type StreamRole } from './streams/host.js';
import { limitSendBuffers } from './streams/send-buffer.js';
import { startStreamThreads, type StreamThreads } from './streams/threads.js';
import { createTrustedProxies, NO_PROXIES } from './http/forwarded.js';
import { ListenError, listenExclusive, listenPort } from './http/listen.js';
import { nextRequestSeq, requestId } from './http/request-id.js';
import { LATENCY_SAMPLE_EVERY, RequestCounters, REQUEST_HOSTS, StreamCounters } from './metrics/counters.js';
import type { RouteSet } from './rest/route.js';
import { API_PREFIX_LENGTH, matchRoute, pathPart, ROUTE, ROUTES, type RouteLabel } from './rest/routes.js';

export type { GatewayContext, ServeContext } from './context.js';

export interface ListenerOptions {
  /** 0 = any free port. */
  port: number;
  /** Public names of the host (`https://pro.example.com` or `pro.example.com`); the first is what wrong_host names. */
  hosts?: readonly string[];
}

export interface AccessOptions {
  plans: Readonly<Record<PlanName, PlanLimits>>;
  /** Paid REST host; not opened when absent. */
  paidRest?: ListenerOptions;
  /** Agent host (the /api subset); not opened when absent. */
  agent?: ListenerOptions;
  /** Stream hosts (SSE, gateway/streams); not opened when absent. */
  freeStream?: ListenerOptions;
  paidStream?: ListenerOptions;
  /** Tokens keyless callers may stream (`<network>:<address>`); default: stablecoins and wrapped native tokens. */
  showcase?: readonly string[];
  /** Stream tick and ping timing (tests). */
  streamHub?: StreamHostOptions['hub'];
  /**
   * uWS threads serving the stream hosts, sharing their ports (SO_REUSEPORT) and the counters;
   * 0 = on the calling thread, with the REST hosts. Default 0.
   */
  streamThreads?: number;
  /** Public names of the free REST host. */
  freeRestHosts?: readonly string[];
  /** Subjects whose counters are held in memory at once. */
  meterSlots?: number;
}

export type FrontMode = 'on' | 'all' | 'off';

export interface GatewayOptions {
  host: string;
  /** Free REST host; 0 = any free port. */
  port: number;
  /** Keys, plans, host roles and metering; without it every caller is keyless and unlimited. */
  access?: AccessOptions;
  /**
   * The HTTP front (gateway/edge/front.ts): answers what uWS cannot (HTTP/1.0, a missing Host,
   * malformed requests), keeps pipelined answers in order, drains on close. 'on': on the REST and
   * agent ports; 'all': on the stream ports too, where a stuck reader is then noticed only once the
   * front's buffers are full as well; 'off' (default: the front costs most of the read throughput):
   * uWS listens on every public port itself.
   */
  front?: FrontMode;
  /** Detail of /health (engine phase, each chain's node state); `{"status":"ok"}` without it. */
  health?: () => object;
  /** Count requests and streams for /metrics (Gateway.counters); nothing is counted without it. */
  metrics?: boolean;
  /**
   * Reverse proxies (addresses or CIDRs) whose X-Forwarded-For / Forwarded name the client, for
   * keyless limits, stream caps per address and logs; from other peers those headers are ignored.
   */
  trustedProxies?: readonly string[];
  /**
   * The web explorer at /explorer/ on the free REST host (gateway/explorer), with a key of the
   * `explorer` plan for its page when `issueKey` (needs `access`); not served when absent.
   */
  explorer?: ExplorerOptions;
  /**
   * Called once the REST and stream ports listen, with their ports, before the agent protocol's
   * modules are loaded and its port opened (the last step: a start serves without waiting for it).
   */
  onServing?: (ports: Readonly<Partial<Record<ListenerRole, number>>>) => void;
}

/** What the gateway counted, for the metrics registry (gateway/metrics). */
export interface GatewayCounters {
  readonly requests: RequestCounters;
  readonly streams: StreamCounters | null;
  /** Credits charged since start, by plan (PLAN_NAMES order). */
  creditsSpent(): readonly number[];
}

export interface Gateway {
  /** Port of the free REST host. */
  readonly port: number;
  /** Port of every host role opened. */
  readonly ports: Readonly<Partial<Record<ListenerRole, number>>>;
  /** The stream hosts' hub and counters, when a stream host is open on the calling thread. */
  readonly streams: StreamHost | null;
  /** The stream threads, when the stream hosts run on their own threads (`streamThreads` > 0). */
  readonly streamThreads: StreamThreads | null;
  /** A `warning` event to every open stream, on every stream thread (the streams go on). */
  warnStreams(message: string): void;
  /** Request and stream counters, when `metrics` is set. */
  readonly counters: GatewayCounters | null;
  /** Writes the usage counters to the store now (they are also written every second and on close). */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

/** Free-host answers are served from a cache by URL for up to this long (api.md rule 8). */
export const FREE_HOST_CACHE_TTL_MS = 15_000; // 15 s
const FREE_HOST_CACHE_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB

/** Rendered response bodies kept for reuse. */
export const CACHE_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB

const HEALTH_BODY = Buffer.from('{"status":"ok"}');
/** Request header names as bytes: uWS reads them without converting a string each time. */
const AUTHORIZATION = Buffer.from('authorization');
const HOST = Buffer.from('host');
const X_FORWARDED_FOR = Buffer.from('x-forwarded-for');
const FORWARDED = Buffer.from('forwarded');
/** Batch prices cost one credit per listed token. */
const TOKENS_PARAM: ReadonlySet<string> = new Set(['tokens']);
/** Shutdown waits this long at most for answers in flight (then closes what is left). */
export const SHUTDOWN_DRAIN_MS = 10_000; // 10 s
/** uWS listens here, behind the HTTP fronts on the public ports. */
const UPSTREAM_HOST = '127.0.0.1';
/** Version of the interface described at /openapi.json. */
export const API_VERSION = '0.1.0';
const HEALTH_PATH = '/health';
/**
 * A HEAD answer's body: none (Content-Length: 0). uWS writes a body given to `end` even for HEAD,
 * and its `endWithoutBody` (which would report the GET body's length) writes nothing in 20.30.
 */
const NO_BODY = Buffer.alloc(0);

/**
 * `gate` is the plan the request is evaluated against; undefined = no plan limits. Most answers
 * are made on the spot; pool search answers once the shard threads have ranked.
 */
type Route = (url: string, query: string, gate?: OhlcvPlanGate) => Uint8Array | Promise<Uint8Array>;

interface Router {
  /** Answers `url`, whose route id (rest/routes.ts) the caller has matched already. */
  serve(route: number, url: string, query: string, gate?: OhlcvPlanGate): Uint8Array | Promise<Uint8Array>;
  /** Matches `url`, then answers it (the agent protocol's tools). */
  route: Route;
  /** Makes what is made on first use (the OpenAPI document), in the background. */
  prepare(): void;
}

function createRouter(ctx: ServeContext): Router {
  const cache = new ResponseCache(CACHE_MAX_BYTES);
  const statics = new PoolStatics(ctx.read.catalog);
  const networks = createNetworkHandlers(ctx);
  const search = createPoolSearch(ctx, statics);
  const details = createPoolDetails(ctx, cache, statics);
  const ohlcv = createPoolOhlcv(ctx, cache);
  const stats = createStats(ctx);
  const prices = createMultiPrices(ctx);
  const token = createTokenDetails(ctx);
  // Made on its first request: its module holds every schema of the interface (streams' too), which a start need not load.
  let openApi: Uint8Array | Promise<Uint8Array> | null = null;
  const openApiBody = (): Uint8Array | Promise<Uint8Array> =>
    (openApi ??= import('./rest/openapi.js').then(
      (m) => (openApi = Buffer.from(JSON.stringify(m.openApiDocument(API_VERSION)), 'utf8')),
      (err: unknown) => {
        openApi = null;
        throw err;
      },
    ));
  const history = createHistoryRoutes(ctx, cache);
  const searches = createSearchRoutes(ctx, statics);
  const notFound = (url: string): never => {
    throw routeNotFound('GET', url);
  };
  /** The route sets of rest/ take the path's segments. */
  const inSet =
    (set: RouteSet): Route =>
    (url, query, gate) =>
      set(url.split('/'), query, gate) ?? notFound(url);
  const network = (url: string): string => segment(pathPart(url, 2), 'network');
  // Every path of a route has the route's shape: /networks/{network}/{kind}/{id}/... where it has these parts.
  const handlers: Readonly<Record<RouteLabel, Route>> = {
    root: notFound,
    health: () => HEALTH_BODY,
    usage: notFound,
    stats: () => stats(),
    openapi: openApiBody,
    networks: () => networks.networks(),
    dexes: (url, query) => networks.dexes(network(url), query),
    pool_search: (url, query) => (url.startsWith('/networks/') ? search.network(network(url), query) : search.global(query)),
    pool: (url, query) => details(network(url), segment(pathPart(url, 4), 'pool'), query),
    pool_ohlcv: (url, query, gate) => ohlcv(network(url), segment(pathPart(url, 4), 'pool'), query, gate),
    pool_transactions: inSet(history),
    pool_indicators: inSet(history),
    token_search: inSet(searches),
    token: (url) => token(network(url), segment(pathPart(url, 4), 'token')),
    token_ohlcv: inSet(history),
    token_indicators: inSet(history),
    multi_prices: (url, query) => prices(network(url), query),
    search: inSet(searches),
    removed: (url) => {
      throw removedRoute(url.split('/')) ?? routeNotFound('GET', url);
    },
    other: notFound,
  };
  const byId = ROUTES.map((r) => handlers[r]);
  return {
    serve: (id, url, query, gate) => byId[id]!(url, query, gate),
    route: (url, query, gate) => byId[matchRoute(url)]!(url, query, gate),
    prepare: () => {
      const body = openApiBody();
      // A failure is answered (and the document tried again) at its first request.
      if (body instanceof Promise) body.catch(() => undefined);
    },
  };
}

/** Credits a request to route `route` costs: 1, or 1 per listed token on batch prices. */
function costOf(route: number, query: string): number {
  if (route !== ROUTE.multi_prices) return 1;
  const tokens = readQuery(query, TOKENS_PARAM)['tokens'];
  return tokens === undefined ? 1 : Math.max(1, tokens.split(',').length);
}

function usageBody(meter: Meter, caller: Caller, now: number): Buffer {
  const u = meter.usage(caller, now);
  return Buffer.from(
    `{"plan":${str(u.plan)},"credits_limit":${num(u.limit)},"credits_used":${num(u.used)},"credits_remaining":${num(Math.max(0, u.limit - u.used))}` +
      `,"period_started_at":"${rfc3339(u.periodStart)}","resets_at":"${rfc3339(u.resetsAt)}"` +
      `,"requests_per_minute":${num(caller.limits.requestsPerMinute)},"concurrent_streams":${num(caller.limits.concurrentStreams)}}`,
    'utf8',
  );
}

/** One request's answer; `plan` goes out as X-Api-Plan. */
interface Answer {
  /** Sequence number of the request (its id in log lines: requestId). */
  seq: number;
  /** Index of the host role in REQUEST_HOSTS. */
  host: number;
  /** Id of the route the request matched (rest/routes.ts); UNMATCHED when refused before matching. */
  route: number;
  /** performance.now() when the request was read (0 when nothing measures it). */
  startedMs: number;
  /** The client's address, for the debug request line (null when not logged). */
  client?: string | null;
  status: number;
  body: Uint8Array;
  plan: string;
  retryAfterSeconds: number;
  contentType: string;
  /** HEAD: the status and headers only. */
  bodyless: boolean;
  /** The request came from a web page (Origin): the answer carries the CORS headers (cors.ts). */
  cors: boolean;
}

/** What a handler copies out of the request before it dies. */
interface RequestFacts {
  path: string;
  query: string;
  authorization: string;
  host: string;
  /** Raw peer address (getRemoteAddress) of a keyless caller; null when a key is sent or nothing is metered. */
  address: ArrayBuffer | null;
  /** The client a trusted proxy named (gateway/http/forwarded.ts); null when the peer is the client. */
  client: string | null;
}

/** Answer.route of a request refused before its route was matched (send matches it then, if counted). */
const UNMATCHED = -1;
const AGENT_HOST = REQUEST_HOSTS.indexOf('agent');

/** The route a request is counted under: the agent host's /api paths as the route they stand for. */
function routeLabelOf(host: number, path: string): number {
  return matchRoute(path, host === AGENT_HOST && path.startsWith('/api/') ? API_PREFIX_LENGTH : 0);
}

/** Host part of a configured public name: `https://pro.example.com/` -> `pro.example.com`. */
function hostPart(name: string): string {
  return name.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '').toLowerCase();
}

interface Listening {
  app: TemplatedApp;
  socket: us_listen_socket | null;
  port: number;
  /** Behind a front: uWS's port stays open while the front drains. */
  fronted?: boolean;
}

function listen(app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    listenExclusive(app, host, port, (token) => {
      if (token === false) reject(new ListenError(`cannot listen on ${host}:${port}${port === 0 ? '' : ': the port is in use or the address is not this machine\'s'}`));
      else resolve({ app, socket: token, port: listenPort(token) });
    });
  });
}

export async function startGateway(engine: GatewayContext, options: GatewayOptions): Promise<Gateway> {
  if (typeof uWS.getParts !== 'function') {
    throw new Error('uWebSockets.js native binary is not loaded (the slow fallback is refused)');
  }
  const ctx = serveContext(engine);
  const router = createRouter(ctx);
  const log = ctx.log ?? fallbackLog();
  /** One line per request at debug level (the level is fixed at start, so this is read once). */
  const accessLog = log.isLevelEnabled('debug');
  const proxies = options.trustedProxies === undefined ? NO_PROXIES : createTrustedProxies(options.trustedProxies);
  const subset = createApiSubset();
  const access = options.access;
  const keys: KeyStore | null = access === undefined ? null : openKeyStore(ctx.store);
  // Entries live 15 s at most: eviction by insertion order is enough. `items` holds the credit cost.
  const freeHostCache = new ResponseCache(FREE_HOST_CACHE_MAX_BYTES, { lru: false });
  const meter: Meter | null = access === undefined ? null : createMeter(ctx.store, access.meterSlots ?? DEFAULT_METER_SLOTS, log);
  // The agent protocol (MCP over /streamable-http, /sse, /json-rpc) on the agent host: gateway/agent.
  const agentHost: AgentHost | null =
    access?.agent !== undefined && keys !== null && meter !== null
      ? createAgentHost({
          ctx,
          route: router.route,
          keys,
          meter,
          plans: access.plans,
          version: API_VERSION,
          listenHost: options.host,
          hostNames: access.agent.hosts ?? [],
          ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
        })
      : null;
  const ports: Partial<Record<ListenerRole, number>> = {};
  const names: Partial<Record<RestRole, readonly string[]>> = {
    freeRest: access?.freeRestHosts ?? [],
    paidRest: access?.paidRest?.hosts ?? [],
    agent: access?.agent?.hosts ?? [],
  };
  /** A Host header naming a configured host selects that role; otherwise the listener's role holds. */
  const roleByName = new Map<string, RestRole>();
  for (const [role, list] of Object.entries(names) as [RestRole, readonly string[]][]) for (const n of list) roleByName.set(hostPart(n), role);
  const hostUrl = (role: RestRole): string => names[role]?.[0] ?? `http://${options.host}:${ports[role] ?? 0}`;
  const explorer: Explorer | null =
    options.explorer === undefined
      ? null
      : createExplorer({
          ...options.explorer,
          key: options.explorer.issueKey && keys !== null ? issueExplorerKey(keys, ctx.now()) : null,
          planOf: (key) => keys?.verify(key)?.plan ?? null,
          hostNames: names.freeRest ?? [],
          clientOf: (res, req) => proxies.client(peerAddress(res), req.getHeader(X_FORWARDED_FOR), req.getHeader(FORWARDED)) ?? addressText(new Uint8Array(peerAddress(res))),
          links: () => ({
            ports: { freeRest: ports.freeRest ?? null, paidRest: ports.paidRest ?? null, freeStream: ports.freeStream ?? null, paidStream: ports.paidStream ?? null },
            hosts: {
              freeRest: names.freeRest?.[0] ?? null,
              paidRest: names.paidRest?.[0] ?? null,
              freeStream: access?.freeStream?.hosts?.[0] ?? null,
              paidStream: access?.paidStream?.hosts?.[0] ?? null,
            },
          }),
          log,
        });
  const streamThreadCount = access?.streamThreads ?? 0;
  if (!Number.isInteger(streamThreadCount) || streamThreadCount < 0) throw new TypeError('options.access.streamThreads must be a non-negative integer');
  const streamOptions: StreamHostOptions | null =
    (access?.freeStream !== undefined || access?.paidStream !== undefined) && keys !== null && meter !== null
      ? {
          ctx,
          keys,
          meter,
          plans: access.plans,
          ...(access.showcase !== undefined ? { showcase: access.showcase } : {}),
          ...(access.streamHub !== undefined ? { hub: access.streamHub } : {}),
          hostUrl: (role: StreamRole) => access[role]?.hosts?.[0] ?? `http://${options.host}:${ports[role] ?? 0}`,
          ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
        }
      : null;
  const requestCounters = options.metrics === true ? new RequestCounters() : null;
  const streamCounters = options.metrics === true && streamOptions !== null ? new StreamCounters(streamThreadCount + 1) : null;
  const streamHost: StreamHost | null =
    streamOptions !== null && streamThreadCount === 0 ? createStreamHost(streamCounters === null ? streamOptions : { ...streamOptions, counters: streamCounters }) : null;
  let streamThreads: StreamThreads | null = null;

  /** Fills `a`; returns a promise when the answer waits on the shard threads. */
  function answer(role: RestRole, f: RequestFacts, a: Answer): void | Promise<void> {
    if (f.path === HEALTH_PATH) {
      a.route = ROUTE.health;
      a.body = options.health ? Buffer.from(JSON.stringify(options.health())) : HEALTH_BODY;
      return;
    }
    // The agent host on loopback serves only requests naming it (DNS rebinding), the /api subset as its protocol routes.
    if (role === 'agent' && agentHost !== null && !agentHost.hostAllowed(f.host)) throw FORBIDDEN_HOST;
    if (access === undefined || keys === null || meter === null) {
      a.route = matchRoute(f.path);
      const body = router.serve(a.route, f.path, f.query);
      if (body instanceof Promise)
        return body.then((b) => {
          a.body = b;
        });
      a.body = body;
      return;
    }
    const now = ctx.now();
    const served = roleByName.size === 0 ? role : (roleByName.get(hostPart(f.host)) ?? role);
    if (served === 'paidRest' && f.authorization === '') {
      a.status = 403;
      a.body = EDGE_PAGE;
      a.contentType = 'text/html; charset=utf-8';
      return;
    }
    const caller =
      f.address !== null ? (f.client !== null ? keylessCaller(access.plans, f.client) : keylessCallerAt(access.plans, f.address)) : resolveCaller(keys, access.plans, f.authorization, '', f.path === '/', now);
    a.plan = caller.plan;
    // The free host answers from its URL cache first (api.md rule 8): a paid key sent there may get
    // cached free-tier data. Keyless and keyed callers have separate entries (plan caps differ).
    // Keyless entries are keyed by the path (and query) alone, keyed ones behind "f|" (paths start with "/").
    const cacheKey =
      served === 'freeRest' && f.path !== '/' && f.path !== '/usage'
        ? caller.plan === 'keyless'
          ? f.query === ''
            ? f.path
            : `${f.path}?${f.query}`
          : `${caller.plan === 'explorer' ? 'e' : 'f'}|${f.path}?${f.query}`
        : null;
    if (cacheKey !== null) {
      const hit = freeHostCache.get(cacheKey, 0);
      if (hit !== undefined) {
        a.route = hit.tag;
        const cost = hit.items;
        meter.charge(meter.admit(caller, cost, now), cost, now);
        a.body = hit.body;
        return;
      }
    }
    checkHost(served, caller, hostUrl);
    if (served === 'agent' && !f.path.startsWith('/api/')) throw routeNotFound('GET', f.path);
    if (f.path === '/') {
      a.route = ROUTE.root;
      a.body = Buffer.from(`{"service":"dexdata","api_version":${str(API_VERSION)},"plan":${str(caller.plan)}}`);
      return;
    }
    if (f.path === '/usage') {
      a.route = ROUTE.usage;
      meter.admit(caller, 0, now);
      a.body = usageBody(meter, caller, now);
      return;
    }
    // The agent host serves the /api subset (rewritten to main paths) and /health only; the REST
    // hosts do not serve /api paths (their router knows none).
    let path = f.path;
    let query = f.query;
    let project: ((body: Uint8Array) => Uint8Array) | undefined;
    // The route served: the request's own, or on the agent host the route its rewrite names.
    let id: number;
    if (served === 'agent') {
      const sub = subset(f.path, f.query);
      if (sub === null) throw routeNotFound('GET', f.path);
      ({ path, query, project } = sub);
      a.route = routeLabelOf(AGENT_HOST, f.path);
      id = matchRoute(path);
    } else id = a.route = matchRoute(path);
    checkPaidOnly(path, caller.plan);
    const cost = costOf(id, query);
    const slot = meter.admit(caller, cost, now);
    const finish = (body: Uint8Array): void => {
      a.body = project === undefined ? body : project(body);
      meter.charge(slot, cost, now);
      if (cacheKey !== null) freeHostCache.set(cacheKey, 0, Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength), performance.now() + FREE_HOST_CACHE_TTL_MS, cost, a.route);
    };
    const body = router.serve(id, path, query, { tier: caller.plan, plans: access.plans });
    if (body instanceof Promise) return body.then(finish);
    finish(body);
  }

  function fail(a: Answer, err: unknown, path: string): void {
    a.contentType = 'application/json';
    if (err instanceof ApiError) {
      a.status = err.status;
      a.body = err.body;
      if (err instanceof RateLimited) a.retryAfterSeconds = err.retryAfterSeconds;
    } else {
      // The path only: query strings and headers may carry credentials. After close, a search cut
      // short by the shard threads stopping is the shutdown's doing, not an error to report.
      if (!closed) log.error({ req_id: requestId(a.seq), path }, `internal error: ${errorText(err)}`);
      a.status = INTERNAL_ERROR.status;
      a.body = INTERNAL_ERROR.body;
    }
  }

  function send(res: HttpResponse, a: Answer, path: string): void {
    try {
      if (a.cors) sendJsonToPage(res, a.status, a.bodyless ? NO_BODY : a.body, a.plan, a.retryAfterSeconds, a.contentType);
      else sendJson(res, a.status, a.bodyless ? NO_BODY : a.body, a.plan, a.retryAfterSeconds, a.contentType);
      if (requestCounters !== null || accessLog) {
        const seconds = a.startedMs > 0 ? (performance.now() - a.startedMs) / 1000 : -1;
        requestCounters?.record(a.host, a.route !== UNMATCHED ? a.route : routeLabelOf(a.host, path), a.status, seconds);
        // The path only: query strings may carry what a caller would not have logged.
        if (accessLog) log.debug({ req_id: requestId(a.seq), host: REQUEST_HOSTS[a.host], path, status: a.status, ms: Math.round(seconds * 1e6) / 1e3, plan: a.plan, client: a.client }, 'request');
      }
    } catch (err) {
      log.error({ req_id: requestId(a.seq), path }, `response not written: ${errorText(err)}`);
    }
  }

  /** Answers waiting on the shard threads; shutdown lets them finish. */
  let answersPending = 0;

  function newAnswer(host: number, bodyless: boolean): Answer {
    const seq = nextRequestSeq();
    const timed = accessLog || (requestCounters !== null && seq % LATENCY_SAMPLE_EVERY === 0);
    return { seq, host, route: UNMATCHED, startedMs: timed ? performance.now() : 0, status: 200, body: HEALTH_BODY, plan: PLAN_KEYLESS, retryAfterSeconds: 0, contentType: 'application/json', bodyless, cors: false };
  }

  /** GET requests; with `bodyless`, HEAD requests answered as GET is, without the body. */
  function handler(role: RestRole, bodyless = false) {
    const host = REQUEST_HOSTS.indexOf(role);
    return (res: HttpResponse, req: HttpRequest): void => {
      const a = newAnswer(host, bodyless);
      let path = '';
      try {
        path = req.getUrl();
        a.cors = fromPage(req);
        const authorization = req.getHeader(AUTHORIZATION);
        const f: RequestFacts = {
          path,
          query: req.getQuery() ?? '',
          authorization,
          host: roleByName.size === 0 && role !== 'agent' ? '' : req.getHeader(HOST),
          // Only keyless callers are counted by address.
          address: access === undefined || authorization !== '' ? null : peerAddress(res),
          client: proxies.any && (authorization === '' || accessLog) ? proxies.client(peerAddress(res), req.getHeader(X_FORWARDED_FOR), req.getHeader(FORWARDED)) : null,
        };
        if (accessLog) a.client = f.client ?? addressText(new Uint8Array(res.getRemoteAddress()));
        const pending = answer(role, f, a);
        if (pending !== undefined) {
          let aborted = false;
          res.onAborted(() => {
            aborted = true;
          });
          // uWS closes a connection whose next request it reads while an answer is pending: the
          // socket is not read until this answer is written, so a request pipelined behind it waits
          // in the kernel (one that came in the same read as this one is past saving; the front is).
          res.pause();
          const p = path;
          answersPending++;
          void pending
            .catch((err: unknown) => fail(a, err, p))
            .then(() => {
              answersPending--;
              if (!aborted)
                res.cork(() => {
                  res.resume();
                  send(res, a, p);
                });
            });
          return;
        }
      } catch (err) {
        fail(a, err, path);
      }
      send(res, a, path);
    };
  }

  /** Other methods, on any path: 404, counted like the GET answers. */
  function notServed(role: RestRole) {
    const host = REQUEST_HOSTS.indexOf(role);
    return (res: HttpResponse, req: HttpRequest): void => {
      const method = req.getMethod().toUpperCase();
      const a = newAnswer(host, method === 'HEAD');
      const path = req.getUrl();
      fail(a, routeNotFound(method, path), path);
      send(res, a, path);
    };
  }

  const listening: Listening[] = [];
  const fronts: Front[] = [];
  /** The role's public port is its HTTP front's (gateway/edge/front.ts); uWS serves on loopback behind it. */
  const frontMode: FrontMode = options.front ?? 'off';
  const fronted = (role: ListenerRole): boolean => frontMode === 'all' || (frontMode === 'on' && !(role === 'freeStream' || role === 'paidStream'));
  const front = async (role: ListenerRole, port: number, upstreamPort: number): Promise<void> => {
    const f = await startFront({ host: options.host, port, upstreamPort });
    fronts.push(f);
    ports[role] = f.port;
  };
  const open = async (role: ListenerRole, port: number): Promise<void> => {
    const app = uWS.App();
    if (role === 'freeStream' || role === 'paidStream') streamHost!.register(app, role);
    else {
      if (role === 'agent') agentHost?.register(app);
      if (role === 'freeRest') explorer?.register(app);
      app.get('/*', handler(role));
      // Load balancers check health by HEAD or OPTIONS too: answered as GET is.
      app.head(HEALTH_PATH, handler(role, true));
      app.options(HEALTH_PATH, handler(role));
      // Web pages' CORS preflights (the explorer sends a key to the paid host); other OPTIONS: 404.
      if (role !== 'agent') app.options('/*', preflight);
      app.any('/*', notServed(role));
    }
    const withFront = fronted(role);
    const l = await listen(app, withFront ? UPSTREAM_HOST : options.host, withFront ? 0 : port);
    l.fronted = withFront;
    listening.push(l);
    if (withFront) await front(role, port, l.port);
    else ports[role] = l.port;
  };
  // Streams and agent sessions opened with a key end when the key is revoked or replaced.
  const stopKeyWatch =
    keys === null
      ? () => undefined
      : watchRevokedKeys(keys, (gone) => {
          const revoked = (caller: Caller): boolean => caller.account !== undefined && gone(caller.account);
          streamHost?.hub.failOwners((owner) => revoked(owner as Caller), KEY_REVOKED_MESSAGE);
          streamThreads?.failCallers(revoked, KEY_REVOKED_MESSAGE);
          agentHost?.closeSessionsOf(revoked);
        });
  let closed = false;
  /**
   * Graceful: the fronts stop accepting and close idle connections; streams end with their
   * terminator (hub and agent sessions); answers in flight are written (searches still reach the
   * shard threads, which stop after this) for up to SHUTDOWN_DRAIN_MS; then the rest is closed and
   * the usage counters are flushed.
   */
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    stopKeyWatch();
    const deadline = performance.now() + SHUTDOWN_DRAIN_MS;
    // Stop accepting: the fronts close their ports (uWS behind them keeps serving what they pass on),
    // and uWS's own public ports close.
    const drained = Promise.all(fronts.map((f) => f.drain(deadline)));
    closeListenSockets((l) => l.fronted !== true);
    streamHost?.close();
    await streamThreads?.close();
    await agentHost?.close();
    await drained;
    while (answersPending > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    closeListenSockets();
    // Also ends keep-alive connections, so the process can exit.
    for (const l of listening) (l.app as unknown as { close?: () => void }).close?.();
    await meter?.close();
  };
  const closeListenSockets = (which: (l: Listening) => boolean = () => true): void => {
    for (const l of listening) {
      if (!which(l)) continue;
      if (l.socket !== null) uWS.us_listen_socket_close(l.socket);
      l.socket = null;
    }
  };
  try {
    await open('freeRest', options.port);
    if (access?.paidRest !== undefined) await open('paidRest', access.paidRest.port);
    if (streamHost !== null && access?.freeStream !== undefined) await open('freeStream', access.freeStream.port);
    if (streamHost !== null && access?.paidStream !== undefined) await open('paidStream', access.paidStream.port);
    if (streamOptions !== null && streamThreadCount > 0) {
      const wanted: Partial<Record<StreamRole, number>> = {};
      if (access?.freeStream !== undefined) wanted.freeStream = access.freeStream.port;
      if (access?.paidStream !== undefined) wanted.paidStream = access.paidStream.port;
      const { hub } = streamOptions;
      // Behind the fronts, the threads share loopback ports (SO_REUSEPORT spreads the fronts' connections).
      const withFront = fronted('freeStream');
      streamThreads = await startStreamThreads({
        ctx,
        admission: createStreamAdmission(streamOptions),
        threads: streamThreadCount,
        host: withFront ? UPSTREAM_HOST : options.host,
        ports: withFront ? Object.fromEntries(Object.keys(wanted).map((r) => [r, 0])) : wanted,
        ...(streamCounters !== null ? { counters: streamCounters.buffer } : {}),
        ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
        ...(hub !== undefined ? { hub: { ...(hub.tickMs !== undefined ? { tickMs: hub.tickMs } : {}), ...(hub.pingIntervalMs !== undefined ? { pingIntervalMs: hub.pingIntervalMs } : {}) } } : {}),
      });
      if (withFront) for (const [role, at] of Object.entries(wanted) as [StreamRole, number][]) await front(role, at, streamThreads.ports[role]!);
      else Object.assign(ports, streamThreads.ports);
    }
    const streamPorts = [ports.freeStream, ports.paidStream].filter((p): p is number => p !== undefined);
    if (streamPorts.length > 0 && limitSendBuffers(streamPorts) === 0) {
      log.warn('streams: the send buffer of stream sockets could not be bounded; a reader that stops reading is noticed later');
    }
    options.onServing?.(ports);
    // The agent protocol's modules (its SDK, schema validator and tool catalog: most of what a start
    // would otherwise evaluate before serving) load once the other ports serve; its port opens once
    // they are in, so its requests are answered synchronously where they can be.
    if (agentHost !== null && access?.agent !== undefined) {
      await agentHost.prepare();
      await open('agent', access.agent.port);
    }
  } catch (err) {
    await close();
    throw err;
  }
  // What is loaded on first use is loaded now, after the ports listen: so a start serves sooner, and
  // the first agent or OpenAPI request does not wait for a module to load.
  setImmediate(() => {
    if (closed) return;
    router.prepare();
  });
  return {
    port: ports.freeRest!,
    ports,
    streams: streamHost,
    get streamThreads() {
      return streamThreads;
    },
    warnStreams(message) {
      streamHost?.hub.warnAll(message);
      streamThreads?.warnAll(message);
    },
    counters: requestCounters === null ? null : { requests: requestCounters, streams: streamCounters, creditsSpent: () => meter?.creditsSpent() ?? [] },
    flushUsage: () => meter?.flush() ?? Promise.resolve(),
    close,
  };
}
