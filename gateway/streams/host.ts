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
import { PAID_PLANS, type PlanLimits, type PlanName } from '../../engine/config.js';
import { keylessCaller, resolveCaller, type Caller } from '../auth/access.js';
import type { KeyStore } from '../auth/key-store.js';
import type { GatewayContext } from '../context.js';
import { ApiError, INTERNAL_ERROR, NOT_FOUND } from '../errors.js';
import { sendJson } from '../http/respond.js';
import { rfc3339 } from '../http/time.js';
import { RateLimited, type Meter } from '../metering/meter.js';
import type { StreamClient } from './client.js';
import { StreamHub, type HubOptions } from './hub.js';
import { MAX_BODY_BYTES, parseGet, parsePost, POOL_METHODS, type Endpoint, type StreamRequest } from './request.js';
import { StreamSlots } from './slots.js';

export type StreamRole = 'freeStream' | 'paidStream';

export interface StreamHostOptions {
  readonly ctx: GatewayContext;
  readonly keys: KeyStore;
  readonly meter: Meter;
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
  /** Tokens keyless callers may stream prices of, `<network>:<address>`; undefined = stablecoins and wrapped native tokens. */
  readonly showcase?: readonly string[];
  /** Public address of each stream host (what wrong_host names). */
  readonly hostUrl: (role: StreamRole) => string;
  readonly hub?: Omit<HubOptions, 'ctx'>;
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
/** GET streams are answered or opened within their callback: the stream registers its own abort handler. */
const NO_TARGET: { client: StreamClient | null } = { client: null };
const BODY_TOO_LARGE = new ApiError('invalid_parameter', `invalid body: larger than ${MAX_BODY_BYTES} bytes`, { param: 'body' });

interface Facts {
  readonly query: string;
  readonly authorization: string;
  readonly lastEventId: string;
  readonly ip: string;
}

function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}

