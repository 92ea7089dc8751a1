/**
 * The agent-protocol transports at the HTTP level, with raw requests over real sockets: plain
 * JSON-RPC 2.0 at /json-rpc (malformed JSON, unknown methods, oversized bodies, batches,
 * notifications; the server keeps serving), Streamable HTTP without the SDK client (JSON answers,
 * session ids, DELETE, requests without a session, session owners, session bounds), the HTTP+SSE
 * pair (a session ends with its stream), CORS and the Host check.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SESSION_LIMITS } from '../gateway/agent/sessions.js';
import { startGateway } from '../gateway/server.js';
import { INITIALIZE, postJson, raw, sseMessages } from './agent-support.js';
import { call, DAY, NOW, plansWith, startAccessFixture, type AccessFixture } from './support/access.js';

let fx: AccessFixture;
let devKey = '';

beforeAll(async () => {
  const roomy = { requestsPerMinute: 100_000, credits: 1_000_000 };
  fx = await startAccessFixture(plansWith({ keyless: roomy, free: roomy, dev: roomy, pro: roomy, enterprise: roomy }));
  devKey = fx.keys.create('dev', 'transport test', NOW - 10 * DAY).key;
});

afterAll(async () => {
  await fx?.close();
});

const url = (path: string) => fx.url('agent') + path;
const rpc = (body: unknown, headers: Record<string, string> = {}) => postJson(url('/json-rpc'), body, headers);
const toolCall = (id: unknown, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** The service still answers: a tool call over /json-rpc and /health. */
async function stillServing(): Promise<void> {
  const r = await rpc(toolCall(99, 'getStats'));
  expect(r.status).toBe(200);
  expect(r.body.result.structuredContent).toEqual((await call(fx.url('freeRest') + '/stats')).body);
  expect((await raw(url('/health'))).status).toBe(200);
}

