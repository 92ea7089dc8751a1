import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS_S, RequestCounters, REQUEST_HOSTS, routeOf, ROUTES, STREAM_KINDS, StreamCounters } from './counters.js';

const P = '0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc';

describe('routeOf', () => {
  it('names the route each path shape matches, the /api subset as the route it stands for', () => {
    const cases: [string, string][] = [
      ['/', 'root'],
      ['/health', 'health'],
      ['/usage', 'usage'],
      ['/stats', 'stats'],
      ['/openapi.json', 'openapi'],
      ['/networks', 'networks'],
      ['/search', 'search'],
      ['/pools/search', 'pool_search'],
      ['/tokens/search', 'token_search'],
      ['/networks/ethereum/dexes', 'dexes'],
      ['/networks/ethereum/pools/search', 'pool_search'],
      [`/networks/ethereum/pools/${P}`, 'pool'],
      [`/networks/ethereum/pools/${P}/ohlcv`, 'pool_ohlcv'],
      [`/networks/ethereum/pools/${P}/transactions`, 'pool_transactions'],
      [`/networks/ethereum/pools/${P}/indicators`, 'pool_indicators'],
      ['/networks/ethereum/tokens/search', 'token_search'],
      [`/networks/ethereum/tokens/${P}`, 'token'],
      [`/networks/ethereum/tokens/${P}/ohlcv`, 'token_ohlcv'],
      [`/networks/ethereum/tokens/${P}/indicators`, 'token_indicators'],
      ['/networks/ethereum/multi/prices', 'multi_prices'],
      ['/pools', 'removed'],
      ['/networks/ethereum/pools', 'removed'],
      ['/networks/ethereum/pools/filter', 'removed'],
      ['/networks/ethereum/tokens/top', 'removed'],
      ['/networks/ethereum/tokens/filter', 'removed'],
      ['/networks/ethereum/dexes/uniswap_v2/pools', 'removed'],
      [`/networks/ethereum/tokens/${P}/pools`, 'removed'],
      ['/api/networks', 'networks'],
      ['/api/networks/eth/dexes/uniswap_v2/pools', 'removed'],
      [`/api/networks/eth/pools/${P}`, 'pool'],
      ['/nope', 'other'],
      ['/health/', 'other'],
      ['/networksx', 'other'],
      ['/networks/', 'other'],
      ['/networks/ethereum/tokens', 'other'],
      [`/networks/ethereum/pools/${P}/trades`, 'other'],
      [`/networks/ethereum/pools/${P}/ohlcv/1m`, 'other'],
      ['/a/b/c/d/e/f/g/h/i', 'other'],
      ['', 'other'],
    ];
    for (const [path, route] of cases) expect(ROUTES[routeOf(path)], path).toBe(route);
  });
});

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
