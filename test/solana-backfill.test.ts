/**
 * Solana started from recent history (`dexdata serve --network solana --rpc URL --recent DAYS`): the
 * recorded mainnet transactions are replayed as blocks spread over the last four and a half days
 * (every other slot skipped), and the real service, started with `--recent 2`, must find the first
 * block of the last two days by block time and serve every swap from it on and none before: checked
 * per transaction against solana-dex-parser's reading of the recorded transactions. /stats shows the
 * backfill (slots done of the slots to read, pools per DEX) and the log says where it started.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DexParser } from 'solana-dex-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startService, type RunningService } from './support/service.js';
import { loadFixtureTransactions, startReplayNode, type FixtureTransaction, type ReplayNode } from './support/solana-replay.js';

const loaded = loadFixtureTransactions();
const skip = typeof loaded === 'string' ? loaded : null;
if (skip) console.log(`skipping the Solana backfill test: ${skip}`);

const DAY = 86_400;
const NOW = Math.floor(Date.now() / 1000);
/** Two days back: the start the service must find. */
const SINCE = NOW - 2 * DAY;
/** Blocks 10,000 s apart, the start falling midway between two of them (far from either whatever the service's clock reads). */
const SPACING_S = 10_000;
const BEFORE = 20;
/** The families the source decodes, as solana-dex-parser names them. */
const AMMS = new Set(['RaydiumV4', 'RaydiumCPMM', 'RaydiumCL', 'Orca', 'MeteoraDLMM', 'MeteoraDamm', 'MeteoraDammV2', 'Pumpfun', 'Pumpswap']);

describe.skipIf(skip !== null)('Solana started from recent history (--recent DAYS)', () => {
  const txs = skip ? [] : (loaded as FixtureTransaction[]);
  const parser = new DexParser();
  /** Swaps of the decoded families per transaction, as the independent decoder reads them. */
  const trades = new Map<string, number>();
  for (const t of txs) trades.set(t.signature, (parser.parseAll(t.tx as never, { tryUnknowDEX: false }).trades as { amm: string }[]).filter((x) => AMMS.has(x.amm)).length);
  let node: ReplayNode;
  let dir = '';
  let service: RunningService | undefined;
  let url = '';
  let key = '';

  beforeAll(async () => {
    // Block i at SINCE - (BEFORE + 0.5 - i) * SPACING_S: blocks 0..BEFORE before the start, the others after it.
    node = await startReplayNode({ transactions: txs, firstTime: SINCE - Math.round((BEFORE + 0.5) * SPACING_S), spacingSeconds: SPACING_S });
    expect(node.timeOf.get(node.slots.at(-1)!)!).toBeLessThan(NOW - 3_600);
    dir = mkdtempSync(join(tmpdir(), 'solana-recent-'));
    const data = join(dir, 'data');
    key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', data], { encoding: 'utf8' }))![1]!;
    service = await startService(['--network', 'solana', '--rpc', node.url, '--recent', '2', '--data-dir', data]);
    await service.waitFor(/caught up/, 60_000);
    const line = await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/);
    url = `http://127.0.0.1:${/:(\d+)$/.exec(line)![1]}`;
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await node?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string): Promise<{ status: number; body: any }> => {
    const r = await fetch(url + path, { headers: { authorization: key } });
    return { status: r.status, body: await r.json() };
  };

  it('starts at the first block of the last two days, found by block time over skipped slots', () => {
    const start = node.slots[BEFORE + 1]!;
    // The block before it is older than two days, the block itself not (the slot between them holds none).
    expect(node.timeOf.get(node.slots[BEFORE]!)!).toBeLessThan(SINCE);
    expect(node.timeOf.get(start)!).toBeGreaterThanOrEqual(SINCE);
    expect(start - node.slots[BEFORE]!).toBe(2);
    expect(service!.output()).toContain(`solana: starting 2 days back, at slot ${start} (first block at or after `);
    expect(service!.output()).toMatch(new RegExp(`solana: backfill at slot ${node.head} of ${node.head}, .* ${node.head + 1 - start} of ${node.head + 1 - start} slots done, ${node.slots.length - BEFORE - 1} blocks`));
  });

  it('serves every swap of the blocks from the start on and none of the blocks before it', async () => {
    const search = await get('/networks/solana/pools/search?limit=100');
    expect(search.status).toBe(200);
    const served = new Map<string, number>();
    for (const p of search.body.results as { id: string }[]) {
      const r = await get(`/networks/solana/pools/${p.id}/transactions?limit=100`);
      expect(r.status).toBe(200);
      for (const x of r.body as { transaction_hash: string }[]) served.set(x.transaction_hash, (served.get(x.transaction_hash) ?? 0) + 1);
    }
    const start = node.slots[BEFORE + 1]!;
    let inside = 0;
    let outside = 0;
    for (const t of txs) {
      const want = trades.get(t.signature)!;
      if (node.slotOf.get(t.signature)! >= start) {
        expect(served.get(t.signature) ?? 0, `${t.signature} (after the start)`).toBe(want);
        inside += want;
      } else {
        expect(served.has(t.signature), `${t.signature} (before the start)`).toBe(false);
        outside += want;
      }
    }
    // Both sides hold swaps, or the test proves nothing.
    expect(inside).toBeGreaterThanOrEqual(10);
    expect(outside).toBeGreaterThanOrEqual(10);
    expect([...served.values()].reduce((a, b) => a + b, 0)).toBe(inside);
  });

  it('/stats shows the backfill: its first slot, slots done of the slots to read, pools per DEX', async () => {
    const r = await get('/stats');
    expect(r.status).toBe(200);
    const [chain] = r.body.engine.backfill as Record<string, any>[];
    const start = node.slots[BEFORE + 1]!;
    const total = node.head + 1 - start;
    expect(chain).toMatchObject({ chain: 'solana', state: 'live', start_block: start, next_block: node.head + 1, safe_block: node.head, blocks_done: total, blocks_total: total, pools_taken_up: 0 });
    const factories = chain['factories'] as { dex_id: string; pools: number }[];
    expect(factories.reduce((n, f) => n + f.pools, 0)).toBe(chain['pools']);
    expect(chain['pools']).toBe(r.body.pools);
    // Per DEX: the pools its program served.
    const search = await get('/networks/solana/pools/search?limit=99');
    const served = search.body.results as { dex_id: string }[];
    expect(served.length).toBe(chain['pools']);
    for (const f of factories) expect(served.filter((x) => x.dex_id === f.dex_id).length, f.dex_id).toBe(f.pools);
  });
});
