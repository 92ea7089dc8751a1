/**
 * The HTTP front (gateway/edge) over raw sockets on every host role: what uWS alone leaves silent or
 * drops is answered with a status and a JSON `{error, message}` body, then the connection closes
 * (RFC 9112); HTTP/1.0 is served; pipelined requests behind an answer that waits on the shard
 * threads are all answered, in order.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plansWith, startAccessFixture } from './support/access.js';
import { parseAnswers, rawExchange, ROLES, startAllHosts, type AllHosts } from './support/all-hosts.js';

let hosts: AllHosts;

beforeAll(async () => {
  hosts = await startAllHosts({ front: 'all' });
});

afterAll(async () => {
  await hosts?.close();
});

const HEALTH = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';

function expectJsonError(bytes: Buffer, status: number, code: string): void {
  const [a, ...rest] = parseAnswers(bytes);
  expect(a?.status).toBe(status);
  expect(a!.headers.get('content-type')).toBe('application/json');
  expect(a!.headers.get('connection')).toBe('close');
  const body = JSON.parse(a!.body.toString('utf8')) as { error: string; message: string };
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(rest).toEqual([]);
}

describe.each(ROLES)('on the %s host', (role) => {
  it('answers HTTP/1.0 without a Host, then closes', async () => {
    const r = await rawExchange(hosts.port(role), 'GET /health HTTP/1.0\r\n\r\n');
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(1_000);
    const [a] = parseAnswers(r.bytes);
    expect(a?.status).toBe(200);
    expect(JSON.parse(a!.body.toString()).status).toBe('ok');
  });

  it('answers HTTP/1.0 with a Host and Connection: keep-alive, then closes', async () => {
    const r = await rawExchange(hosts.port(role), 'GET /health HTTP/1.0\r\nHost: example.com\r\nConnection: keep-alive\r\n\r\n');
    expect(r.closed).toBe(true);
    expect(parseAnswers(r.bytes).map((a) => a.status)).toEqual([200]);
  });

  it.each([
    ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n', 400, 'bad_request'],
    ['two Host headers', 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400, 'bad_request'],
    ['49 header lines', `GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 48 }, (_, i) => `X-F${i}: v\r\n`).join('')}\r\n`, 431, 'header_fields_too_large'],
    ['a head over 16 KiB', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431, 'header_fields_too_large'],
    ['an unknown method', 'BREW /health HTTP/1.1\r\nHost: x\r\n\r\n', 501, 'not_implemented'],
    ['conflicting Content-Length', 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde', 400, 'bad_request'],
    ['Content-Length and Transfer-Encoding', 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
    ['a bad chunk size', 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n', 400, 'bad_request'],
    ['an unknown transfer coding', 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n', 501, 'not_implemented'],
    ['HTTP/2.0 in the request line', 'GET /health HTTP/2.0\r\nHost: x\r\n\r\n', 505, 'http_version_not_supported'],
    ['bare LF line ends', 'GET /health HTTP/1.1\nHost: x\n\n', 400, 'bad_request'],
    ['a space before the colon', 'GET /health HTTP/1.1\r\nHost : x\r\n\r\n', 400, 'bad_request'],
    ['garbage bytes', Buffer.from([0x00, 0x16, 0x03, 0x01, 0xff, 0x0d, 0x0a, 0x0d, 0x0a]), 400, 'bad_request'],
  ] as const)('answers %s with a status and closes', async (_name, request, status, code) => {
    const r = await rawExchange(hosts.port(role), request);
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(1_000);
    expectJsonError(r.bytes, status, code);
  });

  it('answers a head over 16 KiB sent in pieces with 431 before it ends', async () => {
    const r = await rawExchange(hosts.port(role), `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}`);
    expect(r.closed).toBe(true);
    expectJsonError(r.bytes, 431, 'header_fields_too_large');
  });

  it('answers a head cut short by the client closing with 400', async () => {
    const r = await rawExchange(hosts.port(role), 'GET /health HTTP/1.1\r\nHost: x\r\n', { halfClose: true });
    expect(r.closed).toBe(true);
    expectJsonError(r.bytes, 400, 'bad_request');
  });

  it('answers the requests before a malformed one first, then the error', async () => {
    const r = await rawExchange(hosts.port(role), `${HEALTH}${HEALTH}GET /health HTTP/1.1\r\n\r\n`);
    expect(r.closed).toBe(true);
    expect(parseAnswers(r.bytes).map((a) => a.status)).toEqual([200, 200, 400]);
  });

  it('answers HEAD without a body and the next request intact', async () => {
    const r = await rawExchange(hosts.port(role), `HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n${HEALTH}`, { until: (b) => parseAnswers(b, (i) => i === 0).length === 2 });
    const answers = parseAnswers(r.bytes, (i) => i === 0);
    expect(answers).toHaveLength(2);
    expect(answers[1]!.status).toBe(200);
    expect(JSON.parse(answers[1]!.body.toString()).status).toBe('ok');
  });
});

describe('pipelining', () => {
  it.each([
    ['freeRest', ''],
    ['paidRest', 'pro'],
  ] as const)('answers every request behind an uncached pool search on the %s host, in order', async (role, plan) => {
    const auth = plan === '' ? '' : `Authorization: ${hosts.proKey}\r\n`;
    const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`;
    const search = (n: number) => get(`/networks/ethereum/pools/search?limit=${n}&order_by=volume_usd_24h&x=${Math.random()}`);
    const r = await rawExchange(hosts.port(role), get('/health') + search(7) + get('/health') + search(3) + get('/networks'), {
      until: (b) => parseAnswers(b).length === 5,
    });
    const answers = parseAnswers(r.bytes);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(JSON.parse(answers[1]!.body.toString()).results).toHaveLength(7);
    expect(JSON.parse(answers[2]!.body.toString()).status).toBe('ok');
    expect(JSON.parse(answers[3]!.body.toString()).results).toHaveLength(3);
    expect(Array.isArray(JSON.parse(answers[4]!.body.toString()).data ?? JSON.parse(answers[4]!.body.toString()))).toBe(true);
  });

  it('answers pipelined requests ending with Connection: close, then closes', async () => {
    const r = await rawExchange(
      hosts.port('freeRest'),
      `${HEALTH}GET /pools/search?limit=2&x=${Math.random()} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n${HEALTH}`,
    );
    expect(r.closed).toBe(true);
    const answers = parseAnswers(r.bytes);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(JSON.parse(answers[1]!.body.toString()).results).toHaveLength(2);
  });

  it('answers a search whose client closed its sending side after the request', async () => {
    const r = await rawExchange(hosts.port('freeRest'), `GET /pools/search?limit=4&x=${Math.random()} HTTP/1.1\r\nHost: x\r\n\r\n`, { halfClose: true });
    expect(r.closed).toBe(true);
    const answers = parseAnswers(r.bytes);
    expect(answers.map((a) => a.status)).toEqual([200]);
    expect(JSON.parse(answers[0]!.body.toString()).results).toHaveLength(4);
  });
});

describe('HTTP/1.0 streams', () => {
  it('sends a stream to an HTTP/1.0 client without the chunk framing', async () => {
    const token = hosts.tokens[0]!;
    const r = await rawExchange(hosts.port('paidStream'), `GET /sse/prices?chain=${token.chain}&address=${token.address} HTTP/1.0\r\nAuthorization: ${hosts.proKey}\r\n\r\n`, {
      waitMs: 5_000,
      until: (b) => b.includes('\n\n', b.indexOf('\r\n\r\n') + 4),
    });
    const text = r.bytes.toString('latin1');
    const head = text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase();
    expect(head).toMatch(/^http\/1\.1 200/);
    expect(head).toContain('content-type: text/event-stream');
    expect(head).not.toContain('transfer-encoding');
    // The body is the SSE text itself: no chunk-size line before it.
    expect(text.slice(text.indexOf('\r\n\r\n') + 4)).toMatch(/^retry: \d+\n\n/);
  });
});

describe('the client address behind the front', () => {
  it('counts keyless callers by their own address, not the front’s', async () => {
    const fx = await startAccessFixture(plansWith({ keyless: { requestsPerMinute: 2 } }));
    try {
      const port = fx.gateway.ports.freeRest!;
      const statusFrom = async (localAddress: string): Promise<number> => {
        const r = await new Promise<Buffer>((resolve) => {
          const chunks: Buffer[] = [];
          const s = connect({ port, host: '127.0.0.1', localAddress }, () => s.write('GET /networks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
          s.on('data', (b: Buffer) => chunks.push(b));
          s.on('close', () => resolve(Buffer.concat(chunks)));
        });
        return parseAnswers(r)[0]!.status;
      };
      // 127.0.0.2 uses up its two requests a minute; 127.0.0.3 is another caller with its own.
      expect([await statusFrom('127.0.0.2'), await statusFrom('127.0.0.2'), await statusFrom('127.0.0.2')]).toEqual([200, 200, 429]);
      expect(await statusFrom('127.0.0.3')).toBe(200);
    } finally {
      await fx.close();
    }
  });
});
