/**
 * Hot and quiet pools at scale: the service started on two universe sizes with the same market
 * activity (so about the same pools trade), pools quiet for an hour giving their rings back.
 * Prints, per size, the pools hot and quiet, the ring blocks and window slots touched, the resident memory (read
 * after the catch-up, and three times steady, once the capture buffers follow only live delta cuts), and a
 * restart (SIGTERM, start again: serving, caught up), a restart after kill -9 (the newest snapshot
 * and the log after it), and the snapshot's size and what its cut held ingest and the shards for;
 * then the memory one more pool costs (the difference between the two sizes over the difference in
 * pools: almost all of them quiet), split into the shared-memory row of a pool and its share of
 * token rows (from the column table), its catalog rows (catalog/parts.ts), the simulator's state
 * (measured alone at both sizes: not part of a real deployment) and the rest (catalog texts and
 * address tables, indexes, heaps); and the whole process extrapolated to the public service's
 * 37.7 M pools and 34.8 M tokens.
 *
 *   node dist/bench/tiers.js [--quick] [--pools 250000,1000000] [--backfill-days 1] [--swaps-per-second N] [--no-restart] [--cpu-prof-dir DIR]
 *
 * --swaps-per-second sets the simulator's trading intensity (default 1); at 10,000,000 pools, 25 has
 * about 2 % of the pools trade in a day (README, "Simulator").
 *
 * With --cpu-prof-dir, the process restarted after kill -9 runs with `node --cpu-prof`: its profile
 * (written when it stops) shows what a start spends its time on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PARTS } from '../engine/catalog/parts.js';
import { KEPT_CUTS, captureRoom, shardRowColumns } from '../engine/snapshot/capture.js';
import { EngineViews } from '../engine/state/views.js';
import { ringBlockBytes } from '../engine/state/ring-blocks.js';
import { output, residentBytes, waitForLine } from './process.js';
import type { HeapFigures } from '../engine/heap.js';

const CLI = fileURLToPath(new URL('../scripts/dexdata.cjs', import.meta.url));
const { values } = parseArgs({
  options: { quick: { type: 'boolean' }, pools: { type: 'string' }, 'backfill-days': { type: 'string' }, 'swaps-per-second': { type: 'string' }, 'no-restart': { type: 'boolean' }, 'cpu-prof-dir': { type: 'string' } },
});
const measureRestarts = values['no-restart'] !== true;
const SIMULATOR_MEMORY = fileURLToPath(new URL('./simulator-memory.js', import.meta.url));
/** The public service's universe, which the whole process is extrapolated to. */
const PUBLIC_POOLS = 37_700_000;
const PUBLIC_TOKENS = 34_800_000;
const quick = values.quick === true;
const sizes = (values.pools ?? (quick ? '20000,80000' : '250000,1000000')).split(',').map(Number);
const backfillDays = Number(values['backfill-days'] ?? 1);
const swapsPerSecond = values['swaps-per-second'] ?? '1';
const QUIET_AFTER_S = 3_600;
/** Sweeps free the blocks of pools quiet since the backfill within a few seconds of the catch-up. */
const SETTLE_MS = 15_000;
/** Snapshots during the backfill this often, so the figures of a periodic cut are there at the catch-up. */
const SNAPSHOT_INTERVAL_S = 60;
/**
 * Cuts begun after the catch-up before the steady reading: enough for the capture buffers to follow
 * only live delta cuts (the arena keeps the largest need of its last KEPT_CUTS delta cuts), one more
 * for a cut begun during the catch-up and written after it.
 */
const STEADY_CUTS = KEPT_CUTS + 1;
/**
 * Steady readings, each once one more cut was written: readings of one build spread by tens of bytes
 * per pool from run to run, so each run shows its own spread, and the figures use the median.
 */
const STEADY_READINGS = 3;
/** Live after the restart this long before the kill -9, so there is log after the newest snapshot to replay. */
const LIVE_BEFORE_KILL_MS = 5_000;

