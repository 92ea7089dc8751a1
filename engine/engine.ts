/**
 * The engine assembled: LMDB store, shared-memory views, shard threads and ingest, with the driver
 * that pulls a source from its checkpoint to now (accelerated) and then follows it in real time.
 * On start the views are loaded from the newest snapshot and the durable log after it is replayed, so
 * a crash loses nothing acknowledged and a start does not grow with the length of history.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ingest } from './ingest/ingest.js';
import { errorText, fallbackLog, type Log } from './log.js';
import type { Catalog } from './catalog/catalog.js';
import { ShardPool } from './shards/shard-pool.js';
import type { Source } from './sources/source.js';
import { pruneLog } from './snapshot/prune-log.js';
import { pruneParked } from './store/parked.js';
import { readSection } from './snapshot/load.js';
import { cutSnapshot, openState } from './snapshot/take.js';
import { BlockLoader } from './snapshot/block-loader.js';
import { DEFAULT_SNAPSHOT_POLICY, SNAPSHOT_STAGES, Snapshots, type SnapshotPolicy, type SnapshotStage, type SnapshotStats } from './snapshot/snapshots.js';
import { EngineViews, type EngineCapacity } from './state/views.js';
import { blockStats, ringBlockBytes, secondBlocks } from './state/ring-blocks.js';
import { windowSlots } from './state/window-slots.js';
import { useStoredCandles } from './state/read.js';
import { LmdbCandles } from './shards/stored-candles.js';
import { DEFAULT_TIER_POLICY, type TierPolicy } from './shards/tiers.js';
import { compactStore, removeCompactionLeftover } from './store/compact.js';
import { openStore, type Store } from './store/store.js';
import { collectGarbage, heapFigures, type HeapFigures } from './heap.js';
import { adviseHugePages, fixMmapThreshold, trimMalloc } from './memory.js';

export interface EngineOptions {
  readonly dataDir: string;
  readonly shards: number;
  readonly capacity: EngineCapacity;
  /**
   * The source, or a factory given the opened store (to read what it persisted earlier) and the
   * source state kept with the snapshot the start loaded (null: none; the simulator resumes from it).
   * The factory runs after the service listens and may resolve later (it may import the source's modules then).
   */
  readonly source: Source | ((store: Store, resume: Uint8Array | null) => Source | Promise<Source>);
  /** Simulated seconds per source step while catching up. */
  readonly catchUpStepSeconds?: number;
  /** Milliseconds between source steps once live. */
  readonly liveTickMs?: number;
  /** Milliseconds between sweeps that age rolling windows of idle pools. */
  readonly sweepIntervalMs?: number;
  /** Unix seconds; the wall clock by default. */
  readonly now?: () => number;
  /** Snapshots of the views (DEFAULT_SNAPSHOT_POLICY when absent); null: none, every start replays the whole log. */
  readonly snapshots?: SnapshotPolicy | null;
  /** Progress and failures; warnings and errors on stderr without it (engine/log.ts). */
  readonly log?: Log;
  /** When pools give their ring blocks back (DEFAULT_TIER_POLICY when absent); null: never. */
  readonly tiers?: TierPolicy | null;
  /**
   * Settles once the service listens: the source is opened (the simulator's state read back) and the
   * log after the snapshot replayed after it, so a start serves as soon as the views and catalog are
   * in. Without it they follow at once.
   */
  readonly listening?: Promise<unknown>;
}

export interface EngineStatus {
  readonly phase: 'replaying' | 'catching_up' | 'live' | 'stopped';
  readonly logHead: number;
  readonly sourceTime: number;
  readonly eventsIngested: number;
  readonly replayedBatches: number;
  /** Log batch of the snapshot the start loaded (0: none). */
  readonly loadedSnapshot: number;
  /** Log batches after the newest snapshot (all of them without snapshots). */
  readonly logSinceSnapshot: number;
  readonly snapshots: SnapshotStats | null;
}

