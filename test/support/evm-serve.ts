/**
 * An EVM chain backfilled in-process and served over real sockets (LMDB store, shard state, ingest
 * and the REST gateway, the source stepped until every chain is caught up, at a fixed clock), and
 * the checks the EVM tests share.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUnits } from 'viem';
import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../engine/config.js';
import { Ingest } from '../../engine/ingest/ingest.js';
import { LocalShards } from '../../engine/shards/local.js';
import type { EvmChainConfig } from '../../engine/sources/evm/config.js';
import { createEvmSource } from '../../engine/sources/evm/source.js';
import { EngineViews } from '../../engine/state/views.js';
import { openStore } from '../../engine/store/store.js';
import { startGateway } from '../../gateway/server.js';

export interface ServedChains {
  /** Base URL of the free REST host. */
  readonly url: string;
  close(): Promise<void>;
}

export async function backfillAndServe(chains: readonly EvmChainConfig[], now: number): Promise<ServedChains> {
  const dir = mkdtempSync(join(tmpdir(), 'evm-served-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const source = createEvmSource({ chains, store, now: () => now, progressIntervalMs: 0 });
  await ingest.registerNetworks(source.networks);
  for (let i = 0; i < 100 && !source.followers.every((x) => x.caughtUp); i++) await (await ingest.ingest(await source.advance(now))).applied;
  ingest.advanceClock(0, now);
  await shards.flush();
  const gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => now }, { host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${gateway.port}`,
    async close() {
      await gateway.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Integer square root (Newton), for sqrtPriceX96 values. */
export function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = n;
  let y = (x + 1n) / 2n;
  while (y < x) {
    x = y;
    y = (x + n / x) / 2n;
  }
  return x;
}

/** A pool transaction as the chain's logs tell it (amounts signed, the pool's view). */
export interface LoggedTx {
  readonly id: string;
  readonly hash: string;
  readonly type: 'swap' | 'add' | 'remove';
  readonly block: number;
  readonly time: number;
  readonly amount0: bigint;
  readonly amount1: bigint;
}

/** The served transactions list (newest first) is exactly these logged ones: ids, hashes, types, amounts, blocks and times. */
export function expectTransactions(body: readonly Record<string, unknown>[], logged: readonly LoggedTx[], dec0: number, dec1: number): void {
  const expected = [...logged].reverse();
  expect(body.map((x) => x['id'])).toEqual(expected.map((x) => x.id));
  expect(body.map((x) => x['transaction_hash'])).toEqual(expected.map((x) => x.hash));
  expect(body.map((x) => x['type'])).toEqual(expected.map((x) => x.type));
  expect(body.map((x) => x['amount_0'])).toEqual(expected.map((x) => formatUnits(x.amount0, dec0)));
  expect(body.map((x) => x['amount_1'])).toEqual(expected.map((x) => formatUnits(x.amount1, dec1)));
  expect(body.map((x) => x['created_at_block_number'])).toEqual(expected.map((x) => x.block));
  expect(body.map((x) => x['created_at'])).toEqual(expected.map((x) => new Date(x.time * 1000).toISOString().replace('.000', '')));
}

/** Every problem loadConfig reports for these flags (no environment), none when it accepts them. */
export function configProblems(flags: Record<string, string>): readonly string[] {
  try {
    loadConfig(flags, {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}
