/**
 * Restarts and the store on disk, on a store built once: the default dataset's backfill takes a
 * quarter of an hour, a restart a few seconds, so restarts are timed on copies of one store, with
 * builds of the service side by side (alternating, in the same minutes).
 *
 *   node dist/bench/restart.js --build-store DIR [--pools 20000] [--backfill-days 30]
 *     backfills the dataset into DIR with this build and stops the service (SIGTERM): DIR then holds
 *     the store as a stop leaves it; DIR.json notes the events ingested.
 *   node dist/bench/restart.js --store DIR[,DIR2] [--builds dist-before,dist] [--rounds 3] [--cpu-prof OUT]
 *     for each round and each build (a folder holding scripts/dexdata.cjs): a copy of DIR (or of the
 *     store listed at the build's place, when a build reads only the snapshots it writes), started
 *     (the restart after SIGTERM: the snapshot the stop wrote, on a copy just made), caught up, left
 *     running some seconds, killed with SIGKILL, started again (the restart after kill -9: the newest
 *     periodic snapshot and the log after it), stopped with SIGTERM and started again at once (an
 *     operator's restart of the running service), then stopped with SIGTERM and its store measured
 *     (the snapshots it wrote are in its own format). Prints each start's phases from its log lines.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { output, waitForLine } from './process.js';
import { databaseBytes, openStore } from '../engine/store/store.js';

const USAGE = `usage: node dist/bench/restart.js --build-store DIR [--pools N] [--backfill-days D]
       node dist/bench/restart.js --store DIR[,DIR2] [--builds A,B] [--rounds N] [--live-seconds S] [--cpu-prof OUT]`;

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        'build-store': { type: 'string' },
        store: { type: 'string' },
        builds: { type: 'string' },
        rounds: { type: 'string' },
        pools: { type: 'string' },
        'backfill-days': { type: 'string' },
        'live-seconds': { type: 'string' },
        'cpu-prof': { type: 'string' },
      },
    });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
})();

const print = (line: string) => process.stdout.write(`${line}\n`);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const now = () => new Date().toISOString().slice(11, 19);
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const ROOMY = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };

function serveArgs(dir: string, pools: number, days: number): string[] {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'bench-config.json');
  if (!existsSync(config)) writeFileSync(config, JSON.stringify({ plans: { keyless: ROOMY, free: ROOMY, pro: ROOMY } }));
  return ['serve', '--config', config, '--data-dir', dir, '--port', '0', '--metrics-port', '0', '--pools', String(pools), '--backfill-days', String(days)];
}

function stopped(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** Milliseconds since `t0` (epoch ms) of the first log line matching `pattern`, or NaN. */
function lineAt(text: string, pattern: RegExp, t0: number): number {
  for (const line of text.split('\n')) {
    if (!pattern.test(line)) continue;
    const m = /"time":(\d+)/.exec(line);
    return m ? Number(m[1]) - t0 : NaN;
  }
  return NaN;
}

interface Start {
  readonly serving: number;
  readonly caughtUp: number;
  readonly phases: string;
}

/** Starts `cli` on `dir`; resolves once caught up with the seconds to serving and to caught up, and the phases seen in its log. */
async function start(cli: string, args: string[], nodeArgs: string[]): Promise<{ child: ChildProcess; start: Start }> {
  const t0 = Date.now();
  const t = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  output(child);
  await waitForLine(child, /(?<!paid )REST listening on http/, 10 * 60_000);
  const serving = (performance.now() - t) / 1000;
  await waitForLine(child, /caught up/, 10 * 60_000);
  const caughtUp = (performance.now() - t) / 1000;
  const text = output(child).text;
  const at = (p: RegExp) => (lineAt(text, p, t0) / 1000).toFixed(2);
  const replayed = /replayed (\d+) log batches/.exec(text)?.[1] ?? '0';
  const phases = `first log line ${at(/"msg":"starting/)} s, snapshot loaded ${at(/loaded the snapshot/)} s, ${replayed} log batches replayed ${at(/replayed \d+ log batches/)} s, REST listening ${at(/REST listening/)} s, caught up ${at(/caught up/)} s`;
  return { child, start: { serving, caughtUp, phases } };
}

async function buildStore(dir: string, pools: number, days: number): Promise<void> {
  const cli = new URL('../scripts/dexdata.cjs', import.meta.url).pathname;
  const child = spawn(process.execPath, [cli, ...serveArgs(dir, pools, days)], { stdio: ['ignore', 'pipe', 'inherit'] });
  output(child);
  const caught = await waitForLine(child, /caught up: (\d+) events in ([\d.]+) s/, 60 * 60_000);
  child.kill('SIGTERM');
  await stopped(child);
  writeFileSync(`${dir}.json`, JSON.stringify({ pools, days, events: Number(caught[1]), backfillSeconds: Number(caught[2]) }));
  print(`built ${dir}: ${caught[1]} events of ${days} days over ${pools} pools in ${caught[2]} s`);
}

