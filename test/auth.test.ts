/**
 * Keys, plans and host roles over real HTTP (api.md, Authentication): the raw key in the
 * Authorization header, X-Api-Plan on every answer, wrong_host both ways, the paid host's edge
 * page, regeneration and revocation taking effect at once, the `dexdata keys` command, and the
 * pool OHLCV plan windows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, listenerPorts, loadConfig } from '../engine/config.js';
import { openStore } from '../engine/store/store.js';
import { openKeyStore } from '../gateway/auth/key-store.js';
import { call, DAY, FIRST_TRADE, NOW, plansWith, POOL, startAccessFixture, TOKENS, type AccessFixture } from './support/access.js';
import { CLI } from './support/service.js';

const run = promisify(execFile);
let fx: AccessFixture;
const keys: Record<string, string> = {};

beforeAll(async () => {
  // Limits high enough that metering never interferes here (test/metering.test.ts covers it).
  const roomy = { requestsPerMinute: 100_000, credits: 1_000_000 };
  fx = await startAccessFixture(plansWith({ keyless: roomy, free: roomy, dev: roomy, pro: roomy, enterprise: roomy }));
  for (const plan of ['free', 'dev', 'pro', 'enterprise'] as const) keys[plan] = fx.keys.create(plan, `${plan} test`, NOW - 10 * DAY).key;
});

afterAll(async () => {
  await fx?.close();
});

const free = (path: string, key = '') => call(fx.url('freeRest') + path, key);
const paid = (path: string, key = '') => call(fx.url('paidRest') + path, key);

describe('configuration', () => {
  it('defaults to the published plan figures and ports 8080..8084', () => {
    const c = loadConfig({}, {});
    expect(c.plans.keyless).toMatchObject({ requestsPerMinute: 15, credits: 10_000, concurrentStreams: 10, windowKind: 'rolling', ohlcvFinestInterval: '1h', ohlcvHistoryDays: 1 });
    expect(c.plans.free).toMatchObject({ requestsPerMinute: 30, credits: 100_000, concurrentStreams: 10, windowKind: 'rolling', ohlcvFinestInterval: '10m', ohlcvHistoryDays: 7 });
    expect(c.plans.dev).toMatchObject({ requestsPerMinute: 100, credits: 1_000_000, concurrentStreams: 30, windowKind: 'billing', ohlcvHistoryDays: 30 });
    expect(c.plans.pro).toMatchObject({ requestsPerMinute: 500, credits: 5_000_000, concurrentStreams: 100, windowKind: 'billing', ohlcvHistoryDays: null });
    expect(listenerPorts(c)).toEqual({ freeRest: 8080, paidRest: 8081, freeStream: 8082, paidStream: 8083, agent: 8084 });
    expect(listenerPorts(loadConfig({ port: '0' }, {})).paidRest).toBe(0);
  });

  it('takes partial plan sections from the file and lists every bad figure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plans-config-'));
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ plans: { free: { credits: 7 } }, listeners: { paidRest: { port: 9001, hosts: ['https://pro.example.test'] } } }));
      const c = loadConfig({ config: file }, {});
      expect(c.plans.free).toMatchObject({ credits: 7, requestsPerMinute: 30 });
      expect(listenerPorts(c).paidRest).toBe(9001);
      expect(c.listeners.paidRest.hosts).toEqual(['https://pro.example.test']);
      writeFileSync(file, JSON.stringify({ plans: { dev: { windowKind: 'weekly', credits: -1 }, gold: {} } }));
      let problems = '';
      try {
        loadConfig({ config: file }, {});
      } catch (err) {
        problems = (err as ConfigError).problems.join('\n');
      }
      expect(problems).toMatch(/plans\.dev\.windowKind/);
      expect(problems).toMatch(/plans\.dev\.credits/);
      expect(problems).toMatch(/gold/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('keys', () => {
  it('are api_ and 32 base62 characters, and only their hash is stored', () => {
    for (const k of Object.values(keys)) expect(k).toMatch(/^api_[0-9A-Za-z]{32}$/);
    expect(new Set(Object.values(keys)).size).toBe(4);
    const stored = JSON.stringify(fx.keys.list());
    for (const k of Object.values(keys)) {
      expect(stored).not.toContain(k);
      expect(stored).not.toContain(k.slice(4));
    }
  });

  it('regenerating rejects the old key at once and accepts the new one', async () => {
    const { account, key: oldKey } = fx.keys.create('free', 'rotating', NOW);
    expect((await free('/networks', oldKey)).status).toBe(200);
    const { key: newKey } = fx.keys.regenerate(account.id);
    expect(newKey).not.toBe(oldKey);
    const old = await free('/networks', oldKey);
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error: 'invalid_api_key', message: 'api key verification has failed' });
    const fresh = await free('/networks', newKey);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-api-plan')).toBe('free');
  });

  it('a revoked key is rejected', async () => {
    const { account, key } = fx.keys.create('dev', 'revoked', NOW);
    expect((await paid('/networks', key)).status).toBe(200);
    fx.keys.revoke(account.id, NOW);
    expect((await paid('/networks', key)).status).toBe(401);
  });
});

describe('authentication', () => {
  it('keyless callers are served on the free host as keyless', async () => {
    const r = await free('/networks');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-api-plan')).toBe('keyless');
  });

  it('names the plan of each key in X-Api-Plan', async () => {
    const r = await free('/networks', keys['free']);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-api-plan')).toBe('free');
    for (const plan of ['dev', 'pro', 'enterprise']) {
      const p = await paid('/networks', keys[plan]);
      expect(p.status, plan).toBe(200);
      expect(p.headers.get('x-api-plan'), plan).toBe(plan);
    }
  });

  it('an unrecognised key answers 401 with the endpoint wording, or the root wording at /', async () => {
    const bogus = `api_${'x'.repeat(32)}`;
    for (const r of [await free('/networks', bogus), await paid('/networks', bogus), await free('/networks', 'nonsense')]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'invalid_api_key', message: 'api key verification has failed' });
      expect(r.headers.get('x-api-plan')).toBe('keyless');
    }
    for (const r of [await free('/', bogus), await paid('/', bogus)]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'invalid_api_key', message: 'missing or invalid api key' });
    }
  });

  it('a scheme word before the key breaks authentication', async () => {
    for (const scheme of ['Bearer', 'Token', 'Api-Key']) {
      const r = await paid('/networks', `${scheme} ${keys['dev']}`);
      expect(r.status, scheme).toBe(401);
      expect(r.body).toEqual({ error: 'invalid_api_key', message: 'api key verification has failed' });
    }
    expect((await paid('/networks', keys['dev'])).status).toBe(200);
  });

  it('the root path answers a valid key on its host', async () => {
    const r = await paid('/', keys['pro']);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-api-plan')).toBe('pro');
  });
});

describe('paid-only endpoints', () => {
  const start = `start=${NOW - DAY}&interval=1h`;
  const endpoints = [
    `/networks/ethereum/pools/${POOL}/transactions`,
    `/networks/ethereum/tokens/${TOKENS[1]}/ohlcv?${start}`,
    `/networks/ethereum/tokens/${TOKENS[1]}/indicators?${start}`,
  ];

  it('refuse keyless callers: 401 api_key_required for transactions, plan_required without param otherwise', async () => {
    const tx = await free(endpoints[0]!);
    expect(tx.status).toBe(401);
    expect(tx.body).toMatchObject({ error: 'api_key_required' });
    for (const path of endpoints.slice(1)) {
      const r = await free(path);
      expect(r.status, path).toBe(403);
      expect(r.body, path).toMatchObject({ error: 'plan_required', tier: 'keyless', required_tier: 'dev' });
      expect(r.body.param, path).toBeUndefined();
    }
  });

  it('refuse free keys with plan_required, charging nothing', async () => {
    const before = (await free('/usage', keys['free'])).body.credits_used;
    for (const path of endpoints) {
      const r = await free(path, keys['free']);
      expect(r.status, path).toBe(403);
      expect(r.body, path).toMatchObject({ error: 'plan_required', tier: 'free', required_tier: 'dev' });
      expect(r.body.param, path).toBeUndefined();
    }
    expect((await free('/usage', keys['free'])).body.credits_used).toBe(before);
  });

  it('serve paid keys on the paid host', async () => {
    for (const plan of ['dev', 'pro', 'enterprise']) {
      for (const path of endpoints) {
        const r = await paid(path, keys[plan]);
        expect(r.status, `${plan} ${path}`).toBe(200);
        expect(Array.isArray(r.body), path).toBe(true);
      }
    }
  });
});

describe('hosts', () => {
  it('a free key on the paid host gets 403 wrong_host naming the free host', async () => {
    const r = await paid('/networks', keys['free']);
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('wrong_host');
    expect(typeof r.body.message).toBe('string');
    expect(r.body.host).toBe(fx.url('freeRest'));
    expect(r.headers.get('x-api-plan')).toBe('free');
  });

  it('a paid key on the free host gets 403 wrong_host naming the paid host, /usage included', async () => {
    // A URL no one has asked the free host for, so its cache holds nothing for it.
    for (const path of ['/networks?never-asked=1', '/usage']) {
      const r = await free(path, keys['dev']);
      expect(r.status, path).toBe(403);
      expect(r.body.error).toBe('wrong_host');
      expect(r.body.host).toBe(fx.url('paidRest'));
      expect(r.headers.get('x-api-plan')).toBe('dev');
    }
  });

  it('the free host answers from its URL cache: keyed callers share entries, keyless ones have their own', async () => {
    const path = `/networks/ethereum/pools/${POOL}?cache-probe=1`;
    expect((await free(path, keys['dev'])).status).toBe(403); // nothing cached yet: wrong_host
    const first = await free(path, keys['free']);
    expect(first.status).toBe(200);
    // Now cached for keyed callers: a paid key sent to the free host gets the free-tier answer (api.md rule 8).
    const paidThere = await free(path, keys['dev']);
    expect(paidThere.status).toBe(200);
    expect(paidThere.text).toBe(first.text);
    expect(paidThere.headers.get('x-api-plan')).toBe('dev');
    // Keyless callers have their own entry; /usage is never cached and still counts the cached answers.
    const before = (await free('/usage', keys['free'])).body.credits_used;
    expect((await free(path, keys['free'])).text).toBe(first.text);
    expect((await free('/usage', keys['free'])).body.credits_used).toBe(before + 1);
    expect((await free(path)).status).toBe(200);
  });

  it('the paid host without an Authorization header answers 403 with an HTML page', async () => {
    for (const path of ['/', '/networks', '/usage']) {
      const r = await paid(path);
      expect(r.status, path).toBe(403);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.text).toMatch(/<html[\s>]/);
    }
  });

  it('/health answers on every host without a key', async () => {
    for (const role of ['freeRest', 'paidRest', 'agent'] as const) {
      const r = await call(`${fx.url(role)}/health`);
      expect(r.status, role).toBe(200);
      expect(r.body).toEqual({ status: 'ok' });
      expect(r.headers.get('x-api-plan')).toBe('keyless');
    }
  });

  it('the agent host serves keyless callers and every key', async () => {
    expect((await call(`${fx.url('agent')}/api/networks`)).status).toBe(200);
    const r = await call(`${fx.url('agent')}/api/networks`, keys['pro']);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-api-plan')).toBe('pro');
  });

  it('a Host header naming a configured host selects its role', async () => {
    const { startGateway } = await import('../gateway/server.js');
    const gw = await startGateway(fx.context, {
      host: '127.0.0.1',
      port: 0,
      access: { plans: plansWith({}), freeRestHosts: ['https://api.example.test'], paidRest: { port: 0, hosts: ['https://pro.example.test'] } },
    });
    try {
      // Reached through the free port, but addressed to the paid host name.
      // fetch cannot set Host, node:http can.
      const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: gw.port, path: '/networks', headers: { host: 'pro.example.test', authorization: keys['free']! } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body)).toMatchObject({ error: 'wrong_host', host: 'https://api.example.test' });
    } finally {
      await gw.close();
    }
  });
});

describe('dexdata keys', () => {
  it('creates, lists, shows, regenerates and adds credits through the command line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-cli-'));
    try {
      const cli = (...args: string[]) => run(process.execPath, [CLI, 'keys', ...args, '--data-dir', dir]);
      const created = await cli('create', '--plan', 'dev', '--label', 'ci');
      const first = /key: (api_[0-9A-Za-z]{32})/.exec(created.stdout)![1]!;
      expect(created.stdout).toMatch(/account 1: plan dev, label "ci"/);
      const listed = await cli('list');
      expect(listed.stdout).toMatch(/account 1: plan dev/);
      expect(listed.stdout).not.toContain(first);
      const shown = await cli('show', '1');
      expect(shown.stdout).not.toMatch(/api_/);
      const regenerated = await cli('regenerate', '1');
      const second = /key: (api_[0-9A-Za-z]{32})/.exec(regenerated.stdout)![1]!;
      expect(second).not.toBe(first);
      expect((await cli('credits', '1', '500')).stdout).toMatch(/\+500 credits/);
      await expect(cli('create', '--plan', 'gold')).rejects.toMatchObject({ code: 2 });

      const store = openStore(dir);
      try {
        const ks = openKeyStore(store);
        expect(ks.verify(first)).toBeUndefined();
        expect(ks.verify(second)).toMatchObject({ id: 1, plan: 'dev', label: 'ci', extraCredits: 500 });
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pool OHLCV plan windows', () => {
  const ohlcv = (host: 'freeRest' | 'paidRest', key: string, q: string) => call(`${fx.url(host)}/networks/ethereum/pools/${POOL}/ohlcv?${q}`, key);
  const times = (body: { timestamp: string }[]) => body.map((c) => Date.parse(c.timestamp) / 1000);

  it('keyless: 1h by default, finer intervals refused first, start moved to the 24 h edge', async () => {
    const r = await ohlcv('freeRest', '', 'start=-24h');
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThan(0);
    for (const c of r.body) expect(Date.parse(c.time_close) - Date.parse(c.time_open)).toBe(3_600_000);

    const fine = await ohlcv('freeRest', '', 'start=-40d&interval=10m');
    expect(fine.status).toBe(403);
    expect(fine.body).toEqual({ error: 'plan_required', message: expect.any(String), tier: 'keyless', required_tier: 'free', param: 'interval' });

    const clamped = await ohlcv('freeRest', '', 'start=-7d&interval=1h');
    expect(clamped.status).toBe(200);
    const edge = NOW - DAY;
    expect(Math.min(...times(clamped.body))).toBeGreaterThanOrEqual(edge - (edge % 3600));

    const before = await ohlcv('freeRest', '', 'start=-10d&end=-5d&interval=1h');
    expect(before.status).toBe(403);
    expect(before.body).toMatchObject({ error: 'plan_required', tier: 'keyless', required_tier: 'free', param: 'start' });
  });

  it('free: 10m and coarser over 7 days', async () => {
    const fine = await ohlcv('freeRest', keys['free']!, 'start=-1d&interval=5m');
    expect(fine.status).toBe(403);
    expect(fine.body).toMatchObject({ tier: 'free', required_tier: 'dev', param: 'interval' });
    expect((await ohlcv('freeRest', keys['free']!, 'start=-1d&interval=10m')).status).toBe(200);
    const r = await ohlcv('freeRest', keys['free']!, 'start=-20d&interval=1h');
    expect(r.status).toBe(200);
    const edge = NOW - 7 * DAY;
    expect(Math.min(...times(r.body))).toBeGreaterThanOrEqual(edge - (edge % 3600));
    expect(Math.min(...times(r.body))).toBeLessThan(edge + 6 * 3600);
    expect((await ohlcv('freeRest', keys['free']!, 'start=-20d&end=-10d&interval=1h')).body).toMatchObject({ required_tier: 'dev', param: 'start' });
  });

  it('dev: every interval over 30 days; pro: no cap', async () => {
    expect((await ohlcv('paidRest', keys['dev']!, 'start=-1h&interval=1m')).status).toBe(200);
    const dev = await ohlcv('paidRest', keys['dev']!, 'start=-40d&interval=24h');
    expect(dev.status).toBe(200);
    const edge = NOW - 30 * DAY;
    expect(Math.min(...times(dev.body))).toBe(edge - (edge % DAY));
    const old = await ohlcv('paidRest', keys['dev']!, 'start=-40d&end=-35d&interval=24h');
    expect(old.status).toBe(403);
    expect(old.body).toMatchObject({ tier: 'dev', required_tier: 'pro', param: 'start' });

    const pro = await ohlcv('paidRest', keys['pro']!, 'start=-40d&interval=24h');
    expect(pro.status).toBe(200);
    expect(Math.min(...times(pro.body))).toBe(FIRST_TRADE - (FIRST_TRADE % DAY));
  });
});

describe('pool indicators plan windows', () => {
  const indicators = (host: 'freeRest' | 'paidRest', key: string, q: string) => call(`${fx.url(host)}/networks/ethereum/pools/${POOL}/indicators?${q}`, key);
  const times = (body: { timestamp: string }[]) => body.map((c) => Date.parse(c.timestamp) / 1000);

  it('apply the finest interval first, then the history window, like pool OHLCV', async () => {
    const fine = await indicators('freeRest', '', 'start=-1d&interval=10m');
    expect(fine.status).toBe(403);
    expect(fine.body).toMatchObject({ error: 'plan_required', tier: 'keyless', required_tier: 'free', param: 'interval' });
    const old = await indicators('freeRest', keys['free']!, 'start=-20d&end=-10d&interval=1h');
    expect(old.status).toBe(403);
    expect(old.body).toMatchObject({ error: 'plan_required', tier: 'free', required_tier: 'dev', param: 'start' });
  });

  it('move start to the window edge and warm up only inside the window', async () => {
    const edge = NOW - 7 * DAY;
    const free = await indicators('freeRest', keys['free']!, 'start=-20d&interval=1h&indicators=sma&period=5');
    expect(free.status).toBe(200);
    const t = times(free.body);
    expect(Math.min(...t)).toBeGreaterThanOrEqual(edge - (edge % 3600));
    // No candle before the edge may warm the average up: the first 4 inside the window have no SMA(5).
    expect(free.body.slice(0, 4).map((c: { sma: number | null }) => c.sma)).toEqual([null, null, null, null]);
    expect(free.body[4].sma).not.toBeNull();
    // With no plan cap, the same range warms up from the candles before it.
    const pro = await indicators('paidRest', keys['pro']!, `start=${t[0]}&interval=1h&indicators=sma&period=5`);
    expect(pro.status).toBe(200);
    expect(pro.body[0].sma).not.toBeNull();
  });
});
