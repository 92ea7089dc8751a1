/**
 * The engine assembled: LMDB store, shared-memory views, shard threads and ingest, with the driver
 * that pulls a source from its checkpoint to now (accelerated) and then follows it in real time.
 * On start the views are rebuilt by replaying the durable log, so a crash loses nothing acknowledged.
 */
import { mkdirSync } from 'node:fs';
import { Ingest } from './ingest/ingest.js';
import { errorText, fallbackLog, type Log } from './log.js';
import type { Registry } from './ingest/registry.js';
import { ShardPool } from './shards/shard-pool.js';
import type { Source } from './sources/source.js';
import { EngineViews, type EngineCapacity } from './state/views.js';
import { openStore, type Store } from './store/store.js';

export interface EngineOptions {
  readonly dataDir: string;
  readonly shards: number;
  readonly capacity: EngineCapacity;
  /** The source, or a factory given the opened store (to read what it persisted earlier). */
  readonly source: Source | ((store: Store) => Source);
  /** Simulated seconds per source step while catching up. */
  readonly catchUpStepSeconds?: number;
  /** Milliseconds between source steps once live. */
  readonly liveTickMs?: number;
  /** Milliseconds between sweeps that age rolling windows of idle pools. */
  readonly sweepIntervalMs?: number;
  /** Unix seconds; the wall clock by default. */
  readonly now?: () => number;
  /** Progress and failures; warnings and errors on stderr without it (engine/log.ts). */
  readonly log?: Log;
}

export interface EngineStatus {
  readonly phase: 'replaying' | 'catching_up' | 'live' | 'stopped';
  readonly logHead: number;
  readonly sourceTime: number;
  readonly eventsIngested: number;
  readonly replayedBatches: number;
}

export interface EngineHealth {
  /** `degraded` while some chain's node is down. */
  readonly status: 'ok' | 'degraded';
  readonly phase: EngineStatus['phase'];
  readonly chains: readonly object[];
}

