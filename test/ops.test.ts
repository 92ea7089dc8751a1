/**
 * Operating the real service (`dexdata serve` as a child process): its log is one JSON object per
 * line, with request ids, and never holds a key, a key hash or the hashing secret whatever is done
 * with keys; /metrics on the operator port counts what was asked, by host, route and status, and
 * the streams, credits and engine figures; the public hosts do not serve it.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../engine/store/store.js';
import { CLI, startService, type RunningService } from './support/service.js';
import { openRaw } from './support/streams.js';

let dir = '';
let service: RunningService | null = null;

afterAll(async () => {
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function cli(...args: string[]): string {
  return execFileSync(process.execPath, [CLI, ...args, '--data-dir', dir], { encoding: 'utf8' });
}

/** One Prometheus sample: `name{labels} value`, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.keys(labels).length === Object.keys(have).length && Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('the running service for an operator', () => {
  it('logs JSON lines with request ids and no key material, and counts requests, streams and credits at /metrics', async () => {
    dir = mkdtempSync(join(tmpdir(), 'dexdata-ops-'));
    const first = /key: (api_\w+)/.exec(cli('keys', 'create', '--plan', 'pro', '--label', 'ops test'))![1]!;
    service = await startService(['--data-dir', dir, '--pools', '200', '--swaps-per-second', '60', '--backfill-days', '0.05', '--log-level', 'debug']);
    const metricsUrl = `http://127.0.0.1:${/metrics listening on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(await service.waitFor(/metrics listening on http:\/\/127\.0\.0\.1:(\d+)\/metrics/))![1]}/metrics`;
    const paidRest = `http://127.0.0.1:${/paid REST listening on http:\/\/[\d.]+:(\d+)/.exec(await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/))![1]}`;
    const paidStream = `http://127.0.0.1:${/\(free\) and http:\/\/[\d.]+:(\d+) \(paid\)/.exec(await service.waitFor(/\(free\) and http:\/\/[\d.]+:(\d+) \(paid\)/))![1]}`;
    await service.waitFor(/caught up/);

    const get = async (url: string, key?: string) => (await fetch(url, key === undefined ? {} : { headers: { authorization: key } })).status;
    // Free host, keyless: 3 x /networks (the last two from the URL cache), two 404s.
    for (let i = 0; i < 3; i++) expect(await get(`${service.url}/networks`)).toBe(200);
    expect(await get(`${service.url}/nope`)).toBe(404);
    expect(await get(`${service.url}/networks/nope/dexes`)).toBe(404);
    expect(await get(`${service.url}/metrics`)).toBe(404);
    // Paid host with the key, then regenerated, then revoked.
    expect(await get(`${paidRest}/networks/ethereum/pools/search?limit=2&order_by=txns_24h`, first)).toBe(200);
    expect(await get(`${paidRest}/networks/ethereum/pools/search?limit=2`, first)).toBe(200);
    const second = /key: (api_\w+)/.exec(cli('keys', 'regenerate', '1'))![1]!;
    expect(await get(`${paidRest}/networks/ethereum/pools/search?limit=2`, first)).toBe(401);
    expect(await get(`${paidRest}/usage`, second)).toBe(200);
    const top = (await (await fetch(`${paidRest}/networks/ethereum/pools/search?order_by=txns_24h&limit=1`, { headers: { authorization: second } })).json()) as { results: { id: string }[] };
    const pool = top.results[0]!.id;
    const stream = await openRaw(`${paidStream}/sse/transactions?method=pool&chain=ethereum&address=${pool}&limit=2`, { key: second });
    expect(stream.status).toBe(200);
    await stream.ended;
    expect(stream.frames.filter((f) => f.id !== undefined)).toHaveLength(2);
    cli('keys', 'revoke', '1');
    expect(await get(`${paidRest}/usage`, second)).toBe(401);

    const text = await (await fetch(metricsUrl)).text();
    const requests = (host: string, route: string, status: string) => sample(text, 'dexdata_http_requests_total', { host, route, status });
    expect(requests('freeRest', 'networks', '200')).toBe(3);
    expect(requests('freeRest', 'other', '404')).toBe(2); // /nope and /metrics
    expect(requests('freeRest', 'dexes', '404')).toBe(1);
    expect(requests('paidRest', 'pool_search', '200')).toBe(3);
    expect(requests('paidRest', 'pool_search', '401')).toBe(1);
    expect(requests('paidRest', 'usage', '200')).toBe(1);
    expect(requests('paidRest', 'usage', '401')).toBe(1);
    expect(sample(text, 'dexdata_http_request_duration_seconds_count', { host: 'freeRest', route: 'networks' })).toBe(3);
    expect(sample(text, 'dexdata_http_request_duration_seconds_bucket', { host: 'freeRest', route: 'networks', le: '+Inf' })).toBe(3);
    expect(sample(text, 'dexdata_http_request_duration_seconds_sum', { host: 'freeRest', route: 'networks' })).toBeGreaterThan(0);
    expect(sample(text, 'dexdata_stream_events_delivered_total', { kind: 'transactions' })).toBe(2);
    expect(sample(text, 'dexdata_streams_open', { kind: 'transactions' })).toBe(0);
    // Keyless: the 3 /networks answers. Pro: 3 searches and the 2 stream events (/usage and a stream's opening cost nothing).
    expect(sample(text, 'dexdata_credits_spent_total', { plan: 'keyless' })).toBe(3);
    expect(sample(text, 'dexdata_credits_spent_total', { plan: 'pro' })).toBe(5);
    expect(sample(text, 'dexdata_ingest_events_total', { chain: 'ethereum' })).toBeGreaterThan(0);
    expect(sample(text, 'dexdata_ingest_lag_seconds', { chain: 'ethereum' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'dexdata_lmdb_size_bytes')).toBeGreaterThan(4096);
    expect(sample(text, 'dexdata_shard_busy_seconds_total', { shard: '0' })).toBeGreaterThan(0);
    expect(sample(text, 'dexdata_shard_busy_seconds_total', { shard: '1' })).toBeGreaterThan(0);
    // No snapshot cut yet this soon after the first start: the whole log would be replayed.
    expect(sample(text, 'dexdata_log_batches_since_snapshot')).toBeGreaterThan(0);

    const s = service;
    expect(await s.stop()).toBe(0);
    service = null;
    const output = s.output();

    // Every line is a JSON object with a level, a time and a message.
    const lines = output.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(JSON.parse(line), line).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestLines = entries.filter((e) => e['msg'] === 'request');
    expect(requestLines).toHaveLength(12); // the REST requests above
    const ids = new Set(requestLines.map((e) => e['req_id']));
    expect(ids.size).toBe(requestLines.length);
    expect(requestLines.find((e) => e['path'] === '/networks/nope/dexes')).toMatchObject({ level: 20, host: 'freeRest', status: 404, req_id: expect.stringMatching(/^\w+-\w+$/) });
    // Paths only: no query string in a line.
    for (const e of requestLines) expect(String(e['path'])).not.toContain('?');

    // No key, key hash or the secret keys are hashed with, in any form.
    const store = openStore(dir);
    const pepper = store.meta.get('auth.pepper') as string;
    await store.close();
    expect(pepper).toMatch(/^[0-9a-f]{16,}$/);
    const hashOf = (key: string) => createHash('sha256').update(Buffer.concat([Buffer.from(pepper, 'hex'), Buffer.from(key, 'latin1')]));
    for (const key of [first, second]) {
      const digest = hashOf(key).digest();
      for (const secret of [key, key.slice(4), digest.toString('hex'), digest.toString('base64'), digest.toString('latin1')]) expect(output.includes(secret), secret).toBe(false);
    }
    for (const secret of [pepper, Buffer.from(pepper, 'hex').toString('base64')]) expect(output.includes(secret), 'pepper').toBe(false);
  }, 180_000);
});
