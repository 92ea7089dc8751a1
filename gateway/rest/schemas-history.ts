/**
 * Query parameters of the history endpoints (pool transactions, token OHLCV, pool and token
 * indicators), in the manner of schemas.ts: handlers parse with these and they describe the
 * parameters in the OpenAPI document.
 */
import { z } from 'zod';
import { INDICATOR_NAMES } from '../../engine/read/index.js';
import { intParam, textParam, timeParam } from '../http/params.js';
import { MAX_PARAM_CHARS } from '../http/query.js';
import { poolOhlcvQuery } from './schemas.js';

export const TX_LIMIT_MAX = 100;
/** Pages reachable by number; deeper history uses `cursor`. */
export const TX_PAGE_MAX = 100;
export const INDICATOR_PERIOD_MIN = 2;
export const INDICATOR_PERIOD_MAX = 200;
export const BBANDS_STDDEV_MAX = 10;

/** A transaction id, as given in `id`: `<block>:<tx index>:<log index>`. */
const TX_ID = /^([0-9]{1,15}):([0-9]{1,9}):([0-9]{1,9})$/;

export const poolTransactionsQuery = z.object({
  page: intParam(0, TX_PAGE_MAX).transform((p) => (p === 0 ? 1 : p)).default(1),
  limit: intParam(1, TX_LIMIT_MAX).default(10),
  cursor: textParam()
    .describe('The id of the last transaction of the previous page; the answer holds strictly older ones.')
    .transform((value, ctx): [block: number, tx: number, log: number] => {
      const m = TX_ID.exec(value);
      if (m === null) {
        ctx.issues.push({ code: 'custom', message: 'must be the id of a transaction', input: value });
        return z.NEVER;
      }
      return [Number(m[1]), Number(m[2]), Number(m[3])];
    })
    .optional(),
  from: timeParam().describe('Inclusive lower bound on the transaction time.').optional(),
  to: timeParam().describe('Exclusive upper bound on the transaction time.').optional(),
});

/** Token OHLCV: the parameters of pool OHLCV (`inversed` is accepted and has no effect). */
export const tokenOhlcvQuery = poolOhlcvQuery;

const period = (fallback: number) => intParam(INDICATOR_PERIOD_MIN, INDICATOR_PERIOD_MAX).default(fallback);

const STDDEV_RULE = `must be a number greater than 0 and at most ${BBANDS_STDDEV_MAX}`;

export const indicatorsQuery = poolOhlcvQuery
  .extend({
    indicators: z
      .string()
      .max(MAX_PARAM_CHARS, { error: `must be at most ${MAX_PARAM_CHARS} characters` })
      .describe(`Comma-separated subset of ${INDICATOR_NAMES.join(', ')} (all when absent).`)
      .transform((value, ctx) => {
        const names = value.split(',');
        for (const n of names) {
          if (!(INDICATOR_NAMES as readonly string[]).includes(n)) {
            ctx.issues.push({ code: 'invalid_value', values: [...INDICATOR_NAMES], message: `must be a comma-separated subset of ${INDICATOR_NAMES.join(', ')}`, input: value });
            return z.NEVER;
          }
        }
        return new Set(names) as ReadonlySet<string>;
      })
      .default(new Set(INDICATOR_NAMES)),
    period: period(14),
    macd_fast: period(12),
    macd_slow: period(26),
    macd_signal: period(9),
    bbands_stddev: z
      .string()
      .max(32, { error: STDDEV_RULE })
      .regex(/^[0-9]{1,3}(\.[0-9]{1,9})?$/, { error: STDDEV_RULE })
      .describe(`Band width in standard deviations: a number greater than 0 and at most ${BBANDS_STDDEV_MAX}.`)
      .transform(Number)
      .pipe(z.number().gt(0, { error: STDDEV_RULE }).max(BBANDS_STDDEV_MAX, { error: STDDEV_RULE }))
      .default(2),
  })
  .refine((q) => q.macd_fast < q.macd_slow, { error: 'must be less than macd_slow', path: ['macd_fast'] });

export type PoolTransactionsQuery = z.output<typeof poolTransactionsQuery>;
export type IndicatorsQuery = z.output<typeof indicatorsQuery>;
