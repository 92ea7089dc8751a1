/**
 * How a stream ends on the wire, read from raw sockets: after the `limit`-th data event, and after
 * an `error` event, the response ends with a well-formed chunked terminator and the server closes
 * the TCP connection itself (the client never writes after its request and never closes first).
 * The response announces `Connection: close` so that no client queues a request behind a stream.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plansWith } from './support/access.js';
import { sleep, START, startStreamFixture, WETH, POOL_A, wethTrade, type StreamFixture } from './support/streams.js';

/**
 * Well under uWS's own idle timeout for a kept-alive connection (10 s, checked every 4 s): a server
 * that merely ended the response and kept the connection would not have closed it by then.
 */
const SERVER_CLOSE_WAIT_MS = 5_000;

let fx: StreamFixture;
let t = START;
/** Limit tests run so far (each trades three new prices). */
let round = 0;

const PLANS = plansWith({
  free: { requestsPerMinute: 1_000, concurrentStreams: 10 },
  pro: { requestsPerMinute: 1_000, credits: 3 },
});

beforeAll(async () => {
  fx = await startStreamFixture(PLANS);
  await fx.trade([wethTrade(t, 2000)]);
});

afterAll(async () => {
  await fx?.close();
});

interface RawExchange {
  readonly socket: Socket;
  /** Resolves with every byte received once the server closed its side (FIN); rejects if it did not within SERVER_CLOSE_WAIT_MS of `expectClose`. */
  serverClosed(): Promise<Buffer>;
  received(): Buffer;
}

/** Sends one request on a fresh TCP connection and keeps everything that comes back. */
async function exchange(port: number, request: string): Promise<RawExchange> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((ok, fail) => {
    socket.once('connect', () => ok());
    socket.once('error', fail);
  });
  const chunks: Buffer[] = [];
  let finReceived = false;
  const fin = new Promise<void>((ok) =>
    socket.once('end', () => {
      finReceived = true;
      ok();
    }),
  );
  socket.on('data', (b: Buffer) => chunks.push(b));
  socket.on('error', () => undefined);
  socket.write(request);
  return {
    socket,
    received: () => Buffer.concat(chunks),
    async serverClosed() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((ok) => (timer = setTimeout(ok, SERVER_CLOSE_WAIT_MS)));
      await Promise.race([fin, timeout]);
      clearTimeout(timer);
      if (!finReceived) {
        socket.destroy();
        throw new Error(`the server did not close the connection; received: ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`);
      }
      return Buffer.concat(chunks);
    },
  };
}

interface ParsedResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Chunk extensions seen on size lines. */
  readonly extensions: string[];
  /** Bytes after the end of the chunked body. */
  readonly after: number;
}

/** Parses an HTTP/1.1 response with a chunked body strictly (RFC 9112 §7.1): throws on any framing error or an unterminated body. */
function parseChunkedResponse(bytes: Buffer): ParsedResponse {
  const text = bytes.toString('latin1');
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) throw new Error('no end of the header section');
  const [statusLine, ...headerLines] = text.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)![1]);
  const headers: Record<string, string> = {};
  for (const l of headerLines) {
    const at = l.indexOf(':');
    headers[l.slice(0, at).toLowerCase()] = l.slice(at + 1).trim();
  }
  if (headers['transfer-encoding'] !== 'chunked') throw new Error(`not chunked: ${JSON.stringify(headers)}`);
  let pos = headEnd + 4;
  let body = '';
  const extensions: string[] = [];
  for (;;) {
    const eol = text.indexOf('\r\n', pos);
    if (eol < 0) throw new Error(`unterminated chunk size line at ${pos}`);
    const m = /^([0-9a-fA-F]+)((?:;[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:=(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+|"(?:[^"\\\r\n]|\\.)*"))?)*)$/.exec(text.slice(pos, eol));
    if (m === null) throw new Error(`bad chunk size line ${JSON.stringify(text.slice(pos, eol))}`);
    if (m[2] !== '') extensions.push(m[2]!);
    const size = parseInt(m[1]!, 16);
    pos = eol + 2;
    if (size === 0) {
      // Trailer section: field lines, then an empty line.
      for (;;) {
        const end = text.indexOf('\r\n', pos);
        if (end < 0) throw new Error('unterminated trailer section');
        const line = text.slice(pos, end);
        pos = end + 2;
        if (line === '') break;
        if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(line)) throw new Error(`bad trailer line ${JSON.stringify(line)}`);
      }
      return { status, headers, body: Buffer.from(body, 'latin1').toString('utf8'), extensions, after: bytes.length - pos };
    }
    if (pos + size + 2 > text.length) throw new Error('body ended inside a chunk');
    body += text.slice(pos, pos + size);
    pos += size;
    if (text.slice(pos, pos + 2) !== '\r\n') throw new Error(`no CRLF after a chunk of ${size} bytes at ${pos}: ${JSON.stringify(text.slice(pos, pos + 40))}`);
    pos += 2;
  }
}

interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** The events an SSE reader dispatches from a body (WHATWG HTML §9.2.6: comments and unknown fields ignored). */
function sseEvents(body: string): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length > 0) events.push({ event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}) });
      event = '';
      data = [];
      id = undefined;
      continue;
    }
    if (line.startsWith(':')) {
      comments.push(line.slice(1));
      continue;
    }
    const at = line.indexOf(':');
    const name = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
    else if (name === 'id') id = value;
  }
  return { events, comments };
}

function get(path: string, key: string, extraHeaders = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\n${extraHeaders}\r\n`;
}

describe('how a stream ends on the wire', () => {
  // Clients that say nothing about the connection (HTTP/1.1 keeps it), ask to keep it, or ask to close it.
  it.each([
    ['no Connection header', ''],
    ['Connection: keep-alive', 'Connection: keep-alive\r\n'],
    ['Connection: close', 'Connection: close\r\n'],
  ])('after the limit-th data event (%s): the chunked body ends well-formed and the server closes the connection', async (_, headers) => {
    const x = await exchange(fx.gateway.ports.freeStream!, get(`/sse/prices?chain=ethereum&address=${WETH.address}&limit=2`, fx.key('free'), headers));
    await sleep(50);
    const base = 2100 + 3 * round;
    for (const price of [base + 1, base + 2, base + 3]) {
      t += 1;
      fx.now = t;
      await fx.trade([wethTrade(t, price)]);
      await sleep(60);
    }
    const r = parseChunkedResponse(await x.serverClosed());
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['connection']).toBe('close');
    expect(r.after).toBe(0);
    const { events, comments } = sseEvents(r.body);
    const first = 2100 + 3 * ++round;
    expect(events.map((e) => JSON.parse(e.data).price)).toEqual([String(first - 2), String(first - 1)]);
    expect(events.map((e) => e.event)).toEqual(['token_price', 'token_price']);
    // Nothing else but, when uWS had to be told to close, a comment line every SSE reader skips.
    expect(comments).toEqual(headers === '' || headers.includes('keep-alive') ? ['Connection: close'] : []);
    x.socket.destroy();
  });

  it('a limit on a POST stream ends and closes the same way', async () => {
    const body = JSON.stringify([{ chain: 'ethereum', address: WETH.address, method: 'token_price', request_id: 9 }]);
    const x = await exchange(
      fx.gateway.ports.freeStream!,
      `POST /sse/prices?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${fx.key('free')}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await sleep(50);
    t += 1;
    fx.now = t;
    await fx.trade([wethTrade(t, 2110)]);
    const r = parseChunkedResponse(await x.serverClosed());
    expect(r.after).toBe(0);
    const { events } = sseEvents(r.body);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ price: '2110', token_price: t });
    x.socket.destroy();
  });

  it('after an error event (credits exhausted): the chunked body ends well-formed and the server closes the connection', async () => {
    const { key } = fx.keys.create('pro', 'three credits', fx.now);
    const x = await exchange(fx.gateway.ports.paidStream!, get(`/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`, key));
    await sleep(50);
    t += 1;
    fx.now = t;
    await fx.trade(Array.from({ length: 5 }, (_, i) => wethTrade(t, 2200 + i)));
    const r = parseChunkedResponse(await x.serverClosed());
    expect(r.headers['connection']).toBe('close');
    expect(r.after).toBe(0);
    const { events } = sseEvents(r.body);
    expect(events.map((e) => e.event)).toEqual(['pool', 'pool', 'pool', 'error']);
    expect(JSON.parse(events[3]!.data).message).toMatch(/^credit allowance of 3 exhausted/);
    x.socket.destroy();
  });

  it('a stream ended by shutdown closes its connection too', async () => {
    const x = await exchange(fx.gateway.ports.freeStream!, get(`/sse/prices?chain=ethereum&address=${WETH.address}`, fx.key('free')));
    await sleep(50);
    await fx.close();
    fx = undefined as unknown as StreamFixture;
    const r = parseChunkedResponse(await x.serverClosed());
    expect(r.after).toBe(0);
    const { events } = sseEvents(r.body);
    expect(events.map((e) => e.event)).toEqual(['error']);
    x.socket.destroy();
  });
});
