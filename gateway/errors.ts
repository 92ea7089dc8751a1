/**
 * The one registry of error codes the gateway answers with: code -> HTTP status and base message.
 * Every error body is `{error, message, ...details}`; messages never carry stack traces.
 */

export const ERROR_CODES = {
  invalid_parameter: { status: 400, message: 'invalid query param' },
  not_found: { status: 404, message: 'not found' },
  endpoint_removed: { status: 410, message: 'endpoint removed' },
  internal_error: { status: 500, message: 'internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An answer other than 200, with its body rendered once. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly body: Buffer;

  constructor(code: ErrorCode, message: string = ERROR_CODES[code].message, details: Record<string, unknown> = {}) {
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
export function invalidParameter(param: string, problem: string, accepted?: readonly string[]): ApiError {
  const details: Record<string, unknown> = { param };
  if (accepted !== undefined) details['accepted'] = accepted;
  return new ApiError('invalid_parameter', `${ERROR_CODES.invalid_parameter.message}: ${param} ${problem}`, details);
}

/** Shared instances: thrown often, identical every time, so rendered and captured once. */
export const NOT_FOUND = new ApiError('not_found');
export const INTERNAL_ERROR = new ApiError('internal_error');
