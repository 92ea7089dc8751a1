/**
 * The real service as a user runs it: a child process with its own LMDB directory, killed with
 * SIGKILL in the middle of its backfill (and at random points of its snapshot writes), restarted,
 * and compared with a run that was never killed.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { trimMalloc } from '../engine/memory.js';
import { openStore } from '../engine/store/store.js';
import { startService, type RunningService } from './support/service.js';
import { expectSameHistory, loggedTransactionKeys, storeDump as snapshot, type StoreDump } from './support/store-dump.js';

/** Two days before now, on the hour: fixed for the whole file so both runs share one timeline. */
const GENESIS = Math.floor(Date.now() / 3_600_000) * 3600 - 2 * 86_400;
const SIM = ['--pools', '600', '--swaps-per-second', '3', '--genesis-time', String(GENESIS), '--shards', '2'];
const dirs: string[] = [];
const running: RunningService[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'dexdata-service-'));
  dirs.push(d);
  return d;
}

async function start(dir: string, extra: readonly string[] = []): Promise<RunningService> {
  const s = await startService(['--data-dir', dir, ...SIM, ...extra]);
  running.push(s);
  return s;
}

afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill9();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('dexdata serve', () => {
  it('answers over HTTP while it backfills, and a kill -9 mid-ingest loses nothing acknowledged', async () => {
    const dir = tempDir();
    const first = await start(dir);
    // Mid-ingest: the backfill of 30 days is under way once the log has grown.
    const health = await fetch(`${first.url}/health`);
    expect(health.status).toBe(200);
    // Mid-backfill on the simulator: up, still catching up, no node to report on.
    expect(await health.json()).toEqual({ status: 'ok', phase: 'catching_up', chains: [] });
    await first.waitFor(/catching up: (?:[2-9]\d)% /, 120_000);
    expect(first.output()).not.toMatch(/caught up/);
    await first.kill9();
    const before = await snapshot(dir);
    expect(before.head).toBeGreaterThan(0);
    expect(before.candles.size).toBeGreaterThan(0);

    const second = await start(dir);
    await second.waitFor(/caught up/, 240_000);
    // The service serves the history it rebuilt.
    const nets = (await (await fetch(`${second.url}/networks`)).json()) as { id: string; pools_count: number }[];
    expect(nets.map((n) => n.id)).toContain('ethereum');
    // 85 % of the configured pools exist at genesis; the rest appear over time.
    const served = nets.reduce((a, n) => a + n.pools_count, 0);
    expect(served).toBeGreaterThanOrEqual(510);
    expect(await second.stop()).toBe(0);
    const after = await snapshot(dir);
    const stored = openStore(dir);
    const storedPools = stored.pools.getCount();
    await stored.close();
    expect(storedPools).toBeGreaterThanOrEqual(served);

    // Nothing acknowledged before the kill is lost or rewritten: every swap, mint and burn of the log
    // as it stood (acknowledged, whether or not a shard had applied it yet) is a stored transaction
    // now, every transaction stored then is stored unchanged, and the batches the log still holds
    // (the rest went behind a snapshot) are the same bytes.
    // (Transactions are kept for 7 days: the pools made before the simulated history have older first mints.)
    const acknowledged = loggedTransactionKeys(before, GENESIS);
    expect(acknowledged.length).toBeGreaterThan(1000);
    for (const key of acknowledged) expect(after.txs.has(key), `transaction ${key}`).toBe(true);
    for (const [key, value] of before.txs) expect(after.txs.get(key), `transaction ${key}`).toBe(value);
    for (const [seq, bytes] of before.log) if (seq > after.prunedThrough) expect(after.log.get(seq), `log batch ${seq}`).toBe(bytes);
    // Every candle stored then is stored now: unchanged, or, one stored while still open (its pool
    // handed it over going quiet, then traded again), with the swaps it took since added (record:
    // token 0's OHLC, token 1's, volumes, then transactions).
    for (const [key, value] of before.candles) {
      const now = after.candles.get(key);
      expect(now, `candle ${key}`).toBeDefined();
      if (now === value) continue;
      const [then, later] = [JSON.parse(value) as number[], JSON.parse(now!) as number[]];
      expect(later[10], `candle ${key} transactions`).toBeGreaterThan(then[10]!);
      expect([later[0], later[4]], `candle ${key} opens`).toEqual([then[0], then[4]]);
    }
    for (const [chain, ck] of before.checkpoints) {
      const now = after.checkpoints.get(chain)!;
      expect(now.block * 1e6 + now.tx).toBeGreaterThanOrEqual(ck.block * 1e6 + ck.tx);
    }

    // Same events as a run that was never interrupted: none lost, none twice.
    const { reference } = await cleanRun();
    await expectSameHistory(after, reference);
  }, 600_000);

  it('killed with -9 at random points of its snapshot writes, it restarts from the newest complete snapshot and serves what a clean run serves', async () => {
    const dir = tempDir();
    // A snapshot every 40,000 events while it backfills and every second once live, so the kills
    // land in and between writes whichever phase each run is in.
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ ...ANSWERS_CONFIG, snapshots: { everyEvents: 40_000, intervalSeconds: 1, keep: 2 } }));
    const random = seeded(20_261_125);
    let service = await start(dir, ['--config', config]);
    const loaded: number[] = [];
    for (let round = 0; round < 3; round++) {
      await service.waitFor(new RegExp(`(?:snapshot of log batch \\d+[^]*?){${1 + (round % 2)}}`), 120_000);
      await sleep(Math.floor(random() * 400));
      await service.kill9();
      service = await start(dir, ['--config', config]);
      const m = /loaded the snapshot of log batch (\d+)/.exec(service.output());
      // Every start after the first snapshot was durable loads one: a cut-short write never counts.
      expect(m, service.output()).not.toBeNull();
      loaded.push(Number(m![1]));
      expect(readdirSync(join(dir, 'snapshots')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    }
    expect(loaded.every((seq, i) => i === 0 || seq >= loaded[i - 1]!)).toBe(true);
    await service.waitFor(/caught up/, 240_000);

    // /stats tells the snapshots' state and how much log they leave to replay.
    await service.waitFor(/snapshot of log batch \d+: /, 60_000);
    // Live, each cut hands what it freed in glibc's arenas back to the system (where this process can trim its own: elsewhere nothing is done).
    if (trimMalloc() !== null) await service.waitFor(/snapshot of log batch \d+: [^\n]*; malloc arenas trimmed in \d+ ms/, 60_000);
    const stats = (await (await fetch(`${service.url}/stats`)).json()) as {
      engine: {
        log_head: number;
        log_batches_since_snapshot: number;
        snapshots: {
          count: number;
          newest_log_batch: number;
          newest_bytes: number;
          newest_age_seconds: number;
          last_main_pause_ms: number;
          last_write_ms: number;
          stage: string | null;
          stage_seconds: number | null;
          last_stages_ms: Record<string, number>;
        };
      };
    };
    expect(stats.engine.snapshots.count).toBeGreaterThanOrEqual(1);
    // Its age in seconds (one every second once live), and what the last cut held ingest for.
    expect(stats.engine.snapshots.newest_age_seconds).toBeGreaterThanOrEqual(0);
    expect(stats.engine.snapshots.newest_age_seconds).toBeLessThan(60);
    expect(stats.engine.snapshots.last_main_pause_ms).toBeGreaterThanOrEqual(0);
    expect(stats.engine.snapshots.count).toBeLessThanOrEqual(2);
    expect(stats.engine.snapshots.newest_bytes).toBeGreaterThan(0);
    expect(stats.engine.log_batches_since_snapshot).toBe(stats.engine.log_head - stats.engine.snapshots.newest_log_batch);
    // Where a snapshot being written is (one a second: often one is), and how long the last one spent in each stage.
    const sn = stats.engine.snapshots;
    expect([null, 'shard_copies', 'store_durable', 'file', 'prune']).toContain(sn.stage);
    if (sn.stage === null) expect(sn.stage_seconds).toBeNull();
    else expect(sn.stage_seconds).toBeGreaterThanOrEqual(0);
    expect(Object.keys(sn.last_stages_ms)).toEqual(['shard_copies', 'store_durable', 'file', 'prune']);
    for (const ms of Object.values(sn.last_stages_ms)) expect(ms).toBeGreaterThanOrEqual(0);
    // The file's stage is the write time /stats reports.
    expect(sn.last_write_ms).toBe(sn.last_stages_ms.file);
    expect(service.output()).toMatch(/written in \d+ ms \(shard copies \d+ ms, store durable \d+ ms, file \d+ ms, prune \d+ ms\)/);
    const answers = await pastAnswers(service, dir);
    expect(await service.stop()).toBe(0);
    const after = await snapshot(dir);
    // By default the log behind the oldest snapshot kept is gone: what follows proves the history from what is served.
    expect(after.prunedThrough).toBeGreaterThan(0);
    expect(after.log.has(after.prunedThrough)).toBe(false);

    const { reference, answers: expected } = await cleanRun();
    expect(answers.size).toBe(expected.size);
    for (const [path, body] of expected) expect(answers.get(path), path).toBe(body);
    await expectSameHistory(after, reference);
  }, 600_000);
});

