/**
 * The real service (`dexdata serve`, shard threads ranking searches) over raw sockets: pipelined
 * requests behind a pool search that waits on the shard threads are all answered in order, and a
 * SIGTERM answers every request in flight, ends open streams with their terminator, writes the
 * usage counters and exits 0.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnswers, rawExchange } from './support/all-hosts.js';
import { CLI, startService, type RunningService } from './support/service.js';

let dir = '';
let config = '';
let proKey = '';
// The front keeps pipelined answers in order (uWS alone drops them behind a search).
const SERVE = () => ['--data-dir', dir, '--config', config, '--pools', '300', '--backfill-days', '1', '--seed', '9', '--front', 'on'];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'service-shutdown-'));
  config = join(dir, 'config.json');
  // Limits no test request reaches: the answers, not the metering, are under test.
  const roomy = { requestsPerMinute: 1_000_000, credits: 1_000_000_000 };
  writeFileSync(config, JSON.stringify({ plans: { keyless: roomy, free: roomy, pro: roomy } }));
  const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--label', 'shutdown test', '--data-dir', dir, '--config', config], { encoding: 'utf8' });
  proKey = /key: (api_\w+)/.exec(created)![1]!;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function portOf(service: RunningService, pattern: RegExp): Promise<number> {
  return Number(pattern.exec(await service.waitFor(pattern))![1]);
}

const search = (limit: number, auth = '') =>
  `GET /networks/ethereum/pools/search?limit=${limit}&order_by=volume_usd_24h&x=${Math.random()} HTTP/1.1\r\nHost: x\r\n${auth === '' ? '' : `Authorization: ${auth}\r\n`}\r\n`;

describe('the service', () => {
  let service: RunningService;

  beforeAll(async () => {
    service = await startService(SERVE());
    await service.waitFor(/caught up/, 120_000);
  });

  afterAll(async () => {
    if (service.child.exitCode === null) await service.stop();
  });

  it('answers pipelined requests behind searches on the shard threads, in order', async () => {
    const health = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
    const r = await rawExchange(service.port, health + search(7) + health + search(3) + health, { until: (b) => parseAnswers(b).length === 5, waitMs: 10_000 });
    const answers = parseAnswers(r.bytes);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(JSON.parse(answers[1]!.body.toString()).results).toHaveLength(7);
    expect(JSON.parse(answers[3]!.body.toString()).results).toHaveLength(3);
    expect(JSON.parse(answers[4]!.body.toString()).status).toBeDefined();
  });

  it('on SIGTERM answers the requests in flight, ends streams with their terminator and exits 0', async () => {
    const paidPort = await portOf(service, /paid REST listening on http:\/\/[\d.]+:(\d+)/);
    const paidStreamPort = await portOf(service, /and http:\/\/[\d.]+:(\d+) \(paid\)/);
    const tokens = (await (await fetch(`${service.url}/networks/ethereum/tokens/search?limit=1`)).json()) as { results: { address: string }[] };
    const token = tokens.results[0]!.address;

    // An open stream: its head arrives before the signal.
    const stream = connect(paidStreamPort, '127.0.0.1');
    let streamed = Buffer.alloc(0);
    const streamClosed = new Promise<void>((resolve) => stream.on('close', () => resolve()));
    stream.on('data', (b: Buffer) => (streamed = Buffer.concat([streamed, b])));
    stream.on('error', () => undefined);
    stream.write(`GET /sse/prices?chain=ethereum&address=${token} HTTP/1.1\r\nHost: x\r\nAuthorization: ${proKey}\r\n\r\n`);
    for (let i = 0; i < 200 && !streamed.includes('retry:'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(streamed.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);

    // 30 searches, each on its own connection (15 keyless on the free host, 15 with the key on the paid
    // host, metered), all written before the signal.
    const COUNT = 30;
    let written = 0;
    const answers = Array.from({ length: COUNT }, (_, i) => {
      const paid = i % 2 === 1;
      return new Promise<Buffer>((resolve) => {
        const s = connect(paid ? paidPort : service.port, '127.0.0.1', () => {
          s.write(search(5 + (i % 4), paid ? proKey : ''));
          written++;
        });
        const chunks: Buffer[] = [];
        s.on('data', (b: Buffer) => {
          chunks.push(b);
          if (parseAnswers(Buffer.concat(chunks)).length === 1) s.end();
        });
        s.on('error', () => undefined);
        s.on('close', () => resolve(Buffer.concat(chunks)));
      });
    });
    while (written < COUNT) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 10));
    const exitCode = service.stop();

    const replies = await Promise.all(answers);
    const statuses = replies.map((b) => parseAnswers(b)[0]?.status ?? JSON.stringify(b.toString('latin1').slice(0, 200)));
    expect(statuses).toEqual(new Array(COUNT).fill(200));
    replies.forEach((b, i) => expect(JSON.parse(parseAnswers(b)[0]!.body.toString()).results).toHaveLength(5 + (i % 4)));
    await streamClosed;
    const text = streamed.toString('latin1');
    expect(text).toContain('event: error\ndata: {"message":"the server is shutting down; reconnect with backoff"}\n\n');
    expect(text.endsWith('\r\n0\r\n\r\n')).toBe(true);
    expect(await exitCode).toBe(0);

    // The paid searches were counted before the exit: a new start reads them from the store.
    const again = await startService(SERVE());
    try {
      const againPaid = await portOf(again, /paid REST listening on http:\/\/[\d.]+:(\d+)/);
      const usage = (await (await fetch(`http://127.0.0.1:${againPaid}/usage`, { headers: { authorization: proKey } })).json()) as { credits_used: number };
      expect(usage.credits_used).toBeGreaterThanOrEqual(COUNT / 2);
    } finally {
      await again.stop();
    }
  });
});
