/**
 * Generated requests against the real gateway over a simulated market: every answer must be a JSON
 * body with a status below 500, and the server must keep answering. The generator is seeded, so a
 * failure names a request that reproduces.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { startGateway, type Gateway } from '../gateway/server.js';
import { rng } from './support/rng.js';

const REQUESTS = 3000;
const CONCURRENCY = 16;
const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z

let dir = '';
let store: Store;
let gateway: Gateway;
let base = '';
const pools: { chain: string; address: string }[] = [];
const tokens: { chain: string; address: string }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dexdata-fuzz-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 4096, tokens: 4096, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const sim = createSimulator({ seed: 3, pools: 300, genesisTime: GENESIS, swapsPerSecond: 0.5, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  for (let t = GENESIS + 3600; t <= GENESIS + 12 * 3600; t += 3600) await (await ingest.ingest(sim.advance(t))).applied;
  await shards.flush();
  for (const p of ingest.registry.pools) if (p) pools.push({ chain: ingest.registry.networks[p.chain]!.id, address: p.address });
  for (const t of ingest.registry.tokens) if (t) tokens.push({ chain: ingest.registry.networks[t.chain]!.id, address: t.address });
  gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => GENESIS + 12 * 3600 }, { host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${gateway.port}`;
});

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});


const NASTY = [
  '', '0', '-1', '1e309', 'NaN', 'Infinity', '-0', '1.5', '99999999999999999999', '0x10', ' 1', '%', '%zz', '%E0%A4%A', '%00', '%FF%FE',
  'true', 'TRUE', 'null', '[]', '{}', '1,2', 'a'.repeat(600), '\u00e9\u4e2d\u{1F600}', '-1h', '-99999d', '2026-13-45', '2026-01-01T25:00:00Z',
  '1767225600', '-30m', '1h', '24h', '1m', 'volume_usd_24h', 'volume_usd', 'asc', 'desc', 'sideways',
];
const PARAMS = ['indicators', 'period', 'macd_fast', 'bbands_stddev', 'from', 'to', 'query', 'liquidity_usd_min', 'created_after', 'price_change_percentage_5m_max', 'dex_name', 'token_address', 'fdv_min', 'chains', 'start', 'end', 'limit', 'interval', 'count_back', 'inversed', 'page', 'cursor', 'order_by', 'sort', 'tokens', 'x', 'start'];

/** A valid query for each route, which the generator then corrupts, drops from or repeats. */
function validQuery(r: ReturnType<typeof rng>, route: string): [string, string][] {
  switch (route) {
    case 'dexes':
      return [['page', String(r.int(4))], ['limit', String(1 + r.int(100))]];
    case 'search':
      return [['limit', String(1 + r.int(100))], ['order_by', 'volume_usd_24h'], ['sort', r.pick(['asc', 'desc'])]];
    case 'details':
      return [['inversed', r.pick(['true', 'false', '1', '0'])]];
    case 'ohlcv':
      return [
        ['start', r.pick(['-1h', '-6h', '-1d', '-2d', '1767225600', '2026-01-01', '2026-01-01T03:00:00Z', '0'])],
        ['interval', r.pick(['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '24h'])],
        ['limit', String(1 + r.int(1000))],
        ...(r.next() < 0.3 ? ([['count_back', String(1 + r.int(1000))]] as [string, string][]) : []),
        ...(r.next() < 0.3 ? ([['end', r.pick(['-1h', '-30m', '1767254400'])]] as [string, string][]) : []),
        ['inversed', r.pick(['true', 'false'])],
      ];
    case 'txs':
      return [['page', String(r.int(101))], ['limit', String(1 + r.int(100))], ['from', r.pick(['-1d', '-2h', '0'])]];
    case 'tokens':
      return [['limit', String(1 + r.int(100))], ['order_by', r.pick(['volume_usd_24h', 'liquidity_usd', 'fdv_usd', 'created_at'])], ['sort', r.pick(['asc', 'desc'])]];
    case 'find':
      return [['query', r.pick(['us', 'weth', 'usdc', '0x', 'a', 'uniswap', 'sol'])]];
    case 'prices':
      return [['tokens', Array.from({ length: 1 + r.int(10) }, () => r.pick(pools).address).join(r.pick([',', '%2C']))]];
    default:
      return [];
  }
}

function request(r: ReturnType<typeof rng>): string {
  const pool = r.pick(pools);
  const chain = r.next() < 0.85 ? pool.chain : r.pick(['ethereum', 'nope', '', '%41', 'ETHEREUM']);
  const address = r.next() < 0.85 ? pool.address : r.pick(['0xdead', pool.address.toUpperCase(), '%', 'a'.repeat(300)]);
  const token = r.pick(tokens);
  const [route, path] = r.pick([
    ['health', '/health'],
    ['networks', '/networks'],
    ['stats', '/stats'],
    ['dexes', `/networks/${chain}/dexes`],
    ['search', `/networks/${chain}/pools/search`],
    ['search', `/pools/search`],
    ['tokens', `/networks/${chain}/tokens/search`],
    ['tokens', `/tokens/search`],
    ['find', `/search`],
    ['details', `/networks/${chain}/pools/${address}`],
    ['ohlcv', `/networks/${chain}/pools/${address}/ohlcv`],
    ['ohlcv', `/networks/${chain}/pools/${address}/ohlcv`],
    ['ohlcv', `/networks/${chain}/pools/${address}/indicators`],
    ['ohlcv', `/networks/${token.chain}/tokens/${token.address}/ohlcv`],
    ['ohlcv', `/networks/${token.chain}/tokens/${token.address}/indicators`],
    ['txs', `/networks/${chain}/pools/${address}/transactions`],
    ['prices', `/networks/${chain}/multi/prices`],
    ['token', `/networks/${token.chain}/tokens/${r.next() < 0.85 ? token.address : r.pick(NASTY)}`],
    ['removed', `/networks/${chain}/dexes/${r.pick(NASTY)}/pools`],
    ['other', `/networks/${chain}/${r.pick(NASTY)}`],
    ['other', `/${r.pick(NASTY)}`],
  ] as const);
  const query = validQuery(r, route);
  // Corrupt a few: replace a value, drop a parameter, repeat one, or add an unknown or stray one.
  for (let k = r.int(3); k > 0; k--) {
    const roll = r.next();
    if (roll < 0.4 && query.length > 0) query[r.int(query.length)]![1] = r.pick(NASTY);
    else if (roll < 0.55 && query.length > 0) query.splice(r.int(query.length), 1);
    else if (roll < 0.7 && query.length > 0) query.push([query[r.int(query.length)]![0], r.pick(NASTY)]);
    else query.push([r.pick(PARAMS), r.pick(NASTY)]);
  }
  return query.length > 0 ? `${path}?${query.map(([k, v]) => `${k}=${v}`).join('&')}` : path;
}

describe('gateway under generated requests', () => {
  it(`answers ${REQUESTS} generated requests with JSON and no 5xx, and keeps serving`, async () => {
    const r = rng(20_261_121);
    const paths = Array.from({ length: REQUESTS }, () => request(r));
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < paths.length) {
        const path = paths[next++]!;
        const res = await fetch(base + path);
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) expect.fail(`${res.status} for ${path}: ${text}`);
        expect(res.headers.get('content-type'), path).toBe('application/json');
        expect(() => JSON.parse(text), path).not.toThrow();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // The mix reached the interesting answers, not only rejections.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(REQUESTS / 10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(REQUESTS / 10);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(410) ?? 0).toBeGreaterThan(0);
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});
