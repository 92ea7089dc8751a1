import { FORBIDDEN_HOST, type ApiError } from '../errors.js';

/**
 * JSON-RPC 2.0 error answers at the HTTP level of the agent transports (before a message reaches a
 * protocol server): their codes and the body shape `{jsonrpc, error: {code, message, data?}, id}`.
 */

/** Where the clients of /sse POST their messages (transports/sse.ts tells it in its stream's first event). */
export const SSE_MESSAGES_PATH = '/messages';

/** JSON-RPC 2.0 codes, and the server-defined ones (-32000 to -32099) these transports use. */
export const RpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Refused before processing: bad key, wrong content type, too large, busy, another caller's session. */
  serverError: -32000,
  /** Unknown or expired session id (the value the SDK's Streamable HTTP transport uses). */
  sessionNotFound: -32001,
} as const;

export interface RpcErrorBody {
  readonly jsonrpc: '2.0';
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown };
  readonly id: string | number | null;
}

export function rpcError(code: number, message: string, id: string | number | null = null, data?: unknown): RpcErrorBody {
  return { jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id };
}

/**
 * `error.data.error` of the refusals made here, next to the gateway's registry codes (gateway/errors.ts,
 * e.g. invalid_api_key) that also appear there.
 */
export const Refusal = {
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  busy: 'busy',
  sessionOwner: 'session_owner',
} as const;

/** `error.data` of a refusal from the gateway's registry: its code and details (`param` of a bad parameter). */
export function apiErrorData(err: ApiError): Record<string, unknown> {
  const { error, message: _message, ...details } = JSON.parse(err.body.toString('utf8')) as Record<string, unknown>;
  return { error, ...details };
}

/** The bound on request bodies of every agent transport. */
export const MAX_BODY_BYTES = 1024 * 1024; // 1 MiB
/** Retry-After of a new session refused because every place is held by an open stream. */
export const BUSY_RETRY_AFTER_S = 30; // 30 s

export const BODY_TOO_LARGE = rpcError(RpcCode.serverError, `Request body too large: at most ${MAX_BODY_BYTES} bytes are accepted`, null, { error: Refusal.payloadTooLarge });
export const PARSE_ERROR = rpcError(RpcCode.parseError, 'Parse error: the body is not valid JSON');
export const FORBIDDEN_HOST_RPC = rpcError(RpcCode.serverError, `Forbidden: ${FORBIDDEN_HOST.message}`, null, apiErrorData(FORBIDDEN_HOST));
export const BUSY = rpcError(RpcCode.serverError, `Too many open sessions; retry in ${BUSY_RETRY_AFTER_S} s`, null, { error: Refusal.busy });
export const SESSION_OWNER = rpcError(
  RpcCode.serverError,
  'This session was opened with another API key (or from another address); use the same key, or start a new session.',
  null,
  { error: Refusal.sessionOwner },
);
