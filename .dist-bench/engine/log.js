/**
 * The service's log: pino, one JSON object per line on stdout (`level`, `time`, `msg`, and fields
 * such as `component` and `req_id`), or coloured text for a terminal (pino-pretty, in-process).
 * Created once at start from the `log` section of the config and passed down with it; components
 * take a child (`log.child({component: 'gateway'})`).
 *
 * Invariant: no API key, key hash or secret is ever a field or part of a message. Callers log paths
 * without their query strings and never log headers; `redact` below is a second line of defence
 * for field names that could carry one.
 */
import { pino } from 'pino';
import { PinoPretty } from 'pino-pretty';
/** Field names whose values are replaced by `[redacted]` wherever they appear (one level deep). */
const REDACTED_FIELDS = ['authorization', 'key', 'apiKey', 'api_key', 'keyHash', 'key_hash', 'secret', 'password'];
/** The options a log was made with, so a worker thread can make its own alike (children inherit it: pino makes them by prototype). */
const OPTIONS = Symbol('dexdata.logOptions');
/** Level and format a worker thread's log should have to match `log` (its lines go to the same stdout). */
export function threadLogOptions(log) {
    const o = log[OPTIONS];
    const format = o === undefined ? 'json' : o.format === 'auto' ? (process.stdout.isTTY === true ? 'pretty' : 'json') : o.format;
    return { level: log.level, format };
}
export function createLog(options) {
    const destination = options.destination ?? 1;
    const pretty = options.format === 'pretty' || (options.format === 'auto' && destination === 1 && process.stdout.isTTY === true);
    const out = pretty
        ? PinoPretty({
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
    const log = pino({
        level: options.level,
        base: { pid: process.pid },
        redact: { paths: REDACTED_FIELDS.flatMap((f) => [f, `*.${f}`]), censor: '[redacted]' },
    }, out);
    log[OPTIONS] = { level: options.level, format: options.format };
    return log;
}
let fallback;
/**
 * The log of code run without the service's bundle (tests, benches, tools): warnings and errors as
 * JSON lines on stderr, so a failure is never silent.
 */
export function fallbackLog() {
    return (fallback ??= createLog({ level: 'warn', format: 'json', destination: 2 }));
}
/** A log that writes nothing (tests, and code run without the service's bundle). */
export const SILENT_LOG = pino({ level: 'silent' });
/** Text of an error for a log line: its stack when it has one. */
export function errorText(err) {
    return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}
//# sourceMappingURL=log.js.map