/**
 * Answers about the settled past, equal in every run of the simulation: hourly candles of a window
 * that closed hours ago, and the catalog's part of every pool made in the first day (pool details
 * without the live figures: address, DEX, creation, fee, both tokens' names, symbols and decimals).
 */
async function pastAnswers(service: RunningService, dir: string): Promise<Map<string, string>> {
  const store = openStore(dir);
  const paths: string[] = [];
  const details: string[] = [];
  try {
    const chains = new Map<number, string>();
    for (const { value } of store.networks.getRange()) chains.set(value.index, value.id);
    for (const { value } of store.pools.getRange({ limit: 4 })) paths.push(`/networks/${chains.get(value.chain)}/pools/${value.address}/ohlcv?interval=1h&start=${GENESIS + 30 * 3600}&end=${GENESIS + 40 * 3600}&limit=100`);
    for (const { value } of store.pools.getRange()) if (value.createdAt < GENESIS + 86_400) details.push(`/networks/${chains.get(value.chain)}/pools/${value.address}`);
  } finally {
    await store.close();
  }
  expect(details.length).toBeGreaterThan(400);
  const out = new Map<string, string>();
  for (const path of paths) {
    const r = await fetch(service.url + path);
    expect(r.status, path).toBe(200);
    out.set(path, await r.text());
  }
  for (const path of details) {
    const r = await fetch(service.url + path);
    expect(r.status, path).toBe(200);
    const d = (await r.json()) as Record<string, unknown> & { tokens: Record<string, unknown>[] };
    const pick = (o: Record<string, unknown>, keys: readonly string[]) => keys.map((k) => o[k]);
    out.set(path, JSON.stringify([pick(d, CATALOG_FIELDS), d.tokens.map((t) => pick(t, TOKEN_FIELDS))]));
  }
  return out;
}

