/**
 * The HTTP gateway: one uWS app per host role on the calling thread, answering every route from the
 * engine's shared views, the registry and the store without waiting on anything, so each request is
 * answered inside its own callback. Unknown paths and methods other than GET get 404 JSON;
 * no exception escapes a uWS callback.
 *
 * With `access` set, every request is evaluated against a plan (gateway/auth) and metered
 * (gateway/metering): health first (no key, never metered), then the edge page of the paid host,
 * the key, the host, the per-minute limit and the credits, then the route; credits are charged for
 * 200 answers only. The agent host answers only /health and the /api subset (rest/api-subset.ts),
 * each subset request rewritten to a main path before the paid-only check and metering.
 * Without `access`, everyone is keyless and nothing is limited.
 */
import uWS from 'uWebSockets.js';
import { addressText, checkHost, EDGE_PAGE, keylessCaller, keylessCallerAt, resolveCaller } from './auth/access.js';
import { checkPaidOnly } from './auth/paid-only.js';
import { openKeyStore } from './auth/key-store.js';
import { KEY_REVOKED_MESSAGE, watchRevokedKeys } from './auth/key-watch.js';
import { ApiError, FORBIDDEN_HOST, INTERNAL_ERROR, routeNotFound } from './errors.js';
import { ResponseCache } from './http/cache.js';
import { num, str } from './http/json.js';
import { readQuery } from './http/query.js';
import { PLAN_KEYLESS, sendJson } from './http/respond.js';
import { rfc3339 } from './http/time.js';
import { createMeter, DEFAULT_METER_SLOTS, RateLimited } from './metering/meter.js';
import { createNetworkHandlers } from './rest/networks.js';
import { createPoolOhlcv } from './rest/ohlcv.js';
import { PoolStatics } from './rest/pool-static.js';
import { createPoolDetails } from './rest/pools.js';
import { openApiDocument } from './rest/openapi.js';
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
import { startFront } from './edge/front.js';
import { createAgentHost } from './agent/host.js';
import { createStreamAdmission, createStreamHost } from './streams/host.js';
import { limitSendBuffers } from './streams/send-buffer.js';
import { startStreamThreads } from './streams/threads.js';
import { errorText, fallbackLog } from '../engine/log.js';
import { createTrustedProxies, NO_PROXIES } from './http/forwarded.js';
import { nextRequestSeq, requestId } from './http/request-id.js';
import { LATENCY_SAMPLE_EVERY, RequestCounters, REQUEST_HOSTS, routeOf, StreamCounters } from './metrics/counters.js';
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
const TOKENS_PARAM = new Set(['tokens']);
/** Shutdown waits this long at most for answers in flight (then closes what is left). */
export const SHUTDOWN_DRAIN_MS = 10_000; // 10 s
/** uWS listens here, behind the HTTP fronts on the public ports. */
const UPSTREAM_HOST = '127.0.0.1';
/** Version of the interface described at /openapi.json. */
export const API_VERSION = '0.1.0';
/** Methods other than GET, on any path. */
function methodNotFound(res, req) {
    const err = routeNotFound(req.getMethod().toUpperCase(), req.getUrl());
    sendJson(res, err.status, err.body);
}
function createRouter(ctx) {
    const cache = new ResponseCache(CACHE_MAX_BYTES);
    const statics = new PoolStatics(ctx.registry);
    const networks = createNetworkHandlers(ctx);
    const search = createPoolSearch(ctx, statics);
    const details = createPoolDetails(ctx, cache, statics);
    const ohlcv = createPoolOhlcv(ctx, cache);
    const stats = createStats(ctx);
    const prices = createMultiPrices(ctx);
    const token = createTokenDetails(ctx);
    const openApi = Buffer.from(JSON.stringify(openApiDocument(API_VERSION)), 'utf8');
    const history = createHistoryRoutes(ctx, cache);
    const searches = createSearchRoutes(ctx, statics);
    return (url, query, gate) => {
        const s = url.split('/');
        const removed = removedRoute(s);
        if (removed !== null)
            throw removed;
        const extra = history(s, query, gate) ?? searches(s, query);
        if (extra !== null)
            return extra;
        if (s.length === 2) {
            if (s[1] === 'health')
                return HEALTH_BODY;
            if (s[1] === 'networks')
                return networks.networks();
            if (s[1] === 'stats')
                return stats();
            if (s[1] === 'openapi.json')
                return openApi;
            throw routeNotFound('GET', url);
        }
        if (s.length === 3 && s[1] === 'pools' && s[2] === 'search')
            return search.global(query);
        if (s[1] !== 'networks' || s.length > 6)
            throw routeNotFound('GET', url);
        const network = segment(s[2], 'network');
        if (s.length === 4 && s[3] === 'dexes')
            return networks.dexes(network, query);
        if (s.length === 5 && s[3] === 'multi' && s[4] === 'prices')
            return prices(network, query);
        if (s.length === 5 && s[3] === 'tokens')
            return token(network, segment(s[4], 'token'));
        if (s[3] !== 'pools' || s.length < 5)
            throw routeNotFound('GET', url);
        if (s.length === 5)
            return s[4] === 'search' ? search.network(network, query) : details(network, segment(s[4], 'pool'), query);
        if (s[5] === 'ohlcv')
            return ohlcv(network, segment(s[4], 'pool'), query, gate);
        throw routeNotFound('GET', url);
    };
}
/** Credits a request costs: 1, or 1 per listed token on batch prices. */
function costOf(path, query) {
    if (!path.endsWith('/multi/prices'))
        return 1;
    const tokens = readQuery(query, TOKENS_PARAM)['tokens'];
    return tokens === undefined ? 1 : Math.max(1, tokens.split(',').length);
}
function usageBody(meter, caller, now) {
    const u = meter.usage(caller, now);
    return Buffer.from(`{"plan":${str(u.plan)},"credits_limit":${num(u.limit)},"credits_used":${num(u.used)},"credits_remaining":${num(Math.max(0, u.limit - u.used))}` +
        `,"period_started_at":"${rfc3339(u.periodStart)}","resets_at":"${rfc3339(u.resetsAt)}"` +
        `,"requests_per_minute":${num(caller.limits.requestsPerMinute)},"concurrent_streams":${num(caller.limits.concurrentStreams)}}`, 'utf8');
}
/** Host part of a configured public name: `https://pro.example.com/` -> `pro.example.com`. */
function hostPart(name) {
    return name.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '').toLowerCase();
}
function listen(app, host, port) {
    return new Promise((resolve, reject) => {
        app.listen(host, port, (token) => {
            if (token === false)
                reject(new Error(`gateway cannot listen on ${host}:${port}`));
            else
                resolve({ app, socket: token, port: uWS.us_socket_local_port(token) });
        });
    });
}
export async function startGateway(ctx, options) {
    if (typeof uWS.getParts !== 'function') {
        throw new Error('uWebSockets.js native binary is not loaded (the slow fallback is refused)');
    }
    const route = createRouter(ctx);
    const log = ctx.log ?? fallbackLog();
    /** One line per request at debug level (the level is fixed at start, so this is read once). */
    const accessLog = log.isLevelEnabled('debug');
    const proxies = options.trustedProxies === undefined ? NO_PROXIES : createTrustedProxies(options.trustedProxies);
    const subset = createApiSubset();
    const access = options.access;
    const keys = access === undefined ? null : openKeyStore(ctx.store);
    // Entries live 15 s at most: eviction by insertion order is enough. `items` holds the credit cost.
    const freeHostCache = new ResponseCache(FREE_HOST_CACHE_MAX_BYTES, { lru: false });
    const meter = access === undefined ? null : createMeter(ctx.store, access.meterSlots ?? DEFAULT_METER_SLOTS, log);
    // The agent protocol (MCP over /streamable-http, /sse, /json-rpc) on the agent host: gateway/agent.
    const agentHost = access?.agent !== undefined && keys !== null && meter !== null
        ? createAgentHost({
            ctx,
            route,
            keys,
            meter,
            plans: access.plans,
            version: API_VERSION,
            listenHost: options.host,
            hostNames: access.agent.hosts ?? [],
            ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
        })
        : null;
    const ports = {};
    const names = {
        freeRest: access?.freeRestHosts ?? [],
        paidRest: access?.paidRest?.hosts ?? [],
        agent: access?.agent?.hosts ?? [],
    };
    /** A Host header naming a configured host selects that role; otherwise the listener's role holds. */
    const roleByName = new Map();
    for (const [role, list] of Object.entries(names))
        for (const n of list)
            roleByName.set(hostPart(n), role);
    const hostUrl = (role) => names[role]?.[0] ?? `http://${options.host}:${ports[role] ?? 0}`;
    const streamThreadCount = access?.streamThreads ?? 0;
    if (!Number.isInteger(streamThreadCount) || streamThreadCount < 0)
        throw new TypeError('options.access.streamThreads must be a non-negative integer');
    const streamOptions = (access?.freeStream !== undefined || access?.paidStream !== undefined) && keys !== null && meter !== null
        ? {
            ctx,
            keys,
            meter,
            plans: access.plans,
            ...(access.showcase !== undefined ? { showcase: access.showcase } : {}),
            ...(access.streamHub !== undefined ? { hub: access.streamHub } : {}),
            hostUrl: (role) => access[role]?.hosts?.[0] ?? `http://${options.host}:${ports[role] ?? 0}`,
            ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
        }
        : null;
    const requestCounters = options.metrics === true ? new RequestCounters() : null;
    const streamCounters = options.metrics === true && streamOptions !== null ? new StreamCounters(streamThreadCount + 1) : null;
    const streamHost = streamOptions !== null && streamThreadCount === 0 ? createStreamHost(streamCounters === null ? streamOptions : { ...streamOptions, counters: streamCounters }) : null;
    let streamThreads = null;
    /** Fills `a`; returns a promise when the answer waits on the shard threads. */
    function answer(role, f, a) {
        if (f.path === '/health') {
            a.body = options.health ? Buffer.from(JSON.stringify(options.health())) : HEALTH_BODY;
            return;
        }
        // The agent host on loopback serves only requests naming it (DNS rebinding), the /api subset as its protocol routes.
        if (role === 'agent' && agentHost !== null && !agentHost.hostAllowed(f.host))
            throw FORBIDDEN_HOST;
        if (access === undefined || keys === null || meter === null) {
            const body = route(f.path, f.query);
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
        const caller = f.address !== null ? (f.client !== null ? keylessCaller(access.plans, f.client) : keylessCallerAt(access.plans, f.address)) : resolveCaller(keys, access.plans, f.authorization, '', f.path === '/', now);
        a.plan = caller.plan;
        // The free host answers from its URL cache first (api.md rule 8): a paid key sent there may get
        // cached free-tier data. Keyless and keyed callers have separate entries (plan caps differ).
        // Keyless entries are keyed by the path (and query) alone, keyed ones behind "f|" (paths start with "/").
        const cacheKey = served === 'freeRest' && f.path !== '/' && f.path !== '/usage'
            ? caller.plan === 'keyless'
                ? f.query === ''
                    ? f.path
                    : `${f.path}?${f.query}`
                : `f|${f.path}?${f.query}`
            : null;
        if (cacheKey !== null) {
            const hit = freeHostCache.get(cacheKey, 0);
            if (hit !== undefined) {
                const cost = hit.items;
                meter.charge(meter.admit(caller, cost, now), cost, now);
                a.body = hit.body;
                return;
            }
        }
        checkHost(served, caller, hostUrl);
        if (served === 'agent' && !f.path.startsWith('/api/'))
            throw routeNotFound('GET', f.path);
        if (f.path === '/') {
            a.body = Buffer.from(`{"service":"dexdata","api_version":${str(API_VERSION)},"plan":${str(caller.plan)}}`);
            return;
        }
        if (f.path === '/usage') {
            meter.admit(caller, 0, now);
            a.body = usageBody(meter, caller, now);
            return;
        }
        // The agent host serves the /api subset (rewritten to main paths) and /health only; the REST
        // hosts do not serve /api paths (their router knows none).
        let path = f.path;
        let query = f.query;
        let project;
        if (served === 'agent') {
            const sub = subset(f.path, f.query);
            if (sub === null)
                throw routeNotFound('GET', f.path);
            ({ path, query, project } = sub);
        }
        checkPaidOnly(path, caller.plan);
        const cost = costOf(path, query);
        const slot = meter.admit(caller, cost, now);
        const finish = (body) => {
            a.body = project === undefined ? body : project(body);
            meter.charge(slot, cost, now);
            if (cacheKey !== null)
                freeHostCache.set(cacheKey, 0, Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength), performance.now() + FREE_HOST_CACHE_TTL_MS, cost);
        };
        const body = route(path, query, { tier: caller.plan, plans: access.plans });
        if (body instanceof Promise)
            return body.then(finish);
        finish(body);
    }
    function fail(a, err, path) {
        a.contentType = 'application/json';
        if (err instanceof ApiError) {
            a.status = err.status;
            a.body = err.body;
            if (err instanceof RateLimited)
                a.retryAfterSeconds = err.retryAfterSeconds;
        }
        else {
            // The path only: query strings and headers may carry credentials. After close, a search cut
            // short by the shard threads stopping is the shutdown's doing, not an error to report.
            if (!closed)
                log.error({ req_id: requestId(a.seq), path }, `internal error: ${errorText(err)}`);
            a.status = INTERNAL_ERROR.status;
            a.body = INTERNAL_ERROR.body;
        }
    }
    function send(res, a, path) {
        try {
            sendJson(res, a.status, a.body, a.plan, a.retryAfterSeconds, a.contentType);
            if (requestCounters !== null || accessLog) {
                const seconds = a.startedMs > 0 ? (performance.now() - a.startedMs) / 1000 : -1;
                requestCounters?.record(a.host, routeOf(path), a.status, seconds);
                // The path only: query strings may carry what a caller would not have logged.
                if (accessLog)
                    log.debug({ req_id: requestId(a.seq), host: REQUEST_HOSTS[a.host], path, status: a.status, ms: Math.round(seconds * 1e6) / 1e3, plan: a.plan, client: a.client }, 'request');
            }
        }
        catch (err) {
            log.error({ req_id: requestId(a.seq), path }, `response not written: ${errorText(err)}`);
        }
    }
    /** Answers waiting on the shard threads; shutdown lets them finish. */
    let answersPending = 0;
    function handler(role) {
        const host = REQUEST_HOSTS.indexOf(role);
        return (res, req) => {
            const requestSeq = nextRequestSeq();
            const a = { seq: requestSeq, host, startedMs: accessLog || (requestCounters !== null && requestSeq % LATENCY_SAMPLE_EVERY === 0) ? performance.now() : 0, status: 200, body: HEALTH_BODY, plan: PLAN_KEYLESS, retryAfterSeconds: 0, contentType: 'application/json' };
            let path = '';
            try {
                path = req.getUrl();
                const authorization = req.getHeader(AUTHORIZATION);
                const f = {
                    path,
                    query: req.getQuery() ?? '',
                    authorization,
                    host: roleByName.size === 0 && role !== 'agent' ? '' : req.getHeader(HOST),
                    // Only keyless callers are counted by address.
                    address: access === undefined || authorization !== '' ? null : peerAddress(res),
                    client: proxies.any && (authorization === '' || accessLog) ? proxies.client(peerAddress(res), req.getHeader(X_FORWARDED_FOR), req.getHeader(FORWARDED)) : null,
                };
                if (accessLog)
                    a.client = f.client ?? addressText(new Uint8Array(res.getRemoteAddress()));
                const pending = answer(role, f, a);
                if (pending !== undefined) {
                    let aborted = false;
                    res.onAborted(() => {
                        aborted = true;
                    });
                    const p = path;
                    answersPending++;
                    void pending
                        .catch((err) => fail(a, err, p))
                        .then(() => {
                        answersPending--;
                        if (!aborted)
                            res.cork(() => send(res, a, p));
                    });
                    return;
                }
            }
            catch (err) {
                fail(a, err, path);
            }
            send(res, a, path);
        };
    }
    const listening = [];
    const fronts = [];
    /** The role's public port is its HTTP front's (gateway/edge/front.ts); uWS serves on loopback behind it. */
    const frontMode = options.front ?? 'off';
    const fronted = (role) => frontMode === 'all' || (frontMode === 'on' && !(role === 'freeStream' || role === 'paidStream'));
    const front = async (role, port, upstreamPort) => {
        const f = await startFront({ host: options.host, port, upstreamPort });
        fronts.push(f);
        ports[role] = f.port;
    };
    const open = async (role, port) => {
        const app = uWS.App();
        if (role === 'freeStream' || role === 'paidStream')
            streamHost.register(app, role);
        else {
            if (role === 'agent')
                agentHost?.register(app);
            app.get('/*', handler(role));
            app.any('/*', methodNotFound);
        }
        const withFront = fronted(role);
        const l = await listen(app, withFront ? UPSTREAM_HOST : options.host, withFront ? 0 : port);
        l.fronted = withFront;
        listening.push(l);
        if (withFront)
            await front(role, port, l.port);
        else
            ports[role] = l.port;
    };
    // Streams and agent sessions opened with a key end when the key is revoked or replaced.
    const stopKeyWatch = keys === null
        ? () => undefined
        : watchRevokedKeys(keys, (gone) => {
            const revoked = (caller) => caller.account !== undefined && gone(caller.account);
            streamHost?.hub.failOwners((owner) => revoked(owner), KEY_REVOKED_MESSAGE);
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
    const close = async () => {
        if (closed)
            return;
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
        while (answersPending > 0 && performance.now() < deadline)
            await new Promise((r) => setTimeout(r, 10));
        closeListenSockets();
        // Also ends keep-alive connections, so the process can exit.
        for (const l of listening)
            l.app.close?.();
        await meter?.close();
    };
    const closeListenSockets = (which = () => true) => {
        for (const l of listening) {
            if (!which(l))
                continue;
            if (l.socket !== null)
                uWS.us_listen_socket_close(l.socket);
            l.socket = null;
        }
    };
    try {
        await open('freeRest', options.port);
        if (access?.paidRest !== undefined)
            await open('paidRest', access.paidRest.port);
        if (access?.agent !== undefined)
            await open('agent', access.agent.port);
        if (streamHost !== null && access?.freeStream !== undefined)
            await open('freeStream', access.freeStream.port);
        if (streamHost !== null && access?.paidStream !== undefined)
            await open('paidStream', access.paidStream.port);
        if (streamOptions !== null && streamThreadCount > 0) {
            const wanted = {};
            if (access?.freeStream !== undefined)
                wanted.freeStream = access.freeStream.port;
            if (access?.paidStream !== undefined)
                wanted.paidStream = access.paidStream.port;
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
            if (withFront)
                for (const [role, at] of Object.entries(wanted))
                    await front(role, at, streamThreads.ports[role]);
            else
                Object.assign(ports, streamThreads.ports);
        }
        const streamPorts = [ports.freeStream, ports.paidStream].filter((p) => p !== undefined);
        if (streamPorts.length > 0 && limitSendBuffers(streamPorts) === 0) {
            log.warn('streams: the send buffer of stream sockets could not be bounded; a reader that stops reading is noticed later');
        }
    }
    catch (err) {
        await close();
        throw err;
    }
    return {
        port: ports.freeRest,
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
//# sourceMappingURL=server.js.map