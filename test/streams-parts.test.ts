/** The stream hub's parts on their own: concurrent-stream counts and the replay window. */
import { describe, expect, it } from 'vitest';
import { REPLAY_MAX_EVENTS, REPLAY_WINDOW_MS, ReplayRing } from '../gateway/streams/replay.js';
import { StreamSlots } from '../gateway/streams/slots.js';

describe('concurrent-stream counts', () => {
  it('refuses past the limit and gives each stream back once', () => {
    const slots = new StreamSlots(4);
    expect(slots.acquire('a:1', 2)).toBe(true);
    expect(slots.acquire('a:1', 2)).toBe(true);
    expect(slots.acquire('a:1', 2)).toBe(false);
    expect(slots.open('a:1')).toBe(2);
    expect(slots.acquire('ip:1.2.3.4', 2)).toBe(true);
    slots.release('a:1');
    expect(slots.open('a:1')).toBe(1);
    expect(slots.acquire('a:1', 2)).toBe(true);
    expect(slots.acquire('a:2', 0)).toBe(false);
  });

  it('reuses the slot of a subject with no stream left, so subjects come and go without running out', () => {
    const slots = new StreamSlots(2);
    for (let i = 0; i < 100; i++) {
      expect(slots.acquire(`ip:${i}`, 1)).toBe(true);
      slots.release(`ip:${i}`);
    }
    expect(slots.acquire('x', 5)).toBe(true);
    expect(slots.acquire('y', 5)).toBe(true);
    // Both slots taken by subjects with open streams: a third subject cannot be counted, so it is refused.
    expect(slots.acquire('z', 5)).toBe(false);
  });
});

describe('replay window', () => {
  it('returns the events after an id for the keys asked, oldest first, and says when some are gone', () => {
    const ring = new ReplayRing(1000);
    const a = ring.add([1], 'a1', null, -1, 0);
    ring.add([2], 'b1', null, -1, 0);
    const a2 = ring.add([1, 3], 'a2', null, -1, 10);
    expect(ring.since(a.id, new Set([1])).events.map((e) => e.data)).toEqual(['a2']);
    expect(ring.since(999, new Set([1, 2])).events.map((e) => e.data)).toEqual(['a1', 'b1', 'a2']);
    expect(ring.since(999, new Set([3]))).toMatchObject({ complete: true });
    expect(ring.since(a2.id, new Set([1])).events).toEqual([]);
    // An id older than this process, or one never handed out.
    expect(ring.since(5, new Set([1])).complete).toBe(false);
    expect(ring.since(a2.id + 10, new Set([1])).complete).toBe(false);
    // Events leave the window with time.
    ring.trim(REPLAY_WINDOW_MS + 5);
    const r = ring.since(999, new Set([1]));
    expect(r.complete).toBe(false);
    expect(r.events.map((e) => e.data)).toEqual(['a2']);
  });

  it('holds at most REPLAY_MAX_EVENTS events', () => {
    const ring = new ReplayRing(1);
    for (let i = 0; i < REPLAY_MAX_EVENTS + 10; i++) ring.add([1], 'x', null, -1, 0);
    expect(ring.size).toBe(REPLAY_MAX_EVENTS);
    expect(ring.since(0, new Set([1])).complete).toBe(false);
    expect(ring.since(10, new Set([1])).complete).toBe(true);
  });
});
