/**
 * The service's log: pino, one JSON object per line on stdout (`level`, `time`, `msg`, and fields
 * such as `component` and `req_id`), or coloured text for a terminal (pino-pretty, in-process).
 * Created once at start from the `log` section of the config and passed down with it; components
 * take a child (`log.child({component: 'gateway'})`).
 *
 * pino-pretty is loaded only when the coloured text is chosen: a service logging JSON never loads it.
 *
 * Invariant: no API key, key hash or secret is ever a field or part of a message. Callers log paths
 * without their query strings and never log headers; `redact` below is a second line of defence
 * for field names that could carry one.
 */
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type { PinoPretty } from 'pino-pretty';
import type { LOG_FORMATS, LOG_LEVELS } from './config.js';

export type Log = Logger;

export interface LogOptions {
  readonly level: (typeof LOG_LEVELS)[number];
  readonly format: (typeof LOG_FORMATS)[number];
  /** Where lines go: a file descriptor (stdout by default) or a stream (tests). */
  readonly destination?: number | NodeJS.WritableStream;
}

/** Field names whose values are replaced by `[redacted]` wherever they appear (one level deep). */
const REDACTED_FIELDS = ['authorization', 'key', 'apiKey', 'api_key', 'keyHash', 'key_hash', 'secret', 'password'] as const;

/** The options a log was made with, so a worker thread can make its own alike (children inherit it: pino makes them by prototype). */
const OPTIONS = Symbol('dexdata.logOptions');

/** Level and format a worker thread's log should have to match `log` (its lines go to the same stdout). */
export function threadLogOptions(log: Log): Pick<LogOptions, 'level' | 'format'> {
  const o = (log as unknown as Record<symbol, Pick<LogOptions, 'level' | 'format'> | undefined>)[OPTIONS];
  const format = o === undefined ? 'json' : o.format === 'auto' ? (process.stdout.isTTY === true ? 'pretty' : 'json') : o.format;
  return { level: log.level as LogOptions['level'], format };
}

export function createLog(options: LogOptions): Log {
  const destination = options.destination ?? 1;
  const pretty = options.format === 'pretty' || (options.format === 'auto' && destination === 1 && process.stdout.isTTY === true);
  const out = pretty
    ? (createRequire(import.meta.url)('pino-pretty') as { PinoPretty: typeof PinoPretty }).PinoPretty({
        colorize: typeof destination === 'number' && process.stdout.isTTY === true,
        translateTime: 'SYS:standard',
        singleLine: true,
        ignore: 'pid,hostname,component',
        messageFormat: '{if component}{component}: {end}{msg}',
        sync: true,
        destination,
      })
    : typeof destination === 'number'
      ? pino.destination({ dest: destination, sync: true })
      : destination;
  const log = pino(
    {
      level: options.level,
      base: { pid: process.pid },
      redact: { paths: REDACTED_FIELDS.flatMap((f) => [f, `*.${f}`]), censor: '[redacted]' },
    },
    out,
  );
  (log as unknown as Record<symbol, Pick<LogOptions, 'level' | 'format'>>)[OPTIONS] = { level: options.level, format: options.format };
  return log;
}

let fallback: Log | undefined;

/**
 * The log of code run without the service's bundle (tests, benches, tools): warnings and errors as
 * JSON lines on stderr, so a failure is never silent.
 */
export function fallbackLog(): Log {
  return (fallback ??= createLog({ level: 'warn', format: 'json', destination: 2 }));
}

/** A log that writes nothing (tests, and code run without the service's bundle). */
export const SILENT_LOG: Log = pino({ level: 'silent' });

/** Text of an error for a log line: its stack when it has one. */
export function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}
