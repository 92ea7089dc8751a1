/**
 * The REST subset for agent platforms (api.md, "REST subset at {mcp_url}"; decisions §5) over real
 * HTTP: its 12 operations on the agent host answer what the main routes answer, network synonyms
 * resolve there and only there, the DEX pools operation is pool search with `dex_name`, /api
 * networks rows are cut to {id, display_name}, and each host keeps to its own paths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiSubset, dexPoolsQuery, NETWORK_SYNONYMS, resolveNetworkSegment } from '../gateway/rest/api-subset.js';
import { call, DAY, NOW, plansWith, POOL, startAccessFixture, TOKENS, type AccessFixture } from './support/access.js';

let fx: AccessFixture;
let devKey = '';

beforeAll(async () => {
  const roomy = { requestsPerMinute: 100_000, credits: 1_000_000 };
  fx = await startAccessFixture(plansWith({ keyless: roomy, free: roomy, dev: roomy, pro: roomy, enterprise: roomy }));
  devKey = fx.keys.create('dev', 'subset test', NOW - 10 * DAY).key;
});

afterAll(async () => {
  await fx?.close();
});

const agent = (path: string, key = '') => call(fx.url('agent') + path, key);
const free = (path: string, key = '') => call(fx.url('freeRest') + path, key);
const paid = (path: string, key = '') => call(fx.url('paidRest') + path, key);

const [USDC, WETH] = TOKENS as [string, string];
const OHLCV_QUERY = `start=${NOW - DAY}&interval=1h&limit=5`;

/** Subset path, and the main path (free host) that must answer the same body. */
const SAME_AS_MAIN: readonly [string, string][] = [
  ['/api/networks/ethereum/pools/search?limit=5', '/networks/ethereum/pools/search?limit=5'],
  ['/api/networks/ethereum/dexes', '/networks/ethereum/dexes'],
  ['/api/networks/ethereum/dexes?page=0&limit=1', '/networks/ethereum/dexes?page=0&limit=1'],
  [`/api/networks/ethereum/pools/${POOL}`, `/networks/ethereum/pools/${POOL}`],
  [`/api/networks/ethereum/pools/${POOL}?inversed=true`, `/networks/ethereum/pools/${POOL}?inversed=true`],
  [`/api/networks/ethereum/pools/${POOL}/ohlcv?${OHLCV_QUERY}`, `/networks/ethereum/pools/${POOL}/ohlcv?${OHLCV_QUERY}`],
  [`/api/networks/ethereum/tokens/${WETH}`, `/networks/ethereum/tokens/${WETH}`],
  ['/api/networks/ethereum/tokens/search?limit=3', '/networks/ethereum/tokens/search?limit=3'],
  [`/api/networks/ethereum/multi/prices?tokens=${USDC}%2C${WETH}`, `/networks/ethereum/multi/prices?tokens=${USDC}%2C${WETH}`],
  ['/api/search?query=usd', '/search?query=usd'],
  ['/api/stats', '/stats'],
];

describe('the 12 operations on the agent host', () => {
  it('answer keyless callers with the main route body', async () => {
    for (const [sub, main] of SAME_AS_MAIN) {
      const a = await agent(sub);
      const m = await free(main);
      expect(m.status, main).toBe(200);
      expect(a.status, sub).toBe(200);
      expect(a.body, sub).toEqual(m.body);
      expect(a.headers.get('x-api-plan'), sub).toBe('keyless');
    }
  });

  it('/api/networks lists rows of exactly id and display_name', async () => {
    const a = await agent('/api/networks');
    const m = await free('/networks');
    expect(a.status).toBe(200);
    expect(Array.isArray(a.body)).toBe(true);
    expect(a.body).toEqual(m.body.map((n: { id: string; display_name: string }) => ({ id: n.id, display_name: n.display_name })));
    for (const row of a.body) {
      expect(Object.keys(row).sort()).toEqual(['display_name', 'id']);
      expect(typeof row.id).toBe('string');
      expect(typeof row.display_name).toBe('string');
    }
    expect(a.body).toContainEqual({ id: 'ethereum', display_name: 'Ethereum' });
  });

  it('pool transactions need a paid key: 401 api_key_required without one, the main body with one', async () => {
    const path = `/networks/ethereum/pools/${POOL}/transactions`;
    const none = await agent(`/api${path}`);
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('api_key_required');
    const withKey = await agent(`/api${path}`, devKey);
    const main = await paid(path, devKey);
    expect(main.status).toBe(200);
    expect(withKey.status).toBe(200);
    expect(withKey.body).toEqual(main.body);
    expect(withKey.headers.get('x-api-plan')).toBe('dev');
  });

  it('serves every key (plan named in X-Api-Plan)', async () => {
    const freeKey = fx.keys.create('free', 'subset free', NOW - DAY).key;
    for (const [key, plan] of [
      [freeKey, 'free'],
      [devKey, 'dev'],
    ] as const) {
      const r = await agent('/api/networks', key);
      expect(r.status, plan).toBe(200);
      expect(r.headers.get('x-api-plan')).toBe(plan);
    }
    expect((await agent('/api/networks', 'api_notakey')).status).toBe(401);
  });

  it('errors of the main route come through (400, 404)', async () => {
    const bad = await agent('/api/networks/ethereum/pools/search?order_by=nope');
    const badMain = await free('/networks/ethereum/pools/search?order_by=nope');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(badMain.body);
    expect((await agent('/api/networks/nowhere/dexes')).status).toBe(404);
    expect((await agent(`/api/networks/ethereum/pools/${POOL}/ohlcv`)).status).toBe(400); // start required
  });
});

