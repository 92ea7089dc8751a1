/**
 * The shard writer of several builds side by side on one thread: the ingest section's input
 * (simulator, 2,000 pools, 6 hours: bench/ingest.ts prepareIngest) prepared once, then applied batch by batch
 * by each build in turn, each on its own copy of the prepared views. Whatever the machine does
 * meanwhile (other tenants, clock changes) falls on every build alike, so the ratio resolves a few
 * percent where two whole runs of the ingest section on one build differ by a third here. Each
 * round is a process of its own (the input is prepared once and read from a file), because one
 * process's compiled code and memory layout can set a build a few percent apart from the next.
 *
 *   node dist/bench/writer.js [--builds dist-before,dist] [--rounds 5] [--pools 2000] [--hours 6] [--input DIR]
 *
 * `--input DIR` keeps the prepared input in DIR (prepared there when DIR holds none), so that runs
 * of several changes minutes apart skip the minute of preparing it.
 *
 * A build is a `dist/` directory (a worktree's after `npm run build`); the first is the reference.
 * Builds must share the column table and the event batch format: the figure is the writer's time
 * per swap event (its Syncs, Mints and Burns included), not the pipeline's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ShardWriter } from '../engine/shards/apply.js';
import type { PoolRankIndex } from '../engine/search/rank-index.js';
import type { EngineBuffers, EngineCapacity, EngineViews } from '../engine/state/views.js';
import type { adviseHugePages } from '../engine/memory.js';
import { prepareIngest } from './ingest.js';
import { median } from './median.js';

/** What the bench takes from each build. */
interface Build {
  readonly dir: string;
  readonly ShardWriter: new (views: EngineViews, sink: null, stored: null) => ShardWriter;
  readonly EngineViews: { attach(buffers: EngineBuffers): EngineViews; create(capacity: EngineCapacity): EngineViews };
  readonly PoolRankIndex: new (views: EngineViews, ownsChain: (chain: number) => boolean) => PoolRankIndex;
  readonly adviseHugePages: typeof adviseHugePages;
}

async function loadBuild(dir: string): Promise<Build> {
  const at = (path: string) => import(pathToFileURL(join(dir, path)).href);
  const [apply, views, index, memory] = await Promise.all([at('engine/shards/apply.js'), at('engine/state/views.js'), at('engine/search/rank-index.js'), at('engine/memory.js')]);
  return { dir, ShardWriter: apply.ShardWriter, EngineViews: views.EngineViews, PoolRankIndex: index.PoolRankIndex, adviseHugePages: memory.adviseHugePages };
}

/** The ingest section's input (bench/ingest.ts): its batches in order, and the views as ingest left them. */
async function prepare(pools: number, hours: number): Promise<{ capacity: EngineCapacity; columns: Map<string, Uint8Array>; batches: Uint8Array[] }> {
  const { views, groups } = await prepareIngest({ pools, hours, swapsPerSecond: 200 });
  const columns = new Map(Object.entries(views.buffers.columns).map(([name, b]) => [name, new Uint8Array(b)]));
  return { capacity: views.buffers.capacity, columns, batches: groups.flatMap((g) => g.map((b) => b.bytes)) };
}

/** Writes the prepared input to `dir` (input.json, columns.bin, batches.bin). */
function save(dir: string, input: Awaited<ReturnType<typeof prepare>>): void {
  const names = [...input.columns.keys()];
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ capacity: input.capacity, columns: names.map((n) => [n, input.columns.get(n)!.byteLength]), batches: input.batches.map((b) => b.byteLength) }));
  writeFileSync(join(dir, 'columns.bin'), Buffer.concat(names.map((n) => input.columns.get(n)!)));
  writeFileSync(join(dir, 'batches.bin'), Buffer.concat(input.batches));
}

function load(dir: string): Awaited<ReturnType<typeof prepare>> {
  const meta = JSON.parse(readFileSync(join(dir, 'input.json'), 'utf8')) as { capacity: EngineCapacity; columns: [string, number][]; batches: number[] };
  const cols = readFileSync(join(dir, 'columns.bin'));
  const columns = new Map<string, Uint8Array>();
  let at = 0;
  for (const [name, n] of meta.columns) {
    columns.set(name, cols.subarray(at, at + n));
    at += n;
  }
  const all = readFileSync(join(dir, 'batches.bin'));
  at = 0;
  // Each batch in a buffer of its own, as a shard receives it.
  const batches = meta.batches.map((n) => {
    const b = new Uint8Array(all.subarray(at, at + n));
    at += n;
    return b;
  });
  return { capacity: meta.capacity, columns, batches };
}