export interface EngineHealth {
  /** `degraded` while some chain's node is down or the store cannot be written (a full disk). */
  readonly status: 'ok' | 'degraded';
  /** Why the store cannot be written ("disk full: <dir> ..."), while it cannot: ingest is paused meanwhile. */
  readonly reason?: string;
  readonly phase: EngineStatus['phase'];
  readonly chains: readonly object[];
}

export interface Engine {
  /** Rejects if the ingest loop fails (the service should exit). */
  readonly failed: Promise<never>;
  readonly views: EngineViews;
  readonly registry: Catalog;
  readonly store: Store;
  readonly ingest: Ingest;
  readonly shards: ShardPool;
  status(): EngineStatus;
  /** What /health details: the engine's phase and, for sources that read a node, each chain's state. */
  health(): EngineHealth;
  /** What /stats shows of the engine (wire names): log length since the newest snapshot, the snapshots. */
  stats(): object;
  /** Resolves once the source has caught up with the wall clock. */
  readonly caughtUp: Promise<void>;
  /**
   * Takes a snapshot at the next batch boundary (waiting for one being written first); resolves with
   * its log batch once durable, or null without snapshots or with nothing new since the last one.
   */
  snapshot(): Promise<number | null>;
  stop(): Promise<void>;
}

const DEFAULT_CATCH_UP_STEP_SECONDS = 3_600; // 1 h of simulated time for the first step
const MIN_STEP_SECONDS = 60; // 1 min
const MAX_STEP_SECONDS = 86_400; // 1 day
/** Events a catch-up step aims for. */
const STEP_EVENTS = 50_000;
const DEFAULT_LIVE_TICK_MS = 250;
const DEFAULT_SWEEP_INTERVAL_MS = 1_000;
/** At most this often, after a snapshot cut, the versions of quiet pools' open candles no start can need are dropped (store/parked.ts). */
const PARKED_PRUNE_INTERVAL_MS = 3_600_000;
/** Capture buffers let go of at a cut, summed over the shards, from which the threads collect once its snapshot is written. */
const COLLECT_RELEASED_BYTES = 32 * 2 ** 20;
const mibText = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
/** A snapshot's stages as a log line says them: "shard copies 1,900 ms, store durable 20 ms, ...". */
const stagesText = (ms: Readonly<Record<SnapshotStage, number>> | null) => (ms === null ? '' : SNAPSHOT_STAGES.map((s) => `${s.replace('_', ' ')} ${ms[s].toFixed(0)} ms`).join(', '));
/** The heap figures of /stats are refreshed this often (with a sweep). */
const HEAPS_INTERVAL_MS = 10_000;
const PROGRESS_INTERVAL_MS = 1_000;
/** How often the data directory's free space is looked at. */
const DISK_CHECK_INTERVAL_MS = 1_000;
/** Source steps whose commit or shard work may still be running while the next one is produced. */
const STEPS_IN_FLIGHT = 3;

