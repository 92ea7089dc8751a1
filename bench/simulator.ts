/**
 * The simulator alone (no engine) at the public service's scale: for each size, in a fresh
 * process, how fast its universe is built, what it holds per pool (heap and typed arrays after a
 * collection; its saved state), and how fast the creations of its genesis pools stream out.
 * With `--day`, the smallest size also runs its first simulated day and counts the pools that trade.
 *
 *   npm run bench:simulator                       # 10,000,000 and 40,000,000 pools
 *   node --expose-gc dist/bench/simulator.js --pools 10000000 --swaps-per-second 25 --day
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createSimulator, GENESIS_POOL_SHARE } from '../engine/sources/simulator/index.js';

const DEFAULT_SIZES = [10_000_000, 40_000_000];
/** Creation batches timed per size (each CREATION_BATCH_POOLS pools). */
const TIMED_BATCHES = 10;
const SECONDS_PER_DAY = 86_400;
/** Noise swaps per second: about 2 % of 10,000,000 pools trade in a day (README, The simulator). */
const DEFAULT_SWAPS_PER_SECOND = 25;

interface SizeResult {
  readonly pools: number;
  readonly genesisPools: number;
  readonly poolsInState: number;
  readonly buildSeconds: number;
  readonly heapBytesPerPool: number;
  readonly stateBytesPerPool: number;
  readonly saveSeconds: number;
  readonly creationPoolsPerSecond: number;
  readonly day?: { readonly creationSeconds: number; readonly events: number; readonly poolsTrading: number; readonly daySeconds: number };
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
}

function held(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** One size, in this process. */
function measure(pools: number, swapsPerSecond: number, day: boolean): SizeResult {
  const genesisTime = Math.floor(Date.now() / 1000 / 60) * 60 - 7 * SECONDS_PER_DAY;
  collect();
  const before = held();
  const started = performance.now();
  const sim = createSimulator({ seed: 42, pools, genesisTime, swapsPerSecond, newPoolsPerHour: 2 });
  const buildSeconds = (performance.now() - started) / 1000;
  collect();
  const heapBytesPerPool = (held() - before) / pools;
  const saveStarted = performance.now();
  const stateBytesPerPool = sim.saveState().length / pools;
  const saveSeconds = (performance.now() - saveStarted) / 1000;
  const genesisPools = sim.creationsPending;
  const creationStarted = performance.now();
  let created = 0;
  for (let i = 0; i < TIMED_BATCHES && sim.creationsPending > 0; i++) sim.advance(genesisTime + 60);
  created = genesisPools - sim.creationsPending;
  const creationPoolsPerSecond = created / ((performance.now() - creationStarted) / 1000);
  const result = { pools, genesisPools, poolsInState: sim.poolsInState, buildSeconds, heapBytesPerPool, stateBytesPerPool, saveSeconds, creationPoolsPerSecond };
  if (!day) return result;
  while (sim.creationsPending > 0) sim.advance(genesisTime + 60);
  const creationSeconds = (performance.now() - creationStarted) / 1000;
  const dayStarted = performance.now();
  const trading = new Set<string>();
  let events = 0;
  for (let h = 1; h <= 24; h++) {
    for (const batch of sim.advance(genesisTime + h * 3600)) {
      events += batch.events.length;
      for (const e of batch.events) if (e.kind === 'swap') trading.add(`${batch.chain}|${e.pool}`);
    }
  }
  return { ...result, day: { creationSeconds, events, poolsTrading: trading.size, daySeconds: (performance.now() - dayStarted) / 1000 } };
}

function print(r: SizeResult, swapsPerSecond: number): void {
  const m = (x: number) => (x / 1e6).toFixed(1);
  console.log(
    `${r.pools.toLocaleString('en')} pools (${r.genesisPools.toLocaleString('en')} at genesis, ${r.poolsInState.toLocaleString('en')} living in state): ` +
      `built in ${r.buildSeconds.toFixed(1)} s (${m(r.pools / r.buildSeconds)} M pools/s); ` +
      `${r.heapBytesPerPool.toFixed(1)} B per pool held, saved state ${r.stateBytesPerPool.toFixed(1)} B per pool (saved in ${r.saveSeconds.toFixed(1)} s); ` +
      `creations stream at ${Math.round(r.creationPoolsPerSecond).toLocaleString('en')} pools/s ` +
      `(all ${r.genesisPools.toLocaleString('en')} in about ${Math.round(r.genesisPools / r.creationPoolsPerSecond)} s)`,
  );
  if (r.day) {
    const share = (100 * r.day.poolsTrading) / r.genesisPools;
    console.log(
      `  all creations in ${r.day.creationSeconds.toFixed(0)} s; first day at ${swapsPerSecond} swaps/s: ${r.day.events.toLocaleString('en')} events in ${r.day.daySeconds.toFixed(0)} s, ` +
        `${r.day.poolsTrading.toLocaleString('en')} pools traded (${share.toFixed(2)} % of the pools at genesis, ${((100 * r.day.poolsTrading) / r.pools).toFixed(2)} % of --pools)`,
    );
  }
}

const { values } = parseArgs({
  options: {
    pools: { type: 'string', multiple: true },
    'swaps-per-second': { type: 'string', default: String(DEFAULT_SWAPS_PER_SECOND) },
    day: { type: 'boolean', default: false },
    child: { type: 'boolean', default: false },
  },
});
const swapsPerSecond = Number(values['swaps-per-second']);
const sizes = values.pools?.map(Number) ?? DEFAULT_SIZES;

if (values.child) {
  console.log(JSON.stringify(measure(sizes[0]!, swapsPerSecond, values.day)));
} else {
  console.log(`simulator generation, ${new Date().toISOString()}, ${cpus()[0]?.model ?? 'cpu'} x ${cpus().length}, load ${loadavg()[0]!.toFixed(1)}; ${GENESIS_POOL_SHARE * 100} % of pools exist at genesis`);
  const self = fileURLToPath(import.meta.url);
  for (const [i, pools] of sizes.entries()) {
    const args = ['--expose-gc', '--max-old-space-size=16384', self, '--child', '--pools', String(pools), '--swaps-per-second', String(swapsPerSecond)];
    if (values.day && i === 0) args.push('--day');
    const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').pop()!;
    print(JSON.parse(out) as SizeResult, swapsPerSecond);
  }
}
