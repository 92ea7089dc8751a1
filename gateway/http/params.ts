/**
 * Building blocks of the endpoint query schemas, and the parser that applies one schema to a raw
 * query string. Every rule carries the wording of its rejection, so an error names the parameter
 * and says what is accepted; the same schemas describe the parameters in the OpenAPI document.
 */
import { z } from 'zod';
import { invalidParameter, type ApiError } from '../errors.js';
import { MAX_PARAM_CHARS, readQuery } from './query.js';
import { parseTimeSpec, type TimeSpec } from './time.js';

/** Parsed queries remembered per endpoint, by raw query string; the memo is reset when full. */
const PARSED_QUERIES_MAX = 1024;

// Schemas are immutable: each rule is built once and shared by every parameter using it (building
// them is a good part of what a start evaluates before it serves).
const TEXT = z.string().max(MAX_PARAM_CHARS, { error: `must be at most ${MAX_PARAM_CHARS} characters` });
const text = () => TEXT;

const intRules = new Map<string, ReturnType<typeof makeIntParam>>();

function makeIntParam(min: number, max: number) {
  const rule = `must be an integer from ${min} to ${max}`;
  return text()
    .regex(/^[0-9]{1,16}$/, { error: rule })
    .describe(`An integer from ${min} to ${max}.`)
    .transform(Number)
    .pipe(z.number().int().min(min, { error: rule }).max(max, { error: rule }));
}

/** A decimal integer in [min, max]. */
export function intParam(min: number, max: number) {
  const key = `${min}:${max}`;
  let schema = intRules.get(key);
  if (schema === undefined) intRules.set(key, (schema = makeIntParam(min, max)));
  return schema;
}

/** Declared order of each enum's values (zod reports them in object-key order), by sorted content. */
const enumOrder = new Map<string, readonly string[]>();
const enumKey = (values: readonly unknown[]): string => values.map(String).sort().join('\u0000');

/** One of a fixed set of values; the rejection lists them in the order declared here. */
export function enumParam<const T extends readonly [string, ...string[]]>(values: T) {
  enumOrder.set(enumKey(values), values);
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

export const BOOLEAN_VALUES = ['true', 'false', '1', '0'] as const;
export const boolParam = () => enumParam(BOOLEAN_VALUES).transform((v) => v === 'true' || v === '1');

const TIME_RULE = 'must be a relative offset (-90s, -30m, -1h, -7d), Unix seconds, an RFC 3339 time or yyyy-mm-dd';

/** A time value; relative offsets stay relative until resolved against the request's "now". */
export function timeParam() {
  return TIME_PARAM;
}

const TIME_PARAM = makeTimeParam();

function makeTimeParam() {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : TIME_RULE) })
    .max(MAX_PARAM_CHARS, { error: `must be at most ${MAX_PARAM_CHARS} characters` })
    .describe('A relative offset from now (-90s, -30m, -1h, -7d), Unix seconds, an RFC 3339 time or yyyy-mm-dd.')
    .transform((value, ctx): TimeSpec => {
      const spec = parseTimeSpec(value);
      if (spec === null) {
        ctx.issues.push({ code: 'custom', message: TIME_RULE, input: value });
        return z.NEVER;
      }
      return spec;
    });
}

/** Free text up to MAX_PARAM_CHARS. */
export const textParam = text;

function toApiError(issue: z.core.$ZodIssue): ApiError {
  const param = issue.path.length > 0 ? String(issue.path[0]) : 'query';
  const accepted = issue.code === 'invalid_value' ? (enumOrder.get(enumKey(issue.values)) ?? issue.values.map(String)) : undefined;
  return invalidParameter(param, issue.message, accepted);
}

/** Applies one endpoint's schema to raw query strings. */
export class QueryParser<S extends z.ZodObject> {
  private readonly schema: S;
  private readonly names: ReadonlySet<string>;
  private readonly parsed = new Map<string, z.output<S>>();

  constructor(schema: S) {
    this.schema = schema;
    this.names = new Set(Object.keys(schema.shape));
  }

  /** The parsed parameters (shared: never mutate them), or throws invalid_parameter. */
  parse(raw: string): z.output<S> {
    const known = this.parsed.get(raw);
    if (known !== undefined) return known;
    const result = this.schema.safeParse(readQuery(raw, this.names));
    if (!result.success) throw toApiError(result.error.issues[0]!);
    if (this.parsed.size >= PARSED_QUERIES_MAX) this.parsed.clear();
    this.parsed.set(raw, result.data);
    return result.data;
  }
}