describe('/json-rpc', () => {
  it('answers tools/list and tools/call without an initialize, with the id given', async () => {
    const list = await rpc({ jsonrpc: '2.0', id: 'a-1', method: 'tools/list' });
    expect(list.status).toBe(200);
    expect(list.body.id).toBe('a-1');
    expect(list.body.result.tools).toHaveLength(20);
    const stats = await rpc(toolCall(5, 'getStats'));
    expect(stats.body).toMatchObject({ jsonrpc: '2.0', id: 5, result: { structuredContent: { chains: 1, pools: 1, tokens: 2 } } });
    expect(stats.headers.get('x-api-plan')).toBe('keyless');
  });

  it('answers initialize and ping', async () => {
    const init = await rpc(INITIALIZE);
    expect(init.body.result).toMatchObject({ protocolVersion: '2025-06-18', serverInfo: { name: 'dexdata' }, capabilities: { tools: {} } });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' })).body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('malformed JSON: 400 with a parse error (-32700, id null)', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": ', 'not json at all', '']) {
      const r = await rpc(body);
      expect(r.status, body).toBe(400);
      expect(r.body, body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
    await stillServing();
  });

  it('unknown method: method not found (-32601) with the request id', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 42, method: 'tools/explode', params: {} });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ jsonrpc: '2.0', id: 42, error: { code: -32601 } });
    await stillServing();
  });

  it('invalid requests: 400 with invalid request (-32600)', async () => {
    const cases: unknown[] = [
      { id: 1, method: 'ping' }, // no jsonrpc
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0', id: { nested: true }, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [1, 2] },
      42,
      JSON.stringify('ping'),
      [],
    ];
    for (const body of cases) {
      const r = await rpc(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code, JSON.stringify(body)).toBe(-32600);
    }
    await stillServing();
  });

  it('invalid tools/call parameters: invalid params (-32602)', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } });
    expect(r.body).toMatchObject({ id: 3, error: { code: -32602 } });
    const unknownTool = await rpc(toolCall(4, 'getWeather'));
    expect(unknownTool.body).toMatchObject({ id: 4, error: { code: -32602, message: expect.stringContaining('Unknown tool "getWeather"') } });
  });

  it('an oversized body: 413 with a JSON-RPC error, and the server keeps serving', async () => {
    const big = JSON.stringify(toolCall(1, 'search', { query: 'x'.repeat(2 * 1024 * 1024) }));
    const r = await rpc(big);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringContaining('too large') } });
    // Streamed without a Content-Length too.
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 40; i++) c.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)));
        c.close();
      },
    });
    const streamed = await raw(url('/json-rpc'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: chunks, duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    await stillServing();
  });

  it('a batch: one reply per request in the order asked, none for notifications, errors in place', async () => {
    const r = await rpc([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      toolCall('two', 'getNetworks'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { foo: 'bar' },
      { jsonrpc: '2.0', id: 3, method: 'no/such/method' },
      toolCall(4, 'getPoolDetails', { network: 'ethereum', pool_address: '0x1' }),
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(5);
    expect(r.body.map((m: { id: unknown }) => m.id)).toEqual([1, 'two', null, 3, 4]);
    expect(r.body[0].result.tools).toHaveLength(20);
    expect(r.body[1].result.structuredContent.networks[0].id).toBe('ethereum');
    expect(r.body[2].error.code).toBe(-32600);
    expect(r.body[3].error.code).toBe(-32601);
    expect(r.body[4].result.isError).toBe(true);
    expect(r.body[4].result.content[0].text).toMatch(/No pool 0x1 on ethereum/);
  });

  it('a body of notifications only: 204 without a body; batches over 100 messages are refused', async () => {
    const n = await rpc([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(n.status).toBe(204);
    expect(n.text).toBe('');
    const single = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(single.status).toBe(204);
    const tooMany = await rpc(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe(-32600);
    await stillServing();
  });

  it('requests of different clients with the same id never meet', async () => {
    const queries = ['usdc', 'weth', 'usd', 'eth', 'wrapped', 'coin'];
    const replies = await Promise.all(queries.map((q) => rpc(toolCall(1, 'search', { query: q }))));
    for (const [i, r] of replies.entries()) {
      expect(r.body.id).toBe(1);
      const direct = (await call(`${fx.url('freeRest')}/search?query=${queries[i]}`)).body;
      expect(r.body.result.structuredContent.tokens).toEqual(direct.tokens);
    }
  });

  it('the key sets the plan; an unknown key is 401 with a JSON-RPC error', async () => {
    const caps = await rpc(toolCall(1, 'getCapabilities'), { authorization: devKey });
    expect(caps.body.result.structuredContent.plan.name).toBe('dev');
    expect(caps.headers.get('x-api-plan')).toBe('dev');
    const bad = await rpc(toolCall(1, 'getCapabilities'), { authorization: 'api_wrong' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, data: { error: 'invalid_api_key' } } });
  });

  it('wrong content type: 415; other methods: 405', async () => {
    const r = await raw(url('/json-rpc'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(toolCall(1, 'getStats')) });
    expect(r.status).toBe(415);
    expect(r.body.error.code).toBe(-32000);
    const get = await raw(url('/json-rpc'));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('/streamable-http without the SDK client', () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    postJson(url('/streamable-http'), body, { accept: 'application/json, text/event-stream', ...headers });

  it('a client accepting only JSON gets JSON answers for its whole session; DELETE ends it', async () => {
    const init = await postJson(url('/streamable-http'), INITIALIZE, { accept: 'application/json' });
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toMatch(/^application\/json/);
    const session = init.headers.get('mcp-session-id')!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(init.body.result.serverInfo.name).toBe('dexdata');
    const h = { accept: 'application/json', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    expect((await postJson(url('/streamable-http'), { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202);
    const stats = await postJson(url('/streamable-http'), toolCall(2, 'getStats'), h);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ id: 2, result: { structuredContent: { chains: 1 } } });
    const del = await raw(url('/streamable-http'), { method: 'DELETE', headers: h });
    expect(del.status).toBe(200);
    const after = await postJson(url('/streamable-http'), toolCall(3, 'getStats'), h);
    expect(after.status).toBe(404);
    expect(after.body.error.code).toBe(-32001);
  });

  it('an event-stream client gets its answers as SSE events', async () => {
    const init = await post(INITIALIZE);
    expect(init.headers.get('content-type')).toBe('text/event-stream');
    const [reply] = sseMessages(init.text);
    expect(reply.result.serverInfo.name).toBe('dexdata');
    const session = init.headers.get('mcp-session-id')!;
    const list = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': session });
    expect(sseMessages(list.text)[0].result.tools).toHaveLength(20);
  });

  it('requests without a session are answered on their own', async () => {
    const r = await post(toolCall(8, 'getNetworks'), { accept: 'application/json' });
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeNull();
    expect(r.body).toMatchObject({ id: 8, result: { structuredContent: { networks: [{ id: 'ethereum' }] } } });
  });

  it('malformed JSON, oversized bodies, unknown sessions, GET without a session and other methods are refused', async () => {
    const bad = await post('{oops');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(-32700);
    const big = await post(JSON.stringify(toolCall(1, 'search', { query: 'y'.repeat(1_100_000) })));
    expect(big.status).toBe(413);
    const unknown = await post(toolCall(1, 'getStats'), { 'mcp-session-id': '00000000-0000-0000-0000-000000000000' });
    expect(unknown.status).toBe(404);
    const get = await raw(url('/streamable-http'), { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    const put = await raw(url('/streamable-http'), { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
    await stillServing();
  });

  it('a session belongs to the key that opened it', async () => {
    const init = await post(INITIALIZE, { accept: 'application/json', authorization: devKey });
    const session = init.headers.get('mcp-session-id')!;
    const other = await post(toolCall(1, 'getStats'), { accept: 'application/json', 'mcp-session-id': session });
    expect(other.status).toBe(403);
    expect(other.body.error.data.error).toBe('session_owner');
    const same = await post(toolCall(1, 'getStats'), { accept: 'application/json', 'mcp-session-id': session, authorization: devKey });
    expect(same.status).toBe(200);
  });

  it('sessions are bounded per caller: beyond the limit the least recently used one is closed', async () => {
    const key = fx.keys.create('pro', 'many sessions', NOW - DAY).key;
    const open = async () => (await post(INITIALIZE, { accept: 'application/json', authorization: key })).headers.get('mcp-session-id')!;
    const first = await open();
    const second = await open();
    for (let i = 2; i < DEFAULT_SESSION_LIMITS.maxPerOwner; i++) await open();
    // Using the second keeps it; the next session takes the place of the first (least recently used).
    expect((await post(toolCall(1, 'getStats'), { accept: 'application/json', 'mcp-session-id': second, authorization: key })).status).toBe(200);
    await open();
    expect((await post(toolCall(1, 'getStats'), { accept: 'application/json', 'mcp-session-id': first, authorization: key })).status).toBe(404);
    expect((await post(toolCall(1, 'getStats'), { accept: 'application/json', 'mcp-session-id': second, authorization: key })).status).toBe(200);
  });
});

describe('/sse and /messages without the SDK client', () => {
  /** Opens GET /sse and reads events as they come. */
  async function openSse(headers: Record<string, string> = {}) {
    const abort = new AbortController();
    const r = await fetch(url('/sse'), { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    const reader = r.body!.getReader();
    let buffer = '';
    const next = async (event: string): Promise<string> => {
      for (;;) {
        const at = buffer.indexOf('\n\n');
        if (at >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const lines = block.split('\n');
          if (lines[0] === `event: ${event}`) return lines.slice(1).find((l) => l.startsWith('data: '))!.slice(6);
          continue;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += new TextDecoder().decode(value);
      }
    };
    const endpoint = await next('endpoint');
    return { endpoint, next, close: () => abort.abort() };
  }

  it('the endpoint event names /messages; POSTed messages are answered 202 and their replies arrive as events', async () => {
    const s = await openSse();
    expect(s.endpoint).toMatch(/^\/messages\?sessionId=[0-9a-f-]{36}$/);
    const accepted = await postJson(url(s.endpoint), INITIALIZE);
    expect(accepted.status).toBe(202);
    expect(JSON.parse(await s.next('message')).result.serverInfo.name).toBe('dexdata');
    await postJson(url(s.endpoint), toolCall(2, 'getNetworks'));
    expect(JSON.parse(await s.next('message'))).toMatchObject({ id: 2, result: { structuredContent: { networks: [{ id: 'ethereum' }] } } });
    // Malformed and invalid messages are refused at the POST; the stream stays.
    expect((await postJson(url(s.endpoint), '{bad')).status).toBe(400);
    expect((await postJson(url(s.endpoint), { hello: 'world' })).status).toBe(400);
    await postJson(url(s.endpoint), { jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(JSON.parse(await s.next('message'))).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    s.close();
  });

  it('a session ends when its client goes away: later POSTs get 404', async () => {
    const s = await openSse();
    expect((await postJson(url(s.endpoint), { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(202);
    await s.next('message');
    s.close();
    let status = 0;
    for (let i = 0; i < 50 && status !== 404; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await postJson(url(s.endpoint), { jsonrpc: '2.0', id: 2, method: 'ping' })).status;
    }
    expect(status).toBe(404);
    expect((await postJson(url('/messages?sessionId=nope'), { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(404);
  });

  it('a client that stops reading its stream is disconnected once too much waits for it; the server keeps serving', async () => {
    const socket = connect(Number(new URL(fx.url('agent')).port), '127.0.0.1');
    let received = '';
    const endpoint = await new Promise<string>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('data', (d) => {
        received += d.toString('latin1');
        const m = /data: (\/messages\?sessionId=[0-9a-f-]{36})/.exec(received);
        if (m !== null) resolve(m[1]!);
      });
      socket.write('GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
    });
    // From now on nothing is read: the socket buffers fill, then the session's queue.
    socket.pause();
    let status = 202;
    let posted = 0;
    while (status === 202 && posted < 2000) {
      status = (await postJson(url(endpoint), { jsonrpc: '2.0', id: posted, method: 'tools/list' })).status;
      posted++;
    }
    expect(status).toBe(404);
    // Each tools/list answer is tens of kilobytes: the session was dropped after some megabytes, not at once.
    expect(posted).toBeGreaterThan(50);
    socket.destroy();
    await stillServing();
  });

  it('a sessionId that cannot be read is a 400 naming the parameter, logged without a stack', async () => {
    const errors = vi.spyOn(console, 'error');
    try {
      for (const id of ['%ZZ', '%E0%A4%A', 'a'.repeat(513), '%41'.repeat(600)]) {
        const r = await postJson(url(`/messages?sessionId=${id}`), { jsonrpc: '2.0', id: 1, method: 'ping' });
        expect(r.status, id.slice(0, 20)).toBe(400);
        expect(r.body.error, id.slice(0, 20)).toMatchObject({ code: -32602, message: expect.stringMatching(/^invalid query param: sessionId /), data: { error: 'invalid_parameter', param: 'sessionId' } });
      }
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
    await stillServing();
  });

  it('POSTs of another key are refused', async () => {
    const s = await openSse({ authorization: devKey });
    const other = await postJson(url(s.endpoint), { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(other.status).toBe(403);
    s.close();
  });
});

describe('CORS and Host', () => {
  it('preflight requests are answered with the headers a browser client needs', async () => {
    for (const path of ['/streamable-http', '/sse', '/messages', '/json-rpc']) {
      const r = await raw(url(path), { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      expect(r.status, path).toBe(204);
      expect(r.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(r.headers.get('access-control-allow-headers'), path).toMatch(/Mcp-Session-Id/);
    }
    const answer = await rpc(toolCall(1, 'getStats'));
    expect(answer.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/);
  });

  /** Status of a /json-rpc POST to `base` sent with `host` as its Host header. */
  const withHost = (base: string, host: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${base}/json-rpc`, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify(toolCall(1, 'getStats')));
    });

  it('on a loopback address, a Host header naming another site is refused (DNS rebinding)', async () => {
    expect(await withHost(fx.url('agent'), 'evil.example')).toBe(403);
    expect(await withHost(fx.url('agent'), 'evil.example:8084')).toBe(403);
    for (const local of ['localhost:8084', '127.0.0.1', '[::1]:8084']) expect(await withHost(fx.url('agent'), local), local).toBe(200);
    await stillServing();
  });

  /** Status and body of one raw request to `base` with `host` as its Host header, as the server parsed it. */
  const rawWithHost = (base: string, method: string, path: string, host: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      let text = '';
      const body = method === 'POST' ? JSON.stringify(toolCall(1, 'getStats')) : '';
      socket.on('error', reject);
      socket.on('data', (d) => {
        text += d.toString('latin1');
        // Enough once the head and the start of the body are in (streams do not end by themselves).
        const head = text.indexOf('\r\n\r\n');
        if (head >= 0 && text.length > head + 4) {
          socket.destroy();
          resolve({ status: Number(text.slice(9, 12)), body: text.slice(head + 4) });
        }
      });
      socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    });

  it('a Host that only begins like a loopback address or name is refused on every route, the /api subset included', async () => {
    const base = fx.url('agent');
    const routes: [string, string][] = [
      ['POST', '/json-rpc'],
      ['POST', '/streamable-http'],
      ['GET', '/sse'],
      ['GET', '/api/networks'],
    ];
    const foreign = ['127.0.0.1.evil.example', '127.0.0.1.evil.example:8084', '127.1.2.3.nip.io', 'localhost.evil.example', '[::1].evil.example', '127.0.0.1:8084:1', '127.0.0.1:99999', '127.0.0.1@evil.example', 'evil.example'];
    for (const [method, path] of routes) {
      for (const host of foreign) {
        const r = await rawWithHost(base, method, path, host);
        expect(r.status, `${method} ${path} Host: ${host}`).toBe(403);
        expect(r.body, `${method} ${path} Host: ${host}`).toContain('forbidden_host');
      }
      for (const host of ['127.0.0.1', '127.0.0.2:8084', 'localhost', 'LOCALHOST:1', '[::1]', '[::1]:8084', '[::ffff:127.0.0.1]:80']) {
        expect((await rawWithHost(base, method, path, host)).status, `${method} ${path} Host: ${host}`).toBe(200);
      }
    }
    const api = await rawWithHost(base, 'GET', '/api/networks', '127.0.0.1.evil.example');
    expect(JSON.parse(api.body.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, ''))).toMatchObject({ error: 'forbidden_host', message: expect.stringContaining('Host header') });
    await stillServing();
  });

  it('the public names configured for the agent host are accepted', async () => {
    const plans = plansWith({});
    const gateway = await startGateway(fx.context, { host: '127.0.0.1', port: 0, access: { plans, agent: { port: 0, hosts: ['https://mcp.example.com'] } } });
    try {
      const base = `http://127.0.0.1:${gateway.ports.agent}`;
      expect(await withHost(base, 'mcp.example.com')).toBe(200);
      expect(await withHost(base, 'mcp.example.com:443')).toBe(200);
      expect(await withHost(base, 'other.example.com')).toBe(403);
    } finally {
      await gateway.close();
    }
  });
});
