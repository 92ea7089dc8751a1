/**
 * Generated HTTP traffic over raw sockets against every host role of the real gateway: well-formed
 * requests on every route mixed with malformed ones (HTTP/1.0, a missing Host, oversize heads, too
 * many fields, bad body framing, unknown methods and versions, garbage bytes, heads cut short),
 * pipelined several to a connection. Every request must be answered with a status within 1 s, in
 * order, and where RFC 9112 says the connection ends (an error, HTTP/1.0, Connection: close) the
 * server must close it within that second; no answer is a server fault (5xx other than 501 and 505,
 * which RFC 9110 gives to a method or version the server does not implement); every error body is
 * JSON with `error` and `message`. The generator is seeded: a failure names the connection that
 * reproduces it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListenerRole } from '../engine/config.js';
import { parseAnswers, ROLES, startAllHosts, type AllHosts, type ParsedAnswer } from './support/all-hosts.js';
import { rng, type Rng } from './support/rng.js';

const SEED = 20_261_125;
/** Requests written in all (each request of a pipelined connection counts). */
const REQUESTS = 20_000;
const CONCURRENCY = 48;
/** Every answer, and every close RFC 9112 calls for, within this long of the write. */
const ANSWER_WITHIN_MS = 1_000;

let hosts: AllHosts;

beforeAll(async () => {
  hosts = await startAllHosts({ front: 'all' });
});

afterAll(async () => {
  await hosts?.close();
});


/** One request on a connection and what the server must do with it. */
interface Part {
  bytes: Buffer;
  /** Malformed: answered with an error status, then the connection closes. */
  bad: boolean;
  /** Answered, then the connection closes (HTTP/1.0, Connection: close). */
  closes: boolean;
  /** May open a stream: the answer counts once its head arrives (a stream is always last). */
  stream: boolean;
  /** HEAD: the answer has no body. */
  head: boolean;
  label: string;
}

const NASTY = ['', '0', '-1', '1e309', 'NaN', '%', '%zz', '%00', '%FF%FE', 'a'.repeat(300), '\u00e9%20x', '[]', 'true', '1,2', '-1h', '2026-13-45'];

