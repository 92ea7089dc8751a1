/**
 * Resident memory of the simulator alone, as `dexdata serve --pools N` builds it (a child of
 * bench/tiers.ts): prints `simulator anon <bytes>` once the universe is made and garbage collected.
 * The simulator is not part of a real deployment: the tiers bench subtracts what it holds per pool.
 *
 *   node --expose-gc dist/bench/simulator-memory.js --pools N [--backfill-days D] [--swaps-per-second S]
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../engine/config.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { residentBytes } from './process.js';

const { values } = parseArgs({ options: { pools: { type: 'string' }, 'backfill-days': { type: 'string' }, 'swaps-per-second': { type: 'string' } } });
const cfg = loadConfig({ pools: values.pools ?? '20000', 'backfill-days': values['backfill-days'] ?? '1', 'swaps-per-second': values['swaps-per-second'] ?? '1' }, {}).simulator;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
gc();
const before = residentBytes(process.pid).anon;
const sim = createSimulator({
  seed: cfg.seed,
  pools: cfg.pools,
  swapsPerSecond: cfg.swapsPerSecond,
  newPoolsPerHour: cfg.newPoolsPerHour,
  ...(cfg.networks ? { networks: cfg.networks } : {}),
  genesisTime: Math.floor(Date.now() / 60_000) * 60 - Math.round(cfg.backfillDays * 86_400),
});
gc();
process.stdout.write(`simulator anon ${residentBytes(process.pid).anon - before} (${sim.networks.length} networks)\n`);
