/**
 * Response writing: every answer is JSON, carries the plan header, and is written in one corked
 * burst with a single `end`.
 */
import type { HttpResponse } from 'uWebSockets.js';

/** Plan of callers without a key. */
export const PLAN_KEYLESS = 'keyless';

const STATUS_LINES: Readonly<Record<number, string>> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  410: '410 Gone',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
};

/**
 * One answer: `plan` is the plan the request was evaluated against; `retryAfterSeconds` > 0 adds
 * Retry-After; `contentType` is JSON unless told.
 */
export function sendJson(
  res: HttpResponse,
  status: number,
  body: Uint8Array,
  plan: string = PLAN_KEYLESS,
  retryAfterSeconds = 0,
  contentType = 'application/json',
): void {
  const line = STATUS_LINES[status] ?? `${status} Error`;
  res.cork(() => {
    res.writeStatus(line).writeHeader('content-type', contentType).writeHeader('X-Api-Plan', plan);
    if (retryAfterSeconds > 0) res.writeHeader('Retry-After', `${retryAfterSeconds}`);
    res.end(body);
  });
}
