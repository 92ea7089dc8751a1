/**
 * `npm run bench`: every throughput figure of the project, measured side by side in one run.
 *
 *  1. ingest: events/s folded into every candle interval and rolling window by 2 shard threads, and
 *     what a snapshot cut holds a shard for (bench/cut-hold.ts);
 *  2. the service on its default dataset: backfill rate, resident memory and memory per pool;
 *  3. reads over HTTP, each as a ratio to a uWS server returning a static body of the same size,
 *     server on core 0 and load generator on core 1; static and service loads alternate three times
 *     and the best round of each side is compared (the round the shared machine disturbed least);
 *  4. pool search with two filters and an ordering over 1,000,000 pools, or --search-pools (bench/search.ts);
 *  5. SSE streams: concurrent streams one process holds, memory per stream, events/s delivered to
 *     10,000 streams and creation-to-client latency (bench/streams.ts);
 *  6. EVM backfill from a local anvil node holding 200,000 Uniswap v2 swaps, as a ratio to the raw
 *     eth_getLogs ceiling measured beside it, and the cost of a reorganisation's rollback (bench/evm-backfill.ts);
 *  7. Solana: decoding and ingest throughput on the recorded mainnet transactions (bench/solana-decode.ts).
 *
 * Flags: --quick (smaller dataset and shorter loads, for a smoke run), --seconds N per load,
 * --skip a,b (sections left out: ingest, reads, search, streams, evm, solana), --search-pools N.
 */
import { output, residentBytes, waitForLine } from './process.js';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchIngest } from './ingest.js';
import { benchCutHold } from './cut-hold.js';
import { databaseBytes, openStore } from '../engine/store/store.js';
import { benchSearch, type SearchBenchResult } from './search.js';
import { benchStreams } from './streams.js';
import { benchEvmBackfill } from './evm-backfill.js';
import { benchSolana, formatSolanaBench } from './solana-decode.js';
import { hasTaskset, hasWrk, runLoad, runWrk, type LoadOptions, type LoadResult } from './load.js';

const CLI = fileURLToPath(new URL('../scripts/dexdata.cjs', import.meta.url));
const STATIC_SERVER = fileURLToPath(new URL('./static-server.js', import.meta.url));
const OUT_DIR = fileURLToPath(new URL('../../bench/out/', import.meta.url));

const USAGE = `usage: npm run bench -- [--quick] [--seconds N] [--skip ingest,reads,search,streams,evm,solana] [--search-pools N]
  --quick           smaller dataset and shorter loads (a smoke run)
  --seconds N       seconds per load
  --skip LIST       sections left out (the backfill and restarts always run)
  --search-pools N  the simulated pools the search section starts with (default 1,200,000; 120,000 with --quick)`;

