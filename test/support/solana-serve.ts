/**
 * The Solana source followed in-process against a replay node and served over real sockets (LMDB
 * store, shard state, ingest and the REST gateway), at a clock the test moves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ingest } from '../../engine/ingest/ingest.js';
import { LocalShards } from '../../engine/shards/local.js';
import { SolanaChainSchema, type SolanaChainConfigInput } from '../../engine/sources/solana/config.js';
import { createSolanaSource, type SolanaSource } from '../../engine/sources/solana/source.js';
import { EngineViews } from '../../engine/state/views.js';
import { openStore } from '../../engine/store/store.js';
import { startGateway } from '../../gateway/server.js';

export interface ServedSolana {
  readonly url: string;
  readonly source: SolanaSource;
  /** Steps the source until it has read up to the node's slot, ingesting every batch. */
  follow(now: number): Promise<void>;
  close(): Promise<void>;
}

export async function followAndServe(chain: SolanaChainConfigInput, clock: { now: number }): Promise<ServedSolana> {
  const dir = mkdtempSync(join(tmpdir(), 'solana-served-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const source = createSolanaSource({ chains: [SolanaChainSchema.parse(chain)], store, now: () => clock.now });
  await ingest.registerNetworks(source.networks);
  const follow = async (now: number) => {
    clock.now = now;
    for (let i = 0; i < 200; i++) {
      await (await ingest.ingest(await source.advance(now))).applied;
      if (source.followers.every((f) => f.caughtUp)) break;
    }
    ingest.advanceClock(0, now);
    await shards.flush();
    // As the live service's periodic sweep does: windows settled at the clock, search rows refreshed.
    shards.sweep(1);
  };
  await follow(clock.now);
  const gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => clock.now }, { host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${gateway.port}`,
    source,
    follow,
    async close() {
      await source.close();
      await gateway.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