export function createStreamHost(options: StreamHostOptions): StreamHost {
  const { ctx, keys, meter, plans } = options;
  const slots = new StreamSlots();
  const hub = new StreamHub({
    ctx,
    ...options.hub,
    billing: {
      spend: (owner, n) => {
        const caller = owner as Caller;
        return caller.plan === 'enterprise' ? n : meter.spend(caller, n, ctx.now());
      },
      exhaustedMessage: (owner) => {
        const u = meter.usage(owner as Caller, ctx.now());
        return `credit allowance of ${u.limit} exhausted for this period; resets at ${rfc3339(u.resetsAt)}`;
      },
      released: (owner) => slots.release((owner as Caller).key),
    },
  });
  const showcase = options.showcase === undefined ? null : new Set(options.showcase.map((s) => s.replace(/:(0x[0-9a-fA-F]+)$/, (_, a: string) => `:${a.toLowerCase()}`)));
  const isShowcase = (token: number): boolean => {
    if (showcase === null) return ctx.views.tokenRole[token]! <= 2;
    const t = ctx.registry.tokens[token]!;
    return showcase.has(`${ctx.registry.networks[t.chain]!.id}:${t.address}`);
  };

  function refuse(res: HttpResponse, err: unknown, plan: string, path: string): void {
    if (err instanceof ApiError) {
      const retry = err instanceof RateLimited ? err.retryAfterSeconds : err.code === 'rate_limited' ? STREAM_CAP_RETRY_AFTER_S : 0;
      sendJson(res, err.status, err.body, plan, retry);
      return;
    }
    console.error(`streams: internal error on ${path}: ${errorText(err)}`);
    sendJson(res, INTERNAL_ERROR.status, INTERNAL_ERROR.body, plan);
  }

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

  /** The checks that follow parsing, then the stream. Runs inside a uWS callback (corked). */
  function start(res: HttpResponse, caller: Caller, request: StreamRequest, now: number, onAbortTarget: { client: StreamClient | null }): void {
    if (caller.plan === 'keyless') {
      for (const s of request.subscriptions) if (POOL_METHODS.has(s.method) || !isShowcase(s.asset)) throw PREVIEW_PRICES;
    }
    meter.admit(caller, caller.plan === 'enterprise' ? 0 : 1, now);
    const cap = caller.limits.concurrentStreams;
    if (!slots.acquire(caller.key, cap)) {
      throw new ApiError('rate_limited', `Concurrent stream limit reached: ${cap} streams are open for this ${caller.plan === 'keyless' ? 'address' : 'account'} (${caller.plan} plan)`, {
        retry_after: STREAM_CAP_RETRY_AFTER_S,
      });
    }
    let client: StreamClient;
    try {
      client = hub.open(request.subscriptions, request.lastEventId, { res, post: request.post, limit: request.limit, plan: caller.plan, owner: caller }, onAbortTarget === NO_TARGET);
    } catch (err) {
      slots.release(caller.key);
      throw err;
    }
    if (onAbortTarget !== NO_TARGET) onAbortTarget.client = client;
  }

  function facts(res: HttpResponse, req: HttpRequest): Facts {
    const authorization = req.getHeader('authorization');
    return {
      query: req.getQuery() ?? '',
      authorization,
      lastEventId: req.getHeader('last-event-id'),
      ip: authorization === '' ? Buffer.from(res.getRemoteAddressAsText()).toString('latin1') : '',
    };
  }

  function getHandler(role: StreamRole, endpoint: Endpoint) {
    return (res: HttpResponse, req: HttpRequest): void => {
      let plan = 'keyless';
      const path = `/sse/${endpoint}`;
      try {
        const f = facts(res, req);
        const now = ctx.now();
        const caller = admitCaller(role, endpoint, f, now);
        plan = caller.plan;
        start(res, caller, parseGet(ctx.registry, endpoint, f.query, f.lastEventId), now, NO_TARGET);
      } catch (err) {
        refuse(res, err, plan, path);
      }
    };
  }

  function postHandler(role: StreamRole, endpoint: 'prices' | 'reserves') {
    return (res: HttpResponse, req: HttpRequest): void => {
      const target: { client: StreamClient | null } = { client: null };
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
        target.client?.gone();
      });
      const path = `/sse/${endpoint}`;
      let f: Facts;
      let caller: Caller;
      try {
        f = facts(res, req);
        caller = admitCaller(role, endpoint, f, ctx.now());
      } catch (err) {
        refuse(res, err, 'keyless', path);
        return;
      }
      const declared = Number(req.getHeader('content-length'));
      if (declared > MAX_BODY_BYTES) {
        refuse(res, BODY_TOO_LARGE, caller.plan, path);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      res.onData((chunk, isLast) => {
        if (done || aborted) return;
        size += chunk.byteLength;
        if (size > MAX_BODY_BYTES) {
          done = true;
          res.cork(() => refuse(res, BODY_TOO_LARGE, caller.plan, path));
          return;
        }
        chunks.push(Buffer.from(chunk.slice(0)));
        if (!isLast) return;
        done = true;
        res.cork(() => {
          try {
            const now = ctx.now();
            start(res, caller, parsePost(ctx.registry, endpoint, f.query, Buffer.concat(chunks, size), f.lastEventId), now, target);
          } catch (err) {
            refuse(res, err, caller.plan, path);
          }
        });
      });
    };
  }

  const health = (res: HttpResponse): void => {
    sendJson(res, 200, HEALTH_BODY);
  };
  const notFound = (res: HttpResponse): void => {
    sendJson(res, NOT_FOUND.status, NOT_FOUND.body);
  };

  return {
    hub,
    slots,
    register(app, role) {
      app.get('/health', health);
      app.get('/sse/prices', getHandler(role, 'prices'));
      app.get('/sse/reserves', getHandler(role, 'reserves'));
      app.get('/sse/transactions', getHandler(role, 'transactions'));
      app.get('/sse/ohlcv', getHandler(role, 'ohlcv'));
      app.post('/sse/prices', postHandler(role, 'prices'));
      app.post('/sse/reserves', postHandler(role, 'reserves'));
      app.any('/*', notFound);
    },
    close: () => hub.close(),
  };
}