interface EngineStats {
  readonly pools_hot: number;
  readonly pools_quiet: number;
  readonly tokens_hot: number;
  readonly tokens_quiet: number;
  readonly ring_blocks: { readonly touched: number; readonly bytes_each: number };
  readonly snapshot_skipped: string | null;
  readonly snapshots: {
    readonly newest_bytes: number | null;
    readonly last_main_pause_ms: number | null;
    readonly last_shard_pause_ms: number | null;
    readonly last_shard_copy_ms?: number | null;
    readonly last_write_ms: number | null;
    readonly last_delta: boolean | null;
    readonly last_rows_copied: number | null;
    readonly last_pools_copied?: number | null;
    readonly last_tokens_copied?: number | null;
    readonly capture_buffer_bytes?: { readonly rows: number; readonly blocks: number } | null;
    readonly writing: boolean;
  } | null;
  readonly second_blocks: { readonly touched: number; readonly bytes_each: number };
  /** Window slots: held by the pools that traded within 30 days (state/window-slots.ts). */
  readonly window_slots: { readonly used: number; readonly touched: number; readonly bytes_each: number };
  readonly heaps: { readonly main: HeapFigures; readonly shards: readonly HeapFigures[] } | null;
}

interface Restart {
  readonly servingSeconds: number;
  readonly caughtUpSeconds: number;
  /** Log batches replayed after the snapshot loaded, and that snapshot's size (null: none loaded). */
  readonly replayed: number;
  readonly loadedMiB: number | null;
}

/** What /stats and the process's resident memory read at one moment. */
interface Reading {
  readonly pools: number;
  readonly tokens: number;
  readonly engine: EngineStats;
  readonly anonBytes: number;
}

