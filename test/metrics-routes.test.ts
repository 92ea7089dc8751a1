/**
 * /metrics counts every answered request under the route it asked for, refusals included: a 404 of
 * an unknown record or path, the paid host's edge page, an unknown key, a rate-limited request
 * (from the free host's URL cache and from the router), a removed route, a method no route
 * serves; the agent host's /api paths under the route they stand for. Real gateway and operator port over sockets, a fixed clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../gateway/metrics/registry.js';
import { startMetricsServer, type MetricsServer } from '../gateway/metrics/server.js';
import { call, NOW, plansWith, POOL, startAccessFixture, type AccessFixture } from './support/access.js';

let fx: AccessFixture;
let metrics: MetricsServer;
let pro = '';

beforeAll(async () => {
  const roomy = { requestsPerMinute: 100_000, credits: 1_000_000 };
  fx = await startAccessFixture(plansWith({ keyless: { requestsPerMinute: 4, credits: 1_000 }, pro: roomy }), { metrics: true });
  pro = fx.keys.create('pro', 'metrics test', NOW).key;
  const counters = fx.gateway.counters!;
  const registry = createMetricsRegistry({
    requests: counters.requests,
    streams: counters.streams,
    creditsSpent: counters.creditsSpent,
    ingest: () => [],
    now: () => fx.now,
    dataDir: fx.dir,
    shardBusySeconds: () => [],
  });
  metrics = await startMetricsServer(registry, '127.0.0.1', 0);
});

afterAll(async () => {
  metrics?.close();
  await fx?.close();
});

/** Every `dexdata_http_requests_total` sample as `host route status` -> count. */
async function requestCounts(): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^dexdata_http_requests_total\{host="(\w+)",route="(\w+)",status="(\w+)"\} (\d+)$/gm)) out[`${m[1]} ${m[2]} ${m[3]}`] = Number(m[4]);
  return out;
}

describe('requests counted by route', () => {
  it('counts refusals before the router under the route the path names, as the answers served', async () => {
    const free = fx.url('freeRest');
    const paid = fx.url('paidRest');
    const agent = fx.url('agent');
    const pool = `/networks/ethereum/pools/${POOL}`;
    const expected: [url: string, key: string, status: number, counted: string][] = [
      // Keyless, 4 requests a minute on the free host: the second /networks comes from the URL cache.
      [`${free}/networks`, '', 200, 'freeRest networks 200'],
      [`${free}/networks`, '', 200, 'freeRest networks 200'],
      [`${free}/networks/nope/dexes`, '', 404, 'freeRest dexes 404'],
      [`${free}/nope`, '', 404, 'freeRest other 404'],
      // Over the limit: one answer the URL cache holds, one it does not.
      [`${free}/networks`, '', 429, 'freeRest networks 429'],
      [`${free}${pool}`, '', 429, 'freeRest pool 429'],
      // The paid host: the edge page without a key, an unknown key, then a good one.
      [`${paid}${pool}`, '', 403, 'paidRest pool 403'],
      [`${paid}${pool}`, `api_${'x'.repeat(32)}`, 401, 'paidRest pool 401'],
      [`${paid}${pool}`, pro, 200, 'paidRest pool 200'],
      [`${paid}/networks/ethereum/tokens/filter`, pro, 410, 'paidRest removed 410'],
      [`${paid}/networks/ethereum/pools/${POOL}/trades`, pro, 404, 'paidRest other 404'],
      // The agent host: /api paths as the route they stand for; the main paths are not served there.
      [`${agent}/api/networks/eth/pools/${POOL}`, pro, 200, 'agent pool 200'],
      [`${agent}/networks`, pro, 404, 'agent networks 404'],
      [`${agent}/api/networks/eth/pools/${POOL}/trades`, pro, 404, 'agent other 404'],
    ];
    const want: Record<string, number> = {};
    for (const [url, key, status, counted] of expected) {
      expect((await call(url, key)).status, `${url} ${key}`).toBe(status);
      want[counted] = (want[counted] ?? 0) + 1;
    }
    // Health checks by other methods, and methods no route serves.
    const other: [method: string, url: string, status: number, counted: string][] = [
      ['HEAD', `${free}/health`, 200, 'freeRest health 200'],
      ['OPTIONS', `${paid}/health`, 200, 'paidRest health 200'],
      ['POST', `${free}/networks`, 404, 'freeRest networks 404'],
      ['DELETE', `${paid}${pool}`, 404, 'paidRest pool 404'],
    ];
    for (const [method, url, status, counted] of other) {
      expect((await fetch(url, { method })).status, `${method} ${url}`).toBe(status);
      want[counted] = (want[counted] ?? 0) + 1;
    }
    expect(await requestCounts()).toEqual(want);
  });
});