export async function startEngine(options: EngineOptions): Promise<Engine> {
  const now = options.now ?? (() => Date.now() / 1000);
  const log = options.log ?? fallbackLog();
  mkdirSync(options.dataDir, { recursive: true });
  removeCompactionLeftover(options.dataDir);
  const store = openStore(options.dataDir);
  // A start on a full disk serves what is stored; ingest waits for space (store/durable.ts). The
  // free space is looked at every second too: the shard threads' writes may be the ones failing.
  await store.writer.checkSpace();
  if (store.writer.fault !== null) log.warn(`${store.writer.fault.message}: serving what is stored`);
  /** The JS heaps of the main thread and of each shard thread, as of the last sweep. */
  let heaps: { main: HeapFigures; shards: HeapFigures[] } | null = null;
  let heapsAt = 0;

  const spaceTimer = setInterval(() => void store.writer.checkSpace(), DISK_CHECK_INTERVAL_MS);
  spaceTimer.unref();
  const views = EngineViews.create(options.capacity);
  // Before any row is written: the large columns fault in 2 MiB at a time (a snapshot's load, creations, ring blocks).
  const advised = adviseHugePages(views.columnTable.map((c) => c.array));
  if (advised > 0) log.info(`huge pages asked for ${(advised / 2 ** 20).toFixed(0)} MiB of shared columns`);
  // Started first: its thread loads while the store and the snapshot's header are read.
  const blockLoader = options.snapshots === null ? null : new BlockLoader(views);
  useStoredCandles(views, new LmdbCandles(store));
  const shards = new ShardPool({ shards: options.shards, buffers: views.buffers, storePath: options.dataDir, now, log, tiers: options.tiers === undefined ? DEFAULT_TIER_POLICY : options.tiers });
  const ingest = new Ingest(store, views, shards);
  const policy = options.snapshots === undefined ? DEFAULT_SNAPSHOT_POLICY : options.snapshots;
  let parkedPrunedAt = -Infinity;
  const snapshots = policy
    ? new Snapshots(join(options.dataDir, 'snapshots'), views, policy.keep, async (oldestKept) => {
        if (policy.pruneLog) await pruneLog(store, oldestKept);
        if (performance.now() - parkedPrunedAt >= PARKED_PRUNE_INTERVAL_MS) {
          parkedPrunedAt = performance.now();
          await pruneParked(store, oldestKept, (p) => views.chainClock[views.poolChain[p]!]!);
        }
      })
    : null;
  ingest.snapshots = snapshots;

  let phase: EngineStatus['phase'] = 'replaying';
  let eventsIngested = 0;
  const started = performance.now();
  // The snapshot's columns and catalog now; its ring blocks on a thread of their own while the source
  // is opened and the service starts listening (readers of a ring block wait for them meanwhile);
  // the log after the snapshot once they are in (run, below).
  const { snapshot: loaded, blocks, storedThrough } = await openState(store, ingest, snapshots, options.shards, (line) => log.warn(line), blockLoader);
  shards.storedThrough = storedThrough;
  const openedMs = performance.now() - started;
  // A first start (no snapshot, an empty log) has nothing to replay: it is catching up from the start.
  if (loaded === null && ingest.head === 0) phase = 'catching_up';
  if (loaded) log.info(`loaded the snapshot of log batch ${loaded.seq} (${(loaded.bytes / 2 ** 20).toFixed(1)} MiB): columns and catalog in ${openedMs.toFixed(0)} ms; its ${loaded.blocks.pools} ring blocks being read in`);
  let replayedBatches = 0;
  /** The log after the snapshot, once its ring blocks are in: views as of the log head. */
  const replayTail = async () => {
    await blocks;
    const blocksMs = performance.now() - started;
    replayedBatches = await ingest.replay(loaded?.seq ?? 0);
    if (replayedBatches > 0 || loaded) log.info(`ring blocks in after ${(blocksMs / 1000).toFixed(1)} s; replayed ${replayedBatches} log batches by ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };
  blocks.catch(() => {}); // failed: told by run
  /** The source, once opened (run, after the service listens). */
  let opened: Source | null = null;
  const openSource = async (): Promise<Source> => {
    const resume = loaded && loaded.source.bytes > 0 ? readSection(loaded.path, loaded.source) : null;
    const source = typeof options.source === 'function' ? await options.source(store, resume) : options.source;
    opened = source;
    await ingest.registerNetworks(source.networks);
    return source;
  };
  let snapshotSeq = loaded?.seq ?? 0;
  let eventsSinceSnapshot = 0;
  let lastSnapshotMs = performance.now();
  /** Why the last snapshot was skipped (told once, until it changes). */
  let lastSkip = '';
  /** Callers of snapshot() waiting for the next cut. */
  let snapshotWanted: ((seq: number | null) => void)[] = [];

  /**
   * Cuts a snapshot after the last batch ingested: the main thread copies its columns now, each shard
   * its rows when its queue reaches the cut (ingest goes on meanwhile); the file is written in the
   * background. Called between ingest steps; null when one is being written or nothing is new.
   */
  const takeSnapshot = (): Promise<number> | null => {
    if (!snapshots || snapshots.writing) return null;
    eventsSinceSnapshot = 0;
    lastSnapshotMs = performance.now();
    if (ingest.head === snapshotSeq) return null;
    const cut = cutSnapshot(views, ingest, snapshots, shards, opened ?? undefined);
    if ('skipped' in cut) {
      if (cut.skipped !== lastSkip) log.warn(`snapshot skipped: ${cut.skipped}`);
      lastSkip = cut.skipped;
      return null;
    }
    lastSkip = '';
    snapshotSeq = cut.seq;
    return cut.written.then(
      (file) => {
        const st = snapshots.stats();
        // A source that keeps state (the simulator) serialised it on this thread: hundreds of MiB at
        // large universes, garbage now, that V8 would leave resident until some later major GC.
        // Capture buffers the shards let go of (after a full cut, or when a cut needs far less than
        // the ones before): large ArrayBuffers only small objects reference, garbage on the shards and
        // on this thread (which held the previous cut's views of them), that V8 would leave resident.
        const released = st.captureBuffers?.released ?? 0;
        const collectNow = opened?.saveState !== undefined || released >= COLLECT_RELEASED_BYTES;
        const gcMs = collectNow ? collectGarbage() : null;
        // What the cut allocated in small blocks on every thread (about 90 B per pool at 1.4 M pools, in
        // the shards' arenas) is free again, but glibc keeps free pages that are not at the top of an
        // arena: they go back to the system now rather than staying resident until the next cut reuses them.
        const trimMs = phase === 'live' ? trimMalloc() : null;
        if (released >= COLLECT_RELEASED_BYTES) {
          shards.collectGarbage().then(
            (ms) => log.info(`capture buffers let go of at the cut of log batch ${cut.seq}: ${(released / 2 ** 20).toFixed(1)} MiB, collected in ${(ms ?? 0).toFixed(0)} ms on the longest shard`),
            () => undefined,
          );
        }
        log.info(`snapshot of log batch ${cut.seq}: ${(file.bytes / 2 ** 20).toFixed(1)} MiB; main thread ${cut.mainMs.toFixed(1)} ms (source state ${cut.sourceMs.toFixed(1)} ms), shards held ${(st.lastCutMs ?? 0).toFixed(1)} ms at the cut and ${(st.lastSliceMs ?? 0).toFixed(1)} ms at most in a slice after it, copying ${(st.lastCopyMs ?? 0).toFixed(1)} ms in all, ${st.lastRowsCopied ?? 0} rows${st.lastDelta ? ' changed since the one before' : ''} and ${st.lastBlocksCopied ?? 0} ring blocks (${st.lastBlocksKept ?? 0} taken from the one before); written in ${(st.lastWriteMs ?? 0).toFixed(0)} ms (${stagesText(st.lastStagesMs)}); capture buffers ${mibText(st.captureBuffers?.rows ?? 0)} for rows, ${mibText(st.captureBuffers?.blocks ?? 0)} for ring blocks${gcMs === null ? '' : `; this thread's heap collected in ${gcMs.toFixed(0)} ms`}${trimMs === null ? '' : `; malloc arenas trimmed in ${trimMs.toFixed(0)} ms`}`);
        return cut.seq;
      },
      (err: unknown) => {
        log.error(`snapshot of log batch ${cut.seq} failed: ${errorText(err)}`);
        throw err;
      },
    );
  };
  const snapshotDue = () =>
    policy !== null &&
    snapshots !== null &&
    !snapshots.writing &&
    (eventsSinceSnapshot >= policy.everyEvents || (eventsSinceSnapshot > 0 && performance.now() - lastSnapshotMs >= policy.intervalSeconds * 1000));

  const tickMs = options.liveTickMs ?? DEFAULT_LIVE_TICK_MS;
  const sweepMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  let stopping = false;
  let stopRequested!: () => void;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  let wake: (() => void) | null = null;
  /** The source asked to be advanced while the loop was not sleeping: the next sleep ends at once. */
  let wakePending = false;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (wakePending) {
        wakePending = false;
        return resolve();
      }
      const timer = setTimeout(() => ((wake = null), resolve()), ms);
      wake = () => (clearTimeout(timer), (wake = null), resolve());
    });

  const chainCount = () => ingest.registry.networks.length;
  let lastSweep = 0;

  let rollbacksLogged = 0;
  const run = async () => {
    // A stop before the service listens (its listeners failed) ends the run here.
    await Promise.race([options.listening, stopped]);
    if (stopping) return;
    // The ring blocks are read in on their own thread meanwhile.
    const source = await openSource();
    source.setWakeup?.(() => {
      if (wake) wake();
      else wakePending = true;
    });
    await replayTail();
    // The shard threads are up before the source's first read: a fresh start would otherwise load
    // them while the backfill runs. On a full disk their writes wait for space: the start does not.
    if (store.writer.fault === null) await shards.flush();
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
      eventsSinceSnapshot += result.accepted;
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
      if ((snapshotWanted.length > 0 && !snapshots?.writing) || snapshotDue()) {
        const waiting = snapshotWanted;
        snapshotWanted = [];
        const taken = takeSnapshot();
        if (taken === null) for (const w of waiting) w(null);
        else
          taken.then(
            (seq) => waiting.forEach((w) => w(seq)),
            () => waiting.forEach((w) => w(null)),
          );
      }
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
        // What the backfill left in the heaps is garbage: collected now, or it stays resident until
        // live traffic has allocated enough for V8 to collect (a quiet shard may take hours).
        const shardGcMs = await shards.collectGarbage();
        const mainGcMs = collectGarbage();
        // And the small blocks the backfill freed, which the collections just released, out of the arenas.
        const trimMs = trimMalloc();
        // From now on large buffers freed (a snapshot cut's copies) go back to the system instead of staying in
        // glibc's arenas (about 1 KB per pool at 212,542 pools). Not during the catch-up: a fresh mapping per
        // large buffer costs its page faults again each time, which slowed the backfill's preparation step.
        fixMmapThreshold();
        if (mainGcMs !== null) log.info(`heaps collected after the catch-up: ${mainGcMs.toFixed(0)} ms on the main thread, ${(shardGcMs ?? 0).toFixed(0)} ms on the longest shard${trimMs === null ? '' : `, malloc arenas trimmed in ${trimMs.toFixed(0)} ms`}`);
        heaps = { main: heapFigures(), shards: await shards.heaps() };
        heapsAt = performance.now();
      }
      if (phase === 'live') {
        await Promise.all(inFlight.splice(0));
        if (performance.now() - lastSweep >= sweepMs) {
          lastSweep = performance.now();
          await shards.sweep(chainCount());
          if (performance.now() - heapsAt >= HEAPS_INTERVAL_MS) {
            heapsAt = performance.now();
            heaps = { main: heapFigures(), shards: await shards.heaps() };
          }
        }
        await sleep(tickMs);
      }
    }
    await Promise.all(inFlight);
    // A stop leaves a snapshot of everything ingested: the next start replays nothing.
    await snapshots?.idle();
    await takeSnapshot()?.catch(() => null);
    for (const w of snapshotWanted.splice(0)) w(null);
  };

  const running = run();
  const failed = running.then(
    () => new Promise<never>(() => {}),
    (err: unknown) => {
      log.error(`engine stopped on error: ${errorText(err)}`);
      throw err;
    },
  );
  failed.catch(() => {});

  const status = (): EngineStatus => {
    const st = snapshots?.stats() ?? null;
    return {
      phase,
      logHead: ingest.head,
      sourceTime: opened?.time ?? 0,
      eventsIngested,
      replayedBatches,
      loadedSnapshot: loaded?.seq ?? 0,
      logSinceSnapshot: ingest.head - (st?.newestSeq ?? 0),
      snapshots: st,
    };
  };

  return {
    views,
    registry: ingest.registry,
    store,
    ingest,
    shards,
    caughtUp,
    failed,
    status,
    stats() {
      const { logHead, logSinceSnapshot, snapshots: st } = status();
      const blocks = blockStats(views);
      const pools = ingest.registry.poolCount;
      const seconds = blockStats(views, secondBlocks(views));
      const slots = blockStats(views, windowSlots(views));
      return {
        phase,
        pools_hot: blocks.used,
        pools_quiet: pools - blocks.used,
        ring_blocks: { total: blocks.total, used: blocks.used, free: blocks.free, touched: blocks.touched, bytes_each: ringBlockBytes(views) },
        tokens_hot: seconds.used,
        tokens_quiet: ingest.registry.tokenCount - seconds.used,
        second_blocks: { total: seconds.total, used: seconds.used, free: seconds.free, touched: seconds.touched, bytes_each: ringBlockBytes(views, 'secondBlock') },
        window_slots: { total: slots.total, used: slots.used, free: slots.free, touched: slots.touched, bytes_each: ringBlockBytes(views, 'windowSlot') },
        ...(opened?.backfill ? { backfill: opened.backfill() } : {}),
        heaps,
        log_head: logHead,
        log_batches_since_snapshot: logSinceSnapshot,
        events_since_snapshot: eventsSinceSnapshot,
        snapshot_skipped: lastSkip === '' ? null : lastSkip,
        snapshots:
          st === null
            ? null
            : {
                count: st.count,
                newest_log_batch: st.newestSeq,
                newest_age_seconds: st.newestAgeSeconds === null ? null : Math.round(st.newestAgeSeconds),
                newest_bytes: st.newestBytes,
                writing: st.writing,
                stage: st.stage,
                stage_seconds: st.stageSeconds === null ? null : Math.round(st.stageSeconds),
                last_stages_ms: st.lastStagesMs,
                last_shard_pause_ms: st.lastPauseMs === null ? null : Number(st.lastPauseMs.toFixed(1)),
                last_shard_copy_ms: st.lastCopyMs === null ? null : Number(st.lastCopyMs.toFixed(1)),
                last_main_pause_ms: st.lastMainMs === null ? null : Number(st.lastMainMs.toFixed(1)),
                last_write_ms: st.lastWriteMs === null ? null : Math.round(st.lastWriteMs),
                last_delta: st.lastDelta,
                last_rows_copied: st.lastRowsCopied,
                last_pools_copied: st.lastPoolsCopied,
                last_tokens_copied: st.lastTokensCopied,
                last_blocks_copied: st.lastBlocksCopied,
                last_blocks_kept: st.lastBlocksKept,
                capture_buffer_bytes: st.captureBuffers === null ? null : { rows: st.captureBuffers.rows, blocks: st.captureBuffers.blocks },
              },
      };
    },
    snapshot() {
      if (snapshots === null || stopping) return Promise.resolve(null);
      return new Promise<number | null>((resolve) => {
        snapshotWanted.push(resolve);
        wake?.();
      });
    },
    health() {
      const chains = opened?.health?.() ?? [];
      const down = chains.some((c) => (c as { state?: string }).state === 'node_down');
      const fault = store.writer.fault;
      if (fault !== null) return { status: 'degraded', reason: fault.message, phase, chains };
      return { status: down ? 'degraded' : 'ok', phase, chains };
    },
    async stop() {
      stopping = true;
      stopRequested();
      wake?.();
      // Writes still waiting for space are not acknowledged: they are given up, not waited for.
      clearInterval(spaceTimer);
      store.writer.abandon();
      shards.abandonWrites();
      await running.catch(() => {});
      await snapshots?.idle();
      snapshots?.close();
      await shards.close();
      await opened?.close?.();
      await store.close();
      // Nothing has the store open now: the free pages a backfill left go (store/compact.ts).
      await compactStore(options.dataDir, log);
      phase = 'stopped';
    },
  };
}