function parseFlags() {
  try {
    return parseArgs({ options: { quick: { type: 'boolean' }, seconds: { type: 'string' }, skip: { type: 'string' }, 'search-pools': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
}
const { values } = parseFlags();
if (values.help === true) {
  print(USAGE);
  process.exit(0);
}
/** Sections left out (--skip ingest,reads,search,streams,evm,solana): the backfill and restarts always run. */
const skip = new Set((values.skip ?? '').split(',').filter((x) => x !== ''));
const quick = values.quick === true;
const searchPoolsFlag = values['search-pools'] === undefined ? undefined : Number(values['search-pools']);
if (searchPoolsFlag !== undefined && !(Number.isInteger(searchPoolsFlag) && searchPoolsFlag >= 1_000 && searchPoolsFlag <= 40_000_000)) {
  process.stderr.write(`--search-pools must be a whole number from 1000 to 40000000\n${USAGE}\n`);
  process.exit(2);
}
const loadSeconds = Number(values.seconds ?? (quick ? 3 : 10));
const CONNECTIONS = 64;
/** Reads alternate static and service loads this many times each, of `readSeconds` each. */
const READ_ROUNDS = quick ? 1 : 3;
const readSeconds = Number(values.seconds ?? (quick ? 3 : 5));
/** Searches are heavier than single reads: fewer connections keep the queue, not the work, out of the latency. */
const SEARCH_CONNECTIONS = 16;
const SERVER_CORE = 0;
const LOAD_CORE = 1;

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** CPU seconds a process has used so far (all its threads), from /proc; NaN where there is none. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/**
 * Waits until the process has used under `idleShare` of a core for `windowSeconds`, at most
 * `maxSeconds`; returns the seconds waited and the shares seen, one per window.
 */
async function waitQuiet(pid: number, idleShare: number, windowSeconds: number, maxSeconds: number): Promise<{ seconds: number; shares: number[] }> {
  const started = performance.now();
  const shares: number[] = [];
  while ((performance.now() - started) / 1000 < maxSeconds) {
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, windowSeconds * 1000));
    const share = (cpuSeconds(pid) - before) / windowSeconds;
    if (Number.isNaN(share)) break;
    shares.push(share);
    if (share < idleShare) break;
  }
  return { seconds: (performance.now() - started) / 1000, shares };
}

/** Waits for the process to idle (< 5 % of a core over 5 s) and says how long that took. */
async function settle(pid: number, maxSeconds: number): Promise<string> {
  const q = await waitQuiet(pid, 0.05, 5, maxSeconds);
  return `after ${q.seconds.toFixed(0)} s, its CPU meanwhile ${q.shares.map((x) => `${Math.round(x * 100)}`).join(', ')} % of a core`;
}

/** The data directory's size: LMDB's file and the snapshot folder. */
function storeBytes(dir: string): { total: number; lmdb: number; snapshots: number; snapshotFiles: number } {
  const snaps = join(dir, 'snapshots');
  const files = existsSync(snaps) ? readdirSync(snaps).filter((n) => n.endsWith('.snap')) : [];
  const snapshots = files.reduce((a, n) => a + statSync(join(snaps, n)).size, 0);
  const total = directoryBytes(dir);
  return { total, lmdb: total - snapshots, snapshots, snapshotFiles: files.length };
}

function directoryBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split(/\s/)[0]);
}

function pin(pid: number, core: number, pinning: boolean): void {
  if (pinning) execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' });
}

