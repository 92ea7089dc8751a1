import { createTrustedProxies, NO_PROXIES } from '../http/forwarded.js';
import { errorText, fallbackLog } from '../../engine/log.js';
import { PAID_PLANS } from '../../engine/config.js';
import { keylessCaller, resolveCaller } from '../auth/access.js';
import { ApiError, INTERNAL_ERROR, routeNotFound } from '../errors.js';
import { peerAddressText } from '../http/peer.js';
import { sendJson } from '../http/respond.js';
import { rfc3339 } from '../http/time.js';
import { RateLimited } from '../metering/meter.js';
import { StreamHub } from './hub.js';
import { MAX_BODY_BYTES, parseGet, parsePost, POOL_METHODS } from './request.js';
import { StreamSlots } from './slots.js';
const HEALTH_BODY = Buffer.from('{"status":"ok"}');
const MAX_INTERNED_CALLERS = 65_536;
/** Seconds a client refused for the stream cap is told to wait before trying again. */
export const STREAM_CAP_RETRY_AFTER_S = 5;
const PAID_HINT = 'a paid plan (dev, pro or enterprise)';
const PLAN_REQUIRED = {
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
export const NO_TARGET = { client: null, aborted: false };
const BODY_TOO_LARGE = new ApiError('invalid_parameter', `invalid body: larger than ${MAX_BODY_BYTES} bytes`, { param: 'body' });
export function createStreamAdmission(options, slots = new StreamSlots()) {
    const { ctx, keys, meter, plans } = options;
    const log = ctx.log ?? fallbackLog();
    const showcase = options.showcase === undefined ? null : new Set(options.showcase.map((s) => s.replace(/:(0x[0-9a-fA-F]+)$/, (_, a) => `:${a.toLowerCase()}`)));
    const isShowcase = (token) => {
        if (showcase === null)
            return ctx.views.tokenRole[token] <= 2;
        const t = ctx.registry.tokens[token];
        return showcase.has(`${ctx.registry.networks[t.chain].id}:${t.address}`);
    };
    /**
     * One Caller object per subject while it is unchanged, shared by all the subject's streams (each
     * stream holds it as its owner: memory per stream is what limits how many one process holds).
     */
    const callers = new Map();
    function intern(c) {
        const known = callers.get(c.key);
        if (known !== undefined && known.account === c.account && known.plan === c.plan && known.extraCredits === c.extraCredits && known.limits === c.limits)
            return known;
        if (callers.size >= MAX_INTERNED_CALLERS)
            callers.clear();
        callers.set(c.key, c);
        return c;
    }
    /** Who is calling, and whether this host and endpoint serve them (throws the refusal). */
    function admitCaller(role, endpoint, f, now) {
        const caller = intern(f.authorization === '' ? keylessCaller(plans, f.ip) : resolveCaller(keys, plans, f.authorization, f.ip, false, now));
        const right = PAID_PLANS.has(caller.plan) ? 'paidStream' : 'freeStream';
        if (right !== role) {
            const url = options.hostUrl(right);
            throw new ApiError('wrong_host', `the ${caller.plan} plan is served on ${url}`, { host: url });
        }
        if (endpoint === 'transactions' || endpoint === 'ohlcv') {
            if (caller.plan === 'keyless' || caller.plan === 'free')
                throw PLAN_REQUIRED[caller.plan];
        }
        if (endpoint === 'reserves' && caller.plan === 'keyless')
            throw PREVIEW_RESERVES;
        return caller;
    }
    /** The checks that follow parsing: the showcase, the per-minute limit and credits, the stream cap. */
    function start(caller, request, now) {
        if (caller.plan === 'keyless') {
            for (const s of request.subscriptions)
                if (POOL_METHODS.has(s.method) || !isShowcase(s.asset))
                    throw PREVIEW_PRICES;
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
            const request = body === null
                ? parseGet(ctx.registry, endpoint, f.query, f.lastEventId)
                : parsePost(ctx.registry, endpoint, f.query, body, f.lastEventId);
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
            if (caller.plan === 'enterprise')
                return Number.MAX_SAFE_INTEGER;
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
export function requestFacts(res, req, proxies = NO_PROXIES) {
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
    };
}
export function sendRefusal(res, r) {
    sendJson(res, r.status, r.body, r.plan, r.retryAfterSeconds);
}
export const ENDPOINTS = ['prices', 'reserves', 'transactions', 'ohlcv'];
/**
 * The routes of a stream host on one uWS app. `open` gets the request (with the POST body read,
 * at most MAX_BODY_BYTES) inside its uWS callback; it answers or opens the stream, now or later
 * (a stream thread asks the main thread first): `aborted` tells it whether the client left since.
 */
export function registerStreamRoutes(app, open, log = fallbackLog(), proxies = NO_PROXIES) {
    const health = (res) => {
        sendJson(res, 200, HEALTH_BODY);
    };
    const noRoute = (res, req) => {
        const err = routeNotFound(req.getMethod().toUpperCase(), req.getUrl());
        sendJson(res, err.status, err.body);
    };
    app.get('/health', health);
    for (const endpoint of ENDPOINTS) {
        app.get(`/sse/${endpoint}`, (res, req) => {
            let f;
            try {
                f = requestFacts(res, req, proxies);
            }
            catch (err) {
                log.error({ path: `/sse/${endpoint}` }, `streams: request not read: ${errorText(err)}`);
                sendJson(res, INTERNAL_ERROR.status, INTERNAL_ERROR.body);
                return;
            }
            open(res, endpoint, f, null, NO_TARGET);
        });
    }
    for (const endpoint of ['prices', 'reserves']) {
        app.post(`/sse/${endpoint}`, (res, req) => {
            const target = { client: null, aborted: false };
            res.onAborted(() => {
                target.aborted = true;
                target.client?.gone();
            });
            const f = requestFacts(res, req, proxies);
            const declared = Number(req.getHeader('content-length'));
            if (declared > MAX_BODY_BYTES) {
                sendJson(res, BODY_TOO_LARGE.status, BODY_TOO_LARGE.body);
                return;
            }
            const chunks = [];
            let size = 0;
            let done = false;
            res.onData((chunk, isLast) => {
                if (done || target.aborted)
                    return;
                size += chunk.byteLength;
                if (size > MAX_BODY_BYTES) {
                    done = true;
                    res.cork(() => sendJson(res, BODY_TOO_LARGE.status, BODY_TOO_LARGE.body));
                    return;
                }
                chunks.push(Buffer.from(chunk.slice(0)));
                if (!isLast)
                    return;
                done = true;
                res.cork(() => open(res, endpoint, f, Buffer.concat(chunks, size), target));
            });
        });
    }
    app.any('/*', noRoute);
}
/** The stream host with its hub on the calling thread (one uWS thread). */
export function createStreamHost(options) {
    const admission = createStreamAdmission(options);
    const slots = admission.slots;
    const proxies = createTrustedProxies(options.trustedProxies ?? []);
    const hub = new StreamHub({
        ctx: options.ctx,
        ...options.hub,
        ...(options.counters !== undefined ? { counters: options.counters } : {}),
        billing: {
            spend: (owner, n) => admission.spend(owner, n),
            exhaustedMessage: (owner) => admission.exhaustedMessage(owner),
            released: (owner) => slots.release(owner.key),
        },
    });
    function opener(role) {
        return (res, endpoint, f, body, target) => {
            if (target.aborted)
                return;
            let plan = 'keyless';
            const path = `/sse/${endpoint}`;
            try {
                const a = admission.admit(role, endpoint, f, body);
                plan = a.caller.plan;
                let client;
                try {
                    client = hub.open(a.request.subscriptions, a.request.lastEventId, { res, post: a.request.post, limit: a.request.limit, plan, owner: a.caller, connectionClose: f.connectionClose }, target === NO_TARGET);
                }
                catch (err) {
                    slots.release(a.caller.key);
                    throw err;
                }
                if (target !== NO_TARGET)
                    target.client = client;
            }
            catch (err) {
                sendRefusal(res, admission.refusal(err, plan, path));
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
//# sourceMappingURL=host.js.map