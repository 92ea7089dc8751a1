/**
 * The stream hosts ({stream_url} for keyless callers and free keys, {stream_pro_url} for dev, pro and
 * enterprise keys): server-sent-event streams of prices, reserves, swaps and 1 s candles.
 *
 *   POST /sse/prices, GET /sse/prices          token_price          keyless: showcase tokens only
 *   POST /sse/reserves, GET /sse/reserves      pool_reserves, token_reserves   free key or better
 *   GET /sse/transactions                      pool, token (swaps)  dev, pro, enterprise
 *   GET /sse/ohlcv                             ohlcv (sealed 1 s token candles)  dev, pro, enterprise
 *
 * A request is checked in this order before anything is streamed, each refusal a JSON answer: the key
 * (401), the host (403 wrong_host), the endpoint's plan (403 plan_required / preview_only), the
 * parameters and assets (400), the showcase (403 preview_only), the per-minute limit and the credits
 * (429, 402), the concurrent-stream cap (429). Opening a stream counts as one request; each data
 * event delivered then costs one credit (enterprise: none).
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { createTrustedProxies, NO_PROXIES, type TrustedProxies } from '../http/forwarded.js';
import { errorText, fallbackLog, type Log, PAID_PLANS, type PlanLimits, type PlanName } from '../../engine/read/index.js';
import type { StreamCounters } from '../metrics/counters.js';
import { keylessCaller, resolveCaller, type Caller } from '../auth/access.js';
import { fromPage, preflight, sendJsonToPage } from '../cors.js';
import type { KeyStore } from '../auth/key-store.js';
import type { ServeContext } from '../context.js';
import { ApiError, INTERNAL_ERROR, routeNotFound } from '../errors.js';
import { peerAddressText } from '../http/peer.js';
import { sendJson } from '../http/respond.js';
import { rfc3339 } from '../http/time.js';
import { RateLimited, type Meter } from '../metering/meter.js';
import type { StreamClient } from './client.js';
import { StreamHub, type HubOptions } from './hub.js';
import { MAX_BODY_BYTES, parseGet, parsePost, POOL_METHODS, type Endpoint, type StreamRequest } from './request.js';
import { StreamSlots } from './slots.js';

export type StreamRole = 'freeStream' | 'paidStream';

export interface StreamHostOptions {
  readonly ctx: ServeContext;
  readonly keys: KeyStore;
  readonly meter: Meter;
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
  /** Tokens keyless callers may stream prices of, `<network>:<address>`; undefined = stablecoins and wrapped native tokens. */
  readonly showcase?: readonly string[];
  /** Public address of each stream host (what wrong_host names). */
  readonly hostUrl: (role: StreamRole) => string;
  readonly hub?: Omit<HubOptions, 'ctx'>;
  /** Stream counters for /metrics (row 0: this thread). */
  readonly counters?: StreamCounters;
  /** Reverse proxies whose forwarding headers name the client (gateway/http/forwarded.ts). */
  readonly trustedProxies?: readonly string[];
}

export interface StreamHost {
  readonly hub: StreamHub;
  readonly slots: StreamSlots;
  register(app: TemplatedApp, role: StreamRole): void;
  /** Ends every stream (with an `error` event). */
  close(): void;
}

const HEALTH_BODY = Buffer.from('{"status":"ok"}');
const MAX_INTERNED_CALLERS = 65_536;
/** Seconds a client refused for the stream cap is told to wait before trying again. */
export const STREAM_CAP_RETRY_AFTER_S = 5;

const PAID_HINT = 'a paid plan (dev, pro or enterprise)';
const PLAN_REQUIRED: Readonly<Record<'keyless' | 'free', ApiError>> = {
  keyless: new ApiError('plan_required', `this stream needs ${PAID_HINT} on the paid stream host`, { tier: 'keyless', required_tier: 'dev' }),
  free: new ApiError('plan_required', `this stream needs ${PAID_HINT} on the paid stream host`, { tier: 'free', required_tier: 'dev' }),
};
const PREVIEW_RESERVES = new ApiError('preview_only', 'reserve streams need an API key (free or better); without one only the showcase prices stream', {
  tier: 'keyless',
  links: {},
});
const PREVIEW_PRICES = new ApiError('preview_only', 'without an API key only the showcase tokens stream; send a key (free or better) for any token', {
  tier: 'keyless',
  links: {},
});
/** GET streams are answered or opened within their callback, or register their own abort handler. */
export const NO_TARGET: AbortTarget = { client: null, aborted: false };
const BODY_TOO_LARGE = new ApiError('invalid_parameter', `invalid body: larger than ${MAX_BODY_BYTES} bytes`, { param: 'body' });

