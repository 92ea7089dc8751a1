import { describe, expect, it } from 'vitest';
import { API_PREFIX_LENGTH, matchRoute, pathPart, ROUTES } from './routes.js';

const P = '0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc';

describe('matchRoute', () => {
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
    for (const [path, route] of cases) expect(ROUTES[matchRoute(path, path.startsWith('/api/') ? API_PREFIX_LENGTH : 0)], path).toBe(route);
    // Without the prefix skipped (the REST hosts), /api paths are no route.
    expect(ROUTES[matchRoute('/api/networks')]).toBe('other');
  });
});

describe('pathPart', () => {
  it('is the segment path.split("/") has at that index', () => {
    for (const path of ['/', '/networks', `/networks/ethereum/pools/${P}`, `/networks/ethereum/pools/${P}/ohlcv`, '/networks//pools/x', '/a/b/'])
      for (let k = 0; k <= 7; k++) expect(pathPart(path, k), `${path} ${k}`).toBe(path.split('/')[k] ?? '');
  });
});
