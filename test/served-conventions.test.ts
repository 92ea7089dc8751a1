/**
 * Conventions of served figures as README.md states them, over real sockets against a real
 * in-process engine:
 * - signs: one known swap (the trader bought 1 WETH for 2,500 USDC) on REST `/transactions` (the
 *   pool's side: in > 0, out < 0, decimals applied) and on the `/sse/transactions` stream (the
 *   trader's side: negative left the trader's wallet, raw integers): opposite signs;
 * - digits: REST token details and batch prices write the price to 18 significant digits, exact for
 *   a constant-product route; the other REST prices are doubles written as the shortest decimal
 *   that reads back as the same double (at most 17 significant digits).
 */
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plansWith } from './support/access.js';
import { E18, E6, openRaw, POOL_A, START, startStreamFixture, WETH, type StreamFixture } from './support/streams.js';

const D = Decimal.clone({ precision: 80 });
let fx: StreamFixture;

const PLANS = plansWith({ dev: { requestsPerMinute: 1_000 } });

beforeAll(async () => {
  fx = await startStreamFixture(PLANS);
});

afterAll(async () => {
  await fx?.close();
});

/** The raw text of the first JSON number or string value under `field` in a body. */
function rawField(body: string, field: string): string {
  const m = new RegExp(`"${field}":("?[-0-9.eE+]+"?)`).exec(body);
  if (!m) throw new Error(`${field} not in ${body.slice(0, 300)}`);
  return m[1]!;
}

/** Significant digits of a plain or exponent decimal text. */
function significant(text: string): number {
  const mantissa = text.replace(/^-/, '').split(/e/i)[0]!.replace('.', '').replace(/^0+/, '');
  return mantissa.length;
}

describe('served conventions', () => {
  it('one swap: REST transactions from the pool\'s side, the swap stream from the trader\'s side', async () => {
    const key = fx.key('dev');
    const s = await openRaw(`${fx.url('paidStream')}/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`, { key });
    expect(s.status).toBe(200);
    const t = START + 60;
    fx.now = t;
    // The pool paid out 1 WETH (token 0) and received 2,500 USDC (token 1): the trader bought WETH.
    const hash = `0x${'cd'.repeat(32)}`;
    await fx.trade([{ pool: POOL_A, t, r0: 1000n * E18, r1: 2_500_000n * E6, a0: -E18, a1: 2_500n * E6, txHash: hash }]);
    const [frame] = await s.waitFrames(1);
    s.close();
    const streamed = JSON.parse(frame!.data) as Record<string, unknown>;
    expect(streamed['tx_hash']).toBe(hash);
    // Stream: raw integers, the trader's side (1 WETH came into the wallet, 2,500 USDC left it).
    expect([streamed['amount_0'], streamed['amount_1']]).toEqual(['1000000000000000000', -2_500_000_000]);
    expect([streamed['amount_0_usd'], streamed['amount_1_usd']]).toEqual([2500, -2500]);

    const r = await fetch(`${fx.url('paidRest')}/networks/ethereum/pools/${POOL_A}/transactions?limit=10`, { headers: { authorization: key } });
    expect(r.status).toBe(200);
    const rows = (await r.json()) as Record<string, unknown>[];
    const row = rows.find((x) => x['transaction_hash'] === hash)!;
    expect(row['type']).toBe('swap');
    // REST: decimals applied, the pool's side (1 WETH left the pool, 2,500 USDC went in).
    expect([row['amount_0'], row['amount_1']]).toEqual(['-1', '2500']);
  });

  it('prices: 18 significant digits on token details and batch prices, shortest round-trip doubles elsewhere', async () => {
    const t = START + 120;
    fx.now = t;
    // 6,000,001 USDC against 3,000 WETH: WETH at 2000.000333... USD.
    const r0 = 3000n * E18;
    const r1 = 6_000_001n * E6;
    await fx.trade([{ pool: POOL_A, t, r0, r1, a0: -E18, a1: 2000n * E6 }]);
    const exact = new D(r1.toString()).div(1e6).div(new D(r0.toString()).div(new D(10).pow(18)));
    const text18 = exact.toSignificantDigits(18).toFixed();
    expect(text18).toBe('2000.00033333333333');

    const details = await (await fetch(`${fx.url('freeRest')}/networks/ethereum/tokens/${WETH.address}`)).text();
    expect(rawField(details, 'price_usd')).toBe(text18);
    expect(significant(rawField(details, 'price_usd'))).toBe(18);
    const batch = await (await fetch(`${fx.url('freeRest')}/networks/ethereum/multi/prices?tokens=${WETH.address}`)).text();
    expect(rawField(batch, 'price_usd')).toBe(text18);

    // Pool details: the same price as a double, written as the shortest text that reads back as it.
    const pool = await (await fetch(`${fx.url('freeRest')}/networks/ethereum/pools/${POOL_A}`)).text();
    const lastUsd = rawField(pool, 'last_price_usd');
    expect(String(Number(lastUsd))).toBe(lastUsd);
    expect(significant(lastUsd)).toBeLessThanOrEqual(17);
    expect(Math.abs(Number(lastUsd) - exact.toNumber()) / exact.toNumber()).toBeLessThan(1e-15);
    expect(lastUsd).not.toBe(text18);
  });
});
