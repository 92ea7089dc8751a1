/**
 * A snapshot's write goes through its stages in order, and an operator sees which one it is in and
 * for how long: in the engine's stats (`/stats`) and as `dexdata_snapshot_stage_seconds` on the
 * operator port. Here each stage is held until the test lets it go, as a stuck one would hold it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RequestCounters } from '../../gateway/metrics/counters.js';
import { createMetricsRegistry } from '../../gateway/metrics/registry.js';
import { startMetricsServer } from '../../gateway/metrics/server.js';
import { Catalog } from '../catalog/catalog.js';
import type { NetworkInfo, PoolCreated, TokenInfo } from '../events/model.js';
import { EngineViews } from '../state/views.js';
import { SNAPSHOT_STAGES, Snapshots } from './snapshots.js';
import { cutMain } from './write.js';

const NETWORKS = [{ id: 'ethereum', displayName: 'Ethereum', blockTimeSeconds: 12, dexes: [{ id: 'uni', name: 'Uniswap', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0xf0' }] }] as NetworkInfo[];
const token = (n: number): TokenInfo => ({ address: `0x${n.toString(16).padStart(40, 'b')}`, name: `Token ${n}`, symbol: `T${n}`, decimals: 18, totalSupply: 10n ** 24n, role: 0 }) as TokenInfo;
const created = (n: number): PoolCreated =>
  ({ kind: 'pool_created', key: { blockNumber: n, txIndex: 0, logIndex: 0 }, timestamp: 1_700_000_000 + n, pool: `0x${n.toString(16).padStart(40, 'a')}`, dexId: 'uni', factory: '', protocol: 0, feePpm: 3000, token0: token(n), token1: token(1) }) as unknown as PoolCreated;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A promise and the function that settles it. */
function held<T = void>(): { promise: Promise<T>; release: (value: T) => void } {
  let release!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (release = resolve));
  return { promise, release };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await sleep(2);
  expect(check()).toBe(true);
}

describe('snapshot stages', () => {
  it('names the stage a write is in and for how long, in the stats and on the operator port, and the last write’s time in each', async () => {
    const views = EngineViews.create({ pools: 256, tokens: 256, chains: 2 });
    const catalog = new Catalog(views, 64);
    catalog.syncNetworks(NETWORKS);
    for (let n = 2; n < 8; n++) catalog.createPool(0, created(n));
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-snapshot-stages-'));
    dirs.push(dir);
    const prune = held();
    const snapshots = new Snapshots(dir, views, 2, () => prune.promise);
    const registry = createMetricsRegistry({
      requests: new RequestCounters(),
      streams: null,
      creditsSpent: () => [],
      ingest: () => [],
      now: () => Date.now() / 1000,
      dataDir: dir,
      shardBusySeconds: () => [],
      snapshots: () => {
        const st = snapshots.stats();
        return { ageSeconds: st.newestAgeSeconds, bytes: st.newestBytes, logBatchesSince: 0, stage: st.stage, stageSeconds: st.stageSeconds };
      },
    });
    const metrics = await startMetricsServer(registry, '127.0.0.1', 0);
    const stageSamples = async () => [...(await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text()).matchAll(/^dexdata_snapshot_stage_seconds\{stage="(\w+)"\} ([\d.e+-]+)$/gm)].map((m) => [m[1], Number(m[2])] as const);
    try {
      expect(snapshots.stats()).toMatchObject({ writing: false, stage: null, stageSinceMs: null, lastStagesMs: null });
      expect(await stageSamples()).toEqual([]);

      const copies = held<[]>();
      const durable = held();
      const t0 = Date.now();
      const written = snapshots.take(cutMain(views, 1, catalog.export({ viewColumns: false, shareAppendOnly: true })), copies.promise, () => durable.promise, 1.5);
      // Each stage stays until what it waits on settles: the shards' copies, then their store writes.
      expect(snapshots.stats()).toMatchObject({ writing: true, stage: 'shard_copies' });
      await sleep(40);
      const [[stage, seconds]] = (await stageSamples()) as [[string, number]];
      expect(stage).toBe('shard_copies');
      expect(seconds).toBeGreaterThanOrEqual(0.04);
      expect(seconds).toBeLessThan((Date.now() - t0) / 1000 + 0.001);
      copies.release([]);
      await until(() => snapshots.stats().stage === 'store_durable');
      expect(snapshots.stats().stageSinceMs).toBeGreaterThanOrEqual(t0 + 40);
      await sleep(30);
      expect((await stageSamples()).map(([s]) => s)).toEqual(['store_durable']);
      durable.release();
      // The file is written, then the older snapshots and the log behind them go.
      await until(() => snapshots.stats().stage === 'prune');
      expect(snapshots.list().map((f) => f.seq)).toEqual([1]);
      expect(snapshots.stats()).toMatchObject({ writing: true, newestSeq: 1 });
      await sleep(20);
      expect((await stageSamples()).map(([s]) => s)).toEqual(['prune']);
      prune.release();
      expect((await written).seq).toBe(1);

      const st = snapshots.stats();
      expect(st).toMatchObject({ writing: false, stage: null, stageSinceMs: null });
      expect(await stageSamples()).toEqual([]);
      expect(Object.keys(st.lastStagesMs!)).toEqual([...SNAPSHOT_STAGES]);
      expect(st.lastStagesMs!.shard_copies).toBeGreaterThanOrEqual(40);
      expect(st.lastStagesMs!.store_durable).toBeGreaterThanOrEqual(30);
      expect(st.lastStagesMs!.prune).toBeGreaterThanOrEqual(20);
      expect(st.lastWriteMs).toBe(st.lastStagesMs!.file);
      const total = Object.values(st.lastStagesMs!).reduce((a, b) => a + b, 0);
      expect(total).toBeLessThanOrEqual(Date.now() - t0);
    } finally {
      metrics.close();
    }
  });
});