/** The data directory's size by part: snapshot files and each LMDB database. */
async function storeParts(dir: string, events: number): Promise<string> {
  const snaps = join(dir, 'snapshots');
  const files = existsSync(snaps) ? readdirSync(snaps).filter((n) => n.endsWith('.snap')) : [];
  const snapshots = files.map((n) => statSync(join(snaps, n)).size);
  const total = Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split(/\s/)[0]);
  const st = openStore(dir);
  let dbs: Record<string, number>;
  try {
    dbs = databaseBytes(st);
  } finally {
    await st.close();
  }
  const per = (b: number) => (b / events).toFixed(1);
  return (
    `data directory ${mib(total)} (${per(total)} B per event): snapshots ${snapshots.map(mib).join(' + ')} (${per(snapshots.reduce((a, b) => a + b, 0))} B), ` +
    `LMDB ${Object.entries(dbs)
      .map(([name, b]) => `${name} ${mib(b)} (${per(b)} B)`)
      .join(', ')}`
  );
}

async function compare(stores: string[], builds: string[], rounds: number, liveSeconds: number, cpuProf: string | undefined): Promise<void> {
  const meta = JSON.parse(readFileSync(`${stores[0]}.json`, 'utf8')) as { pools: number; days: number; events: number };
  print(`# restarts on copies of ${stores.join(', ')} (${meta.events} events, ${meta.days} days over ${meta.pools} pools), ${new Date().toISOString()}`);
  for (const store of new Set(stores)) print(`store ${store}: ${await storeParts(store, meta.events)}`);
  for (let round = 1; round <= rounds; round++) {
    for (const [k, build] of builds.entries()) {
      const store = stores[Math.min(k, stores.length - 1)]!;
      const cli = resolve(build, 'scripts/dexdata.cjs');
      const dir = mkdtempSync(join(tmpdir(), 'dexdata-restart-'));
      let child: ChildProcess | null = null;
      try {
        cpSync(store, dir, { recursive: true });
        // The page cache holds the copy as a restart on a running machine finds its store.
        const args = serveArgs(dir, meta.pools, meta.days);
        const prof = cpuProf ? ['--cpu-prof', '--cpu-prof-dir', resolve(cpuProf, `${build.replace(/\W+/g, '_')}-${round}`)] : [];
        const load1 = loadavg();
        const a = await start(cli, args, prof);
        child = a.child;
        print(`${now()}Z round ${round} ${build}, on the fresh copy, stopped with SIGTERM (load ${load1}): serving ${a.start.serving.toFixed(2)} s, caught up ${a.start.caughtUp.toFixed(2)} s; ${a.start.phases}`);
        await new Promise((r) => setTimeout(r, liveSeconds * 1000));
        child.kill('SIGKILL');
        await stopped(child);
        const load2 = loadavg();
        const b = await start(cli, args, prof);
        child = b.child;
        print(`${now()}Z round ${round} ${build}, after kill -9 (load ${load2}): serving ${b.start.serving.toFixed(2)} s, caught up ${b.start.caughtUp.toFixed(2)} s; ${b.start.phases}`);
        // An operator's restart: the running service stopped (its stop writes a snapshot of everything
        // ingested, and its memory goes back), then started at once.
        child.kill('SIGTERM');
        await stopped(child);
        const load3 = loadavg();
        const c = await start(cli, args, prof);
        child = c.child;
        print(`${now()}Z round ${round} ${build}, after SIGTERM of the running service (load ${load3}): serving ${c.start.serving.toFixed(2)} s, caught up ${c.start.caughtUp.toFixed(2)} s; ${c.start.phases}`);
        child.kill('SIGTERM');
        await stopped(child);
        child = null;
        print(`  after its stop: ${await storeParts(dir, meta.events)}`);
      } finally {
        if (child !== null) {
          child.kill('SIGKILL');
          await stopped(child);
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
}

async function main(): Promise<void> {
  if (values['build-store'] !== undefined) return buildStore(resolve(values['build-store']), Number(values.pools ?? 20_000), Number(values['backfill-days'] ?? 30));
  if (values.store === undefined) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const builds = (values.builds ?? 'dist').split(',').filter((b) => b !== '');
  await compare(values.store.split(',').map((d) => resolve(d)), builds, Number(values.rounds ?? 3), Number(values['live-seconds'] ?? 20), values['cpu-prof']);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