describe('network synonyms', () => {
  it('resolve on /api whatever their case, and stay 404 on the main interface', async () => {
    for (const syn of ['eth', 'ETH', 'Eth']) {
      for (const [sub] of SAME_AS_MAIN) {
        if (!sub.startsWith('/api/networks/ethereum/')) continue;
        const viaSynonym = sub.replace('/networks/ethereum/', `/networks/${syn}/`);
        const a = await agent(viaSynonym);
        const b = await agent(sub);
        expect(a.status, viaSynonym).toBe(200);
        expect(a.body, viaSynonym).toEqual(b.body);
      }
      const d = await agent(`/api/networks/${syn}/dexes/uniswap_v2/pools`);
      expect(d.status).toBe(200);
      expect(d.body.results.length).toBe(1);
      const tx = await agent(`/api/networks/${syn}/pools/${POOL}/transactions`, devKey);
      expect(tx.status).toBe(200);
    }
    for (const path of ['/networks/eth/dexes', '/networks/eth/pools/search', `/networks/eth/pools/${POOL}`, `/networks/eth/tokens/${WETH}`, '/networks/ETH/dexes']) {
      const r = await free(path);
      expect(r.status, path).toBe(404);
      expect(r.body.error).toBe('not_found');
    }
  });

  it('map every abbreviation of decisions §5, and nothing else', () => {
    expect(NETWORK_SYNONYMS).toEqual({ eth: 'ethereum', sol: 'solana', bnb: 'bsc', arb: 'arbitrum', op: 'optimism', matic: 'polygon', poly: 'polygon', avax: 'avalanche' });
    for (const [short, id] of Object.entries(NETWORK_SYNONYMS)) {
      expect(resolveNetworkSegment(short)).toBe(id);
      expect(resolveNetworkSegment(short.toUpperCase())).toBe(id);
    }
    expect(resolveNetworkSegment('ethereum')).toBe('ethereum');
    expect(resolveNetworkSegment('base')).toBe('base');
    const subset = createApiSubset();
    expect(subset('/api/networks/MATIC/pools/search', 'limit=2')).toEqual({ path: '/networks/polygon/pools/search', query: 'limit=2' });
    expect(subset('/api/networks/poly/dexes/Quickswap/pools', '')).toEqual({ path: '/networks/polygon/pools/search', query: 'dex_name=Quickswap' });
    expect(subset('/api/networks/avax/multi/prices', 'tokens=a')).toEqual({ path: '/networks/avalanche/multi/prices', query: 'tokens=a' });
  });
});

