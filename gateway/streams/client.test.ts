/**
 * A stream's queue under backpressure, with a stand-in for the uWS response that reports a full
 * socket: a price subscription keeps only its latest event, nothing is written until the socket
 * drains, a reader is cut once it has been behind for SLOW_READER_MS (not for the size of a burst),
 * and a swap stream past the memory bound is ended with an error event.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { describe, expect, it } from 'vitest';
import { MAX_CHUNK_BYTES, MAX_QUEUED_BYTES, SLOW_READER_MS, StreamClient, type ClientHost } from './client.js';
import type { RenderedEvent } from './replay.js';

function fakeResponse() {
  const written: string[] = [];
  let ended: string | null = null;
  let closed = false;
  let full = false;
  let writable: ((offset: number) => boolean) | null = null;
  const res = {
    writeStatus: () => res,
    writeHeader: () => res,
    onAborted: () => res,
    onWritable: (h: (offset: number) => boolean) => ((writable = h), res),
    cork: (f: () => void) => (f(), res),
    write: (chunk: Buffer | string) => (written.push(chunk.toString()), !full),
    end: (chunk?: Buffer | string) => ((ended = chunk?.toString() ?? ''), res),
    close: () => ((closed = true), res),
  };
  return {
    res: res as unknown as HttpResponse,
    written,
    ended: () => ended,
    closed: () => closed,
    setFull(v: boolean) {
      full = v;
    },
    drain() {
      full = false;
      writable?.(0);
    },
  };
}

function host(): ClientHost & { woken: number } {
  return {
    pingIntervalMs: 15_000,
    woken: 0,
    wake() {
      this.woken++;
    },
    ended() {},
    spend: (_c, n) => n,
    exhaustedMessage: () => 'exhausted',
    wrote: () => undefined,
  };
}

/** A swap stream (one pool subscription) opened on a stand-in response. */
function swapStream() {
  const r = fakeResponse();
  const c = new StreamClient(host(), { res: r.res, post: false, limit: null, plan: 'dev', owner: {}, nowMs: 0 });
  const sub = c.subscribe('pool', 0, 1);
  c.open(true, 0);
  return { r, c, sub };
}

let nextId = 1;
function event(data: string): RenderedEvent {
  return { id: nextId++, keys: [1], data, alt: null, pool: -1, atMs: 0, frameMethod: '', frameAlt: false, frameRequestId: -1, frame: Buffer.alloc(0) };
}

describe('stream queue under backpressure', () => {
  it('keeps only the latest price while the socket is full, and writes it once drained', () => {
    const r = fakeResponse();
    const c = new StreamClient(host(), { res: r.res, post: true, limit: null, plan: 'free', owner: {}, nowMs: 0 });
    const sub = c.subscribe('token_price', 7, 1);
    c.open(true, 0);
    r.setFull(true);
    c.push(sub, event('{"price":"1"}'));
    c.flush(1);
    expect(c.isBlocked).toBe(true);
    for (let i = 2; i <= 1000; i++) c.push(sub, event(`{"price":"${i}"}`));
    c.flush(2);
    expect(c.backlog.events).toBe(1);
    expect(c.backlog.bytes).toBeLessThan(200);
    const before = r.written.length;
    r.drain();
    c.flush(3);
    expect(r.written.length).toBe(before + 1);
    expect(r.written[r.written.length - 1]).toMatch(/request_id: 7\ndata: \{"price":"1000"\}\n\n$/);
    expect(c.backlog.events).toBe(0);
  });

  it('ends a swap stream with an error event once its waiting events pass the bound', () => {
    const { r, c, sub } = swapStream();
    r.setFull(true);
    c.push(sub, event('{}'));
    c.flush(1);
    const big = 'x'.repeat(10_000);
    let pushed = 0;
    while (!c.isEnded && pushed < 2 * (MAX_QUEUED_BYTES / 10_000)) {
      c.push(sub, event(`{"tx":"${big}"}`));
      pushed++;
    }
    expect(c.isEnded).toBe(true);
    expect(pushed * 10_100).toBeGreaterThan(MAX_QUEUED_BYTES);
    expect(pushed * 10_000).toBeLessThan(MAX_QUEUED_BYTES + 40_000);
    expect(r.ended()).toBe('event: error\ndata: {"message":"the stream was closed because the client did not read its events fast enough"}\n\n');
    expect(c.backlog.bytes).toBe(0);
  });

  it('a burst far larger than one chunk, written to a socket that takes it, does not end the stream', () => {
    const { r, c, sub } = swapStream();
    const big = 'x'.repeat(1_000);
    // 4 MiB in one tick, then written chunk by chunk as the hub wakes the stream again.
    for (let i = 0; i < 4 * 1024; i++) c.push(sub, event(`{"tx":"${big}"}`));
    let nowMs = 1;
    for (let writes = 0; c.backlog.events > 0; writes++) {
      expect(writes).toBeLessThan(100);
      c.flush((nowMs += 1));
    }
    expect(c.isEnded).toBe(false);
    expect(r.written.slice(1).join('').length).toBeGreaterThan(4 * 1024 * 1_000);
    // Caught up: much later, a new event goes out like any other.
    c.push(sub, event('{"tx":"later"}'));
    c.flush(nowMs + 10 * SLOW_READER_MS);
    expect(c.isEnded).toBe(false);
    expect(r.written[r.written.length - 1]).toMatch(/"later"/);
  });

  it('a reader behind for longer than SLOW_READER_MS is dropped while its socket is full', () => {
    const { r, c, sub } = swapStream();
    r.setFull(true);
    c.push(sub, event('{"tx":1}'));
    c.flush(100);
    expect(c.isBlocked).toBe(true);
    c.push(sub, event('{"tx":2}'));
    c.flush(100 + SLOW_READER_MS);
    expect(c.isEnded).toBe(false);
    c.push(sub, event('{"tx":3}'));
    c.flush(101 + SLOW_READER_MS);
    expect(c.isEnded).toBe(true);
    expect(r.closed()).toBe(true);
  });

  it('a reader that drains now and then but never catches up gets an error event after SLOW_READER_MS', () => {
    const { r, c, sub } = swapStream();
    const big = 'x'.repeat(MAX_CHUNK_BYTES);
    let nowMs = 0;
    // Each step: two chunks' worth arrives, one chunk is written and taken.
    while (!c.isEnded && nowMs < 3 * SLOW_READER_MS) {
      c.push(sub, event(`{"tx":"${big}"}`));
      c.push(sub, event(`{"tx":"${big}"}`));
      c.flush((nowMs += 1_000));
    }
    expect(c.isEnded).toBe(true);
    expect(nowMs).toBeGreaterThan(SLOW_READER_MS);
    expect(nowMs).toBeLessThanOrEqual(SLOW_READER_MS + 2_000);
    expect(r.ended()).toBe('event: error\ndata: {"message":"the stream was closed because the client did not read its events fast enough"}\n\n');
  });
});