/** Requests without a key are not limited: pastAnswers asks for every pool of the first day. */
const ANSWERS_CONFIG = { plans: { keyless: { requestsPerMinute: 1_000_000 } } };

/** The fields of pool details (and of its tokens) that come from the catalog alone. */
const CATALOG_FIELDS = ['id', 'chain', 'dex_id', 'dex_name', 'factory_id', 'created_at', 'created_at_block_number', 'fee'] as const;
const TOKEN_FIELDS = ['id', 'name', 'symbol', 'chain', 'decimals', 'added_at'] as const;

let clean: Promise<{ reference: StoreDump; answers: Map<string, string> }> | null = null;

/** One run that is never interrupted, shared by the tests that compare with it. */
function cleanRun(): Promise<{ reference: StoreDump; answers: Map<string, string> }> {
  clean ??= (async () => {
    const cleanDir = tempDir();
    const config = join(cleanDir, 'config.json');
    writeFileSync(config, JSON.stringify(ANSWERS_CONFIG));
    const service = await start(cleanDir, ['--config', config]);
    await service.waitFor(/caught up/, 240_000);
    const answers = await pastAnswers(service, cleanDir);
    expect(await service.stop()).toBe(0);
    return { reference: await snapshot(cleanDir), answers };
  })();
  return clean;
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
