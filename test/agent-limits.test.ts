/**
 * Limits around the agent protocol: a plan's per-minute limit and credit allowance reached through
 * tool calls (tool errors saying when to retry, or that retrying will not help), the session
 * table's bounds and idle expiry, and the admin command that lists stored feedback.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFeedbackStore } from '../gateway/agent/feedback.js';
import { SessionTable, type Session } from '../gateway/agent/sessions.js';
import { openStore } from '../engine/store/store.js';
import { connectClient, textOf } from './agent-support.js';
import { NOW, plansWith, POOL, startAccessFixture, TOKENS, type AccessFixture } from './support/access.js';
import { CLI } from './support/service.js';

describe('plan limits through tool calls', () => {
  let fx: AccessFixture;
  let client: Client;

  beforeAll(async () => {
    fx = await startAccessFixture(plansWith({ keyless: { requestsPerMinute: 4, credits: 6 } }));
    client = await connectClient(fx.url('agent'), 'streamable-http');
  });

  afterAll(async () => {
    await client?.close();
    await fx?.close();
  });

  const callTool = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

  it('the per-minute limit gives a tool error that says how long to wait; protocol messages do not count', async () => {
    await client.listTools();
    await client.ping();
    for (let i = 0; i < 4; i++) expect((await callTool('getNetworks')).isError ?? false, `call ${i}`).toBe(false);
    const limited = await callTool('getPoolDetails', { network: 'ethereum', pool_address: POOL });
    expect(limited.isError).toBe(true);
    // NOW is 30 s into its minute.
    expect(textOf(limited)).toMatch(/rate limit of 4 requests per minute/);
    expect(textOf(limited)).toMatch(/Wait 30 s, then retry the same call/);
    // The session itself is fine.
    expect((await client.listTools()).tools).toHaveLength(20);
  });

  it('an exhausted credit allowance gives a tool error naming when it resets; calls without credits still work', async () => {
    fx.now = NOW + 60;
    // 4 credits used, 2 left: a two-token price batch fits, the next call does not.
    const prices = await callTool('getTokenMultiPrices', { network: 'ethereum', tokens: TOKENS });
    expect(prices.isError ?? false, textOf(prices)).toBe(false);
    const exhausted = await callTool('getNetworks');
    expect(exhausted.isError).toBe(true);
    expect(textOf(exhausted)).toMatch(/credit allowance .* is used up until \d{4}-\d\d-\d\dT/);
    expect(textOf(exhausted)).toMatch(/retrying before then will not help/);
    const caps = await callTool('getCapabilities');
    expect(caps.isError ?? false, textOf(caps)).toBe(false);
    expect((caps.structuredContent as { plan: { credits_remaining: number; credits_used: number } }).plan).toMatchObject({ credits_used: 6, credits_remaining: 0 });
  });
});

describe('session table', () => {
  const session = (id: string, owner: string, openStreams = 0): Session & { closed: boolean } => {
    const s = {
      id,
      owner,
      lastActiveMs: 0,
      openStreams,
      closed: false,
      close: async () => {
        s.closed = true;
      },
    };
    return s;
  };

  it('closes sessions idle beyond the limit, never one with an open stream', () => {
    const t = new SessionTable({ maxSessions: 10, maxPerOwner: 10, idleMs: 1000 });
    const idle = session('a', 'x');
    const streaming = session('b', 'x', 1);
    const recent = session('c', 'x');
    t.add(idle);
    t.add(streaming);
    t.add(recent);
    t.touch(recent, 1500);
    expect(t.sweep(2000)).toBe(1);
    expect(idle.closed).toBe(true);
    expect(t.get('a')).toBeUndefined();
    expect(t.get('b')).toBe(streaming);
    expect(t.get('c')).toBe(recent);
  });

  it('when full, closes the least recently used session without an open stream, or refuses', () => {
    const t = new SessionTable({ maxSessions: 3, maxPerOwner: 10, idleMs: 1000 });
    const [a, b, c] = [session('a', 'x', 1), session('b', 'y'), session('c', 'z')];
    t.add(a);
    t.add(b);
    t.add(c);
    t.touch(b, 5);
    expect(t.makeRoom('w')).toBe(true);
    expect(c.closed).toBe(true);
    expect(a.closed).toBe(false);
    t.add(session('d', 'w', 1));
    b.openStreams = 1;
    expect(t.makeRoom('v')).toBe(false);
    expect(t.size).toBe(3);
  });

  it('an owner beyond its own limit loses its least recently used session', () => {
    const t = new SessionTable({ maxSessions: 10, maxPerOwner: 2, idleMs: 1000 });
    const [a, b, other] = [session('a', 'x', 1), session('b', 'x'), session('o', 'y')];
    t.add(a);
    t.add(other);
    t.add(b);
    t.add(session('c', 'x'));
    expect(a.closed).toBe(true);
    expect(b.closed).toBe(false);
    expect(other.closed).toBe(false);
    expect(t.size).toBe(3);
  });
});

describe('dexdata feedback', () => {
  let dir = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feedback-cli-'));
    const store = openStore(dir);
    const feedback = openFeedbackStore(store);
    await feedback.add({
      receivedAt: NOW,
      category: 'bug',
      message: 'getPoolOHLCV returned nothing\nfor the last hour',
      tool: 'getPoolOHLCV',
      rating: 2,
      contact: null,
      plan: 'dev',
      account: 7,
      client: { name: 'some-client', version: '0.9' },
      transport: 'streamable-http',
    });
    await feedback.add({ receivedAt: NOW + 60, category: 'other', message: 'thanks', tool: null, rating: null, contact: 'ops@example.com', plan: 'keyless', account: null, client: null, transport: 'json-rpc' });
    expect(feedback.count()).toBe(2);
    await store.close();
  });

  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, 'feedback', ...args, '--data-dir', dir], { encoding: 'utf8' });

  it('lists stored feedback, oldest first, with who sent it and how', () => {
    const r = run('list');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'fb-1  2023-12-25T12:00:30Z  bug  plan dev, account 7  tool getPoolOHLCV  rating 2/5  some-client 0.9 via streamable-http',
      '    getPoolOHLCV returned nothing',
      '    for the last hour',
      'fb-2  2023-12-25T12:01:30Z  other  plan keyless  via json-rpc  contact "ops@example.com"',
      '    thanks',
      '',
    ]);
  });

  it('filters, limits, counts and prints JSON lines', () => {
    const json = run('list', '--json', '--since', '2023-12-25T12:01:00Z');
    expect(json.status, json.stderr).toBe(0);
    const lines = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual([expect.objectContaining({ id: 'fb-2', message: 'thanks', receivedAt: '2023-12-25T12:01:30Z', plan: 'keyless' })]);
    expect(run('list', '--limit', '1').stdout).toMatch(/^fb-1 .*\n {4}getPoolOHLCV returned nothing\n {4}for the last hour\n$/);
    expect(run('count').stdout).toBe('2\n');
    const bad = run('list', '--limit', 'many');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a positive integer/);
  });
});
