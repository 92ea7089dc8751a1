/**
 * Pipelining on uWS's own ports (no HTTP front, the default): a request that reaches the server
 * while the answer before it waits on the shard threads (a pool search) is answered after it, in
 * order, on the same connection. The ranking is held back RANK_DELAY_MS here, so the later request
 * surely arrives, in its own read, while the search is pending.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from '../engine/config.js';
import { Ingest } from '../engine/ingest/ingest.js';
import type { PoolRanker } from '../engine/read/index.js';
import { LocalShards } from '../engine/shards/local.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { openKeyStore } from '../gateway/auth/key-store.js';
import { startGateway, type Gateway } from '../gateway/server.js';
import { parseAnswers } from './support/all-hosts.js';

const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z
const NOW = GENESIS + 2 * 3600;
const RANK_DELAY_MS = 150;
/** When the second write leaves: well inside the search's RANK_DELAY_MS. */
const SECOND_WRITE_MS = 40;

let dir: string;
let store: Store;
let gateway: Gateway;
let proKey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pipelining-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const sim = createSimulator({ seed: 9, pools: 40, genesisTime: GENESIS, swapsPerSecond: 0.5, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  for (let t = GENESIS + 3600; t <= NOW; t += 3600) await (await ingest.ingest(sim.advance(t))).applied;
  await shards.flush();
  const slowRanker: PoolRanker = {
    shards: shards.shards,
    shardOf: () => shards.shardOf(),
    rank: async (shard, q) => {
      await new Promise((r) => setTimeout(r, RANK_DELAY_MS));
      return shards.rank(shard, q);
    },
  };
  const roomy = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };
  const plans = {} as Record<PlanName, PlanLimits>;
  for (const p of Object.keys(DEFAULT_PLANS) as PlanName[]) plans[p] = { ...DEFAULT_PLANS[p], ...roomy };
  proKey = openKeyStore(store).create('pro', 'pipelining', NOW).key;
  gateway = await startGateway(
    { views, registry: ingest.registry, store, ranker: slowRanker, now: () => NOW, swaps: shards.swapFeed },
    { host: '127.0.0.1', port: 0, access: { plans, paidRest: { port: 0 } } },
  );
});

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Writes each part on one connection, SECOND_WRITE_MS apart; reads until `answers` are complete, the close, or 3 s. */
function exchange(port: number, parts: readonly string[], answers: number): Promise<{ bytes: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = connect(port, '127.0.0.1', () => {
      s.setNoDelay(true);
      parts.forEach((p, i) => setTimeout(() => s.writable && s.write(p), i * SECOND_WRITE_MS));
    });
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), 3_000);
    s.on('data', (b: Buffer) => {
      chunks.push(b);
      if (parseAnswers(Buffer.concat(chunks)).length >= answers) finish(false);
    });
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
  });
}

const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

describe.each([
  ['free REST', 'freeRest', ''],
  ['paid REST', 'paidRest', 'pro'],
] as const)('on the %s host without a front', (_name, role, plan) => {
  it('answers requests sent while a pool search is pending, after it, in order, keeping the connection', async () => {
    const auth = plan === '' ? '' : `Authorization: ${proKey}\r\n`;
    const search = get(`/networks/ethereum/pools/search?limit=3&order_by=volume_usd_24h&x=${Math.random()}`, auth);
    const started = performance.now();
    const r = await exchange(gateway.ports[role]!, [get('/health', auth) + search, get('/networks', auth) + get('/health', auth)], 4);
    expect(r.closed).toBe(false);
    const answers = parseAnswers(r.bytes);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.parse(answers[0]!.body.toString()).status).toBe('ok');
    const found = JSON.parse(answers[1]!.body.toString()) as { results: unknown[] };
    expect(found.results.length).toBeGreaterThan(0);
    expect((JSON.parse(answers[2]!.body.toString()) as { id: string }[]).map((n) => n.id)).toContain('ethereum');
    expect(JSON.parse(answers[3]!.body.toString()).status).toBe('ok');
    // The search was still pending when the second write left.
    expect(performance.now() - started).toBeGreaterThanOrEqual(RANK_DELAY_MS);
  });
});

describe('a client leaving while its search is pending', () => {
  it('is answered when it only ended its sending side', async () => {
    const r = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const s = connect(gateway.port, '127.0.0.1', () => {
        s.end(get(`/networks/ethereum/pools/search?limit=2&x=${Math.random()}`));
      });
      s.on('data', (b: Buffer) => chunks.push(b));
      s.on('close', () => resolve(Buffer.concat(chunks)));
      s.on('error', () => resolve(Buffer.concat(chunks)));
    });
    expect(parseAnswers(r).map((a) => a.status)).toEqual([200]);
  });

  it('leaves the server serving when it hung up', async () => {
    const s = connect(gateway.port, '127.0.0.1', () => {
      s.write(get(`/networks/ethereum/pools/search?limit=2&x=${Math.random()}`));
      setTimeout(() => s.destroy(), 10);
    });
    await new Promise((r) => setTimeout(r, RANK_DELAY_MS + 50));
    const r = await exchange(gateway.port, [get('/health')], 1);
    expect(parseAnswers(r.bytes).map((a) => a.status)).toEqual([200]);
  });
});