export interface Engine {
  /** Rejects if the ingest loop fails (the service should exit). */
  readonly failed: Promise<never>;
  readonly views: EngineViews;
  readonly registry: Registry;
  readonly store: Store;
  readonly ingest: Ingest;
  readonly shards: ShardPool;
  status(): EngineStatus;
  /** What /health details: the engine's phase and, for sources that read a node, each chain's state. */
  health(): EngineHealth;
  /** Resolves once the source has caught up with the wall clock. */
  readonly caughtUp: Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_CATCH_UP_STEP_SECONDS = 3_600; // 1 h of simulated time for the first step
const MIN_STEP_SECONDS = 60; // 1 min
const MAX_STEP_SECONDS = 86_400; // 1 day
/** Events a catch-up step aims for. */
const STEP_EVENTS = 50_000;
const DEFAULT_LIVE_TICK_MS = 250;
const DEFAULT_SWEEP_INTERVAL_MS = 1_000;
const PROGRESS_INTERVAL_MS = 1_000;
/** Source steps whose commit or shard work may still be running while the next one is produced. */
const STEPS_IN_FLIGHT = 3;

export async function startEngine(options: EngineOptions): Promise<Engine> {
  const now = options.now ?? (() => Date.now() / 1000);
  const log = options.log ?? fallbackLog();
  mkdirSync(options.dataDir, { recursive: true });
  const store = openStore(options.dataDir);
  const views = EngineViews.create(options.capacity);
  const shards = new ShardPool({ shards: options.shards, buffers: views.buffers, storePath: options.dataDir, now, log });
  const ingest = new Ingest(store, views, shards);
  ingest.registry.load(store);

  let phase: EngineStatus['phase'] = 'replaying';
  let eventsIngested = 0;
  const started = performance.now();
  const replayedBatches = await ingest.replay();
  if (replayedBatches > 0) log.info(`replayed ${replayedBatches} log batches in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const source = typeof options.source === 'function' ? options.source(store) : options.source;
  await ingest.registerNetworks(source.networks);

  const tickMs = options.liveTickMs ?? DEFAULT_LIVE_TICK_MS;
  const sweepMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  let stopping = false;
  let wake: (() => void) | null = null;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => ((wake = null), resolve()), ms);
      wake = () => (clearTimeout(timer), (wake = null), resolve());
    });

  const chainCount = () => ingest.registry.networks.length;
  let lastSweep = 0;

  let rollbacksLogged = 0;
  const run = async () => {
    const inFlight: Promise<void>[] = [];
    let step = options.catchUpStepSeconds ?? DEFAULT_CATCH_UP_STEP_SECONDS;
    phase = 'catching_up';
    const catchUpStarted = performance.now();
    const historyStart = source.time;
    let lastProgress = catchUpStarted;
    while (!stopping) {
      const wall = now();
      const live = source.time >= wall - 1;
      const from = source.time;
      const target = live ? wall : Math.min(wall, source.time + step);
      const batches = await source.advance(target);
      const result = await ingest.ingest(batches);
      eventsIngested += result.accepted;
      if (ingest.rollbacks !== rollbacksLogged && ingest.lastRollback) {
        rollbacksLogged = ingest.rollbacks;
        const r = ingest.lastRollback;
        log.warn(
          `${r.chain}: rolled back to block ${r.toBlock}: ${r.eventsOrphaned} orphaned events in ${r.batchesRewritten} log batches, ${r.poolsRemoved} pools and ${r.transactionsRemoved} stored transactions removed; ` +
            `views rebuilt from ${r.eventsReplayed} events in ${r.batchesReplayed} batches; ${r.totalMs.toFixed(0)} ms (settle ${r.settleMs.toFixed(0)}, commit ${r.commitMs.toFixed(0)}, rebuild ${r.rebuildMs.toFixed(0)})`,
        );
      }
      // Steps sized for about STEP_EVENTS events: big enough to amortise a commit, small enough to stay responsive.
      if (!live && target > from) step = Math.min(MAX_STEP_SECONDS, Math.max(MIN_STEP_SECONDS, ((target - from) * STEP_EVENTS) / Math.max(1, result.accepted)));
      const clockTarget = target;
      inFlight.push(
        result.committed.then(() => {
          for (let c = 0; c < chainCount(); c++) ingest.advanceClock(c, clockTarget);
        }),
        result.applied,
      );
      while (inFlight.length > 2 * STEPS_IN_FLIGHT) await inFlight.shift();
      if (phase === 'catching_up' && performance.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
        lastProgress = performance.now();
        const pct = Math.floor((100 * (source.time - historyStart)) / Math.max(1, now() - historyStart));
        const rate = eventsIngested / ((lastProgress - catchUpStarted) / 1000);
        log.info(`catching up: ${pct}% of history, ${eventsIngested} events, ${Math.round(rate)} events/s, at ${new Date(source.time * 1000).toISOString()}`);
      }
      if (phase === 'catching_up' && source.time >= now() - 1) {
        await Promise.all(inFlight.splice(0));
        shards.live = true;
        await shards.flush();
        await shards.sweep(chainCount());
        phase = 'live';
        log.info(`caught up: ${eventsIngested} events in ${((performance.now() - catchUpStarted) / 1000).toFixed(1)} s, log head ${ingest.head}`);
        markCaughtUp();
      }
      if (phase === 'live') {
        await Promise.all(inFlight.splice(0));
        if (performance.now() - lastSweep >= sweepMs) {
          lastSweep = performance.now();
          await shards.sweep(chainCount());
        }
        await sleep(tickMs);
      }
    }
    await Promise.all(inFlight);
  };

  // The shard threads are up before the source's first read (replay above waits for them only when
  // the log holds batches): a fresh start would otherwise load them while the backfill runs.
  await shards.flush();
  const running = run();
  const failed = running.then(
    () => new Promise<never>(() => {}),
    (err: unknown) => {
      log.error(`engine stopped on error: ${errorText(err)}`);
      throw err;
    },
  );
  failed.catch(() => {});

  return {
    views,
    registry: ingest.registry,
    store,
    ingest,
    shards,
    caughtUp,
    failed,
    status: () => ({ phase, logHead: ingest.head, sourceTime: source.time, eventsIngested, replayedBatches }),
    health() {
      const chains = source.health?.() ?? [];
      const down = chains.some((c) => (c as { state?: string }).state === 'node_down');
      return { status: down ? 'degraded' : 'ok', phase, chains };
    },
    async stop() {
      stopping = true;
      wake?.();
      await running.catch(() => {});
      await shards.close();
      await source.close?.();
      await store.close();
      phase = 'stopped';
    },
  };
}
