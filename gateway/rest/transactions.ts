/**
 * GET /networks/{network}/pools/{pool_address}/transactions: a pool's swaps, adds and removes,
 * newest first, from the `txs` db (key [pool, block, tx index, log index], kept 7 days).
 *
 * `id` is the key as text, `<block>:<tx index>:<log index>`: unique within the pool and stable.
 * `cursor` (an id) starts the page strictly below that key; `page` then skips whole pages from
 * there. `from` is inclusive and `to` exclusive, both on the transaction time, and the answer never
 * reaches further back than TX_WINDOW_SECONDS before now. The scan stops at the first transaction
 * older than that lower bound: blocks of one chain are in time order, so keys are too.
 *
 * Amounts are the pool's view, as stored: positive when the token went into the pool (a trader's
 * sale, or liquidity added), negative when it left it; decimals applied, exact (decimal.js).
 */
import { Decimal } from 'decimal.js';
import type { TxKey } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import { num, str } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { resolveTime, rfc3339, type TimeSpec } from '../http/time.js';
import { networkOrNotFound, poolOrNotFound } from './resolve.js';
import { poolTransactionsQuery } from './schemas-history.js';

export const TX_WINDOW_SECONDS = 7 * 86_400; // 7 days

const TX_TYPES = ['swap', 'add', 'remove'] as const;

/** Enough digits for any 128-bit amount divided by a power of ten, in plain (never exponent) notation. */
const Exact = Decimal.clone({ precision: 100, toExpNeg: -100, toExpPos: 100 });

function scaled(raw: string, decimals: number): string {
  return new Exact(raw).div(new Exact(10).pow(decimals)).toFixed();
}

function timeOrReject(spec: TimeSpec | undefined, now: number, param: string): number | undefined {
  if (spec === undefined) return undefined;
  const t = resolveTime(spec, now);
  if (Number.isNaN(t)) throw invalidParameter(param, 'is out of range');
  return t;
}

export function createPoolTransactions(ctx: ServeContext): (network: string, address: string, query: string) => Buffer {
  const parser = new QueryParser(poolTransactionsQuery);

  return (network, address, query) => {
    const reg = ctx.read.catalog;
    const p = poolOrNotFound(reg, networkOrNotFound(reg, network), address);
    const q = parser.parse(query);
    const now = Math.floor(ctx.now());
    const from = timeOrReject(q.from, now, 'from');
    const to = timeOrReject(q.to, now, 'to');
    if (from !== undefined && to !== undefined && to < from) throw invalidParameter('to', 'must not be before from');
    const lower = Math.max(from ?? 0, now - TX_WINDOW_SECONDS);
    const upper = to ?? Infinity;

    const [t0, t1] = [reg.poolToken0(p), reg.poolToken1(p)];
    const [decimals0, decimals1] = [reg.tokenDecimals(t0), reg.tokenDecimals(t1)];
    const fixed =
      `,"token_0_symbol":${str(reg.tokenSymbol(t0))},"token_1_symbol":${str(reg.tokenSymbol(t1))},"pool_id":${str(reg.poolAddress(p))}` +
      `,"token_0":${str(reg.tokenAddress(t0))},"token_1":${str(reg.tokenAddress(t1))}`;

    const cursor = q.cursor;
    // Reverse range: from the cursor key (skipped: strictly older) or the end of pool p, down to [p].
    const start: TxKey | [number] = cursor === undefined ? [p + 1] : [p, cursor[0], cursor[1], cursor[2]];
    let skip = (q.page - 1) * q.limit;
    const rows: string[] = [];
    for (const { key, value: v } of ctx.read.transactionsBackward(start, p)) {
      if (key[0] !== p) continue;
      if (cursor !== undefined && key[1] === cursor[0] && key[2] === cursor[1] && key[3] === cursor[2]) continue;
      const time = v[10] as number;
      if (time >= upper) continue;
      if (time < lower) break;
      if (skip > 0) {
        skip--;
        continue;
      }
      const ratio = v[9] as number;
      rows.push(
        `{"id":"${key[1]}:${key[2]}:${key[3]}","transaction_hash":${str(v[1] as string)},"type":"${TX_TYPES[v[0] as number] ?? 'swap'}"` +
          fixed +
          `,"price_0":${num(ratio)},"price_1":${num(ratio > 0 ? 1 / ratio : 0)},"price_0_usd":${num(v[6] as number)},"price_1_usd":${num(v[7] as number)}` +
          `,"created_at":"${rfc3339(time)}","created_at_block_number":${key[1]},"transaction_index":${key[2]},"log_index":${key[3]}` +
          `,"sender":${str(v[2] as string)},"recipient":${str(v[3] as string)}` +
          `,"amount_0":"${scaled(v[4] as string, decimals0)}","amount_1":"${scaled(v[5] as string, decimals1)}","volume_usd":${num(v[8] as number)}}`,
      );
      if (rows.length >= q.limit) break;
    }
    return Buffer.from(`[${rows.join(',')}]`, 'utf8');
  };
}
