/** Plan of callers without a key. */
export const PLAN_KEYLESS = 'keyless';
export const STATUS_LINES = {
    200: '200 OK',
    400: '400 Bad Request',
    401: '401 Unauthorized',
    402: '402 Payment Required',
    403: '403 Forbidden',
    404: '404 Not Found',
    408: '408 Request Timeout',
    410: '410 Gone',
    429: '429 Too Many Requests',
    431: '431 Request Header Fields Too Large',
    500: '500 Internal Server Error',
    501: '501 Not Implemented',
    503: '503 Service Unavailable',
    505: '505 HTTP Version Not Supported',
};
/** Header names and values as bytes, encoded once: uWS copies bytes without converting strings. */
const CONTENT_TYPE = Buffer.from('content-type');
const X_API_PLAN = Buffer.from('X-Api-Plan');
const encoded = new Map();
function bytesOf(text) {
    let b = encoded.get(text);
    if (b === undefined) {
        b = Buffer.from(text, 'latin1');
        if (encoded.size < 256)
            encoded.set(text, b);
    }
    return b;
}
/**
 * One answer: `plan` is the plan the request was evaluated against; `retryAfterSeconds` > 0 adds
 * Retry-After; `contentType` is JSON unless told. Inside a uWS request callback the writes are
 * corked already; an answer written later must be wrapped in `res.cork`.
 */
export function sendJson(res, status, body, plan = PLAN_KEYLESS, retryAfterSeconds = 0, contentType = 'application/json') {
    // uWS writes "200 OK" itself when no status was written.
    if (status !== 200)
        res.writeStatus(bytesOf(STATUS_LINES[status] ?? `${status} Error`));
    res.writeHeader(CONTENT_TYPE, bytesOf(contentType)).writeHeader(X_API_PLAN, bytesOf(plan));
    if (retryAfterSeconds > 0)
        res.writeHeader('Retry-After', `${retryAfterSeconds}`);
    res.end(body);
}
//# sourceMappingURL=respond.js.map