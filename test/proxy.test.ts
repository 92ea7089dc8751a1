/**
 * The service behind a real nginx (Debian's package, installed here when missing) configured as the
 * README shows: REST and agent hosts proxied, SSE with `proxy_buffering off`, HTTP/1.1 upstream,
 * X-Forwarded-For set; the service trusts the proxy's address only. Clients reach nginx from
 * distinct loopback addresses (127.0.0.2, 127.0.0.3, ...), so each is a different client to it.
 */
import { execFileSync, execSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startService, type RunningService } from './support/service.js';
import { openRaw, sleep, type RawStream } from './support/streams.js';

/** nginx's binary, installed with apt-get when missing; null (and the reason printed) when it cannot be. */
function nginxBinary(): string | null {
  const found = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (found !== undefined) return found;
  try {
    execSync('apt-get install -y nginx || (apt-get update && apt-get install -y nginx)', { stdio: 'ignore', timeout: 300_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch (err) {
    process.stdout.write(`proxy tests skipped: nginx is not installed and apt-get could not install it (${err instanceof Error ? err.message.split('\n')[0] : String(err)})\n`);
    return null;
  }
  return ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p)) ?? null;
}

const NGINX = nginxBinary();
const suite = NGINX === null ? describe.skip : describe;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A GET from a chosen local address (the client nginx sees), with the status and body. */
function getFrom(url: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a stream from a chosen local address; resolves with its status once the head is in (the body, for a refusal). */
function streamFrom(url: string, localAddress: string): Promise<{ status: number; body: Promise<string>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      const ended = new Promise<string>((r) => {
        res.on('data', (c: string) => (body += body.length < 10_000 ? c : ''));
        res.on('end', () => r(body));
        res.on('close', () => r(body));
      });
      resolve({ status: res.statusCode ?? 0, body: ended, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}
const opened: { close: () => void }[] = [];

let dir = '';
let service: RunningService | null = null;
let nginx: ChildProcess | null = null;
const streams: RawStream[] = [];
const via = { rest: '', stream: '', agent: '', rest10: '', stream10: '' };
const direct = { rest: '', stream: '' };
let key = '';

/** One proxied server block of the README's nginx configuration: HTTP/1.1 upstream, X-Forwarded-For set, and `extra`. */
function server(listen: number, upstream: number, extra: readonly string[], http11 = true): string {
  const lines = [`proxy_pass http://127.0.0.1:${upstream};`, ...(http11 ? ['proxy_http_version 1.1;'] : []), 'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;', ...extra];
  return `  server {\n    listen 127.0.0.1:${listen};\n    location / {\n${lines.map((l) => `      ${l}\n`).join('')}    }\n  }`;
}

/**
 * The nginx configuration of the README, with this test's ports and paths, and the same REST and SSE
 * blocks at nginx's default upstream protocol (HTTP/1.0), which the service answers with its HTTP front.
 */
function nginxConfig(prefix: string, ports: { rest: number; stream: number; agent: number; rest10: number; stream10: number }, upstream: { rest: number; stream: number; agent: number }): string {
  return `
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;

  # REST (free host; the paid host is the same with its own port)
${server(ports.rest, upstream.rest, ['proxy_set_header Host $host;'])}
  # SSE streams: events go out as they come
${server(ports.stream, upstream.stream, ['proxy_set_header Connection "";', 'proxy_buffering off;', 'proxy_read_timeout 1h;'])}
  # The agent host (MCP and the /api subset)
${server(ports.agent, upstream.agent, ['proxy_set_header Host $host;', 'proxy_set_header Connection "";', 'proxy_buffering off;'])}
  # REST and SSE at nginx's default upstream settings (HTTP/1.0)
${server(ports.rest10, upstream.rest, [], false)}
${server(ports.stream10, upstream.stream, ['proxy_buffering off;'], false)}
}
`;
}

beforeAll(async () => {
  if (NGINX === null) return;
  dir = mkdtempSync(join(tmpdir(), 'dexdata-proxy-'));
  key = /key: (api_\w+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'free', '--data-dir', join(dir, 'data')], { encoding: 'utf8' }))![1]!;
  // The HTTP front on every port: nginx's default upstream protocol is HTTP/1.0, which uWS alone leaves unanswered.
  service = await startService(['--data-dir', join(dir, 'data'), '--pools', '200', '--swaps-per-second', '60', '--backfill-days', '0.05', '--trusted-proxies', '127.0.0.1', '--front', 'all']);
  const port = (re: RegExp) => Number(re.exec(service!.output())![1]);
  await service.waitFor(/caught up/);
  await service.waitFor(/agent host listening/);
  const upstream = {
    rest: service.port,
    stream: port(/streams listening on http:\/\/[\d.]+:(\d+) \(free\)/),
    agent: port(/agent host listening on http:\/\/[\d.]+:(\d+)/),
  };
  direct.rest = service.url;
  direct.stream = `http://127.0.0.1:${upstream.stream}`;
  const ports = { rest: await freePort(), stream: await freePort(), agent: await freePort(), rest10: await freePort(), stream10: await freePort() };
  const prefix = join(dir, 'nginx');
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, 'nginx.conf'), nginxConfig(prefix, ports, upstream));
  nginx = spawn(NGINX!, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  via.rest = `http://127.0.0.1:${ports.rest}`;
  via.stream = `http://127.0.0.1:${ports.stream}`;
  via.agent = `http://127.0.0.1:${ports.agent}`;
  via.rest10 = `http://127.0.0.1:${ports.rest10}`;
  via.stream10 = `http://127.0.0.1:${ports.stream10}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await getFrom(`${via.rest}/health`, '127.0.0.1')).status === 200) break;
    } catch {
      // nginx not listening yet
    }
    await sleep(50);
  }
}, 400_000);

afterAll(async () => {
  for (const s of streams) s.close();
  for (const s of opened) s.close();
  if (nginx !== null) {
    nginx.kill('SIGQUIT');
    await new Promise((r) => (nginx!.exitCode !== null ? r(null) : nginx!.once('exit', r)));
  }
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

suite('behind nginx', () => {
  it('answers with the same statuses and bodies as directly', async () => {
    for (const path of ['/networks/nope/dexes', '/nope', '/networks/ethereum/dexes/uniswap_v2/pools', '/stats', `/networks/ethereum/pools/0x${'0'.repeat(40)}`]) {
      const a = await getFrom(`${direct.rest}${path}`, '127.0.0.20');
      const b = await getFrom(`${via.rest}${path}`, '127.0.0.21');
      expect(b.status, path).toBe(a.status);
      expect(JSON.parse(b.body), path).toEqual(JSON.parse(a.body));
      expect(b.headers['x-api-plan'], path).toBe('keyless');
    }
    const api = await getFrom(`${via.agent}/api/networks`, '127.0.0.22');
    expect(api.status).toBe(200);
    expect(api.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.stringify(JSON.parse(api.body))).toContain('ethereum');
  });

  it('applies the keyless per-minute limit to the forwarded client, and ignores forwarding headers from untrusted peers', async () => {
    // 15 a minute for keyless callers: client A uses its 15, then is refused; client B is not affected.
    for (let i = 0; i < 15; i++) expect((await getFrom(`${via.rest}/networks?i=${i}`, '127.0.0.2')).status, `A ${i}`).toBe(200);
    const refused = await getFrom(`${via.rest}/networks`, '127.0.0.2');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error).toBe('rate_limited');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect((await getFrom(`${via.rest}/networks`, '127.0.0.3')).status).toBe(200);
    // A client claiming to be A through nginx is still itself: nginx appends the address it saw.
    expect((await getFrom(`${via.rest}/networks`, '127.0.0.4', { 'x-forwarded-for': '127.0.0.2' })).status).toBe(200);
    // Directly, from a peer that is not a trusted proxy, X-Forwarded-For is not read: each request
    // naming a new address still counts against the peer.
    for (let i = 0; i < 15; i++) expect((await getFrom(`${direct.rest}/stats`, '127.0.0.5', { 'x-forwarded-for': `198.51.100.${i}`, forwarded: `for=198.51.100.${i}` })).status, `direct ${i}`).toBe(200);
    expect((await getFrom(`${direct.rest}/stats`, '127.0.0.5', { 'x-forwarded-for': '198.51.100.200' })).status).toBe(429);
  });

  it('caps keyless streams per forwarded client', async () => {
    // A showcase token (keyless callers may stream its price): the first a keyless caller may open.
    const tokens = JSON.parse((await getFrom(`${direct.rest}/networks/ethereum/tokens/search?order_by=liquidity_usd&limit=10`, '127.0.0.40')).body) as { results: { id: string }[] };
    let url = '';
    for (const t of tokens.results) {
      const s = await streamFrom(`${via.stream}/sse/prices?chain=ethereum&address=${t.id}`, '127.0.0.41');
      s.close();
      if (s.status === 200) {
        url = `${via.stream}/sse/prices?chain=ethereum&address=${t.id}`;
        break;
      }
    }
    expect(url).not.toBe('');
    await sleep(200); // the probe's stream is released
    for (let i = 0; i < 10; i++) {
      const s = await streamFrom(url, '127.0.0.6');
      opened.push(s);
      expect(s.status, `stream ${i}`).toBe(200);
    }
    const refused = await streamFrom(url, '127.0.0.6');
    expect(refused.status).toBe(429);
    expect(JSON.parse(await refused.body).message).toMatch(/^Concurrent stream limit reached/);
    const other = await streamFrom(url, '127.0.0.7');
    opened.push(other);
    expect(other.status).toBe(200);
  });

  it('streams SSE events through nginx as they come, in step with a direct stream', async () => {
    const top = JSON.parse((await getFrom(`${direct.rest}/networks/ethereum/pools/search?order_by=txns_24h&limit=1`, '127.0.0.30')).body) as { results: { tokens: { id: string }[] }[] };
    const token = top.results[0]!.tokens[0]!.id;
    const path = `/sse/prices?chain=ethereum&address=${token}`;
    const d = await openRaw(`${direct.stream}${path}`, { key });
    const p = await openRaw(`${via.stream}${path}`, { key });
    streams.push(d, p);
    expect(p.status).toBe(200);
    expect(p.headers['content-type']).toMatch(/^text\/event-stream/);
    // Arrival time of each event id on each stream, polled every 5 ms.
    const seen = [new Map<string, number>(), new Map<string, number>()];
    const started = performance.now();
    while (performance.now() - started < 60_000) {
      [d, p].forEach((s, i) => {
        for (const f of s.frames) if (f.id !== undefined && !seen[i]!.has(f.id)) seen[i]!.set(f.id, performance.now());
      });
      const common = [...seen[0]!.keys()].filter((id) => seen[1]!.has(id));
      if (common.length >= 3) break;
      await sleep(5);
    }
    const common = [...seen[0]!.keys()].filter((id) => seen[1]!.has(id));
    expect(common.length).toBeGreaterThanOrEqual(3);
    // Each event reaches the client through nginx within a moment of the direct one (not held in a buffer).
    for (const id of common) expect(Math.abs(seen[1]!.get(id)! - seen[0]!.get(id)!), id).toBeLessThan(500);
    // Same event, same bytes.
    const first = common[0]!;
    expect(p.frames.find((f) => f.id === first)!.data).toBe(d.frames.find((f) => f.id === first)!.data);
  }, 90_000);

  it('works behind nginx at its default upstream settings (HTTP/1.0): same answers, and SSE events as they come', async () => {
    for (const path of ['/networks/nope/dexes', '/stats', `/networks/ethereum/pools/0x${'0'.repeat(40)}`]) {
      const a = await getFrom(`${direct.rest}${path}`, '127.0.0.40');
      const b = await getFrom(`${via.rest10}${path}`, '127.0.0.41');
      expect(b.status, path).toBe(a.status);
      expect(JSON.parse(b.body), path).toEqual(JSON.parse(a.body));
    }
    const top = JSON.parse((await getFrom(`${direct.rest}/networks/ethereum/pools/search?order_by=txns_24h&limit=1`, '127.0.0.42')).body) as { results: { tokens: { id: string }[] }[] };
    const s = await openRaw(`${via.stream10}/sse/prices?chain=ethereum&address=${top.results[0]!.tokens[0]!.id}`, { key });
    streams.push(s);
    expect(s.status).toBe(200);
    const started = performance.now();
    while (performance.now() - started < 30_000 && !s.frames.some((f) => f.id !== undefined)) await sleep(10);
    expect(s.frames.some((f) => f.id !== undefined && f.data.includes('"price"'))).toBe(true);
  }, 60_000);
});
