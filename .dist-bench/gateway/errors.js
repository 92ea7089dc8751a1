/**
 * The one registry of error codes the gateway answers with: code -> HTTP status and base message.
 * Every error body is `{error, message, ...details}`; messages never carry stack traces.
 */
export const ERROR_CODES = {
    invalid_parameter: { status: 400, message: 'invalid query param' },
    /** A missing or unrecognised key where one is needed. */
    invalid_api_key: { status: 401, message: 'api key verification has failed' },
    /** A paid-only endpoint called without a key. */
    api_key_required: { status: 401, message: 'api key required' },
    credits_exhausted: { status: 402, message: 'credit allowance exhausted' },
    wrong_host: { status: 403, message: 'this key belongs on another host' },
    /** A loopback host reached under a name that is not its own (DNS rebinding). */
    forbidden_host: { status: 403, message: 'the Host header does not name this service' },
    plan_required: { status: 403, message: 'your plan does not include this' },
    /** Keyless callers on a stream outside the showcase assets. */
    preview_only: { status: 403, message: 'keyless streaming is limited to the showcase assets' },
    not_found: { status: 404, message: 'not found' },
    endpoint_removed: { status: 410, message: 'endpoint removed' },
    /** A request the HTTP front could not parse (RFC 9112): answered, then the connection is closed. */
    bad_request: { status: 400, message: 'malformed HTTP request' },
    /** A request whose head stayed incomplete for too long. */
    request_timeout: { status: 408, message: 'request head not received in time' },
    rate_limited: { status: 429, message: 'rate limit exceeded' },
    header_fields_too_large: { status: 431, message: 'request header fields too large' },
    internal_error: { status: 500, message: 'internal error' },
    /** A method or transfer coding the server does not know. */
    not_implemented: { status: 501, message: 'not implemented' },
    /** Shutting down: the connection arrived as the server stopped. */
    unavailable: { status: 503, message: 'the server is shutting down' },
    http_version_not_supported: { status: 505, message: 'HTTP version not supported' },
};
/** An answer other than 200, with its body rendered once. */
export class ApiError extends Error {
    name = 'ApiError';
    code;
    status;
    body;
    constructor(code, message = ERROR_CODES[code].message, details = {}) {
        super(message);
        this.code = code;
        this.status = ERROR_CODES[code].status;
        this.body = Buffer.from(JSON.stringify({ error: code, message, ...details }), 'utf8');
    }
}
/**
 * A rejected query parameter: the message starts with the registry's text and names the
 * parameter; `accepted` lists the allowed values when the set is fixed.
 */
export function invalidParameter(param, problem, accepted) {
    const details = { param };
    if (accepted !== undefined)
        details['accepted'] = accepted;
    return new ApiError('invalid_parameter', `${ERROR_CODES.invalid_parameter.message}: ${param} ${problem}`, details);
}
/** Longest caller-supplied text echoed back in a message. */
export const ECHO_MAX_CHARS = 128;
/** Caller-supplied text as it is echoed in a message: cut to ECHO_MAX_CHARS. */
export function echoed(text) {
    return text.length > ECHO_MAX_CHARS ? `${text.slice(0, ECHO_MAX_CHARS)}...` : text;
}
/**
 * A 404 naming what was not found and its kind: `network "foo" not found`, `pool "0x..." not found
 * on network "ethereum"`, `route "GET /nope" not found`. The error code stays `not_found`.
 */
export function notFound(kind, id, network) {
    return new ApiError('not_found', `${kind} ${JSON.stringify(echoed(id))} not found${network === undefined ? '' : ` on network ${JSON.stringify(network)}`}`);
}
/** 404 for a path (and method) no route serves. */
export function routeNotFound(method, path) {
    return notFound('route', `${method} ${path}`);
}
/** Message of a missing or unrecognised key at a host root, rather than on an endpoint. */
export const ROOT_KEY_MESSAGE = 'missing or invalid api key';
/** Shared instances: thrown often, identical every time, so rendered and captured once. */
export const INTERNAL_ERROR = new ApiError('internal_error');
export const INVALID_KEY = new ApiError('invalid_api_key');
export const FORBIDDEN_HOST = new ApiError('forbidden_host', `${ERROR_CODES.forbidden_host.message}: use localhost, a loopback address or a configured public name`);
export const INVALID_KEY_AT_ROOT = new ApiError('invalid_api_key', ROOT_KEY_MESSAGE);
//# sourceMappingURL=errors.js.map