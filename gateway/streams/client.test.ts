/**
 * A stream's queue under backpressure, with a stand-in for the uWS response that reports a full
 * socket: a price subscription keeps only its latest event, a swap stream past the bound is ended
 * with an error event, and nothing is written until the socket drains.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { describe, expect, it } from 'vitest';
import { MAX_QUEUED_BYTES, StreamClient, type ClientHost } from './client.js';
import type { RenderedEvent } from './replay.js';

function fakeResponse() {
  const written: string[] = [];
  let ended: string | null = null;
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
    close: () => res,
  };
  return {
    res: res as unknown as HttpResponse,
    written,
    ended: () => ended,
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
    const r = fakeResponse();
    const c = new StreamClient(host(), { res: r.res, post: false, limit: null, plan: 'dev', owner: {}, nowMs: 0 });
    const sub = c.subscribe('pool', 0, 1);
    c.open(true, 0);
    r.setFull(true);
    c.push(sub, event('{}'));
    c.flush(1);
    const big = 'x'.repeat(10_000);
    let pushed = 0;
    while (!c.isEnded && pushed < 1000) {
      c.push(sub, event(`{"tx":"${big}"}`));
      pushed++;
    }
    expect(c.isEnded).toBe(true);
    expect(pushed * 10_000).toBeGreaterThan(MAX_QUEUED_BYTES);
    expect(pushed * 10_000).toBeLessThan(MAX_QUEUED_BYTES + 40_000);
    expect(r.ended()).toBe('event: error\ndata: {"message":"the stream was closed because the client did not read its events fast enough"}\n\n');
    expect(c.backlog.bytes).toBe(0);
  });
});