/** A request that passed every check: who streams, what, and the concurrent-stream slot it holds. */
export interface Admitted {
  readonly caller: Caller;
  readonly request: StreamRequest;
  /** Slot of the caller's count in StreamSlots (given back once when the stream ends). */
  readonly slot: number;
}

/** A refusal as it goes on the wire. */
export interface Refusal {
  readonly status: number;
  readonly body: Uint8Array;
  readonly plan: string;
  readonly retryAfterSeconds: number;
}

/**
 * Every check made before a stream opens, in the order of the file comment, on the gateway's main
 * thread (the only writer of the meter's and the slots' bookkeeping): the stream threads ask it.
 */
export interface StreamAdmission {
  readonly slots: StreamSlots;
  /** Checks everything and takes a concurrent-stream count; throws the refusal (ApiError). `body`: a POST's body, null for GET. */
  admit(role: StreamRole, endpoint: Endpoint, f: Facts, body: Buffer | null): Admitted;
  /** The answer for an error thrown by admit (an unexpected one is logged and answers 500). */
  refusal(err: unknown, plan: string, path: string): Refusal;
  /** Charges up to n credits of a stream's caller for delivered events; returns how many were charged. */
  spend(caller: Caller, n: number): number;
  /** Credits the caller has left now. */
  remaining(caller: Caller): number;
  exhaustedMessage(caller: Caller): string;
}

export interface Facts {
  readonly query: string;
  readonly authorization: string;
  readonly lastEventId: string;
  readonly ip: string;
  /** The request asked for `Connection: close` (as uWS reads it: a 5-letter value), so uWS closes the connection after the response by itself. */
  readonly connectionClose: boolean;
  /** The request came from a web page (`Origin`): the answer carries the CORS headers (gateway/cors.ts). */
  readonly cors: boolean;
}