interface SizeResult extends Reading {
  readonly events: number;
  /**
   * The same, once STEADY_CUTS cuts begun after the catch-up were written, then after each of the
   * next STEADY_READINGS - 1 cuts: a deployed service past its catch-up (the reading above follows
   * the cuts made during the backfill, which copied every pool it created). Empty when the run cut
   * no snapshots.
   */
  readonly steady: readonly Reading[];
  /** Seconds from the catch-up to each steady reading. */
  readonly steadyAfterSeconds: readonly number[];
  /**
   * The most resident (anonymous) memory sampled every second from the catch-up to the last steady
   * reading: the readings fall between cuts, and a cut's copies come on top for the second it takes.
   */
  readonly peakAnonBytes: number;
  /** Null with --no-restart. */
  readonly restart: Restart | null;
  readonly afterKill9: Restart | null;
  /** The first run's log line of its last periodic snapshot (size, main thread and source state, shards, write). */
  readonly lastSnapshotLine: string | null;
  /** The first periodic snapshot's line (a full cut: every row copied), for the delta cuts after it. */
  readonly firstSnapshotLine: string | null;
  /** Resident memory of the simulator alone at this size. */
  readonly simulatorBytes: number;
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const fmt = (n: number) => n.toLocaleString('en-US');

function start(args: readonly string[], nodeFlags: readonly string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, CLI, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
}

/** Starts the service on the data of a run stopped before, and times it to serving and to caught up. */
async function restart(args: readonly string[], nodeFlags: readonly string[] = []): Promise<{ child: ChildProcess; figures: Restart }> {
  const t0 = performance.now();
  const child = start(args, nodeFlags);
  await waitForLine(child, /(?<!paid )REST listening on/, 30 * 60_000);
  const servingSeconds = (performance.now() - t0) / 1000;
  await waitForLine(child, /caught up/, 30 * 60_000);
  const caughtUpSeconds = (performance.now() - t0) / 1000;
  const text = output(child).text;
  const loaded = /loaded the snapshot of log batch \d+ \(([\d.]+) MiB\)/.exec(text);
  const replayed = /replayed (\d+) log batches/.exec(text);
  return { child, figures: { servingSeconds, caughtUpSeconds, replayed: Number(replayed?.[1] ?? 0), loadedMiB: loaded ? Number(loaded[1]) : null } };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

async function measure(pools: number): Promise<SizeResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'dexdata-bench-tiers-'));
  const args = ['serve', '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', '--pools', String(pools), '--backfill-days', String(backfillDays), '--swaps-per-second', swapsPerSecond, '--quiet-after', String(QUIET_AFTER_S), '--snapshot-interval', String(SNAPSHOT_INTERVAL_S), '--log-format', 'json'];
  let child = start(args);
  try {
    const port = Number((await waitForLine(child, /(?<!paid )REST listening on http:\/\/[\d.]+:(\d+)/, 30 * 60_000))[1]);
    // Hours at 10,000,000 pools with a week of busy history on a shared machine.
    const events = Number((await waitForLine(child, /caught up: (\d+) events/, 4 * 3_600_000))[1]);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    // Not while a periodic snapshot is cut or written: its copies are transient, and the run of the
    // larger size would otherwise carry them and the smaller not (the per-pool figure with them).
    // Keyless, as a new user asks: 15 requests a minute, so asked every 5 s and again after a 429's Retry-After.
    const readStats = async (): Promise<{ pools: number; tokens: number; engine: EngineStats }> => {
      for (;;) {
        const r = await fetch(`http://127.0.0.1:${port}/stats`);
        if (r.ok) return (await r.json()) as { pools: number; tokens: number; engine: EngineStats };
        await r.arrayBuffer();
        await new Promise((done) => setTimeout(done, 1000 * Math.max(1, Number(r.headers.get('retry-after') ?? 5) || 5)));
      }
    };
    const settled = (e: EngineStats) => e.snapshots === null || (e.snapshots.writing === false && (e.snapshots.last_delta === true || e.snapshot_skipped !== null));
    /** Reads /stats once no cut is being written and the last one was a delta cut, then the process's resident memory. */
    const readSettled = async (): Promise<Reading> => {
      let stats = await readStats();
      for (const t0 = performance.now(); !settled(stats.engine) && performance.now() - t0 < 10 * 60_000; stats = await readStats()) {
        await new Promise((r) => setTimeout(r, 5_000));
      }
      return { pools: stats.pools, tokens: stats.tokens, engine: stats.engine, anonBytes: residentBytes(child.pid!).anon };
    };
    const caughtUpAt = performance.now();
    let peakAnonBytes = 0;
    const sampler = setInterval(() => {
      try {
        // A process that ended but is not yet reaped has no RssAnon (NaN): not a sample.
        const anon = residentBytes(child.pid!).anon;
        if (anon > peakAnonBytes) peakAnonBytes = anon;
      } catch {
        // the process ended
      }
    }, 1_000);
    sampler.unref();
    // And after a delta cut (one copying the rows changed since the one before), at every size: the
    // first cut of a run copies every row, and what the shards keep for cuts follows the delta cuts.
    const atCatchUp = await readSettled();
    const caughtUpText = output(child).text.search(/caught up: \d+ events/);
    const cutsSinceCatchUp = () => [...output(child).text.slice(caughtUpText).matchAll(/"msg":"snapshot of log batch /g)].length;
    const steady: Reading[] = [];
    const steadyAfterSeconds: number[] = [];
    for (let k = 0; atCatchUp.engine.snapshots !== null && k < STEADY_READINGS; k++) {
      for (const t0 = performance.now(); cutsSinceCatchUp() < STEADY_CUTS + k && performance.now() - t0 < 20 * 60_000; ) await new Promise((r) => setTimeout(r, 5_000));
      // The collections after a cut that let buffers go run once its file is written: a few seconds more.
      await new Promise((r) => setTimeout(r, 5_000));
      steady.push(await readSettled());
      steadyAfterSeconds.push((performance.now() - caughtUpAt) / 1000 + SETTLE_MS / 1000);
    }
    const snapshotLines = [...output(child).text.matchAll(/"msg":"(snapshot of log batch [^"]*)"/g)].map((m) => m[1]!);
    const lastSnapshotLine = snapshotLines.at(-1) ?? null;
    const firstSnapshotLine = snapshotLines[0] ?? null;
    clearInterval(sampler);
    await stop(child);
    const simulatorBytes = await simulatorMemory(pools);
    const base = { ...atCatchUp, events, steady, steadyAfterSeconds, peakAnonBytes, lastSnapshotLine, firstSnapshotLine, simulatorBytes };
    if (!measureRestarts) return { ...base, restart: null, afterKill9: null };
    const afterTerm = await restart(args);
    child = afterTerm.child;
    await new Promise((r) => setTimeout(r, LIVE_BEFORE_KILL_MS));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The profiled start is the last one: it is stopped with SIGTERM, and node writes the profile as it exits.
    const profile = values['cpu-prof-dir'];
    const afterKill = await restart(args, profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []);
    child = afterKill.child;
    return { ...base, restart: afterTerm.figures, afterKill9: afterKill.figures };
  } finally {
    await stop(child).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function simulatorMemory(pools: number): Promise<number> {
  const child = spawn(process.execPath, ['--expose-gc', SIMULATOR_MEMORY, '--pools', String(pools), '--backfill-days', String(backfillDays), '--swaps-per-second', swapsPerSecond], { stdio: ['ignore', 'pipe', 'inherit'] });
  // Listened for before the line: the child exits right after printing it.
  const exited = new Promise((r) => child.once('exit', r));
  const bytes = Number((await waitForLine(child, /simulator anon (\d+)/, 10 * 60_000))[1]);
  await exited;
  return bytes;
}

function rowBytes(views: EngineViews, scope: 'pool' | 'token'): number {
  let n = 0;
  for (const c of views.columnTable) if (c.scope === scope) n += c.stride * c.array.BYTES_PER_ELEMENT;
  return n;
}

/**
 * Bytes the shards' snapshot capture buffers keep for rows after a size's last cut, by the rule of
 * engine/snapshot/capture.ts (CaptureArena): the rows that cut copied (all of them after a full cut,
 * those changed since the one before after a delta cut), of every shard-written kept row column, with
 * a quarter more room. (The arena keeps the largest need of the last four delta cuts: a model of the
 * steady state, where delta cuts copy about the same rows.)
 */
function captureRowBytes(views: EngineViews, scope: 'pool' | 'token'): number {
  let n = 0;
  for (const c of shardRowColumns(views.columnTable)) if (c.scope === scope) n += c.stride * c.array.BYTES_PER_ELEMENT;
  return n;
}
function captureModelBytes(views: EngineViews, r: Reading): number {
  const st = r.engine.snapshots;
  return captureRoom((st?.last_pools_copied ?? 0) * captureRowBytes(views, 'pool') + (st?.last_tokens_copied ?? 0) * captureRowBytes(views, 'token'));
}

function catalogRowBytes(scope: 'pool' | 'token'): number {
  let n = 0;
  for (const p of PARTS) if (p.scope === scope) n += p.stride * p.ctor.BYTES_PER_ELEMENT;
  return n;
}

async function main(): Promise<void> {
  const print = (line: string) => process.stdout.write(`${line}\n`);
  print(`# hot and quiet pools (${new Date().toISOString()}, ${cpus()[0]?.model ?? 'cpu'} x ${cpus().length}, ${mib(totalmem())}, load average ${loadavg()[0]!.toFixed(1)})`);
  print(`${backfillDays} day(s) of simulated history, pools quiet for ${QUIET_AFTER_S} s give their rings back`);
  print('');
  print('| pools | reading | tokens | events | pools hot / quiet | tokens hot / quiet | ring blocks touched | window slots used / touched | second blocks touched | JS heaps: main / shards (used of total) | capture buffers: rows / ring blocks | resident (anon) | per pool |');
  print('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const results: SizeResult[] = [];
  for (const size of sizes) {
    const r = await measure(size);
    results.push(r);
    const row = (x: Reading, when: string) => {
      const e = x.engine;
      const held = e.snapshots?.capture_buffer_bytes;
      print(
        `| ${fmt(x.pools)} | ${when} | ${fmt(x.tokens)} | ${fmt(r.events)} | ${fmt(e.pools_hot)} / ${fmt(e.pools_quiet)} | ${fmt(e.tokens_hot)} / ${fmt(e.tokens_quiet)} | ${fmt(e.ring_blocks.touched)} (${mib(e.ring_blocks.touched * e.ring_blocks.bytes_each)}) | ${fmt(e.window_slots.used)} / ${fmt(e.window_slots.touched)} (${mib(e.window_slots.touched * e.window_slots.bytes_each)}) | ${fmt(e.second_blocks.touched)} (${mib(e.second_blocks.touched * e.second_blocks.bytes_each)}) | ${heapText(e.heaps)} | ${held ? `${mib(held.rows)} / ${mib(held.blocks)}` : 'n/a'} | ${mib(x.anonBytes)} | ${fmt(Math.round(x.anonBytes / x.pools))} B |`,
      );
    };
    row(r, 'after the catch-up');
    r.steady.forEach((x, k) => row(x, `steady: ${STEADY_CUTS + k} cuts later (${r.steadyAfterSeconds[k]!.toFixed(0)} s)`));
    print(`| ${fmt(r.pools)} | the most sampled every second from the catch-up on, snapshot cuts included | | | | | | | | | | ${mib(r.peakAnonBytes)} | ${fmt(Math.round(r.peakAnonBytes / r.pools))} B |`);
  }
  print('');
  print('| pools | restart after SIGTERM: serving / caught up (batches replayed) | after kill -9: serving / caught up (batches replayed) | snapshot loaded | last periodic cut: ingest held / a shard held at once, copying in all (rows copied) / written in |');
  print('|---|---|---|---|---|');
  const restartText = (x: Restart) => `${x.servingSeconds.toFixed(1)} s / ${x.caughtUpSeconds.toFixed(1)} s (${fmt(x.replayed)})`;
  const ms = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : `${fmt(Math.round(v))} ms`);
  for (const r of results) {
    if (r.restart === null || r.afterKill9 === null) continue;
    const st = r.engine.snapshots;
    const copied = st?.last_rows_copied === null || st?.last_rows_copied === undefined ? '' : ` (${fmt(st.last_rows_copied)}${st.last_delta ? ' changed since the one before' : ', all'})`;
    const cut = r.engine.snapshot_skipped ?? `${ms(st?.last_main_pause_ms)} / ${ms(st?.last_shard_pause_ms)}, ${ms(st?.last_shard_copy_ms)}${copied} / ${ms(st?.last_write_ms)}`;
    print(`| ${fmt(r.pools)} | ${restartText(r.restart)} | ${restartText(r.afterKill9)} | ${r.restart.loadedMiB === null ? 'none' : `${r.restart.loadedMiB.toFixed(1)} MiB`} | ${cut} |`);
  }
  for (const r of results) {
    print(`${fmt(r.pools)} pools, the first periodic snapshot: ${r.firstSnapshotLine ?? 'none'}`);
    print(`${fmt(r.pools)} pools, the last periodic snapshot before the stop: ${r.lastSnapshotLine ?? 'none'}`);
  }
  const views = EngineViews.create({ pools: 1, tokens: 1, chains: 1, blocks: 1, secondBlocks: 1, windowSlots: 1 });
  const poolRow = rowBytes(views, 'pool');
  const tokenRow = rowBytes(views, 'token');
  const blockBytes = ringBlockBytes(views);
  print('');
  print(`shared-memory row: ${poolRow} B per pool, ${tokenRow} B per token; a ring block ${fmt(blockBytes)} B (its window state ${windowBlockBytes(views)} B), a window slot ${ringBlockBytes(views, 'windowSlot')} B, a second block ${ringBlockBytes(views, 'secondBlock')} B`);
  if (results.length === 1) {
    // One size: no marginal to take, so the extrapolation uses this size's average pool, ring blocks
    // aside (it carries the fixed cost of the process, so it is an upper bound of the marginal).
    const r = results[0]!;
    const blocks = r.engine.ring_blocks.touched * r.engine.ring_blocks.bytes_each;
    const average = (r.anonBytes - r.simulatorBytes - blocks) / r.pools;
    const hotShare = r.engine.pools_hot / r.pools;
    const tokensPerPool = r.tokens / r.pools;
    const tokenAdjust = (PUBLIC_TOKENS - tokensPerPool * PUBLIC_POOLS) * (tokenRow + catalogRowBytes('token'));
    const publicBytes = r.anonBytes - r.simulatorBytes + (PUBLIC_POOLS - r.pools) * (average + hotShare * blockBytes) + tokenAdjust;
    print('');
    print(
      `whole process at ${fmt(r.pools)} pools: ${mib(r.anonBytes)} resident (${mib(r.anonBytes - r.simulatorBytes)} without the simulator; ${average.toFixed(1)} B per pool, ring blocks aside); ` +
        `extrapolated to ${fmt(PUBLIC_POOLS)} pools and ${fmt(PUBLIC_TOKENS)} tokens with ${(hotShare * 100).toFixed(1)} % of pools hot, at that average: ${mib(publicBytes)} without the simulator`,
    );
  }
  if (results.length >= 2) {
    const a = results[0]!;
    const b = results[results.length - 1]!;
    // The k-th steady reading of each size side by side.
    const steady = Array.from({ length: Math.min(a.steady.length, b.steady.length) }, (_, k): [string, Reading, Reading] => [`steady, ${STEADY_CUTS + k} cuts`, a.steady[k]!, b.steady[k]!]);
    const readings: [string, Reading, Reading][] = [['after the catch-up', a, b], ...steady];
    const pools = b.pools - a.pools;
    const tokensPerPool = (b.tokens - a.tokens) / pools;
    // Ring blocks and window slots are held by the pools that traded (about as many at both sizes): they are not a quiet pool's.
    const held = (r: Reading) => r.engine.ring_blocks.touched * r.engine.ring_blocks.bytes_each + r.engine.window_slots.touched * r.engine.window_slots.bytes_each;
    const simulator = (b.simulatorBytes - a.simulatorBytes) / pools;
    /** Per reading: the figures of one more pool, from the first size to the last. */
    const perReading = readings.map(([, x, y]) => {
      const perPool = (y.anonBytes - x.anonBytes - (held(y) - held(x))) / pools;
      const secondBlocks = ((y.engine.second_blocks.touched - x.engine.second_blocks.touched) * y.engine.second_blocks.bytes_each) / pools;
      const parts = [
        poolRow,
        secondBlocks,
        tokenRow * tokensPerPool,
        catalogRowBytes('pool') + catalogRowBytes('token') * tokensPerPool,
        (captureModelBytes(views, y) - captureModelBytes(views, x)) / pools,
      ];
      const known = parts.reduce((sum, n) => sum + n, 0);
      const quiet = perPool - simulator;
      const heaps = x.engine.heaps && y.engine.heaps ? { main: (y.engine.heaps.main.total - x.engine.heaps.main.total) / pools, shards: (shardTotal(y.engine.heaps) - shardTotal(x.engine.heaps)) / pools } : null;
      const heldRows = (r: Reading) => r.engine.snapshots?.capture_buffer_bytes?.rows ?? 0;
      return { perPool, parts, rest: quiet - known, quiet, heaps, reportedRows: (heldRows(y) - heldRows(x)) / pools };
    });
    const names = [
      'compact pool row (shared views)',
      'second blocks touched during the backfill (given back, still resident)',
      `token rows (${tokensPerPool.toFixed(2)} tokens per pool)`,
      'catalog rows of the pool and its tokens (texts aside)',
      "snapshot capture buffers kept for rows between cuts (from the column table and the rows each size's last cut copied)",
    ];
    const cells = (f: (x: (typeof perReading)[number]) => number | null | undefined) => perReading.map((x) => { const v = f(x); return v === null || v === undefined ? 'n/a' : v.toFixed(1); }).join(' | ');
    print('');
    print(`one more pool, from ${fmt(a.pools)} to ${fmt(b.pools)} pools (almost all of them quiet), ring blocks and window slots aside:`);
    print('');
    print(`| part, bytes per pool | ${readings.map(([w]) => w).join(' | ')} |`);
    print(`|---|${readings.map(() => '---|').join('')}`);
    names.forEach((name, i) => print(`| ${name} | ${cells((x) => x.parts[i])} |`));
    print(`| the rest: catalog texts and address tables, indexes, heaps, malloc arenas | ${cells((x) => x.rest)} |`);
    print(`| **a quiet pool, measured** (target: at most 400 B) | ${perReading.map((x) => `**${x.quiet.toFixed(1)}**`).join(' | ')} |`);
    print(`| simulator state (not part of a real deployment) | ${cells(() => simulator)} |`);
    print(`| of the rest and the simulator: JS heaps of the main thread (with the simulator's objects) | ${cells((x) => x.heaps?.main)} |`);
    print(`| of the rest: JS heaps of the shard threads | ${cells((x) => x.heaps?.shards)} |`);
    print(`| of the rest and the model: capture buffers for rows, as the shards report them | ${cells((x) => x.reportedRows)} |`);
    print(`| measured resident per pool, simulator included | ${cells((x) => x.perPool)} |`);
    // The steady column with the median quiet pool (the catch-up's without steady readings).
    const steadyQuiet = perReading.slice(1).map((x, k) => [x.quiet, k + 1] as const).sort((x, z) => x[0] - z[0]);
    const last = steadyQuiet.length === 0 ? 0 : steadyQuiet[(steadyQuiet.length - 1) >> 1]![1];
    if (steadyQuiet.length > 0) print(`\na quiet pool, steady: **${perReading[last]!.quiet.toFixed(1)} B**, the median of ${steadyQuiet.length} readings (${steadyQuiet.map(([q]) => q.toFixed(1)).join(', ')} B)`);
    // The public universe: the larger run's process at that reading, plus quiet pools (with their tokens) and hot pools' blocks at its share.
    const y = readings[last]![2];
    const quiet = perReading[last]!.quiet;
    const hotShare = y.engine.pools_hot / y.pools;
    const slotShare = y.engine.window_slots.used / y.pools;
    const tokenAdjust = (PUBLIC_TOKENS - (y.tokens + tokensPerPool * (PUBLIC_POOLS - y.pools))) * (tokenRow + catalogRowBytes('token'));
    const publicBytes = y.anonBytes - b.simulatorBytes + (PUBLIC_POOLS - y.pools) * (quiet + hotShare * blockBytes + slotShare * ringBlockBytes(views, 'windowSlot')) + tokenAdjust;
    print('');
    print(
      `whole process at ${fmt(y.pools)} pools (${readings[last]![0]}): ${mib(y.anonBytes)} resident (${mib(y.anonBytes - b.simulatorBytes)} without the simulator; at most ${mib(b.peakAnonBytes)} sampled, snapshot cuts included); ` +
        `extrapolated to ${fmt(PUBLIC_POOLS)} pools and ${fmt(PUBLIC_TOKENS)} tokens with ${(hotShare * 100).toFixed(1)} % of pools hot and ${(slotShare * 100).toFixed(1)} % holding window slots: ${mib(publicBytes)} without the simulator`,
    );
  }
}

function shardTotal(h: NonNullable<EngineStats['heaps']>): number {
  return h.shards.reduce((n, x) => n + x.total, 0);
}

function heapText(h: EngineStats['heaps']): string {
  if (h === null) return 'n/a';
  const one = (x: HeapFigures) => `${mib(x.used)} of ${mib(x.total)}`;
  return `${one(h.main)} / ${h.shards.map(one).join(', ')}`;
}

/** Bytes of a ring block that are window state (the win.* columns). */
function windowBlockBytes(views: EngineViews): number {
  let n = 0;
  for (const c of views.columnTable) if (c.scope === 'block' && c.name.startsWith('win.')) n += c.stride * c.array.BYTES_PER_ELEMENT;
  return n;
}

await main();
