/**
 * A small simulated universe for engine tests: its batches, ingested into fresh views whose static
 * columns (pools, tokens, chains) they fill; the same options give the same batches and ids.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ingest } from '../../engine/ingest/ingest.js';
import type { CommittedBatch } from '../../engine/pipeline.js';
import { createSimulator } from '../../engine/sources/simulator/index.js';
import { EngineViews } from '../../engine/state/views.js';
import { openStore, type Store } from '../../engine/store/store.js';

export interface SimulatedBatches {
  readonly views: EngineViews;
  /** The batches of each step of ten simulated minutes, in order, not applied to the views' shard-written columns. */
  readonly groups: (readonly CommittedBatch[])[];
}

/** Stores in temporary directories, closed and removed together (after a test file). */
export class TempStores {
  private readonly dirs: string[] = [];
  private readonly stores: Store[] = [];

  open(prefix: string): Store {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(dir);
    const store = openStore(dir);
    this.stores.push(store);
    return store;
  }

  async close(): Promise<void> {
    for (const s of this.stores) await s.close();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}

/** `hours` of a `pools`-pool universe (no pools made after genesis), ingested in steps of ten minutes. */
export async function simulatedBatches(stores: TempStores, o: { readonly seed: number; readonly pools: number; readonly hours: number; readonly swapsPerSecond: number }): Promise<SimulatedBatches> {
  const store = stores.open('simulated-batches-');
  const views = EngineViews.create({ pools: 2048, tokens: 2048, chains: 16 });
  const groups: (readonly CommittedBatch[])[] = [];
  const ingest = new Ingest(store, views, { apply: (b) => (groups.push(b), Promise.resolve()) });
  const genesisTime = 1_790_000_000 - o.hours * 3600;
  const sim = createSimulator({ seed: o.seed, pools: o.pools, genesisTime, swapsPerSecond: o.swapsPerSecond, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  for (let t = genesisTime + 600; t <= genesisTime + o.hours * 3600; t += 600) await (await ingest.ingest(await sim.advance(t))).applied;
  return { views, groups };
}
