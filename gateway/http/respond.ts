/**
 * Response writing: every answer is JSON, carries the plan header, and is written in one corked
 * burst with a single `end`.
 */
import type { HttpResponse } from 'uWebSockets.js';

/** Plan every request is evaluated against until keys and plans exist. */
export const PLAN_KEYLESS = 'keyless';

const STATUS_LINES: Readonly<Record<number, string>> = {
  200: '200 OK',
  400: '400 Bad Request',
  404: '404 Not Found',
  500: '500 Internal Server Error',
};

export function sendJson(res: HttpResponse, status: number, body: Uint8Array): void {
  const line = STATUS_LINES[status] ?? `${status} Error`;
  res.cork(() => {
    res.writeStatus(line).writeHeader('content-type', 'application/json').writeHeader('X-Api-Plan', PLAN_KEYLESS).end(body);
  });
}