async function main(): Promise<void> {
  const pinning = await hasTaskset();
  const wrk = await hasWrk();
  const load = (o: LoadOptions): Promise<LoadResult> => (wrk ? runWrk(o) : runLoad(o));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  print(`# dexdata benchmark, ${new Date().toISOString()}`);
  print(`machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, Node ${process.version}`);
  print(`load generator: ${wrk ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${loadSeconds} s per run${pinning ? `, server on core ${SERVER_CORE}, load on core ${LOAD_CORE}` : ' (taskset missing: unpinned)'}`);
  print('');

  // 1. Ingest.
  const ing = skip.has('ingest') ? null : await benchIngest({ shards: 2, pools: quick ? 1000 : 2000, hours: quick ? 2 : 6, swapsPerSecond: 200 });
  if (ing !== null) {
    print(`ingest (2 shard threads, every interval and window): ${fmt(ing.eventsPerSecond)} events/s, ${fmt(ing.swapsPerSecond)} swap events/s (${fmt(ing.events)} events, ${ing.seconds.toFixed(2)} s)`);
    print(
      `ingest sustained (after the first source step): ${fmt(ing.sustainedEventsPerSecond)} events/s, ${fmt(ing.sustainedSwapsPerSecond)} swap events/s; ` +
        `the first step (${fmt(ing.firstStepSwaps)} swaps on fresh threads still compiling their code) took ${ing.firstStepSeconds.toFixed(2)} s`,
    );
    print(`ingest pipeline (simulate, dedupe, encode, commit to LMDB, one thread): ${fmt(ing.prepareEventsPerSecond)} events/s`);
  }
  // What a snapshot cut holds a shard for, both ways on the same views (bench/cut-hold.ts).
  if (!skip.has('ingest')) for (const line of benchCutHold(quick ? [200_000, 10_000, 20_000, 20_000] : [2_000_000, 93_000, 213_000, 200_000], quick ? 3 : 8)) print(line);

  // 2. The service on its default dataset.
  const pools = quick ? 2000 : 20_000;
  const backfillDays = quick ? 3 : 30;
  const dataDir = mkdtempSync(join(tmpdir(), 'dexdata-bench-'));
  // Plans with room for a load test: metering still runs on every request, it just never refuses
  // (a read load passes a million requests in well under a minute).
  const roomy = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };
  const configFile = join(dataDir, 'bench-config.json');
  writeFileSync(configFile, JSON.stringify({ plans: { keyless: roomy, free: roomy, pro: roomy } }));
  const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--label', 'bench', '--data-dir', dataDir, '--config', configFile], { encoding: 'utf8' });
  const proKey = /key: (api_\w+)/.exec(created)![1]!;
  const serveArgs = ['serve', '--config', configFile, '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', '--pools', String(pools), '--backfill-days', String(backfillDays)];
  const service = spawn(process.execPath, [CLI, ...serveArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  output(service);
  let again: ChildProcess | null = null;
  try {
    const caught = await waitForLine(service, /caught up: (\d+) events in ([\d.]+) s/, 30 * 60_000);
    const backfillEvents = Number(caught[1]);
    const backfillSeconds = Number(caught[2]);
    await new Promise((r) => setTimeout(r, 2_000));
    const rss = residentBytes(service.pid!);
    const disk = directoryBytes(dataDir);
    const mib = (b: number) => `${(b / 1024 ** 2).toFixed(0)} MiB`;
    print(`service backfill: ${fmt(backfillEvents)} events of ${backfillDays} days over ${pools} pools in ${backfillSeconds.toFixed(1)} s (${fmt(backfillEvents / backfillSeconds)} events/s)`);
    print(
      `service memory: ${mib(rss.total)} resident = ${mib(rss.anon)} engine and heaps (${(rss.anon / pools / 1024).toFixed(1)} KiB per pool) + ${mib(rss.file)} LMDB pages cached; data on disk ${mib(disk)}`,
    );
    // Restart on the same data: the newest snapshot (the one a SIGTERM leaves) and the log after it.
    // Reads are measured on the restarted service: for the first minutes after the first catch-up,
    // LMDB commits merge a large free-page list left by the backfill and take CPU from the gateway.
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    const restartStarted = performance.now();
    again = spawn(process.execPath, [CLI, ...serveArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    output(again);
    const portLine = await waitForLine(again, /(?<!paid )REST listening on http:\/\/[\d.]+:(\d+)/, 10 * 60_000);
    const listeningSeconds = (performance.now() - restartStarted) / 1000;
    const paidLine = await waitForLine(again, /paid REST listening on http:\/\/[\d.]+:(\d+)/, 60_000);
    await waitForLine(again, /caught up/, 10 * 60_000);
    const restart: Record<string, number> = { listeningSeconds, caughtUpSeconds: (performance.now() - restartStarted) / 1000 };
    const store = storeBytes(dataDir);
    print('');
    print(`data on disk after the stop: ${mib(store.total)} = LMDB ${mib(store.lmdb)} + snapshots ${mib(store.snapshots)} (${store.snapshotFiles} kept); ${fmt(store.total / backfillEvents)} B per event ingested, ${fmt(store.total / backfillDays / 2 ** 20)} MiB per day of history`);
    const dbs = await (async () => {
      const st = openStore(dataDir);
      try {
        return databaseBytes(st);
      } finally {
        await st.close();
      }
    })();
    print(`LMDB by database: ${Object.entries(dbs).map(([name, b]) => `${name} ${mib(b)} (${fmt(b / backfillEvents)} B per event)`).join(', ')}`);
    print(`restart after SIGTERM (the snapshot written at the stop, the log after it): serving after ${restart.listeningSeconds!.toFixed(1)} s, caught up after ${restart.caughtUpSeconds!.toFixed(1)} s`);
    const base = `http://127.0.0.1:${portLine[1]}`;
    const paidBase = `http://127.0.0.1:${paidLine[1]}`;
    pin(again.pid!, SERVER_CORE, pinning);
    const restarted = again;
    // Reads measure the gateway: they start once the store's commits after the restart have settled
    // (the wait and the service's CPU meanwhile are printed; see "LMDB after a start" in bench/RESULTS.md).
    const quiet = skip.has('reads') ? 'reads skipped' : await settle(restarted.pid!, quick ? 30 : 300);
    print(`reads start once the restarted service idles (< 5 % of a core over 5 s): ${quiet}`);

    const top = (await (await fetch(`${base}/networks/ethereum/pools/search?limit=1`)).json()) as { results: { id: string }[] };
    const pool = top.results[0]!.id;
    const detailsUrl = `${base}/networks/ethereum/pools/${pool}`;
    // 1,000 candles need a plan without a history cap: the pro key on the paid host.
    const paidHeaders = { authorization: proKey };
    let ohlcvUrl = '';
    let candles = 0;
    for (const interval of ['1m', '5m', '15m', '30m', '1h']) {
      const url = `${paidBase}/networks/ethereum/pools/${pool}/ohlcv?start=-${backfillDays}d&interval=${interval}&limit=1000`;
      const body = (await (await fetch(url, { headers: paidHeaders })).json()) as unknown[];
      if (Array.isArray(body) && body.length > candles) [ohlcvUrl, candles] = [url, body.length];
      if (candles === 1000) break;
    }
    print('');
    print(`| read | body bytes | service req/s | static req/s | ratio of the best of ${READ_ROUNDS} rounds each | p99 ms |`);
    print('|---|---|---|---|---|---|');
    const rows: Record<string, unknown>[] = [];
    for (const [name, url, headers] of [
      ['pool details, free host (cached by URL)', detailsUrl, {}],
      ['pool details, paid host (no URL cache)', detailsUrl.replace(base, paidBase), paidHeaders],
      [`OHLCV, ${candles} candles, paid host`, ohlcvUrl, paidHeaders],
    ] as const) {
      if (skip.has('reads')) break;
      const bytes = Buffer.byteLength(await (await fetch(url, { headers })).text());
      const staticPort = 20_000 + Math.floor(Math.random() * 20_000);
      const st = spawn(process.execPath, [STATIC_SERVER, String(staticPort), String(bytes)], { stdio: ['ignore', 'pipe', 'inherit'] });
      await waitForLine(st, /listening/, 10_000);
      pin(st.pid!, SERVER_CORE, pinning);
      // Static and service loads alternate, READ_ROUNDS of each; the best round of each side is
      // the one the machine disturbed least, and the ratio is taken between those.
      const ceilings: LoadResult[] = [];
      const services: LoadResult[] = [];
      for (let round = 0; round < READ_ROUNDS; round++) {
        ceilings.push(await load({ url: `http://127.0.0.1:${staticPort}/`, seconds: readSeconds, connections: CONNECTIONS, core: pinning ? LOAD_CORE : null }));
        services.push(await load({ url, seconds: readSeconds, connections: CONNECTIONS, core: pinning ? LOAD_CORE : null, headers }));
      }
      st.kill('SIGKILL');
      const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
      const ceiling = best(ceilings);
      const measured = best(services);
      const ratio = measured.requestsPerSecond / ceiling.requestsPerSecond;
      const rounds = services.map((m, i) => `${((m.requestsPerSecond / ceilings[i]!.requestsPerSecond) * 100).toFixed(0)}`).join('/');
      print(`| ${name} | ${bytes} | ${fmt(measured.requestsPerSecond)} | ${fmt(ceiling.requestsPerSecond)} | ${(ratio * 100).toFixed(0)} % (rounds ${rounds} %) | ${measured.p99Ms.toFixed(2)} |`);
      const failures = services.reduce((n, m) => n + m.errors + m.non2xx, 0);
      if (failures > 0) print(`  (${failures} socket errors or non-2xx answers)`);
      rows.push({ name, bytes, service: measured, ceiling, ratio, rounds: { services, ceilings } });
    }
    // What the last periodic snapshot cut of the live service held ingest and the shards for.
    const cutStats = ((await (await fetch(`${paidBase}/stats`, { headers: paidHeaders })).json()) as { engine?: { snapshots?: Record<string, number | boolean | null> | null } }).engine?.snapshots;
    const cutMs = (k: string) => (typeof cutStats?.[k] === 'number' ? `${(cutStats[k] as number).toFixed(1)} ms` : 'n/a');
    print('');
    print(
      cutStats?.last_shard_pause_ms == null
        ? 'snapshot cut while live: none during the reads'
        : `snapshot cut while live (the last one, ${cutStats.last_delta === true ? 'rows changed since the one before' : 'every row'}): ingest held ${cutMs('last_main_pause_ms')}, a shard held ${cutMs('last_shard_pause_ms')} at once and copied for ${cutMs('last_shard_copy_ms')} in all, written in ${cutMs('last_write_ms')}`,
    );
    // Restart after kill -9: the newest periodic snapshot and the log after it.
    restarted.kill('SIGKILL');
    await new Promise((r) => restarted.once('exit', r));
    const killedAt = performance.now();
    again = spawn(process.execPath, [CLI, ...serveArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    output(again);
    await waitForLine(again, /^\S+ REST listening on http:\/\/[\d.]+:(\d+)/m, 10 * 60_000);
    restart.afterKill9ListeningSeconds = (performance.now() - killedAt) / 1000;
    const replayed = await waitForLine(again, /replayed (\d+) log batches/, 60_000).catch(() => null);
    await waitForLine(again, /caught up/, 10 * 60_000);
    restart.afterKill9CaughtUpSeconds = (performance.now() - killedAt) / 1000;
    print('');
    print(`restart after kill -9 (the newest periodic snapshot, ${replayed ? replayed[1] : 'no'} log batches after it replayed): serving after ${restart.afterKill9ListeningSeconds.toFixed(1)} s, caught up after ${restart.afterKill9CaughtUpSeconds.toFixed(1)} s`);
    const last = again;
    last.kill('SIGTERM');
    await new Promise((r) => last.once('exit', r));
    // 4. Pool search over a large universe (its own service: the default one is stopped by now).
    const searchPools = searchPoolsFlag ?? (quick ? 120_000 : 1_200_000);
    let search: SearchBenchResult | null = null;
    if (!skip.has('search')) {
    print('');
    print(`pool search, 256 distinct searches with two filters and an ordering, paid host, ${SEARCH_CONNECTIONS} connections:`);
    print('| service | req/s | p50 ms | p99 ms |');
    print('|---|---|---|---|');
    search = await benchSearch({
      cli: CLI,
      pools: searchPools,
      seconds: loadSeconds,
      connections: SEARCH_CONNECTIONS,
      pinning,
      serverCore: SERVER_CORE,
      loadCore: LOAD_CORE,
      load,
      waitForLine,
      print,
      waitQuiet: (pid) => settle(pid, quick ? 30 : 300),
    });
    print(`(${fmt(search.pools)} pools; the loads start once the service idles: ${search.quiet})`);
    }
    // 5. Streams (their own server and load generator, pinned like the rest).
    let streams: Awaited<ReturnType<typeof benchStreams>> | null = null;
    if (!skip.has('streams')) {
      print('');
      print('SSE streams:');
      print('| stream figure | value |');
      print('|---|---|');
      streams = await benchStreams({ quick, pinning, serverCore: SERVER_CORE, loadCore: LOAD_CORE, print });
    }
    // 6. EVM backfill against its raw eth_getLogs ceiling, and a rollback on that chain.
    let evm: Awaited<ReturnType<typeof benchEvmBackfill>> | null = null;
    if (!skip.has('evm')) {
      print('');
      print('EVM backfill from a local anvil node:');
      evm = await benchEvmBackfill({ swaps: quick ? 20_000 : 200_000, print });
    }
    // 7. Solana decoding and ingest on the recorded mainnet transactions.
    let solana: Awaited<ReturnType<typeof benchSolana>> | null = null;
    if (!skip.has('solana')) {
      print('');
      print('Solana decoding and ingest (recorded mainnet transactions):');
      solana = await benchSolana({ seconds: quick ? 2 : 5 });
      for (const line of formatSolanaBench(solana)) print(line);
    }
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(
      join(OUT_DIR, 'results.json'),
      JSON.stringify({ date: new Date().toISOString(), machine: { cpu, cores: cpus().length }, ingest: ing, backfill: { backfillEvents, backfillSeconds, pools, rss, disk }, reads: rows, readsAfter: quiet, restart, search, streams, evm, solana }, null, 2),
    );
  } finally {
    for (const child of [service, again]) {
      if (child !== null && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
