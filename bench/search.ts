/**
 * Pool search over a large universe: the service started on 1,200,000 simulated pools (1,020,000
 * exist at the start of history) with a short history, then a mix of 256 distinct searches, each
 * with two filters and an ordering, on the paid host (no URL cache), every answer checked for 200.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadOptions, LoadResult } from './load.js';
import { searchPaths } from './search-paths.js';

export interface SearchBenchOptions {
  readonly cli: string;
  readonly pools: number;
  readonly seconds: number;
  readonly connections: number;
  readonly pinning: boolean;
  readonly serverCore: number;
  readonly loadCore: number;
  readonly load: (o: LoadOptions) => Promise<LoadResult>;
  readonly waitForLine: (child: ReturnType<typeof spawn>, pattern: RegExp, timeoutMs: number) => Promise<RegExpMatchArray>;
  readonly print: (line: string) => void;
  /** Resolves once the process idles; says how long that took (the store's commits after the start settle first). */
  readonly waitQuiet?: (pid: number) => Promise<string>;
}

export interface SearchBenchResult {
  readonly pools: number;
  readonly paths: number;
  /** Service free to use every core (the load generator shares the last one). */
  readonly allCores: LoadResult;
  /** Service confined to one core, load generator on another. */
  readonly oneCore: LoadResult;
  /** How long the service took to idle after its start, before the loads. */
  readonly quiet: string;
}

export async function benchSearch(o: SearchBenchOptions): Promise<SearchBenchResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'dexdata-bench-search-'));
  const configFile = join(dataDir, 'bench-config.json');
  writeFileSync(configFile, JSON.stringify({ plans: { pro: { requestsPerMinute: 1_000_000, credits: 2_000_000_000 } } }));
  const created = execFileSync(process.execPath, [o.cli, 'keys', 'create', '--plan', 'pro', '--label', 'bench', '--data-dir', dataDir, '--config', configFile], { encoding: 'utf8' });
  const key = /key: (api_\w+)/.exec(created)![1]!;
  const args = ['serve', '--config', configFile, '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', '--pools', String(o.pools), '--backfill-days', '0.1'];
  const service = spawn(process.execPath, [o.cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const paid = await o.waitForLine(service, /paid REST listening on http:\/\/[\d.]+:(\d+)/, Math.max(10 * 60_000, o.pools / 10));
    // Pool creations are ingested at a few thousand per second on a loaded machine: allow for them.
    await o.waitForLine(service, /caught up: (\d+) events/, Math.max(30 * 60_000, o.pools));
    const base = `http://127.0.0.1:${paid[1]}`;
    const headers = { authorization: key };
    const stats = (await (await fetch(`${base}/stats`, { headers })).json()) as { pools: number };
    const networks = ((await (await fetch(`${base}/networks`, { headers })).json()) as { id: string }[]).map((n) => n.id);
    const paths = searchPaths(networks, Math.floor(Date.now() / 1000));
    // Every search answers 200; the first of each ordering also builds that figure's sorted index.
    for (const p of paths) {
      const r = await fetch(`${base}${p}`, { headers });
      if (r.status !== 200) throw new Error(`${p} answered ${r.status}: ${await r.text()}`);
      await r.arrayBuffer();
    }
    const quiet = (await o.waitQuiet?.(service.pid!)) ?? '';
    const run = () => o.load({ url: `${base}/`, paths, seconds: o.seconds, connections: o.connections, core: o.pinning ? o.loadCore : null, headers });
    const allCores = await run();
    if (o.pinning) execFileSync('taskset', ['-a', '-cp', String(o.serverCore), String(service.pid)], { stdio: 'ignore' });
    const oneCore = await run();
    for (const [name, r] of [['service on every core', allCores], ['service on one core', oneCore]] as const) {
      o.print(
        `| ${name} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} |${r.errors + r.non2xx > 0 ? ` ${r.errors} socket errors, ${r.non2xx} non-2xx |` : ''}`,
      );
    }
    return { pools: stats.pools, paths: paths.length, allCores, oneCore, quiet };
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
