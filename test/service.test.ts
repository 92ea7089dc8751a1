/**
 * The real service as a user runs it: a child process with its own LMDB directory, killed with
 * SIGKILL in the middle of its backfill, restarted, and compared with a run that was never killed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeBatch } from '../engine/events/codec.js';
import { allStoredCandles } from '../engine/store/candles.js';
import { metaKeys, openStore, type Checkpoint } from '../engine/store/store.js';
import { startService, type RunningService } from './support/service.js';

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

async function start(dir: string): Promise<RunningService> {
  const s = await startService(['--data-dir', dir, ...SIM]);
  running.push(s);
  return s;
}

interface Snapshot {
  head: number;
  checkpoints: Map<string, Checkpoint>;
  candles: Map<string, string>;
  log: Map<number, string>;
}

async function snapshot(dir: string): Promise<Snapshot> {
  const store = openStore(dir);
  try {
    const checkpoints = new Map<string, Checkpoint>();
    for (const { key, value } of store.meta.getRange()) if (key.startsWith('checkpoint.')) checkpoints.set(key.slice(11), value as Checkpoint);
    const candles = new Map<string, string>();
    for (const { key, record } of allStoredCandles(store)) candles.set(key.join('/'), JSON.stringify(record));
    const log = new Map<number, string>();
    for (const { key, value } of store.log.getRange()) log.set(key, Buffer.from(value).toString('base64'));
    return { head: (store.meta.get(metaKeys.logHead) as number) ?? 0, checkpoints, candles, log };
  } finally {
    await store.close();
  }
}

/** Each chain's on-chain events, in order, as canonical text, up to (and including) a checkpoint. */
async function chainEvents(dir: string, upTo: Map<string, Checkpoint>): Promise<Map<string, string[]>> {
  const store = openStore(dir);
  const out = new Map<string, string[]>();
  try {
    for (const { value } of store.log.getRange()) {
      const { chain, events } = decodeBatch(value);
      const limit = upTo.get(chain);
      if (!limit) continue;
      const list = out.get(chain) ?? [];
      for (const e of events) {
        if (e.kind === 'block' || e.kind === 'reorg') continue;
        const k = e.key;
        if (k.blockNumber > limit.block || (k.blockNumber === limit.block && (k.txIndex > limit.tx || (k.txIndex === limit.tx && k.logIndex > limit.log)))) continue;
        list.push(JSON.stringify(e, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      }
      out.set(chain, list);
    }
  } finally {
    await store.close();
  }
  return out;
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

    // Nothing acknowledged before the kill is lost or rewritten.
    for (const [seq, bytes] of before.log) expect(after.log.get(seq), `log batch ${seq}`).toBe(bytes);
    for (const [key, value] of before.candles) expect(after.candles.get(key), `candle ${key}`).toBe(value);
    for (const [chain, ck] of before.checkpoints) {
      const now = after.checkpoints.get(chain)!;
      expect(now.block * 1e6 + now.tx).toBeGreaterThanOrEqual(ck.block * 1e6 + ck.tx);
    }

    // Same events as a run that was never interrupted: none lost, none twice.
    const cleanDir = tempDir();
    const clean = await start(cleanDir);
    await clean.waitFor(/caught up/, 240_000);
    expect(await clean.stop()).toBe(0);
    const reference = await snapshot(cleanDir);
    const common = new Map<string, Checkpoint>();
    for (const [chain, ck] of after.checkpoints) {
      const other = reference.checkpoints.get(chain)!;
      common.set(chain, ck.block < other.block || (ck.block === other.block && ck.tx <= other.tx) ? ck : other);
    }
    const a = await chainEvents(dir, common);
    const b = await chainEvents(cleanDir, common);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [chain, list] of a) {
      expect(list.length, `${chain} event count`).toBe(b.get(chain)!.length);
      expect(list).toEqual(b.get(chain));
    }
    // Sealed candles of the common past agree too. A candle is stored once it leaves its ring, when a
    // later one of its pool and interval opens, which depends on trades after the common checkpoint:
    // each candle the restarted run must have stored (it stored a later one of the same series) is there, unchanged.
    const cutoff = Math.min(...[...common.values()].map((c) => c.time)) - 86_400;
    const newestStored = new Map<string, number>();
    for (const key of after.candles.keys()) {
      const [pool, interval, time] = key.split('/');
      const series = `${pool}/${interval}`;
      newestStored.set(series, Math.max(newestStored.get(series) ?? -Infinity, Number(time)));
    }
    let compared = 0;
    for (const [key, value] of reference.candles) {
      const [pool, interval, time] = key.split('/');
      if (Number(time) + 86_400 > cutoff || Number(time) > (newestStored.get(`${pool}/${interval}`) ?? -Infinity)) continue;
      expect(after.candles.get(key), `candle ${key}`).toBe(value);
      compared++;
    }
    expect(compared).toBeGreaterThan(1000);
  }, 600_000);
});
