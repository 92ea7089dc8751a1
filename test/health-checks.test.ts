/**
 * Load balancers' health checks: HEAD /health and OPTIONS /health answer as GET /health does, on
 * every REST host, with uWS on the port and behind the HTTP front; a HEAD answer (any path) has no
 * body, so the next answer on a kept-alive connection is read whole. Raw sockets, one connection
 * per host carrying the requests pipelined.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FrontMode } from '../gateway/server.js';
import { plansWith, startAccessFixture, type AccessFixture } from './support/access.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Splits what a connection received into answers, reading a body only after a request that can
 * have one (not HEAD), by its Content-Length; null while the last answer is incomplete.
 */
function splitAnswers(data: Buffer, methods: readonly string[]): RawAnswer[] | null {
  const out: RawAnswer[] = [];
  let at = 0;
  for (const method of methods) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) return null;
    const lines = data.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!)?.[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const length = method === 'HEAD' ? 0 : Number(headers['content-length']);
    if (data.length < end + 4 + length) return null;
    out.push({ status, headers, body: data.subarray(end + 4, end + 4 + length).toString('utf8') });
    at = end + 4 + length;
  }
  // Nothing beyond the answers asked for: a HEAD answer that carried a body would leave bytes over.
  if (at !== data.length) throw new Error(`bytes beyond the answers: ${JSON.stringify(data.subarray(at).toString('latin1'))}`);
  return out;
}

/** Sends `requests` (method and path) pipelined on one connection; resolves with their answers. */
function pipelined(port: number, requests: readonly (readonly [method: string, path: string])[]): Promise<RawAnswer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answers after 5 s: ${JSON.stringify(data.toString('latin1'))}`));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      try {
        const answers = splitAnswers(data, requests.map(([m]) => m));
        if (answers === null) return;
        // Wait a moment for stray bytes (a body after a HEAD answer) before deciding.
        setTimeout(() => {
          clearTimeout(timer);
          socket.destroy();
          try {
            resolve(splitAnswers(data, requests.map(([m]) => m))!);
          } catch (err) {
            reject(err as Error);
          }
        }, 100);
      } catch (err) {
        clearTimeout(timer);
        socket.destroy();
        reject(err as Error);
      }
    });
    socket.on('error', reject);
    socket.write(requests.map(([m, p]) => `${m} ${p} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`).join(''));
  });
}

describe.each(['off', 'on'] as FrontMode[])('health checks, HTTP front %s', (front) => {
  let fx: AccessFixture;
  beforeAll(async () => {
    fx = await startAccessFixture(plansWith({}), { front });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it.each(['freeRest', 'paidRest', 'agent'] as const)('HEAD and OPTIONS /health answer as GET /health on the %s host; HEAD without a body', async (role) => {
    const answers = await pipelined(fx.gateway.ports[role]!, [
      ['GET', '/health'],
      ['HEAD', '/health'],
      ['OPTIONS', '/health'],
      ['HEAD', '/nope'],
      ['GET', '/health'],
    ]);
    const [get, head, options, headMissing, after] = answers as [RawAnswer, RawAnswer, RawAnswer, RawAnswer, RawAnswer];
    expect(get.status).toBe(200);
    expect(JSON.parse(get.body)).toEqual({ status: 'ok' });
    for (const a of [head, options]) {
      expect(a.status).toBe(200);
      expect(a.headers['content-type']).toBe(get.headers['content-type']);
      expect(a.headers['x-api-plan']).toBe(get.headers['x-api-plan']);
    }
    expect(options.body).toBe(get.body);
    expect(head.headers['content-length']).toBe('0');
    expect(headMissing.status).toBe(404);
    // The connection still reads whole answers after the HEAD answers.
    expect(after.status).toBe(200);
    expect(after.body).toBe(get.body);
  });

  it('other methods on /health and elsewhere stay 404 JSON naming the method', async () => {
    const [post, del] = (await pipelined(fx.gateway.port, [
      ['POST', '/health'],
      ['DELETE', '/networks'],
    ])) as [RawAnswer, RawAnswer];
    expect(post.status).toBe(404);
    expect(JSON.parse(post.body)).toMatchObject({ error: 'not_found', message: expect.stringContaining('POST /health') });
    expect(del.status).toBe(404);
    expect(JSON.parse(del.body)).toMatchObject({ error: 'not_found', message: expect.stringContaining('DELETE /networks') });
  });
});