export function createStreamAdmission(options: Omit<StreamHostOptions, 'hub'>, slots = new StreamSlots()): StreamAdmission {
  const { ctx, keys, meter, plans } = options;
  const log = ctx.log ?? fallbackLog();
  const showcase = options.showcase === undefined ? null : new Set(options.showcase.map((s) => s.replace(/:(0x[0-9a-fA-F]+)$/, (_, a: string) => `:${a.toLowerCase()}`)));
  const isShowcase = (token: number): boolean => {
    if (showcase === null) return ctx.read.tokenRole(token) <= 2;
    const reg = ctx.read.catalog;
    return showcase.has(`${reg.networks[reg.tokenChain(token)]!.id}:${reg.tokenAddress(token)}`);
  };

  /**
   * One Caller object per subject while it is unchanged, shared by all the subject's streams (each
   * stream holds it as its owner: memory per stream is what limits how many one process holds).
   */
  const callers = new Map<string, Caller>();
  function intern(c: Caller): Caller {
    const known = callers.get(c.key);
    if (known !== undefined && known.account === c.account && known.plan === c.plan && known.extraCredits === c.extraCredits && known.limits === c.limits) return known;
    if (callers.size >= MAX_INTERNED_CALLERS) callers.clear();
    callers.set(c.key, c);
    return c;
  }

  /** Who is calling, and whether this host and endpoint serve them (throws the refusal). */
  function admitCaller(role: StreamRole, endpoint: Endpoint, f: Facts, now: number): Caller {
    const caller = intern(f.authorization === '' ? keylessCaller(plans, f.ip) : resolveCaller(keys, plans, f.authorization, f.ip, false, now));
    const right: StreamRole = PAID_PLANS.has(caller.plan) ? 'paidStream' : 'freeStream';
    if (right !== role) {
      const url = options.hostUrl(right);
      throw new ApiError('wrong_host', `the ${caller.plan} plan is served on ${url}`, { host: url });
    }
    if (endpoint === 'transactions' || endpoint === 'ohlcv') {
      if (caller.plan === 'keyless' || caller.plan === 'free') throw PLAN_REQUIRED[caller.plan];
    }
    if (endpoint === 'reserves' && caller.plan === 'keyless') throw PREVIEW_RESERVES;
    return caller;
  }

  /** The checks that follow parsing: the showcase, the per-minute limit and credits, the stream cap. */
  function start(caller: Caller, request: StreamRequest, now: number): number {
    if (caller.plan === 'keyless') {
      for (const s of request.subscriptions) if (POOL_METHODS.has(s.method) || !isShowcase(s.asset)) throw PREVIEW_PRICES;
    }
    meter.admit(caller, caller.plan === 'enterprise' ? 0 : 1, now);
    const cap = caller.limits.concurrentStreams;
    const slot = slots.acquireSlot(caller.key, cap);
    if (slot < 0) {
      throw new ApiError('rate_limited', `Concurrent stream limit reached: ${cap} streams are open for this ${caller.plan === 'keyless' ? 'address' : 'account'} (${caller.plan} plan)`, {
        retry_after: STREAM_CAP_RETRY_AFTER_S,
      });
    }
    return slot;
  }

  return {
    slots,
    admit(role, endpoint, f, body) {
      const now = ctx.now();
      const caller = admitCaller(role, endpoint, f, now);
      const request =
        body === null
          ? parseGet(ctx.read.catalog, endpoint, f.query, f.lastEventId)
          : parsePost(ctx.read.catalog, endpoint as 'prices' | 'reserves', f.query, body, f.lastEventId);
      return { caller, request, slot: start(caller, request, now) };
    },
    refusal(err, plan, path) {
      if (err instanceof ApiError) {
        const retry = err instanceof RateLimited ? err.retryAfterSeconds : err.code === 'rate_limited' ? STREAM_CAP_RETRY_AFTER_S : 0;
        return { status: err.status, body: err.body, plan, retryAfterSeconds: retry };
      }
      log.error({ path }, `streams: internal error: ${errorText(err)}`);
      return { status: INTERNAL_ERROR.status, body: INTERNAL_ERROR.body, plan, retryAfterSeconds: 0 };
    },
    spend: (caller, n) => (caller.plan === 'enterprise' ? n : meter.spend(caller, n, ctx.now())),
    remaining(caller) {
      if (caller.plan === 'enterprise') return Number.MAX_SAFE_INTEGER;
      const u = meter.usage(caller, ctx.now());
      return Math.max(0, u.limit - u.used);
    },
    exhaustedMessage(caller) {
      const u = meter.usage(caller, ctx.now());
      return `credit allowance of ${u.limit} exhausted for this period; resets at ${rfc3339(u.resetsAt)}`;
    },
  };
}

/** What a handler copies out of the request before it dies. */
export function requestFacts(res: HttpResponse, req: HttpRequest, proxies: TrustedProxies = NO_PROXIES): Facts {
  const authorization = req.getHeader('authorization');
  let ip = '';
  if (authorization === '') {
    // Keyless callers are capped per address: the client a trusted proxy names, else the peer.
    const peer = peerAddressText(res);
    ip = (proxies.any ? proxies.clientOf(peer, req.getHeader('x-forwarded-for'), req.getHeader('forwarded')) : null) ?? peer;
  }
  return {
    query: req.getQuery() ?? '',
    authorization,
    lastEventId: req.getHeader('last-event-id'),
    ip,
    connectionClose: req.getHeader('connection').length === 5,
    cors: fromPage(req),
  };
}

/** `cors`: the request came from a web page. */
export function sendRefusal(res: HttpResponse, r: Refusal, cors = false): void {
  if (cors) sendJsonToPage(res, r.status, r.body, r.plan, r.retryAfterSeconds);
  else sendJson(res, r.status, r.body, r.plan, r.retryAfterSeconds);
}

export const ENDPOINTS: readonly Endpoint[] = ['prices', 'reserves', 'transactions', 'ohlcv'];

/**
 * The routes of a stream host on one uWS app. `open` gets the request (with the POST body read,
 * at most MAX_BODY_BYTES) inside its uWS callback; it answers or opens the stream, now or later
 * (a stream thread asks the main thread first): `aborted` tells it whether the client left since.
 */
