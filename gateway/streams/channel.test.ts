/**
 * The shared event log of swap and candle streams: one append serves every stream, streams at the
 * same cursor write the very same bytes, the log keeps only what some stream has not written, and a
 * stream that falls more than the bound behind is ended while the others go on.
 */
import { describe, expect, it } from 'vitest';
import { Channel, SLOW_READER_MESSAGE, type ChannelReader } from './channel.js';
import type { RenderedEvent } from './replay.js';

let nextId = 1;
function event(data: string): RenderedEvent {
  return { id: nextId++, keys: [1], data, alt: null, pool: -1, atMs: 5, frameMethod: '', frameAlt: false, frameRequestId: -1, frame: Buffer.alloc(0) };
}

function reader(): ChannelReader & { failed: string | null } {
  return { cursor: -1, failed: null, fail(message) { this.failed = message; } };
}

function setup(maxBytes = 1_000) {
  let wakes = 0;
  const ch = new Channel<ReturnType<typeof reader>>('pool', 7, maxBytes, () => wakes++);
  return { ch, wakes: () => wakes };
}

describe('channel', () => {
  it('frames each event once with the event name, id and request_id, and wakes its streams', () => {
    const { ch, wakes } = setup();
    const a = reader();
    ch.join(a);
    const e = event('{"x":1}');
    ch.append(e);
    expect(ch.frame(a.cursor).toString()).toBe(`id: ${e.id}\nevent: pool\nrequest_id: 7\ndata: {"x":1}\n\n`);
    expect(ch.atMsOf(a.cursor)).toBe(5);
    expect(wakes()).toBe(1);
  });

  it('gives streams at the same cursor the same joined bytes, and drops what every stream wrote', () => {
    const { ch } = setup();
    const [a, b] = [reader(), reader()];
    ch.join(a);
    ch.join(b);
    for (const d of ['1', '22', '333']) ch.append(event(d));
    expect(ch.held).toBe(3);
    const chunkA = ch.chunk(a.cursor, ch.end);
    const chunkB = ch.chunk(b.cursor, ch.end);
    expect(chunkB).toBe(chunkA);
    expect(chunkA.toString().match(/^data: .*$/gm)).toEqual(['data: 1', 'data: 22', 'data: 333']);
    ch.advance(a, ch.end);
    expect(ch.held).toBe(3); // b has not written them
    ch.advance(b, ch.end);
    expect(ch.held).toBe(0);
    // A stream joining later starts at the end; leaving gives back what only it held.
    ch.append(event('4'));
    const c = reader();
    ch.join(c);
    expect(c.cursor).toBe(ch.end);
    ch.advance(a, ch.end);
    expect(ch.held).toBe(1);
    ch.leave(b);
    expect(ch.held).toBe(0);
  });

  it('cuts a write at the byte bound, with at least one event', () => {
    const { ch } = setup(1_000_000);
    const a = reader();
    ch.join(a);
    for (let i = 0; i < 10; i++) ch.append(event('x'.repeat(100)));
    const one = ch.bytes(a.cursor, a.cursor + 1);
    expect(ch.fitting(a.cursor, ch.end, 3 * one)).toBe(a.cursor + 3);
    expect(ch.fitting(a.cursor, ch.end, 3 * one + 1)).toBe(a.cursor + 3);
    expect(ch.fitting(a.cursor, ch.end, 1)).toBe(a.cursor + 1);
    expect(ch.fitting(a.cursor, ch.end, 100 * one)).toBe(ch.end);
  });

  it('ends a stream that falls more than the bound behind; the others go on and the log shrinks', () => {
    const { ch } = setup(1_000);
    const [slow, fast] = [reader(), reader()];
    ch.join(slow);
    ch.join(fast);
    // The channel's owner removes a failed stream (the hub does it as the stream ends).
    slow.fail = (message) => {
      slow.failed = message;
      ch.leave(slow);
    };
    let appended = 0;
    while (slow.failed === null) {
      ch.append(event('y'.repeat(90)));
      appended += ch.frame(ch.end - 1).length;
      ch.advance(fast, ch.end);
      if (slow.failed === null) expect(ch.bytes(slow.cursor, ch.end)).toBeLessThanOrEqual(1_000);
    }
    expect(slow.failed).toBe(SLOW_READER_MESSAGE);
    expect(appended).toBeGreaterThan(1_000);
    expect(appended).toBeLessThan(1_000 + 200);
    expect(fast.failed).toBeNull();
    expect(ch.held).toBe(0);
  });
});
