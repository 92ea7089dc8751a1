/**
 * Pipelining on uWS's own ports (no HTTP front, the default): a request that reaches the server
 * while the answer before it waits on the shard threads (a pool search) is answered after it, in
 * order, on the same connection. The ranking is held back RANK_DELAY_MS here, so the later request
 * surely arrives, in its own read, while the search is pending.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolRanker } from '../engine/read/index.js';
import type { Gateway } from '../gateway/server.js';
import { parseAnswers, rawExchange, startAllHosts, type AllHosts } from './support/all-hosts.js';

/** Searches are held back this long: the second write leaves once /health before the search is answered, well inside it. */
const RANK_DELAY_MS = 150;

let hosts: AllHosts;
let gateway: Gateway;
let proKey: string;

beforeAll(async () => {
  hosts = await startAllHosts({
    ranker: (shards): PoolRanker => ({
      shards: shards.shards,
      shardOf: (chain) => shards.shardOf(chain),
      rank: async (shard, q) => {
        await new Promise((r) => setTimeout(r, RANK_DELAY_MS));
        return shards.rank(shard, q);
      },
    }),
  });
  gateway = hosts.gateway;
  proKey = hosts.proKey;
});

afterAll(async () => {
  await hosts?.close();
});

/**
 * Writes each part on one connection, the next once the first request of the one before is answered
 * (so the server surely read it, and a search in it is pending); reads until `answers` are complete,
 * the close, or 3 s.
 */
const exchange = (port: number, parts: readonly string[], answers: number) =>
  rawExchange(port, parts, { waitMs: 3_000, sendPart: (got, i) => parseAnswers(got).length >= i, until: (got) => parseAnswers(got).length >= answers });

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
    // The search was held back, so it was still pending when the second write left.
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
