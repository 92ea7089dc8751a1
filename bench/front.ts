/**
 * What the HTTP front (gateway/edge/front.ts) costs on reads, side by side in one run: one process
 * holds a simulated market and two gateways over it, one with uWS on its public ports (the default)
 * and one behind the front, plus a bare relay that forwards bytes between a client and the first
 * gateway's port without reading them (the least any front in this process can cost). Everything
 * runs pinned to one core, the load generator on another; each target gets READ_ROUNDS alternated
 * rounds against a static uWS server of the same body size, and the best round of each is compared.
 *
 * Run: node dist/bench/front.js [--seconds N] [--rounds N] [--pools N]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from '../engine/config.js';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore } from '../engine/store/store.js';
import { openKeyStore } from '../gateway/auth/key-store.js';
import { startGateway, type Gateway, type GatewayContext } from '../gateway/server.js';
import { hasTaskset, hasWrk, runLoad, runWrk, type LoadOptions, type LoadResult } from './load.js';
import { waitForLine } from './process.js';

const STATIC_SERVER = fileURLToPath(new URL('./static-server.js', import.meta.url));
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const CONNECTIONS = 64;
const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z
const HOURS = 6;

/** Forwards bytes both ways between each client and `port`, reading nothing. */
function startRelay(port: number): Promise<{ port: number; server: Server }> {
  const server = createServer({ noDelay: true }, (client) => {
    const up = createConnection({ host: '127.0.0.1', port, noDelay: true });
    client.on('data', (b: Buffer) => up.write(b));
    up.on('data', (b: Buffer) => client.write(b));
    const end = (): void => {
      client.destroy();
      up.destroy();
    };
    for (const s of [client, up]) {
      s.on('close', end);
      s.on('error', end);
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, server })));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string' }, rounds: { type: 'string' }, pools: { type: 'string' } } });
  const seconds = Number(values.seconds ?? 4);
  const rounds = Number(values.rounds ?? 3);
  const poolCount = Number(values.pools ?? 500);
  const pinning = await hasTaskset();
  const load = (await hasWrk()) ? runWrk : runLoad;
  if (pinning) execFileSync('taskset', ['-a', '-cp', String(SERVER_CORE), String(process.pid)], { stdio: 'ignore' });

  const dir = mkdtempSync(join(tmpdir(), 'dexdata-bench-front-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: Math.max(4096, poolCount * 4), tokens: Math.max(4096, poolCount * 4), chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const sim = createSimulator({ seed: 3, pools: poolCount, genesisTime: GENESIS, swapsPerSecond: 2, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  const now = GENESIS + HOURS * 3600;
  for (let t = GENESIS + 3600; t <= now; t += 3600) await (await ingest.ingest(sim.advance(t))).applied;
  await shards.flush();
  const roomy = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };
  const plans = {} as Record<PlanName, PlanLimits>;
  for (const p of Object.keys(DEFAULT_PLANS) as PlanName[]) plans[p] = { ...DEFAULT_PLANS[p], ...roomy };
  const proKey = openKeyStore(store).create('pro', 'bench', now).key;
  const ctx: GatewayContext = { views, registry: ingest.registry, store, ranker: shards, now: () => now, swaps: shards.swapFeed };
  const gateways: Gateway[] = [];
  const open = async (front: 'on' | 'off'): Promise<Gateway> => {
    const g = await startGateway(ctx, { host: '127.0.0.1', port: 0, front, access: { plans, paidRest: { port: 0 } } });
    gateways.push(g);
    return g;
  };
  const direct = await open('off');
  const fronted = await open('on');
  const relays = [await startRelay(direct.port), await startRelay(direct.ports.paidRest!)];

  const top = (await (await fetch(`http://127.0.0.1:${direct.port}/networks/ethereum/pools/search?limit=1`)).json()) as { results: { id: string }[] };
  const path = `/networks/ethereum/pools/${top.results[0]!.id}`;
  const auth = { authorization: proKey };
  const cases = [
    { name: 'pool details, free host (cached by URL)', headers: {}, ports: { direct: direct.port, front: fronted.port, relay: relays[0]!.port } },
    { name: 'pool details, paid host (no URL cache)', headers: auth, ports: { direct: direct.ports.paidRest!, front: fronted.ports.paidRest!, relay: relays[1]!.port } },
  ];
  const loadavg = (): string => execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  console.log(`${new Date().toISOString()}: ${poolCount} pools, ${HOURS} h; server on core ${SERVER_CORE}, load on core ${LOAD_CORE}${pinning ? '' : ' (taskset missing: unpinned)'}; ${CONNECTIONS} connections, ${rounds} rounds of ${seconds} s; load average ${loadavg()}`);
  console.log('');
  console.log('| read | body bytes | static req/s | uWS directly | through the front | bare relay | front / direct | relay / direct |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const c of cases) {
    const url = (port: number): string => `http://127.0.0.1:${port}${path}`;
    const bytes = Buffer.byteLength(await (await fetch(url(c.ports.direct), { headers: c.headers })).text());
    const staticPort = 20_000 + Math.floor(Math.random() * 20_000);
    const st = spawn(process.execPath, [STATIC_SERVER, String(staticPort), String(bytes)], { stdio: ['ignore', 'pipe', 'inherit'] });
    await waitForLine(st, /listening/, 10_000);
    if (pinning) execFileSync('taskset', ['-a', '-cp', String(SERVER_CORE), String(st.pid)], { stdio: 'ignore' });
    const runs: Record<string, LoadResult[]> = { static: [], direct: [], front: [], relay: [] };
    const o = (u: string, headers: Record<string, string> = {}): LoadOptions => ({ url: u, seconds, connections: CONNECTIONS, core: pinning ? LOAD_CORE : null, headers });
    for (let r = 0; r < rounds; r++) {
      runs.static!.push(await load(o(`http://127.0.0.1:${staticPort}/`)));
      for (const k of ['direct', 'front', 'relay'] as const) runs[k]!.push(await load(o(url(c.ports[k]), c.headers)));
    }
    st.kill('SIGKILL');
    const best = (k: string): number => Math.max(...runs[k]!.map((x) => x.requestsPerSecond));
    const failures = ['direct', 'front', 'relay'].reduce((n, k) => n + runs[k]!.reduce((m, x) => m + x.errors + x.non2xx, 0), 0);
    const pct = (a: number, b: number): string => `${((a / b) * 100).toFixed(0)} %`;
    const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
    const perRound = (k: string): string => runs[k]!.map((x, i) => pct(x.requestsPerSecond, runs.direct![i]!.requestsPerSecond)).join('/');
    console.log(
      `| ${c.name} | ${bytes} | ${fmt(best('static'))} | ${fmt(best('direct'))} (${pct(best('direct'), best('static'))}) | ${fmt(best('front'))} (${pct(best('front'), best('static'))}) | ${fmt(best('relay'))} (${pct(best('relay'), best('static'))}) | ${pct(best('front'), best('direct'))} (rounds ${perRound('front')}) | ${pct(best('relay'), best('direct'))} (rounds ${perRound('relay')}) |`,
    );
    if (failures > 0) console.log(`  (${failures} socket errors or non-2xx answers)`);
  }
  console.log('');
  console.log(`load average at the end: ${loadavg()}`);
  for (const r of relays) r.server.close();
  for (const g of gateways) await g.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
