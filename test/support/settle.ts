/** Waiting for an in-process engine driven by a test clock. */
import type { Engine } from '../../engine/engine.js';

/**
 * Until the engine has ingested and applied up to the clock, with its windows swept to it. With
 * `releases`, the shards' writes are flushed before each of two sweeps: a pool going quiet gives its
 * ring block back on the sweep after its candles are on disk.
 */
export async function settle(engine: Engine, clock: { readonly now: number }, releases = false): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (engine.status().sourceTime < clock.now) {
    if (Date.now() > deadline) throw new Error('engine did not reach the clock');
    await new Promise((r) => setTimeout(r, 10));
  }
  await engine.ingest.settled();
  for (let i = 0; i < (releases ? 2 : 1); i++) {
    if (releases) await engine.shards.flush();
    await engine.shards.sweep(engine.registry.networks.length);
  }
}
