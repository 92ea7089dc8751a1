/**
 * Cross-origin answers for web pages (the web explorer, gateway/explorer, calls the stream hosts and
 * the paid REST host from the free REST host's origin). Keys travel in the Authorization header,
 * never in cookies, so any origin may read what it asked for with its own key, as the agent host
 * already allows (gateway/agent/http.ts): an answer to a request that carries `Origin` says
 * `Access-Control-Allow-Origin: *`, and an OPTIONS preflight on any path is answered 204.
 * Requests without `Origin` (every client that is not a browser) get the answers they always had.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { STATUS_LINES } from './http/respond.js';

const ORIGIN = Buffer.from('origin');
const REQUEST_METHOD = Buffer.from('access-control-request-method');
const ALLOW_ORIGIN = Buffer.from('Access-Control-Allow-Origin');
const ANY = Buffer.from('*');
const EXPOSE = Buffer.from('Access-Control-Expose-Headers');
const EXPOSED = Buffer.from('X-Api-Plan, Retry-After');
const CONTENT_TYPE = Buffer.from('content-type');
const X_API_PLAN = Buffer.from('X-Api-Plan');

/** Preflight answer headers: the methods and request headers the public hosts take. */
const PREFLIGHT: readonly (readonly [string, string])[] = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Methods', 'GET, POST, HEAD, OPTIONS'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, Last-Event-ID'],
  ['Access-Control-Max-Age', '86400'],
];

/** Whether the request came from a web page (it names its origin). */
export function fromPage(req: HttpRequest): boolean {
  return req.getHeader(ORIGIN) !== '';
}

/** The CORS headers of an answer to a page; call between the status line and the other headers. */
export function writeCorsHeaders(res: HttpResponse): void {
  res.writeHeader(ALLOW_ORIGIN, ANY).writeHeader(EXPOSE, EXPOSED);
}

/** respond.ts's sendJson with the CORS headers of an answer to a page. */
export function sendJsonToPage(res: HttpResponse, status: number, body: Uint8Array, plan: string, retryAfterSeconds = 0, contentType = 'application/json'): void {
  res.writeStatus(STATUS_LINES[status] ?? `${status} Error`);
  writeCorsHeaders(res);
  res.writeHeader(CONTENT_TYPE, contentType).writeHeader(X_API_PLAN, plan);
  if (retryAfterSeconds > 0) res.writeHeader('Retry-After', `${retryAfterSeconds}`);
  res.end(body);
}

/**
 * An OPTIONS handler for every path: a CORS preflight (it names the method it asks about) is
 * answered 204; any other OPTIONS request goes on to the routes registered after it (uWS yield).
 */
export function preflight(res: HttpResponse, req: HttpRequest): void {
  if (req.getHeader(REQUEST_METHOD) === '') {
    req.setYield(true);
    return;
  }
  res.writeStatus('204 No Content');
  for (const [name, value] of PREFLIGHT) res.writeHeader(name, value);
  res.endWithoutBody();
}