function restTarget(r: Rng): string {
  const pool = r.pick(hosts.pools);
  const token = r.pick(hosts.tokens);
  const chain = r.next() < 0.9 ? pool.chain : r.pick(['nope', 'ETHEREUM', '%41']);
  const q = (pairs: [string, string][]) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`);
  const maybe = (v: string) => (r.next() < 0.15 ? r.pick(NASTY) : v);
  return r.pick([
    () => '/health',
    () => '/networks',
    () => '/stats',
    () => `/networks/${chain}/dexes${q([['page', maybe('1')]])}`,
    () => `/networks/${chain}/pools/search${q([['limit', maybe(String(1 + r.int(50)))], ['order_by', maybe('volume_usd_24h')], ['x', String(r.int(1e9))]])}`,
    () => `/pools/search${q([['limit', maybe('5')], ['chains', maybe(chain)]])}`,
    () => `/networks/${chain}/tokens/search${q([['limit', maybe('10')]])}`,
    () => `/search${q([['query', maybe(r.pick(['us', 'weth', '0x', 'a']))]])}`,
    () => `/networks/${chain}/pools/${pool.address}${q([['inversed', maybe('false')]])}`,
    () => `/networks/${chain}/pools/${pool.address}/ohlcv${q([['start', maybe('-6h')], ['interval', maybe(r.pick(['1m', '1h']))]])}`,
    () => `/networks/${chain}/pools/${pool.address}/transactions${q([['limit', maybe('10')]])}`,
    () => `/networks/${token.chain}/tokens/${token.address}`,
    () => `/networks/${token.chain}/multi/prices${q([['tokens', maybe(token.address)]])}`,
    () => `/networks/${chain}/${encodeURIComponent(r.pick(NASTY))}`,
    () => `/${encodeURIComponent(r.pick(NASTY))}`,
  ])();
}

/** A well-formed request for `role`: [method, target, body, may open a stream]. */
function wellFormed(r: Rng, role: ListenerRole): [string, string, string, boolean] {
  const token = r.pick(hosts.tokens);
  switch (role) {
    case 'freeRest':
    case 'paidRest':
      return ['GET', restTarget(r), '', false];
    case 'agent':
      return r.pick<() => [string, string, string, boolean]>([
        () => ['GET', '/health', '', false],
        () => ['GET', `/api${restTarget(r).replace('/networks/ethereum', '/networks/eth')}`, '', false],
        () => ['POST', '/json-rpc', JSON.stringify({ jsonrpc: '2.0', id: r.int(1000), method: 'tools/call', params: { name: r.pick(['getNetworks', 'getStats', 'search', 'nope']), arguments: { query: 'us' } } }), false],
        () => ['POST', '/json-rpc', r.pick(['{', '[]', '{"jsonrpc":"2.0"}', 'null', '\u0000']), false],
        () => ['GET', '/json-rpc', '', false],
        () => ['POST', `/messages?sessionId=${r.pick(['nope', 'x'.repeat(20)])}`, '{}', false],
        () => ['DELETE', '/streamable-http', '', false],
      ])();
    case 'freeStream':
    case 'paidStream': {
      const params = `chain=${r.next() < 0.9 ? token.chain : encodeURIComponent(r.pick(NASTY))}&address=${r.next() < 0.9 ? token.address : encodeURIComponent(r.pick(NASTY))}`;
      return r.pick<() => [string, string, string, boolean]>([
        () => ['GET', '/health', '', false],
        () => ['GET', `/sse/prices?${params}&limit=1`, '', true],
        () => ['GET', `/sse/reserves?method=${r.pick(['pool_reserves', 'token_reserves', 'nope'])}&${params}`, '', true],
        () => ['POST', '/sse/prices', JSON.stringify([{ chain: token.chain, address: r.next() < 0.8 ? token.address : 'x', method: 'token_price' }]), true],
        () => ['POST', '/sse/reserves', r.pick(['[', '{}', '[]', 'null']), true],
        () => ['GET', `/sse/${encodeURIComponent(r.pick(NASTY))}`, '', false],
      ])();
    }
  }
}

function request(method: string, target: string, headers: string[], body: string, version = 'HTTP/1.1'): Buffer {
  return Buffer.from(`${method} ${target} ${version}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`, 'latin1');
}

/** Each kind of malformed request, with what the front answers it. */
const MALFORMED: readonly { label: string; make: (r: Rng, auth: string[]) => Buffer }[] = [
  { label: 'missing Host', make: (_r, auth) => request('GET', '/health', auth, '') },
  { label: 'two Hosts', make: (_r, auth) => request('GET', '/health', ['Host: a', 'Host: b', ...auth], '') },
  { label: '49+ fields', make: (r, auth) => request('GET', '/health', ['Host: x', ...auth, ...Array.from({ length: 48 + r.int(30) }, (_, i) => `X-F${i}: ${i}`)], '') },
  { label: 'head over 16 KiB', make: (r, auth) => request('GET', '/health', ['Host: x', ...auth, `X-Big: ${'b'.repeat(16 * 1024 + r.int(8192))}`], '') },
  { label: 'unknown method', make: (r, auth) => request(r.pick(['BREW', 'FETCH', 'get', 'PROPFIND']), '/health', ['Host: x', ...auth], '') },
  { label: 'HTTP/2 or 3', make: (r, auth) => request('GET', '/health', ['Host: x', ...auth], '', r.pick(['HTTP/2.0', 'HTTP/3.0', 'HTTP/9.9'])) },
  { label: 'bad version', make: (r, auth) => request('GET', '/health', ['Host: x', ...auth], '', r.pick(['HTTP/1', 'HTTPS/1.1', 'HTTP/1.1x', ''])) },
  { label: 'conflicting Content-Length', make: (_r, auth) => request('POST', '/health', ['Host: x', ...auth, 'Content-Length: 3', 'Content-Length: 4'], 'abcd') },
  { label: 'bad Content-Length', make: (r, auth) => request('POST', '/health', ['Host: x', ...auth, `Content-Length: ${r.pick(['-1', 'abc', '1e3', '0x10', '99999999999999999'])}`], '') },
  { label: 'CL with TE', make: (_r, auth) => request('POST', '/health', ['Host: x', ...auth, 'Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n') },
  { label: 'bad chunk size', make: (r, auth) => request('POST', '/json-rpc', ['Host: x', ...auth, 'Transfer-Encoding: chunked'], `${r.pick(['zz', '-1', '1 1', '0x3', 'fffffffffffffffff'])}\r\nabc\r\n0\r\n\r\n`) },
  { label: 'chunk without CRLF', make: (_r, auth) => request('POST', '/json-rpc', ['Host: x', ...auth, 'Transfer-Encoding: chunked'], '3\r\nabcXY0\r\n\r\n') },
  { label: 'unknown coding', make: (r, auth) => request('POST', '/health', ['Host: x', ...auth, `Transfer-Encoding: ${r.pick(['gzip', 'gzip, chunked', 'chunked, gzip'])}`], '0\r\n\r\n') },
  { label: 'bare LF', make: () => Buffer.from('GET /health HTTP/1.1\nHost: x\n\n') },
  { label: 'space before colon', make: (_r, auth) => request('GET', '/health', ['Host : x', ...auth], '') },
  { label: 'folded field', make: (_r, auth) => request('GET', '/health', ['Host: x', ...auth, 'X-A: b', ' folded'], '') },
  { label: 'control byte in a field', make: (_r, auth) => request('GET', '/health', ['Host: x', ...auth, 'X-A: b\u0001c'], '') },
  { label: 'absolute or odd target', make: (r, auth) => request('GET', r.pick(['http://x/health', 'health', '*', '/a b']), ['Host: x', ...auth], '') },
  { label: 'garbage bytes', make: (r) => Buffer.from(Array.from({ length: 4 + r.int(200) }, () => r.int(256)).concat([13, 10, 13, 10])) },
  { label: 'TLS hello', make: () => Buffer.from('16030100a5010000a10303000000000000000000000000000000000000000000000000000000000000000000000d0a0d0a', 'hex') },
];

function connectionParts(r: Rng, role: ListenerRole): Part[] {
  const auth = role === 'paidRest' || role === 'paidStream' || (role !== 'freeRest' && r.next() < 0.3) ? [`Authorization: ${hosts.proKey}`] : [];
  const parts: Part[] = [];
  const count = 1 + r.int(r.next() < 0.5 ? 10 : 3);
  for (let k = 0; k < count; k++) {
    const roll = r.next();
    if (roll < 0.12) {
      const m = r.pick(MALFORMED);
      parts.push({ bytes: m.make(r, auth), bad: true, closes: true, stream: false, head: false, label: m.label });
      break;
    }
    const [method0, target, body, stream] = wellFormed(r, role);
    const method = method0 === 'GET' && r.next() < 0.05 ? 'HEAD' : method0;
    const headers = [...auth];
    if (body !== '' || method === 'POST') headers.push(r.next() < 0.8 ? `Content-Length: ${Buffer.byteLength(body, 'latin1')}` : 'Transfer-Encoding: chunked');
    if (method === 'POST') headers.push('Content-Type: application/json', 'Accept: application/json, text/event-stream');
    const chunked = headers.includes('Transfer-Encoding: chunked');
    const sentBody = chunked ? `${body === '' ? '' : `${Buffer.byteLength(body, 'latin1').toString(16)}\r\n${body}\r\n`}0\r\n\r\n` : body;
    if (roll < 0.2) {
      // HTTP/1.0, with or without Host: answered, then closed.
      if (chunked) headers.splice(headers.indexOf('Transfer-Encoding: chunked'), 1, `Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
      if (r.next() < 0.5) headers.push('Host: example.com');
      parts.push({ bytes: request(method, target, headers, chunked ? body : sentBody, 'HTTP/1.0'), bad: false, closes: true, stream, head: method === 'HEAD', label: `HTTP/1.0 ${method} ${target}` });
      break;
    }
    headers.unshift(`Host: ${r.pick(['x', 'localhost', '127.0.0.1:8080', 'api.example.com'])}`);
    const closes = r.next() < 0.08;
    if (closes) headers.push('Connection: close');
    parts.push({ bytes: request(method, target, headers, sentBody), bad: false, closes, stream, head: method === 'HEAD', label: `${method} ${target}` });
    if (closes || stream) break;
  }
  return parts;
}