/** A writer of build `b` on a fresh copy of the prepared views (large columns advised to huge pages before they are touched, as the service does). */
function writerOn(b: Build, capacity: EngineCapacity, prepared: Map<string, Uint8Array>): ShardWriter {
  const table = b.EngineViews.create({ pools: 1, tokens: 1, chains: 1 }).columnTable;
  const columns: Record<string, SharedArrayBuffer> = {};
  for (const { name } of table) {
    const bytes = prepared.get(name);
    if (bytes === undefined) throw new Error(`${b.dir} has column ${name}, which the reference build does not: builds must share the column table (compare with the ingest section instead)`);
    columns[name] = new SharedArrayBuffer(bytes.byteLength);
  }
  if (table.length !== prepared.size) throw new Error(`${b.dir} has ${table.length} columns, the reference build ${prepared.size}: builds must share the column table`);
  b.adviseHugePages(Object.values(columns).map((c) => new Uint8Array(c)));
  for (const [name, c] of Object.entries(columns)) new Uint8Array(c).set(prepared.get(name)!);
  const views = b.EngineViews.attach({ capacity, columns });
  const writer = new b.ShardWriter(views, null, null);
  writer.index = new b.PoolRankIndex(views, () => true);
  return writer;
}

/** One round in this process: the builds' writers side by side; prints their ns per swap as JSON. */
async function round(input: string, dirs: readonly string[]): Promise<void> {
  const { capacity, columns, batches } = load(input);
  const builds = await Promise.all(dirs.map(loadBuild));
  const writers = builds.map((b) => writerOn(b, capacity, columns));
  const ms = builds.map(() => 0);
  let swaps = 0;
  // Batch by batch, the builds in turn, which goes first rotating.
  for (let k = 0; k < batches.length; k++) {
    for (let j = 0; j < writers.length; j++) {
      const i = (j + k) % writers.length;
      const started = performance.now();
      const stats = writers[i]!.applyBatch(batches[k]!, false);
      ms[i]! += performance.now() - started;
      if (i === 0) swaps += stats.swaps;
    }
  }
  console.log(JSON.stringify({ swaps, nsPerSwap: ms.map((x) => (x * 1e6) / swaps) }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { builds: { type: 'string' }, rounds: { type: 'string' }, pools: { type: 'string' }, hours: { type: 'string' }, round: { type: 'string' }, input: { type: 'string' } } });
  const dirs = (values.builds ?? 'dist').split(',').filter((d) => d !== '').map((d) => resolve(d));
  if (values.round !== undefined) return round(values.round, dirs);
  const rounds = Number(values.rounds ?? 5);
  const kept = values.input !== undefined ? resolve(values.input) : null;
  const dir = kept ?? mkdtempSync(join(tmpdir(), 'dexdata-bench-writer-input-'));
  try {
    if (kept === null || !existsSync(join(kept, 'input.json'))) {
      mkdirSync(dir, { recursive: true });
      save(dir, await prepare(Number(values.pools ?? 2000), Number(values.hours ?? 6)));
    }
    const nsPerSwap: number[][] = dirs.map(() => []);
    for (let r = 0; r < rounds; r++) {
      // Each round a fresh process, the builds listed in another order each time.
      const order = dirs.map((_, i) => (i + r) % dirs.length);
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--round', dir, '--builds', order.map((i) => dirs[i]!).join(',')], { encoding: 'utf8', maxBuffer: 1 << 20 });
      const { swaps, nsPerSwap: got } = JSON.parse(out.trim().split('\n').at(-1)!) as { swaps: number; nsPerSwap: number[] };
      order.forEach((i, k) => nsPerSwap[i]!.push(got[k]!));
      console.log(`round ${r + 1}: ${dirs.map((d, i) => `${d} ${Math.round(nsPerSwap[i]!.at(-1)!)}`).join(', ')} ns per swap (${swaps.toLocaleString('en-US')} swaps)`);
    }
    for (let i = 0; i < dirs.length; i++) {
      const ratios = nsPerSwap[i]!.map((x, r) => x / nsPerSwap[0]![r]!);
      console.log(`${dirs[i]}: median ${Math.round(median(nsPerSwap[i]!))} ns per swap${i === 0 ? ' (reference)' : `, ${median(ratios).toFixed(3)} of the reference (rounds ${ratios.map((x) => x.toFixed(3)).join(', ')})`}`);
    }
  } finally {
    if (kept === null) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
