import { createTrustedProxies } from '../http/forwarded.js';
import { errorText, fallbackLog } from '../../engine/log.js';
import { resolveCaller } from '../auth/access.js';
import { ApiError } from '../errors.js';
import { createHostGuard } from '../http/host-header.js';
import { openFeedbackStore } from './feedback.js';
import { Exchange, PREFLIGHT_HEADERS } from './http.js';
import { DEFAULT_SESSION_LIMITS } from './sessions.js';
import { createToolCatalog } from './tools/catalog.js';
import { QueryLayer } from './tools/query.js';
import { JsonRpcEndpoint } from './transports/json-rpc.js';
import { SSE_MESSAGES_PATH, SseEndpoint } from './transports/sse.js';
import { StreamableHttpEndpoint } from './transports/streamable-http.js';
import { apiErrorData, FORBIDDEN_HOST_RPC, MAX_BODY_BYTES, rpcError, RpcCode } from './wire.js';
export const STREAMABLE_HTTP_PATH = '/streamable-http';
export const SSE_PATH = '/sse';
export const JSON_RPC_PATH = '/json-rpc';
export { SSE_MESSAGES_PATH };
/** How often idle Streamable HTTP sessions are looked for. */
const SWEEP_INTERVAL_MS = 60_000; // 1 min
const NO_BODY = Promise.resolve({ kind: 'body', body: Buffer.alloc(0) });
export function createAgentHost(options) {
    const { ctx, keys, plans } = options;
    const log = ctx.log ?? fallbackLog();
    const proxies = createTrustedProxies(options.trustedProxies ?? []);
    const info = {
        name: 'dexdata',
        version: options.version,
        description: 'DEX market data: networks, DEXes, pools, tokens, USD prices, OHLCV candles, transactions and indicators.',
    };
    const limits = options.sessionLimits ?? DEFAULT_SESSION_LIMITS;
    const query = new QueryLayer({ ctx, route: options.route, meter: options.meter, plans });
    const catalog = createToolCatalog(query, openFeedbackStore(ctx.store), info, log);
    const streamable = new StreamableHttpEndpoint({ catalog, info, limits });
    const sse = new SseEndpoint({ catalog, info, limits });
    const jsonRpc = new JsonRpcEndpoint({ catalog, info });
    const sweeper = setInterval(() => streamable.sweep(Date.now()), SWEEP_INTERVAL_MS);
    sweeper.unref();
    const hostAllowed = createHostGuard(options.listenHost, options.hostNames ?? []);
    function callerOf(ex) {
        const key = ex.authorization.trim().replace(/^bearer\s+/i, '');
        // Only keyless callers are counted by address.
        // Keyless callers are limited per address: the client a trusted proxy names, else the peer.
        const address = key === '' ? (proxies.clientOf(ex.remoteAddress, ex.header('x-forwarded-for'), ex.header('forwarded')) ?? ex.remoteAddress) : '';
        return resolveCaller(keys, plans, key, address, false, ctx.now());
    }
    /** An unexpected failure: logged (the path only: query strings and headers may carry credentials), answered 500. */
    function failed(ex, err) {
        // The path only: query strings and headers may carry credentials.
        log.error({ path: ex.path }, `agent: request failed: ${errorText(err)}`);
        if (!ex.answered)
            ex.sendJson(500, rpcError(RpcCode.internalError, 'Internal error'));
        else
            ex.end();
    }
    function serve(handler, readsBody) {
        return (res, req) => {
            const ex = new Exchange(res, req);
            // The body must be subscribed to before this callback returns, even if it is refused below.
            const body = readsBody ? ex.readBody(MAX_BODY_BYTES) : NO_BODY;
            let caller;
            try {
                if (!hostAllowed(ex.header('host'))) {
                    ex.sendJson(403, FORBIDDEN_HOST_RPC);
                    return;
                }
                caller = callerOf(ex);
            }
            catch (err) {
                if (err instanceof ApiError) {
                    ex.sendJson(err.status, rpcError(RpcCode.serverError, `${err.message}: send the API key as the Authorization header value, or no header for the keyless plan`, null, { error: err.code }));
                }
                else
                    failed(ex, err);
                return;
            }
            ex.extraHeaders['X-Api-Plan'] = caller.plan;
            handler(ex, caller, body).catch((err) => {
                // A refusal from the registry (a query parameter that cannot be read) is the caller's to fix.
                if (err instanceof ApiError && !ex.answered)
                    ex.sendJson(err.status, rpcError(err.status === 400 ? RpcCode.invalidParams : RpcCode.serverError, err.message, null, apiErrorData(err)));
                else
                    failed(ex, err);
            });
        };
    }
    const preflight = (res, req) => {
        new Exchange(res, req).send(204, PREFLIGHT_HEADERS);
    };
    const notAllowed = (allow) => (res, req) => {
        new Exchange(res, req).sendJson(405, rpcError(RpcCode.serverError, `Method not allowed: use ${allow}`), { Allow: allow });
    };
    return {
        register(app) {
            app.post(STREAMABLE_HTTP_PATH, serve((ex, caller, body) => streamable.post(ex, caller, body), true));
            app.get(STREAMABLE_HTTP_PATH, serve((ex, caller) => streamable.get(ex, caller), false));
            app.del(STREAMABLE_HTTP_PATH, serve((ex, caller) => streamable.delete(ex, caller), false));
            app.options(STREAMABLE_HTTP_PATH, preflight);
            app.any(STREAMABLE_HTTP_PATH, notAllowed('GET, POST, DELETE'));
            app.get(SSE_PATH, serve((ex, caller) => sse.open(ex, caller), false));
            app.options(SSE_PATH, preflight);
            app.any(SSE_PATH, notAllowed('GET'));
            app.post(SSE_MESSAGES_PATH, serve((ex, caller, body) => sse.post(ex, caller, body), true));
            app.options(SSE_MESSAGES_PATH, preflight);
            app.any(SSE_MESSAGES_PATH, notAllowed('POST'));
            app.post(JSON_RPC_PATH, serve((ex, caller, body) => jsonRpc.post(ex, caller, body), true));
            app.options(JSON_RPC_PATH, preflight);
            app.any(JSON_RPC_PATH, notAllowed('POST'));
        },
        hostAllowed,
        closeSessionsOf(closes) {
            streamable.closeWhere(closes);
            sse.closeWhere(closes);
        },
        sessions: () => ({ streamableHttp: streamable.sessionCount, sse: sse.sessionCount }),
        async close() {
            clearInterval(sweeper);
            await Promise.all([streamable.close(), sse.close(), jsonRpc.close()]);
        },
    };
}
//# sourceMappingURL=host.js.map