interface Outcome {
  requests: number;
  answers: ParsedAnswer[];
  problems: string[];
}

/** Writes the parts (all at once, or in small pieces) and checks the answers and the close. */
/** Requests of a connection the server answers: up to the first that ends it. */
function answeredCount(parts: readonly Part[]): number {
  const end = parts.findIndex((p) => p.bad || p.closes);
  return end < 0 ? parts.length : end + 1;
}

function exchange(role: ListenerRole, parts: Part[], pieces: boolean, id: string): Promise<Outcome> {
  const answered = answeredCount(parts);
  const mustClose = parts.some((p) => p.bad || p.closes);
  const last = parts[answered - 1]!;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = false;
    let started = 0;
    const problems: string[] = [];
    const s = connect(hosts.port(role), '127.0.0.1', () => {
      started = performance.now();
      const all = Buffer.concat(parts.map((p) => p.bytes));
      if (!pieces) s.write(all);
      else for (let i = 0; i < all.length; i += 700) s.write(all.subarray(i, i + 700));
    });
    const noBody = (i: number) => parts[i]?.head === true;
    const complete = (): boolean => {
      const bytes = Buffer.concat(chunks);
      const got = parseAnswers(bytes, noBody);
      if (got.length >= answered) return true;
      // A stream's answer counts once its head is here.
      if (last.stream && got.length === answered - 1) return /^HTTP\/1\.1 200[^]*\r\ncontent-type: text\/event-stream[^]*\r\n\r\n/i.test(bytes.toString('latin1', bytes.lastIndexOf('HTTP/1.1 ')));
      return false;
    };
    const finish = () => {
      clearTimeout(timer);
      s.destroy();
      const bytes = Buffer.concat(chunks);
      const answers = parseAnswers(bytes, noBody);
      const ok = complete();
      if (!ok) problems.push(`${id}: ${answers.length} of ${answered} answers within ${ANSWER_WITHIN_MS} ms (${parts.map((p) => p.label).join(' | ')}); got ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`);
      else if (mustClose && !closed && !last.stream) problems.push(`${id}: not closed within ${ANSWER_WITHIN_MS} ms after ${last.label}`);
      resolve({ requests: answered, answers, problems });
    };
    const timer = setTimeout(finish, ANSWER_WITHIN_MS);
    s.on('data', (b: Buffer) => {
      chunks.push(b);
      if (complete() && (!mustClose || last.stream)) finish();
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      closed = true;
      if (performance.now() - started > ANSWER_WITHIN_MS) return;
      finish();
    });
  });
}

