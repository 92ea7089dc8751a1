/**
 * Ingest throughput: simulator events encoded into FlatBuffers batches once, then applied by the
 * shard threads (every candle interval, every rolling window, token prices and 1 s candles) with
 * nothing persisted, so the figure is the engine's own rate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ingest } from '../engine/ingest/ingest.js';
import type { CommittedBatch, ShardDispatcher } from '../engine/pipeline.js';
import { ShardPool } from '../engine/shards/shard-pool.js';
import type { ApplyStats } from '../engine/shards/apply.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { EngineViews } from '../engine/state/views.js';
import { adviseHugePages } from '../engine/memory.js';
import { openStore } from '../engine/store/store.js';

export interface IngestBenchOptions {
  readonly shards: number;
  readonly pools: number;
  readonly hours: number;
  readonly swapsPerSecond: number;
}

export interface IngestBenchResult {
  readonly events: number;
  readonly swaps: number;
  readonly batches: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly swapsPerSecond: number;
  /** Rate of the whole pipeline while preparing: simulate, dedupe, encode, commit to LMDB. */
  readonly prepareEventsPerSecond: number;
  /** Share of the apply phase the main thread was busy (dispatching). */
  readonly mainThreadUtilization: number;
  /**
   * The first source step's seconds and swaps: fresh shard threads run it while they and V8's
   * platform threads compile the writer's code on the same cores, several times slower than later steps.
   */
  readonly firstStepSeconds: number;
  readonly firstStepSwaps: number;
  /** The rates from the end of the first source step to the end: what a running service sustains. */
  readonly sustainedEventsPerSecond: number;
  readonly sustainedSwapsPerSecond: number;
}

const GROUPS_IN_FLIGHT = 4;

/** The section's input: what the shards would be handed, one group of batches per source step, and the views as ingest left them. */
export interface IngestInput {
  readonly views: EngineViews;
  readonly groups: readonly (readonly CommittedBatch[])[];
  /** Events accepted, and the seconds it took to simulate, dedupe, encode and commit them to a scratch LMDB. */
  readonly events: number;
  readonly seconds: number;
}

export async function prepareIngest(o: Pick<IngestBenchOptions, 'pools' | 'hours' | 'swapsPerSecond'>): Promise<IngestInput> {
  const dir = mkdtempSync(join(tmpdir(), 'dexdata-bench-ingest-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: Math.max(4096, o.pools * 2), tokens: Math.max(4096, o.pools * 2), chains: 16 });
  // As the service does (engine/engine.ts): the large columns on huge pages.
  adviseHugePages(views.columnTable.map((c) => c.array));
  /** What the service would hand the shards, one group per source step. */
  const captured: (readonly CommittedBatch[])[] = [];
  const capture: ShardDispatcher = {
    apply(batches) {
      captured.push(batches);
      return Promise.resolve();
    },
  };
  const ingest = new Ingest(store, views, capture);
  const genesisTime = Math.floor(Date.now() / 1000 / 3600) * 3600 - o.hours * 3600;
  const sim = createSimulator({ seed: 1, pools: o.pools, genesisTime, swapsPerSecond: o.swapsPerSecond, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  const prepStarted = performance.now();
  let prepared = 0;
  for (let t = genesisTime + 600; t <= genesisTime + o.hours * 3600; t += 600) {
    const r = await ingest.ingest(await sim.advance(t));
    await r.applied;
    prepared += r.accepted;
  }
  const seconds = (performance.now() - prepStarted) / 1000;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { views, groups: captured, events: prepared, seconds };
}

export async function benchIngest(o: IngestBenchOptions): Promise<IngestBenchResult> {
  const { views, groups: captured, events: prepared, seconds: prepSeconds } = await prepareIngest(o);
  const shards = new ShardPool({ shards: o.shards, buffers: views.buffers, storePath: null });
  // Start the threads before timing.
  await shards.sweep(0);
  const elu0 = performance.eventLoopUtilization();
  const started = performance.now();
  const inFlight = new Set<Promise<ApplyStats>>();
  let events = 0;
  let swaps = 0;
  // Where the first source step ended (groups settle in order: each shard's tasks are chained).
  let first: { ms: number; events: number; swaps: number } | null = null;
  for (const group of captured) {
    const p = shards.apply(group).then((s) => {
      events += s.events;
      swaps += s.swaps;
      first ??= { ms: performance.now() - started, events, swaps };
      inFlight.delete(p);
      return s;
    });
    inFlight.add(p);
    if (inFlight.size >= GROUPS_IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  const mainThreadUtilization = performance.eventLoopUtilization(elu0).utilization;
  await shards.close();
  const step = first ?? { ms: 0, events: 0, swaps: 0 };
  const after = seconds - step.ms / 1000;
  return {
    events,
    swaps,
    batches: captured.reduce((a, g) => a + g.length, 0),
    seconds,
    eventsPerSecond: events / seconds,
    swapsPerSecond: swaps / seconds,
    prepareEventsPerSecond: prepared / prepSeconds,
    mainThreadUtilization,
    firstStepSeconds: step.ms / 1000,
    firstStepSwaps: step.swaps,
    sustainedEventsPerSecond: (events - step.events) / after,
    sustainedSwapsPerSecond: (swaps - step.swaps) / after,
  };
}
