/**
 * Metering over real HTTP with tiny configured plans: the per-minute limit (429 + Retry-After),
 * credits (402 with resets_at, no Retry-After), batch prices at one credit per token, /usage
 * counting down, rolling and billing windows, and counters surviving a gateway restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_S, ROLLING_HOURS } from '../gateway/metering/period.js';
import { call, DAY, NOW, plansWith, startAccessFixture, TOKENS, type AccessFixture } from './support/access.js';

let fx: AccessFixture;
const PLANS = plansWith({
  keyless: { requestsPerMinute: 4, credits: 1_000 },
  free: { requestsPerMinute: 1_000, credits: 5 },
  dev: { requestsPerMinute: 3, credits: 1_000 },
  pro: { requestsPerMinute: 1_000, credits: 10 },
});
const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  fx = await startAccessFixture(PLANS);
});

afterAll(async () => {
  await fx?.close();
});

const free = (path: string, key = '') => call(fx.url('freeRest') + path, key);
const paid = (path: string, key = '') => call(fx.url('paidRest') + path, key);

describe('per-minute limit', () => {
  it('answers 429 with Retry-After once the minute is used up, and again serves the next minute', async () => {
    fx.now = NOW;
    const { key } = fx.keys.create('dev', 'rpm', NOW);
    for (let i = 0; i < 3; i++) expect((await paid('/networks', key)).status, `request ${i + 1}`).toBe(200);
    const r = await paid('/networks', key);
    expect(r.status).toBe(429);
    // NOW is 30 s into its minute.
    expect(r.headers.get('retry-after')).toBe('30');
    expect(r.body).toEqual({ error: 'rate_limited', message: expect.any(String), retry_after: 30 });
    expect(r.headers.get('x-api-plan')).toBe('dev');
    fx.now = NOW + 30;
    expect((await paid('/networks', key)).status).toBe(200);
    fx.now = NOW;
  });

  it('counts keyless callers per IP', async () => {
    fx.now = NOW + 600;
    for (let i = 0; i < 4; i++) expect((await free('/networks')).status).toBe(200);
    const r = await free('/networks');
    expect(r.status).toBe(429);
    expect(r.headers.get('x-api-plan')).toBe('keyless');
    // /health is never limited.
    expect((await free('/health')).status).toBe(200);
    fx.now = NOW;
  });
});

describe('credits', () => {
  it('/usage counts down one credit per request, then 402 without Retry-After', async () => {
    fx.now = NOW;
    const { key } = fx.keys.create('free', 'credits', NOW - DAY);
    const first = await free('/usage', key);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      plan: 'free',
      credits_limit: 5,
      credits_used: 0,
      credits_remaining: 5,
      period_started_at: iso((Math.floor(NOW / HOUR_S) - ROLLING_HOURS + 1) * HOUR_S),
      resets_at: expect.any(String),
      requests_per_minute: 1_000,
      concurrent_streams: PLANS.free.concurrentStreams,
    });
    for (let i = 1; i <= 5; i++) {
      expect((await free('/networks', key)).status).toBe(200);
      const u = await free('/usage', key);
      expect(u.body.credits_used).toBe(i);
      expect(u.body.credits_remaining).toBe(5 - i);
    }
    const r = await free('/networks', key);
    expect(r.status).toBe(402);
    expect(r.headers.get('retry-after')).toBeNull();
    // Rolling window: the credits spent this hour come back 30 days after it.
    const back = (Math.floor(NOW / HOUR_S) + ROLLING_HOURS) * HOUR_S;
    expect(r.body).toEqual({ error: 'credits_exhausted', message: expect.any(String), plan: 'free', resets_at: iso(back) });

    // One hour before they return: still spent; at that hour: back.
    fx.now = back - 60;
    expect((await free('/networks', key)).status).toBe(402);
    fx.now = back;
    expect((await free('/networks', key)).status).toBe(200);
    expect((await free('/usage', key)).body.credits_used).toBe(1);
    fx.now = NOW;
  });

  it('batch prices cost one credit per listed token', async () => {
    const { key } = fx.keys.create('pro', 'batch', NOW);
    expect((await paid(`/networks/ethereum/multi/prices?tokens=${TOKENS.join('%2C')}`, key)).status).toBe(200);
    expect((await paid('/usage', key)).body).toMatchObject({ credits_used: 2, credits_remaining: 8 });
    const eight = [...TOKENS, ...TOKENS, ...TOKENS, ...TOKENS];
    // 2 + 9 > 10: refused whole, nothing charged; 2 + 8 = 10 fits.
    expect((await paid(`/networks/ethereum/multi/prices?tokens=${[...eight, TOKENS[0]].join(',')}`, key)).status).toBe(402);
    expect((await paid('/usage', key)).body.credits_used).toBe(2);
    expect((await paid(`/networks/ethereum/multi/prices?tokens=${eight.join(',')}`, key)).status).toBe(200);
    expect((await paid('/usage', key)).body).toMatchObject({ credits_used: 10, credits_remaining: 0 });
  });

  it('paid plans reset at the billing period anchored at the account creation', async () => {
    const created = NOW - 40 * DAY; // 2023-11-15T12:00:30Z
    const { account, key } = fx.keys.create('pro', 'billing', created);
    const u = await paid('/usage', key);
    expect(u.body).toMatchObject({ plan: 'pro', period_started_at: '2023-12-15T12:00:30Z', resets_at: '2024-01-15T12:00:30Z' });
    for (let i = 0; i < 10; i++) expect((await paid('/networks', key)).status).toBe(200);
    const spent = await paid('/networks', key);
    expect(spent.status).toBe(402);
    expect(spent.body.resets_at).toBe('2024-01-15T12:00:30Z');
    // Added credits raise the allowance of the current period.
    fx.keys.addCredits(account.id, 2, Date.parse('2024-01-15T12:00:30Z') / 1000, NOW);
    expect((await paid('/networks', key)).status).toBe(200);
    fx.now = Date.parse('2024-01-15T12:00:30Z') / 1000;
    const next = await paid('/usage', key);
    expect(next.body).toMatchObject({ credits_used: 0, credits_limit: 10, period_started_at: '2024-01-15T12:00:30Z', resets_at: '2024-02-15T12:00:30Z' });
    fx.now = NOW;
  });
});

describe('persistence', () => {
  it('counters survive a restart of the gateway on the same store', async () => {
    fx.now = NOW + 3 * 3600;
    const { key } = fx.keys.create('free', 'restart', NOW);
    for (let i = 0; i < 3; i++) expect((await free('/networks', key)).status).toBe(200);
    await fx.gateway.flushUsage();
    await fx.restart();
    const u = await free('/usage', key);
    expect(u.body).toMatchObject({ credits_used: 3, credits_remaining: 2 });
    expect((await free('/networks', key)).status).toBe(200);
    expect((await free('/networks', key)).status).toBe(200);
    expect((await free('/networks', key)).status).toBe(402);
    // Closing flushes too.
    await fx.restart();
    expect((await free('/usage', key)).body.credits_used).toBe(5);
    fx.now = NOW;
  });
});

describe('billing periods', () => {
  it('start on the anchor day each month, clamped to the month end', async () => {
    const { billingPeriod } = await import('../gateway/metering/period.js');
    const at = (s: string) => Date.parse(s) / 1000;
    const p = billingPeriod(at('2024-01-31T10:00:00Z'), at('2024-03-05T00:00:00Z'));
    expect(p).toEqual({ index: 1, start: at('2024-02-29T10:00:00Z'), end: at('2024-03-31T10:00:00Z') });
    expect(billingPeriod(at('2024-01-31T10:00:00Z'), at('2024-01-31T10:00:00Z')).index).toBe(0);
    expect(billingPeriod(at('2024-01-31T10:00:00Z'), at('2024-01-31T09:59:59Z')).index).toBe(0);
  });
});
