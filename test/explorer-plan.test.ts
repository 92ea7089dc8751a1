/**
 * The explorer's plan, in process over real sockets: the key the service hands its page belongs to
 * an account of the `explorer` plan in the key store, is given anew at each start (the old one stops
 * working, the account and its counters stay), is metered like any key, reads what the plan allows,
 * and is handed only to the browsers of `clients`; with `issueKey` off no key and no account exist.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../engine/config.js';
import { EXPLORER_PLAN } from '../gateway/explorer/key.js';
import { accepts } from '../gateway/explorer/serve.js';
import { call, plansWith, POOL, startAccessFixture, type AccessFixture } from './support/access.js';

/** A stand-in bundle: the gateway serves what the build wrote, whatever it is. */
const assetsDir = mkdtempSync(join(tmpdir(), 'explorer-assets-'));
mkdirSync(join(assetsDir, 'assets'));
writeFileSync(join(assetsDir, 'index.html'), '<!DOCTYPE html><title>explorer</title>');
writeFileSync(join(assetsDir, 'assets', 'main-ABC.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);

const PLANS = plansWith({ free: { requestsPerMinute: 1_000 } });
let fx: AccessFixture;
let off: AccessFixture;
let elsewhere: AccessFixture;

interface Session {
  key: string | null;
  plan: string | null;
  reason: string | null;
  ports: Record<string, number | null>;
}

const session = async (f: AccessFixture): Promise<Session> => (await call(`${f.url('freeRest')}/explorer/session`)).body as Session;

beforeAll(async () => {
  fx = await startAccessFixture(PLANS, { explorer: { issueKey: true, clients: ['127.0.0.0/8', '::1'], assetsDir } });
  off = await startAccessFixture(PLANS, { explorer: { issueKey: false, clients: ['127.0.0.0/8'], assetsDir } });
  elsewhere = await startAccessFixture(PLANS, { explorer: { issueKey: true, clients: ['10.0.0.0/8'], assetsDir } });
});

afterAll(async () => {
  await fx?.close();
  await off?.close();
  await elsewhere?.close();
  rmSync(assetsDir, { recursive: true, force: true });
});

describe('the explorer plan', () => {
  it('hands the page a key of an explorer account, metered on that account like any key', async () => {
    const s = await session(fx);
    expect(s.plan).toBe(EXPLORER_PLAN);
    expect(s.ports['paidRest']).toBe(fx.gateway.ports.paidRest);
    const accounts = fx.keys.list().filter((a) => a.plan === EXPLORER_PLAN);
    expect(accounts).toHaveLength(1);
    expect(fx.keys.verify(s.key!)?.id).toBe(accounts[0]!.id);

    const before = (await call(`${fx.url('freeRest')}/usage`, s.key!)).body as { plan: string; credits_used: number; credits_limit: number; requests_per_minute: number };
    expect(before).toMatchObject({ plan: 'explorer', credits_limit: DEFAULT_PLANS.explorer.credits, requests_per_minute: DEFAULT_PLANS.explorer.requestsPerMinute });
    const r = await call(`${fx.url('freeRest')}/networks`, s.key!);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-api-plan')).toBe('explorer');
    // What the plan includes: transactions and 1m candles, which keyless and free callers are refused.
    expect((await call(`${fx.url('freeRest')}/networks/ethereum/pools/${POOL}/transactions`, s.key!)).status).toBe(200);
    expect((await call(`${fx.url('freeRest')}/networks/ethereum/pools/${POOL}/transactions`)).status).toBe(401);
    const after = (await call(`${fx.url('freeRest')}/usage`, s.key!)).body as { credits_used: number };
    expect(after.credits_used).toBe(before.credits_used + 2);
    // Served on the free host: the paid host names it.
    expect((await call(`${fx.url('paidRest')}/networks`, s.key!)).body).toMatchObject({ error: 'wrong_host' });
  });

  it('tells the page the plan of a key its reader enters, whichever host serves it, without answering for a wrong one', async () => {
    const pro = fx.keys.create('pro', 'entered', Math.floor(Date.now() / 1000)).key;
    const free = fx.keys.create('free', 'entered', Math.floor(Date.now() / 1000)).key;
    const keyPlan = (key?: string) => call(`${fx.url('freeRest')}/explorer/key`, key);
    expect(await keyPlan(pro)).toMatchObject({ status: 200, body: { plan: 'pro' } });
    expect(await keyPlan(free)).toMatchObject({ status: 200, body: { plan: 'free' } });
    // The same key's /usage on the free host is refused (wrong_host): this is how the page learns to use the paid host.
    expect((await call(`${fx.url('freeRest')}/usage`, pro)).body).toMatchObject({ error: 'wrong_host' });
    expect(await keyPlan(`${pro.slice(0, -2)}xx`)).toMatchObject({ status: 401, body: { error: 'invalid_key', param: 'Authorization' } });
    expect(await keyPlan()).toMatchObject({ status: 401, body: { error: 'invalid_key' } });
  });

  it("keeps the free host's cached answers of free keys and of the explorer apart (their plans differ)", async () => {
    const { key } = fx.keys.create('free', 'reader', fx.now);
    const explorerKey = (await session(fx)).key!;
    const path = `${fx.url('freeRest')}/networks/ethereum/pools/${POOL}/ohlcv?interval=1m&start=-2d`;
    expect((await call(path, key)).body).toMatchObject({ error: 'plan_required' });
    expect((await call(path, explorerKey)).status).toBe(200);
    expect((await call(path, key)).body).toMatchObject({ error: 'plan_required' });
  });

  it('gives the account a new key at each start: the old key stops working, the counters stay', async () => {
    const old = (await session(fx)).key!;
    const used = ((await call(`${fx.url('freeRest')}/usage`, old)).body as { credits_used: number }).credits_used;
    await fx.gateway.flushUsage();
    await fx.restart();
    const now = (await session(fx)).key!;
    expect(now).not.toBe(old);
    expect((await call(`${fx.url('freeRest')}/networks`, old)).status).toBe(401);
    expect(((await call(`${fx.url('freeRest')}/usage`, now)).body as { credits_used: number }).credits_used).toBe(used);
    expect(fx.keys.list().filter((a) => a.plan === EXPLORER_PLAN)).toHaveLength(1);
  });

  it('hands no key when the plan is off, nor to browsers outside its clients', async () => {
    const none = await session(off);
    expect(none).toMatchObject({ key: null, plan: null });
    expect(none.reason).toContain('explorer.plan');
    expect(off.keys.list().filter((a) => a.plan === EXPLORER_PLAN)).toHaveLength(0);
    const far = await session(elsewhere);
    expect(far.key).toBeNull();
    expect(far.reason).toContain('explorer.clients');
  });

  it('serves the bundle with its types, caching and encodings, and the page for its own routes', async () => {
    const js = await fetch(`${fx.url('freeRest')}/explorer/assets/main-ABC.js`, { headers: { 'accept-encoding': 'br' } });
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-encoding')).toBe('br');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).toContain('console.log');
    const page = await fetch(`${fx.url('freeRest')}/explorer/tokens/ethereum/0xabc`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<title>explorer</title>');
    // Only the free host serves it.
    const { key } = fx.keys.create('dev', 'paid reader', fx.now);
    expect((await call(`${fx.url('paidRest')}/explorer/`, key)).body).toMatchObject({ error: 'not_found' });
  });

  it('reads Accept-Encoding as RFC 9110 has it', () => {
    expect(accepts('gzip, deflate, br', 'br')).toBe(true);
    expect(accepts('gzip;q=1.0, br;q=0', 'br')).toBe(false);
    expect(accepts('*', 'gzip')).toBe(true);
    expect(accepts('identity', 'gzip')).toBe(false);
    expect(accepts('', 'gzip')).toBe(false);
  });
});