describe('/api/networks/{n}/dexes/{dex}/pools', () => {
  const main = (q: string) => free(`/networks/ethereum/pools/search?dex_name=uniswap_v2${q}`);

  it('is pool search with the DEX in dex_name, case-insensitive, with the cursor envelope', async () => {
    for (const dex of ['uniswap_v2', 'UNISWAP_V2', 'Uniswap_V2']) {
      const a = await agent(`/api/networks/ethereum/dexes/${dex}/pools`);
      const m = await free(`/networks/ethereum/pools/search?dex_name=${dex}`);
      expect(a.status, dex).toBe(200);
      expect(a.body).toEqual(m.body);
      expect(Object.keys(a.body).sort()).toEqual(['has_next_page', 'next_cursor', 'query', 'results']);
      expect(a.body).not.toHaveProperty('page_info');
      expect(a.body.results.map((r: { id: string }) => r.id.toLowerCase())).toEqual([POOL.toLowerCase()]);
      expect(a.body.query).toMatchObject({ limit: 10, order_by: 'volume_usd_24h', sort: 'desc', dex_name: dex });
    }
    const none = await agent('/api/networks/ethereum/dexes/sushiswap/pools');
    expect(none.status).toBe(200);
    expect(none.body.results).toEqual([]);
  });

  it('takes cursor, limit, order_by and sort, and only those', async () => {
    const q = '&limit=1&order_by=liquidity_usd&sort=asc';
    const a = await agent(`/api/networks/ethereum/dexes/uniswap_v2/pools?limit=1&order_by=liquidity_usd&sort=asc&liquidity_usd_min=1e30&token_address=0x1`);
    expect(a.status).toBe(200);
    expect(a.body).toEqual((await main(q)).body);
    expect(a.body.results.length).toBe(1);
    const badCursor = await agent('/api/networks/ethereum/dexes/uniswap_v2/pools?cursor=zzz');
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.param).toBe('cursor');
  });

  it('normalises legacy order_by names', async () => {
    for (const [legacy, current] of [
      ['volume_usd', 'volume_usd_24h'],
      ['liquidity', 'liquidity_usd'],
      ['txns', 'txns_24h'],
      ['price', 'price_usd'],
    ]) {
      const a = await agent(`/api/networks/ethereum/dexes/uniswap_v2/pools?order_by=${legacy}`);
      expect(a.status, legacy).toBe(200);
      expect(a.body).toEqual((await main(`&order_by=${current}`)).body);
      expect(a.body.query.order_by).toBe(current);
    }
    expect((await agent('/api/networks/ethereum/dexes/uniswap_v2/pools?order_by=nope')).status).toBe(400);
  });

  it('accepts sort_by and sort_dir as aliases of order_by and sort (the names themselves win)', async () => {
    const a = await agent('/api/networks/ethereum/dexes/uniswap_v2/pools?sort_by=liquidity&sort_dir=asc');
    expect(a.status).toBe(200);
    expect(a.body).toEqual((await main('&order_by=liquidity_usd&sort=asc')).body);
    const both = await agent('/api/networks/ethereum/dexes/uniswap_v2/pools?sort_by=price&order_by=txns&sort_dir=asc&sort=desc');
    expect(both.body.query).toMatchObject({ order_by: 'txns_24h', sort: 'desc' });
    expect(dexPoolsQuery('Uni V2', 'sort_by=volume_usd&sort_dir=asc&limit=3&cursor=abc&other=1')).toBe('dex_name=Uni%20V2&cursor=abc&limit=3&order_by=volume_usd_24h&sort=asc');
  });

  it('pages through next_cursor with a legacy order_by', async () => {
    const first = await agent('/api/networks/ethereum/dexes/uniswap_v2/pools?limit=1&order_by=volume_usd');
    expect(first.body.has_next_page).toBe(false);
    expect(first.body.next_cursor).toBeNull();
  });
});

describe('hosts keep to their own paths', () => {
  it('/api paths answer 404 JSON on the free and paid hosts', async () => {
    for (const path of ['/api/networks', '/api/stats', '/api/networks/ethereum/dexes', `/api/networks/ethereum/pools/${POOL}`]) {
      const f = await free(path);
      expect(f.status, path).toBe(404);
      expect(f.body.error).toBe('not_found');
      const p = await paid(path, devKey);
      expect(p.status, path).toBe(404);
    }
  });

  it('main paths and unknown /api paths answer 404 JSON on the agent host; /health answers', async () => {
    const paths = [
      '/',
      '/usage',
      '/networks',
      '/stats',
      '/openapi.json',
      '/networks/ethereum/dexes',
      `/networks/ethereum/pools/${POOL}`,
      '/api',
      '/api/',
      '/api/pools/search',
      '/api/tokens/search',
      '/api/networks/',
      `/api/networks/ethereum/pools/${POOL}/indicators`,
      `/api/networks/ethereum/tokens/${WETH}/ohlcv`,
      '/api/networks/ethereum/dexes/uniswap_v2',
      '/api/networks/ethereum/pools',
    ];
    for (const path of paths) {
      const r = await agent(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body, path).toEqual({ error: 'not_found', message: `route "GET ${path}" not found` });
    }
    expect((await agent(`/networks/ethereum/pools/${POOL}/transactions`, devKey)).status).toBe(404);
    const h = await agent('/health');
    expect(h.status).toBe(200);
    expect(h.body).toEqual({ status: 'ok' });
  });

  it('the subset is metered like the main hosts: 200 answers are charged, batch prices per token', async () => {
    const key = fx.keys.create('free', 'subset metering', NOW - DAY).key;
    const used = async () => (await free('/usage', key)).body.credits_used as number;
    const before = await used();
    expect((await agent('/api/networks', key)).status).toBe(200);
    expect((await agent(`/api/networks/eth/multi/prices?tokens=${USDC},${WETH}`, key)).status).toBe(200);
    expect((await agent('/api/networks/eth/pools/search?order_by=nope', key)).status).toBe(400);
    expect((await agent('/networks', key)).status).toBe(404);
    expect(await used()).toBe(before + 3);
  });
});
