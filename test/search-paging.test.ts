/**
 * Pool and token search paging over real HTTP while the market moves between pages: the simulator
 * keeps trading (and the windows keep rolling) after every page, yet following next_cursor serves
 * every pool (token) exactly once, in the order the ranking had at the first page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { createSimulator, type Simulator } from '../engine/sources/simulator/index.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { startGateway, type Gateway } from '../gateway/server.js';

const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z

let dir = '';
let store: Store;
let gateway: Gateway;
let base = '';
let sim: Simulator;
let ingest: Ingest;
let shards: LocalShards;
let clock = GENESIS + 6 * 3600;

async function advance(seconds: number): Promise<void> {
  clock += seconds;
  await (await ingest.ingest(sim.advance(clock))).applied;
  shards.sweep(ingest.registry.networks.length);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dexdata-paging-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 4096, tokens: 4096, chains: 16 });
  shards = new LocalShards(views, store);
  ingest = new Ingest(store, views, shards);
  // Busy: many swaps per pool per minute, so the ranking changes between any two pages.
  sim = createSimulator({ seed: 11, pools: 400, genesisTime: GENESIS, swapsPerSecond: 4, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  for (let t = GENESIS + 3600; t <= clock; t += 3600) await (await ingest.ingest(sim.advance(t))).applied;
  await shards.flush();
  gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => clock }, { host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${gateway.port}`;
});

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Row {
  id: string;
  chain: string;
  volume_usd_24h: number;
  transactions_24h: number;
}

async function page(query: string): Promise<{ results: Row[]; next_cursor: string | null }> {
  const r = await fetch(`${base}/pools/search?${query}`);
  expect(r.status).toBe(200);
  return (await r.json()) as { results: Row[]; next_cursor: string | null };
}

describe('pool search paging while the market moves', () => {
  for (const [order, sort] of [
    ['volume_usd_24h', 'desc'],
    ['txns_24h', 'asc'],
    ['price_change_percentage_1h', 'desc'],
  ] as const) {
    it(`serves every pool exactly once by ${order} ${sort}`, async () => {
      const expected = new Set<string>();
      for (const p of ingest.registry.pools) if (p) expected.add(`${ingest.registry.networks[p.chain]!.id}:${p.address}`);
      const first = await page(`order_by=${order}&sort=${sort}&limit=100`);
      const firstOrder = first.results.map((r) => `${r.chain}:${r.id}`);

      const seen: string[] = [];
      let cursor: string | null = null;
      let moved = 0;
      for (let n = 0; n < 200; n++) {
        const before = await page(`order_by=${order}&sort=${sort}&limit=7${cursor === null ? '' : `&cursor=${cursor}`}`);
        for (const r of before.results) seen.push(`${r.chain}:${r.id}`);
        cursor = before.next_cursor;
        if (cursor === null) break;
        // The market moves: trades in many pools, windows roll.
        const volumes = new Map(before.results.map((r) => [r.id, r.volume_usd_24h]));
        await advance(90);
        const again = await page(`order_by=${order}&sort=${sort}&limit=100`);
        for (const r of again.results) if (volumes.has(r.id) && volumes.get(r.id) !== r.volume_usd_24h) moved++;
      }
      expect(new Set(seen).size, 'a pool was served twice').toBe(seen.length);
      expect(new Set(seen)).toEqual(expected);
      // The first 7 pages follow the order of the first page's ranking.
      expect(seen.slice(0, firstOrder.length).slice(0, 7)).toEqual(firstOrder.slice(0, 7));
      // The data did move under the paging.
      expect(moved).toBeGreaterThan(0);
    });
  }

  for (const [order, sort] of [
    ['volume_usd_24h', 'desc'],
    ['liquidity_usd', 'asc'],
  ] as const) {
    it(`serves every token exactly once by ${order} ${sort}`, async () => {
      const expected = new Set<string>();
      for (const t of ingest.registry.tokens) if (t) expected.add(`${ingest.registry.networks[t.chain]!.id}:${t.address}`);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let n = 0; n < 400; n++) {
        const r = await fetch(`${base}/tokens/search?order_by=${order}&sort=${sort}&limit=9${cursor === null ? '' : `&cursor=${cursor}`}`);
        expect(r.status).toBe(200);
        const body = (await r.json()) as { results: { address: string; chain: string }[]; next_cursor: string | null };
        for (const t of body.results) seen.push(`${t.chain}:${t.address}`);
        cursor = body.next_cursor;
        if (cursor === null) break;
        await advance(90);
      }
      expect(new Set(seen).size, 'a token was served twice').toBe(seen.length);
      expect(new Set(seen)).toEqual(expected);
    });
  }

  it('answers a cursor from another ordering with 400 naming it', async () => {
    const first = await page('order_by=volume_usd_24h&limit=2');
    const r = await fetch(`${base}/pools/search?order_by=liquidity_usd&limit=2&cursor=${first.next_cursor}`);
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: 'invalid_parameter', param: 'cursor' });
  });
});
