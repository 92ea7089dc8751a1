/**
 * What metrics and logs cost on reads: two services on the same data, one with metrics on (the
 * default: requests counted by host, route and status with a latency histogram) and one with
 * `--metrics false`, both logging at the default level, are loaded in turn with the reads of
 * `npm run bench` (pool details on the free host from its URL cache, and on the paid host), server
 * on core 0 and load generator on core 1. Rounds alternate; the best round of each side is compared,
 * and the median of the paired rounds. Beside throughput, each round reads the CPU time the
 * service's main thread (uWS and every handler) spent per request answered, from the kernel's
 * schedstat: time other processes take from the core does not count there, so on a shared machine
 * it resolves a few per cent where requests per second cannot.
 *
 *   node dist/bench/ops-overhead.js [--rounds N] [--seconds N]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hasTaskset, hasWrk, runLoad, runWrk, type LoadOptions, type LoadResult } from './load.js';
import { median } from './median.js';

const CLI = fileURLToPath(new URL('../scripts/dexdata.cjs', import.meta.url));
const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 4);
const SECONDS = Number(values.seconds ?? 5);
const CONNECTIONS = 64;
const SERVER_CORE = 0;
const LOAD_CORE = 1;

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Nanoseconds the process's main thread has run on a CPU (null where /proc has no schedstat). */
function mainThreadCpuNs(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

function start(args: readonly string[]): Promise<{ child: ChildProcess; free: number; paid: number }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const free = /(?<!paid )REST listening on http:\/\/[\d.]+:(\d+)/.exec(out);
      const paid = /paid REST listening on http:\/\/[\d.]+:(\d+)/.exec(out);
      if (free && paid && /caught up/.test(out)) resolve({ child, free: Number(free[1]), paid: Number(paid[1]) });
    });
    child.once('exit', (code) => reject(new Error(`service exited (${code}):\n${out.slice(-2000)}`)));
  });
}

async function main(): Promise<void> {
  const pinning = await hasTaskset();
  const wrk = await hasWrk();
  const load = (o: LoadOptions): Promise<LoadResult> => (wrk ? runWrk(o) : runLoad(o));
  const load1 = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  print(`# metrics and logs overhead, ${new Date().toISOString()}, load average ${load1()}`);
  print(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}; load ${wrk ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds${pinning ? '' : ' (unpinned)'}`);
  const dir = mkdtempSync(join(tmpdir(), 'dexdata-ops-bench-'));
  const children: ChildProcess[] = [];
  try {
    const roomy = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ plans: { keyless: roomy, free: roomy, pro: roomy } }));
    const common = ['--config', config, '--port', '0', '--pools', '2000', '--backfill-days', '1'];
    // One data directory each (LMDB allows one writer process): the same seed makes the same data.
    const dirs = [join(dir, 'on'), join(dir, 'off')];
    const key = /key: (api_\w+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', dirs[0]!, '--config', config], { encoding: 'utf8' }))![1]!;
    const keyOff = /key: (api_\w+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', dirs[1]!, '--config', config], { encoding: 'utf8' }))![1]!;
    const on = await start([...common, '--data-dir', dirs[0]!, '--metrics-port', '0']);
    children.push(on.child);
    const off = await start([...common, '--data-dir', dirs[1]!, '--metrics', 'false']);
    children.push(off.child);
    for (const s of [on, off]) if (pinning) execFileSync('taskset', ['-a', '-cp', String(SERVER_CORE), String(s.child.pid)], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 20_000)); // LMDB commits after the catch-up settle
    const top = (await (await fetch(`http://127.0.0.1:${on.free}/networks/ethereum/pools/search?limit=1`)).json()) as { results: { id: string }[] };
    const pool = top.results[0]!.id;
    print('');
    print(`| read | metrics off req/s | metrics on req/s | on / off (best of ${ROUNDS}) | median of the ${ROUNDS} paired rounds | rounds on/off % | main thread µs per request, off / on (medians) | off / on CPU per request |`);
    print('|---|---|---|---|---|---|---|---|');
    for (const [name, url, headers] of [
      ['pool details, free host (cached by URL)', (p: typeof on) => `http://127.0.0.1:${p.free}/networks/ethereum/pools/${pool}`, () => ({})],
      ['pool details, paid host (no URL cache)', (p: typeof on) => `http://127.0.0.1:${p.paid}/networks/ethereum/pools/${pool}`, (p: typeof on) => ({ authorization: p === on ? key : keyOff })],
    ] as const) {
      const withOn: LoadResult[] = [];
      const withOff: LoadResult[] = [];
      /** Main-thread CPU µs per request answered, per round (empty without schedstat). */
      const cpuOn: number[] = [];
      const cpuOff: number[] = [];
      const round = async (s: typeof on, runs: LoadResult[], cpu: number[]): Promise<void> => {
        const before = mainThreadCpuNs(s.child.pid!);
        const m = await load({ url: url(s), seconds: SECONDS, connections: CONNECTIONS, core: pinning ? LOAD_CORE : null, headers: headers(s) });
        const after = mainThreadCpuNs(s.child.pid!);
        runs.push(m);
        if (before !== null && after !== null && m.requestsPerSecond > 0) cpu.push((after - before) / 1000 / (m.requestsPerSecond * SECONDS));
      };
      for (let r = 0; r < ROUNDS; r++) {
        await round(off, withOff, cpuOff);
        await round(on, withOn, cpuOn);
      }
      const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
      const ratio = best(withOn).requestsPerSecond / best(withOff).requestsPerSecond;
      const paired = withOn.map((m, i) => m.requestsPerSecond / withOff[i]!.requestsPerSecond);
      const cpu = cpuOn.length === ROUNDS && cpuOff.length === ROUNDS ? `${median(cpuOff).toFixed(2)} / ${median(cpuOn).toFixed(2)}` : 'n/a';
      const cpuRatio = cpu === 'n/a' ? 'n/a' : `${((median(cpuOff) / median(cpuOn)) * 100).toFixed(1)} %`;
      const rounds = paired.map((r) => (r * 100).toFixed(1)).join('/');
      const failures = [...withOn, ...withOff].reduce((n, m) => n + m.errors + m.non2xx, 0);
      print(`| ${name} | ${Math.round(best(withOff).requestsPerSecond)} | ${Math.round(best(withOn).requestsPerSecond)} | ${(ratio * 100).toFixed(1)} % | ${(median(paired) * 100).toFixed(1)} % | ${rounds}${failures > 0 ? ` (${failures} failures)` : ''} | ${cpu} | ${cpuRatio} |`);
    }
    print('');
    print(`load average at the end: ${load1()}`);
  } finally {
    for (const c of children) {
      c.kill('SIGTERM');
      await new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
