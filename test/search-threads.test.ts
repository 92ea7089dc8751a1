/**
 * Pool search on the real service, its shard threads ranking: many distinct searches asked at once
 * (they reach each shard together), each asked again while no figure moved (a shard answers it
 * again from the page it kept), every answer equal to the full scan: the pools of the unfiltered
 * ranking of its order_by, paged to the end, kept when their row passes every filter, in that
 * order, the first `limit` of them. Simulated swaps are rare here, so the figures stand still
 * between the scan and the searches; the scan is taken again afterwards, and the round repeated
 * when anything moved meanwhile.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startService, type RunningService } from './support/service.js';

interface Row {
  readonly id: string;
  readonly chain: string;
  readonly volume_usd_24h: number;
  readonly liquidity_usd: number;
  readonly transactions_24h: number;
  readonly price_usd: number;
  readonly created_at: string;
}
interface Page {
  readonly results: (Row & Record<string, unknown>)[];
  readonly has_next_page: boolean;
  readonly next_cursor: string | null;
}

let dir: string;
let service: RunningService;
let paid: string;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'search-threads-'));
  // The scans below ask a few thousand pages: a plan whose rate limit allows them.
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ plans: { pro: { requestsPerMinute: 1_000_000, credits: 2_000_000_000 } } }));
  const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--label', 'test', '--data-dir', dir, '--config', config], { encoding: 'utf8' });
  key = /key: (api_\w+)/.exec(created)![1]!;
  service = await startService(['--config', config, '--data-dir', dir, '--pools', '3000', '--backfill-days', '0.2', '--swaps-per-second', '0.05', '--log-level', 'info'], 120_000);
  await service.waitFor(/caught up: \d+ events/, 120_000);
  const m = /paid REST listening on http:\/\/[\d.]+:(\d+)/.exec(service.output())!;
  paid = `http://127.0.0.1:${m[1]}`;
}, 180_000);

afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<Page> {
  const r = await fetch(`${paid}${path}`, { headers: { authorization: key } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${text}`);
  return JSON.parse(text) as Page;
}

/** Every pool in the unfiltered order of `orderBy`, paged to the end. */
async function fullOrder(orderBy: string, sort: string): Promise<Row[]> {
  const out: Row[] = [];
  let cursor: string | null = null;
  do {
    const page = await get(`/pools/search?order_by=${orderBy}&sort=${sort}&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`);
    out.push(...page.results);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return out;
}

interface Case {
  readonly orderBy: 'volume_usd_24h' | 'liquidity_usd' | 'transactions_24h' | 'price_usd' | 'created_at';
  readonly sort: 'desc' | 'asc';
  readonly limit: number;
  readonly chains: readonly string[] | null;
  readonly liqMin: number;
  readonly volMin: number;
  readonly txnsMin: number;
}

const FIELD: Readonly<Record<Case['orderBy'], keyof Row>> = {
  volume_usd_24h: 'volume_usd_24h',
  liquidity_usd: 'liquidity_usd',
  transactions_24h: 'transactions_24h',
  price_usd: 'price_usd',
  created_at: 'created_at',
};

function pathOf(c: Case): string {
  const order = c.orderBy === 'transactions_24h' ? 'txns_24h' : c.orderBy;
  return (
    `/pools/search?order_by=${order}&sort=${c.sort}&limit=${c.limit}&liquidity_usd_min=${c.liqMin}&volume_usd_24h_min=${c.volMin}&txns_24h_min=${c.txnsMin}` +
    (c.chains === null ? '' : `&chains=${c.chains.join(',')}`)
  );
}

/** The answer by full scan: the unfiltered order, filtered on each row's own figures. */
function expected(order: readonly Row[], c: Case): string[] {
  return order
    .filter((r) => (c.chains === null || c.chains.includes(r.chain)) && r.liquidity_usd >= c.liqMin && r.volume_usd_24h >= c.volMin && r.transactions_24h >= c.txnsMin)
    .slice(0, c.limit)
    .map((r) => `${r.chain}:${r.id}`);
}

describe('pool search over the shard threads', () => {
  it('answers searches asked together, and asked again, as the full scan does', async () => {
    const networks = ((await (await fetch(`${paid}/networks`, { headers: { authorization: key } })).json()) as { id: string }[]).map((n) => n.id);
    expect(networks.length).toBeGreaterThan(2);
    const cases: Case[] = [];
    const orders: Case['orderBy'][] = ['volume_usd_24h', 'liquidity_usd', 'transactions_24h', 'price_usd', 'created_at'];
    for (let i = 0; i < 40; i++) {
      cases.push({
        orderBy: orders[i % orders.length]!,
        sort: i % 3 === 0 ? 'asc' : 'desc',
        limit: [5, 10, 37, 100][i % 4]!,
        chains: i % 4 === 1 ? [networks[i % networks.length]!, networks[(i + 3) % networks.length]!] : null,
        liqMin: [0, 1_000, 50_000, 1_000_000][(i >> 1) % 4]!,
        volMin: [0, 10, 1_000][(i >> 2) % 3]!,
        txnsMin: [0, 1, 3][(i >> 3) % 3]!,
      });
    }
    const scan = async () => {
      const all = new Map<string, Row[]>();
      for (const o of orders) for (const s of ['desc', 'asc']) all.set(`${o}|${s}`, await fullOrder(o === 'transactions_24h' ? 'txns_24h' : o, s));
      return all;
    };
    const sum = (m: Map<string, Row[]>) => JSON.stringify([...m.values()].map((rows) => rows.map((r) => [r.id, r.volume_usd_24h, r.liquidity_usd, r.transactions_24h, r.price_usd])));
    let checked = 0;
    for (let round = 0; round < 5 && checked === 0; round++) {
      const before = await scan();
      // Each search asked twice at once, then all of them again: the shards take them in batches and keep their pages.
      const answers = await Promise.all([...cases, ...cases, ...cases].map((c) => get(pathOf(c))));
      const again = await Promise.all(cases.map((c) => get(pathOf(c))));
      const after = await scan();
      if (sum(before) !== sum(after)) continue;
      let nonEmpty = 0;
      for (let i = 0; i < answers.length; i++) {
        const c = cases[i % cases.length]!;
        const order = before.get(`${c.orderBy}|${c.sort}`)!;
        const want = expected(order, c);
        expect(answers[i]!.results.map((r) => `${r.chain}:${r.id}`), pathOf(c)).toEqual(want);
        expect(answers[i]!.has_next_page, pathOf(c)).toBe(expected(order, { ...c, limit: c.limit + 1 }).length > c.limit);
        if (want.length > 0) nonEmpty++;
      }
      for (let i = 0; i < cases.length; i++) {
        expect(again[i]!.results, pathOf(cases[i]!)).toEqual(answers[i]!.results);
        expect(again[i]!.next_cursor, pathOf(cases[i]!)).toBe(answers[i]!.next_cursor);
      }
      // The orderings named a value field that every row carries.
      for (const c of cases) expect(typeof before.get(`${c.orderBy}|${c.sort}`)![0]![FIELD[c.orderBy]]).not.toBe('undefined');
      expect(nonEmpty).toBeGreaterThan(answers.length / 2);
      checked++;
    }
    expect(checked).toBe(1);
  }, 240_000);
});
