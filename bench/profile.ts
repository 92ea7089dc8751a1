/**
 * `npm run profile`: runs the service under clinic (doctor, then flame) on a small dataset, puts it
 * under read load once it has caught up (pool details and OHLCV), stops it and writes the reports to
 * bench/out/clinic-<tool>/. clinic runs with NO_INSIGHT=1 (it does nothing without a terminal otherwise).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasWrk, runLoad, runWrk, type LoadOptions } from './load.js';

const CLINIC = fileURLToPath(new URL('../../node_modules/clinic/bin.js', import.meta.url));
const CLI = fileURLToPath(new URL('../scripts/dexdata.cjs', import.meta.url));
const OUT_DIR = fileURLToPath(new URL('../../bench/out/', import.meta.url));
/** Seconds of load per endpoint. Flame's log processing grows with run time (minutes for a 30 s run). */
const LOAD_SECONDS: Record<'doctor' | 'flame', number> = { doctor: 10, flame: 5 };

function lines(child: ChildProcess): { wait(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> } {
  let out = '';
  const onData = (b: Buffer) => {
    out += b.toString();
    process.stdout.write(b);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    wait: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}`)), timeoutMs);
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            clearTimeout(timer);
            child.stdout!.off('data', check);
            resolve(m);
          }
        };
        child.stdout!.on('data', check);
        check();
      }),
  };
}

async function profile(tool: 'doctor' | 'flame'): Promise<void> {
  const dest = join(OUT_DIR, `clinic-${tool}`);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'dexdata-profile-'));
  const args = [CLINIC, tool, '--dest', dest, '--', process.execPath, CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', '--pools', '2000', '--backfill-days', '2'];
  const child = spawn(process.execPath, args, { env: { ...process.env, NO_INSIGHT: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = lines(child);
  const port = (await out.wait(/REST listening on http:\/\/[\d.]+:(\d+)/, 120_000))[1];
  await out.wait(/caught up/, 10 * 60_000);
  const base = `http://127.0.0.1:${port}`;
  const top = (await (await fetch(`${base}/networks/ethereum/pools/search?limit=1`)).json()) as { results: { id: string }[] };
  const pool = top.results[0]!.id;
  const load = (await hasWrk()) ? runWrk : runLoad;
  for (const url of [`${base}/networks/ethereum/pools/${pool}`, `${base}/networks/ethereum/pools/${pool}/ohlcv?start=-2d&interval=5m&limit=1000`]) {
    const o: LoadOptions = { url, seconds: LOAD_SECONDS[tool], connections: 64, core: null };
    const r = await load(o);
    process.stdout.write(`profile load ${url.replace(base, '')}: ${Math.round(r.requestsPerSecond)} req/s\n`);
  }
  child.kill('SIGINT');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
  process.stdout.write(`clinic ${tool} report written under ${dest}\n`);
}

async function main(): Promise<void> {
  for (const tool of ['doctor', 'flame'] as const) await profile(tool);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
