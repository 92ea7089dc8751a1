/**
 * Limits around the agent protocol: a plan's per-minute limit and credit allowance reached through
 * tool calls (tool errors saying when to retry, or that retrying will not help), the session
 * table's bounds and idle expiry, and the admin command that lists stored feedback.
 */
import { spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFeedbackStore } from '../gateway/agent/feedback.js';
import { DEFAULT_SESSION_LIMITS, SessionTable, type Session } from '../gateway/agent/sessions.js';
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
  const session = (id: string, owner: string, openStreams = 0, address = owner): Session & { closed: boolean } => {
    const s = {
      id,
      owner,
      address,
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
    const t = new SessionTable({ maxSessions: 10, maxPerOwner: 10, maxPerAddress: 10, idleMs: 1000 });
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

  it('when full of streams, takes from the address holding the most, never below the newcomer\'s share', () => {
    const t = new SessionTable({ maxSessions: 4, maxPerOwner: 10, maxPerAddress: 10, idleMs: 1000 });
    const held = [session('a', 'k1', 1, 'ip1'), session('b', 'k2', 1, 'ip1'), session('c', 'k3', 1, 'ip1'), session('d', 'k4', 1, 'ip2')];
    for (const s of held) t.add(s);
    // ip1 holds 3, a newcomer's address none: ip1 gives up its least recently used session.
    expect(t.makeRoom('paid', 'ip3')).toBe(true);
    expect(held.map((s) => s.closed)).toEqual([true, false, false, false]);
    t.add(session('e', 'paid', 1, 'ip3'));
    // Now every address holds at most 2: ip2 (1) asking for a second is within one of the largest: refused.
    expect(t.makeRoom('k5', 'ip2')).toBe(false);
    expect(t.size).toBe(4);
  });

  it('an address beyond its own limit loses its least recently used session, whatever the keys', () => {
    const t = new SessionTable({ maxSessions: 10, maxPerOwner: 10, maxPerAddress: 2, idleMs: 1000 });
    const [a, b] = [session('a', 'k1', 1, 'ip1'), session('b', 'k2', 1, 'ip1')];
    t.add(a);
    t.add(b);
    t.add(session('c', 'k3', 1, 'ip1'));
    expect([a.closed, b.closed]).toEqual([true, false]);
    expect(t.size).toBe(2);
  });

  it('when full, closes the least recently used session without an open stream, or refuses', () => {
    const t = new SessionTable({ maxSessions: 3, maxPerOwner: 10, maxPerAddress: 10, idleMs: 1000 });
    const [a, b, c] = [session('a', 'x', 1), session('b', 'y'), session('c', 'z')];
    t.add(a);
    t.add(b);
    t.add(c);
    t.touch(b, 5);
    expect(t.makeRoom('w', 'w')).toBe(true);
    expect(c.closed).toBe(true);
    expect(a.closed).toBe(false);
    t.add(session('d', 'w', 1));
    b.openStreams = 1;
    expect(t.makeRoom('v', 'v')).toBe(false);
    expect(t.size).toBe(3);
  });

  it('an owner beyond its own limit loses its least recently used session', () => {
    const t = new SessionTable({ maxSessions: 10, maxPerOwner: 2, maxPerAddress: 10, idleMs: 1000 });
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

describe('session limits over real sockets', () => {
  let fx: AccessFixture;
  const roomy = { requestsPerMinute: 100_000, credits: 1_000_000 };

  beforeAll(async () => {
    fx = await startAccessFixture(plansWith({ keyless: roomy, dev: roomy }));
  });

  afterAll(async () => {
    await fx?.close();
  });

  interface Held {
    readonly status: number;
    readonly local: string;
    readonly socket: Socket;
    /** Whether the server ended the stream (its chunked terminator came). */
    ended(): boolean;
  }

  /** GET /sse from the loopback address `local`: resolves once the endpoint event came (200) or the whole refusal. */
  function openFrom(local: string, key = ''): Promise<Held> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port: fx.gateway.ports.agent!, host: '127.0.0.1', localAddress: local });
      let text = '';
      let settled = false;
      socket.setEncoding('latin1');
      socket.on('error', (err) => (settled ? undefined : reject(err)));
      socket.on('data', (d: string) => {
        text += d;
        if (settled) return;
        const status = Number(text.slice(9, 12));
        if ((status === 200 && /event: endpoint\ndata: [^\n]+\n\n/.test(text)) || (status !== 200 && /\r\n0\r\n\r\n$|\}$/.test(text))) {
          settled = true;
          resolve({ status, local, socket, ended: () => text.endsWith('\r\n0\r\n\r\n') });
        }
      });
      socket.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n${key === '' ? '' : `Authorization: ${key}\r\n`}\r\n`);
    });
  }

  it('4,096 sessions holding streams from 128 addresses leave room for a new address and a paid key; the largest holders give way', async () => {
    const { maxSessions, maxPerOwner } = DEFAULT_SESSION_LIMITS;
    const addresses = maxSessions / maxPerOwner;
    expect(addresses).toBe(128);
    const wanted: string[] = [];
    for (let a = 0; a < addresses; a++) for (let i = 0; i < maxPerOwner; i++) wanted.push(`127.0.1.${a + 1}`);
    const held: Held[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < wanted.length) held.push(await openFrom(wanted[next++]!));
      }),
    );
    expect(held.filter((h) => h.status === 200)).toHaveLength(maxSessions);

    // A keyless caller from a new address, and a paid key from another: both get a session.
    const newcomer = await openFrom('127.0.2.1');
    expect(newcomer.status).toBe(200);
    const paid = await openFrom('127.0.2.2', fx.keys.create('dev', 'fair share', NOW - 86_400).key);
    expect(paid.status).toBe(200);
    // Two of the 128 full addresses each gave up one session (its stream ended), nobody else.
    for (let i = 0; i < 100 && held.filter((h) => h.ended()).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const ended = held.filter((h) => h.ended());
    expect(ended).toHaveLength(2);
    expect(new Set(ended.map((h) => h.local)).size).toBe(2);
    // An address still holding its 32 asking for more only replaces its own oldest session; one that
    // gave a session up may not take one back from the others.
    const full = held.find((h) => !ended.some((e) => e.local === h.local))!.local;
    const greedy = await openFrom(full);
    expect(greedy.status).toBe(200);
    for (let i = 0; i < 100 && held.filter((h) => h.ended()).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect(held.filter((h) => h.ended() && h.local === full)).toHaveLength(1);
    expect(held.filter((h) => h.ended())).toHaveLength(3);
    const refused = await openFrom(ended[0]!.local);
    expect(refused.status).toBe(503);
    for (const h of [...held, newcomer, paid, greedy, refused]) h.socket.destroy();
  }, 120_000);
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