export function registerStreamRoutes(
  app: TemplatedApp,
  open: (res: HttpResponse, endpoint: Endpoint, f: Facts, body: Buffer | null, abort: AbortTarget) => void,
  log: Log = fallbackLog(),
  proxies: TrustedProxies = NO_PROXIES,
): void {
  const health = (res: HttpResponse): void => {
    sendJson(res, 200, HEALTH_BODY);
  };
  const noRoute = (res: HttpResponse, req: HttpRequest): void => {
    const err = routeNotFound(req.getMethod().toUpperCase(), req.getUrl());
    sendJson(res, err.status, err.body);
  };
  app.get('/health', health);
  // Web pages preflight their requests (they send a key, or a JSON body).
  app.options('/*', preflight);
  for (const endpoint of ENDPOINTS) {
    app.get(`/sse/${endpoint}`, (res, req) => {
      let f: Facts;
      try {
        f = requestFacts(res, req, proxies);
      } catch (err) {
        log.error({ path: `/sse/${endpoint}` }, `streams: request not read: ${errorText(err)}`);
        sendJson(res, INTERNAL_ERROR.status, INTERNAL_ERROR.body);
        return;
      }
      open(res, endpoint, f, null, NO_TARGET);
    });
  }
  for (const endpoint of ['prices', 'reserves'] as const) {
    app.post(`/sse/${endpoint}`, (res, req) => {
      const target: AbortTarget = { client: null, aborted: false };
      res.onAborted(() => {
        target.aborted = true;
        target.client?.gone();
      });
      const f = requestFacts(res, req, proxies);
      const declared = Number(req.getHeader('content-length'));
      if (declared > MAX_BODY_BYTES) {
        sendRefusal(res, { status: BODY_TOO_LARGE.status, body: BODY_TOO_LARGE.body, plan: 'keyless', retryAfterSeconds: 0 }, f.cors);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      res.onData((chunk, isLast) => {
        if (done || target.aborted) return;
        size += chunk.byteLength;
        if (size > MAX_BODY_BYTES) {
          done = true;
          res.cork(() => sendRefusal(res, { status: BODY_TOO_LARGE.status, body: BODY_TOO_LARGE.body, plan: 'keyless', retryAfterSeconds: 0 }, f.cors));
          return;
        }
        chunks.push(Buffer.from(chunk.slice(0)));
        if (!isLast) return;
        done = true;
        res.cork(() => open(res, endpoint, f, Buffer.concat(chunks, size), target));
      });
    });
  }
  app.any('/*', noRoute);
}

/** Where a response's abort handler finds the stream opened on it (POST: registered before the body is read). */
export interface AbortTarget {
  client: StreamClient | null;
  aborted: boolean;
}

/** The stream host with its hub on the calling thread (one uWS thread). */
export function createStreamHost(options: StreamHostOptions): StreamHost {
  const admission = createStreamAdmission(options);
  const slots = admission.slots;
  const proxies = createTrustedProxies(options.trustedProxies ?? []);
  const hub = new StreamHub({
    ctx: options.ctx,
    ...options.hub,
    ...(options.counters !== undefined ? { counters: options.counters } : {}),
    billing: {
      spend: (owner, n) => admission.spend(owner as Caller, n),
      exhaustedMessage: (owner) => admission.exhaustedMessage(owner as Caller),
      released: (owner) => slots.release((owner as Caller).key),
    },
  });

  function opener(role: StreamRole) {
    return (res: HttpResponse, endpoint: Endpoint, f: Facts, body: Buffer | null, target: AbortTarget): void => {
      if (target.aborted) return;
      let plan = 'keyless';
      const path = `/sse/${endpoint}`;
      try {
        const a = admission.admit(role, endpoint, f, body);
        plan = a.caller.plan;
        let client: StreamClient;
        try {
          client = hub.open(a.request.subscriptions, a.request.lastEventId, { res, post: a.request.post, limit: a.request.limit, plan, owner: a.caller, connectionClose: f.connectionClose, cors: f.cors }, target === NO_TARGET);
        } catch (err) {
          slots.release(a.caller.key);
          throw err;
        }
        if (target !== NO_TARGET) target.client = client;
      } catch (err) {
        sendRefusal(res, admission.refusal(err, plan, path), f.cors);
      }
    };
  }

  return {
    hub,
    slots,
    register: (app, role) => registerStreamRoutes(app, opener(role), options.ctx.log, proxies),
    close: () => hub.close(),
  };
}
