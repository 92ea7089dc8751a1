/**
 * The HTTP gateway: one uWS app on the calling thread, answering every route from the engine's
 * shared views, the registry and the store without waiting on anything, so each request is
 * answered inside its own callback. Unknown paths and methods other than GET get 404 JSON;
 * no exception escapes a uWS callback.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, us_listen_socket, us_socket } from 'uWebSockets.js';
import type { GatewayContext } from './context.js';
import { ApiError, INTERNAL_ERROR, NOT_FOUND } from './errors.js';
import { ResponseCache } from './http/cache.js';
import { sendJson } from './http/respond.js';
import { createNetworkHandlers } from './rest/networks.js';
import { createPoolOhlcv } from './rest/ohlcv.js';
import { PoolStatics } from './rest/pool-static.js';
import { createPoolDetails } from './rest/pools.js';
import { openApiDocument } from './rest/openapi.js';
import { createMultiPrices } from './rest/prices.js';
import { removedRoute } from './rest/removed.js';
import { createPoolSearch } from './rest/search.js';
import { createHistoryRoutes } from './rest/history-routes.js';
import { createSearchRoutes } from './rest/search-routes.js';
import { createStats } from './rest/stats.js';
import { createTokenDetails } from './rest/tokens.js';

export type { GatewayContext } from './context.js';

export interface GatewayOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
}

export interface Gateway {
  readonly port: number;
  close(): Promise<void>;
}

/** Rendered response bodies kept for reuse. */
export const CACHE_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB

const HEALTH_BODY = Buffer.from('{"status":"ok"}');
/** Version of the interface described at /openapi.json. */
export const API_VERSION = '0.1.0';
const NOOP = (): void => {};

type Route = (url: string, query: string) => Uint8Array;

function segment(raw: string): string {
  if (raw.indexOf('%') < 0) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw NOT_FOUND;
  }
}

function createRouter(ctx: GatewayContext): Route {
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
  return (url, query) => {
    const s = url.split('/');
    const removed = removedRoute(s);
    if (removed !== null) throw removed;
    const extra = history(s, query) ?? searches(s, query);
    if (extra !== null) return extra;
    if (s.length === 2) {
      if (s[1] === 'health') return HEALTH_BODY;
      if (s[1] === 'networks') return networks.networks();
      if (s[1] === 'stats') return stats();
      if (s[1] === 'openapi.json') return openApi;
      throw NOT_FOUND;
    }
    if (s.length === 3 && s[1] === 'pools' && s[2] === 'search') return search.global(query);
    if (s[1] !== 'networks' || s.length > 6) throw NOT_FOUND;
    const network = segment(s[2]!);
    if (s.length === 4 && s[3] === 'dexes') return networks.dexes(network, query);
    if (s.length === 5 && s[3] === 'multi' && s[4] === 'prices') return prices(network, query);
    if (s.length === 5 && s[3] === 'tokens') return token(network, segment(s[4]!));
    if (s[3] !== 'pools' || s.length < 5) throw NOT_FOUND;
    if (s.length === 5) return s[4] === 'search' ? search.network(network, query) : details(network, segment(s[4]!), query);
    if (s[5] === 'ohlcv') return ohlcv(network, segment(s[4]!), query);
    throw NOT_FOUND;
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}

export function startGateway(ctx: GatewayContext, options: GatewayOptions): Promise<Gateway> {
  if (typeof uWS.getParts !== 'function') {
    return Promise.reject(new Error('uWebSockets.js native binary is not loaded (the slow fallback is refused)'));
  }
  const route = createRouter(ctx);
  const app = uWS.App();

  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    res.onAborted(NOOP);
    let status = 200;
    let body: Uint8Array;
    let path = '';
    try {
      path = req.getUrl();
      if (req.getMethod() !== 'get') throw NOT_FOUND;
      body = route(path, req.getQuery() ?? '');
    } catch (err) {
      if (err instanceof ApiError) {
        status = err.status;
        body = err.body;
      } else {
        // The path only: query strings may one day carry credentials.
        console.error(`gateway: internal error on ${path}: ${errorText(err)}`);
        status = INTERNAL_ERROR.status;
        body = INTERNAL_ERROR.body;
      }
    }
    try {
      sendJson(res, status, body);
    } catch (err) {
      console.error(`gateway: response to ${path} not written: ${errorText(err)}`);
    }
  });

  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (token: us_listen_socket | false) => {
      if (token === false) {
        reject(new Error(`gateway cannot listen on ${options.host}:${options.port}`));
        return;
      }
      let listening: us_listen_socket | null = token;
      resolve({
        port: uWS.us_socket_local_port(token as unknown as us_socket),
        close(): Promise<void> {
          if (listening !== null) {
            uWS.us_listen_socket_close(listening);
            listening = null;
          }
          // Also ends keep-alive connections, so the process can exit.
          (app as unknown as { close?: () => void }).close?.();
          return Promise.resolve();
        },
      });
    });
  });
}