describe('generated HTTP traffic on every host', () => {
  it(`answers ${REQUESTS} generated requests, malformed ones included, within ${ANSWER_WITHIN_MS} ms each and without a server fault`, async () => {
    const r = rng(SEED);
    let requests = 0;
    let connections = 0;
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    const work: (() => Promise<void>)[] = [];
    let planned = 0;
    while (planned < REQUESTS) {
      const role = r.pick(ROLES);
      const parts = connectionParts(r, role);
      const pieces = r.next() < 0.1;
      const id = `connection ${work.length} (${role})`;
      planned += answeredCount(parts);
      work.push(async () => {
        const o = await exchange(role, parts, pieces, id);
        connections++;
        requests += o.requests;
        problems.push(...o.problems);
        o.answers.forEach((a, i) => {
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
          if (a.status >= 500 && a.status !== 501 && a.status !== 505) problems.push(`${id}: server fault ${a.status} ${a.body.toString().slice(0, 200)}`);
          // HEAD answers carry no body; the paid host's edge page (403 without a key) is HTML by design.
          if (a.status < 400 || parts[i]?.head === true || (a.status === 403 && (a.headers.get('content-type') ?? '').startsWith('text/html'))) return;
          let body: { error?: unknown; message?: unknown } = {};
          try {
            body = JSON.parse(a.body.toString('utf8')) as typeof body;
          } catch {
            // reported below
          }
          // The agent host's MCP transports answer in JSON-RPC 2.0's own shape: {error: {code, message}}.
          const rpc = typeof body.error === 'object' && body.error !== null && typeof (body.error as { message?: unknown }).message === 'string';
          if (!(a.headers.get('content-type') ?? '').startsWith('application/json') || !((typeof body.error === 'string' && typeof body.message === 'string') || rpc))
            problems.push(`${id}: ${a.status} error body is not JSON with error and message (${parts[i]?.label}): ${a.body.toString().slice(0, 200)}`);
        });
      });
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < work.length) await work[next++]!();
      }),
    );
    const summary = `${requests} requests on ${connections} connections; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`;
    expect(problems.slice(0, 20), summary).toEqual([]);
    expect(requests, summary).toBeGreaterThanOrEqual(REQUESTS);
    // The malformed kinds were all produced and answered with client-fault statuses.
    for (const s of [400, 431, 501, 505]) expect(statuses.get(s) ?? 0, summary).toBeGreaterThan(0);
  }, 120_000);
});
