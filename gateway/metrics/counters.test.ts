import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS_S, RequestCounters, REQUEST_HOSTS, ROUTES, STREAM_KINDS, StreamCounters } from './counters.js';

describe('RequestCounters', () => {
  it('counts by host, route and status, and times into cumulative buckets only what was timed', () => {
    const c = new RequestCounters();
    const pool = ROUTES.indexOf('pool');
    c.record(1, pool, 200, 0.0003);
    c.record(1, pool, 200, 0.003);
    c.record(1, pool, 404, -1);
    c.record(1, pool, 299, 5);
    const counts = [...c.countEntries()].map(([l, v]) => `${l.host} ${l.route} ${l.status} ${v}`);
    expect(counts).toEqual([`${REQUEST_HOSTS[1]} pool 200 2`, `${REQUEST_HOSTS[1]} pool 404 1`, `${REQUEST_HOSTS[1]} pool other 1`]);
    const n = LATENCY_BUCKETS_S.length + 1;
    const at = (1 * ROUTES.length + pool) * n;
    const buckets = Array.from(c.buckets.subarray(at, at + n));
    expect(buckets[LATENCY_BUCKETS_S.indexOf(0.0005)]).toBe(1);
    expect(buckets[LATENCY_BUCKETS_S.indexOf(0.005)]).toBe(1);
    expect(buckets[n - 1]).toBe(1); // 5 s: beyond the last bound
    expect(buckets.reduce((a, b) => a + b, 0)).toBe(3);
    expect(c.seconds[1 * ROUTES.length + pool]).toBeCloseTo(5.0033, 9);
  });
});

describe('StreamCounters', () => {
  it('sums every thread row: open = opened - closed, events delivered', () => {
    const main = new StreamCounters(3);
    const t1 = StreamCounters.forThread(main.buffer, 1);
    const t2 = StreamCounters.forThread(main.buffer, 2);
    const tx = STREAM_KINDS.indexOf('transactions');
    main.opened(tx);
    t1.opened(tx);
    t1.opened(tx);
    t2.opened(0);
    t1.closed(tx);
    t1.delivered(tx, 7);
    main.delivered(tx, 3);
    expect(main.totals()).toEqual({ open: [1, 0, 2, 0], delivered: [0, 0, 10, 0] });
  });
});
