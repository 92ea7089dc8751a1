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

/** `dir`: a data directory to resume from and leave in place (a restart); a fresh one, removed on close, otherwise. */
export async function backfillAndServe(chains: readonly EvmChainConfig[], now: number, options: { dir?: string } = {}): Promise<ServedChains> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'evm-served-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  if (options.dir !== undefined) {
    // A restart, as the engine makes one: the catalog from the store, then the log applied again.
    ingest.registry.load(store);
    await ingest.replay();
  }
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
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** GETs a served URL: its status, its body parsed as JSON and the text itself. */
export async function getJson(url: string): Promise<{ status: number; body: any; text: string }> {
  const r = await fetch(url);
  const text = await r.text();
  return { status: r.status, body: JSON.parse(text), text };
}

/** Relative error of `actual` against `expected` (against 1e-12 where `expected` is about zero). */
export const relErr = (actual: number, expected: number): number => Math.abs(actual - expected) / Math.max(1e-12, Math.abs(expected));

/** `actual` is within a relative `tol` (1e-9 unless told) of `expected`. */
export function expectClose(actual: number, expected: number, what: string, tol = 1e-9): void {
  expect(relErr(actual, expected), `${what}: ${actual} vs ${expected}`).toBeLessThan(tol);
}

/** The sqrt price limits of Uniswap v3-style pools (a swap's limit is one inside them), and Q64.96's one. */
export const MIN_SQRT_RATIO = 4295128739n;
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;
export const Q96 = 2n ** 96n;

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

/** sqrtPriceX96 of `usdPerUnit` USDC (6 decimals) per whole unit of the other token (`otherDecimals`), as the pool orders them. */
export function sqrtPriceX96Of(usdcIs0: boolean, otherDecimals: number, usdPerUnit: bigint): bigint {
  const unit = 10n ** BigInt(otherDecimals);
  const [num, den] = usdcIs0 ? [unit, usdPerUnit * 10n ** 6n] : [usdPerUnit * 10n ** 6n, unit];
  return isqrt((num * Q96 * Q96) / den);
}

/** A USDC pool as the price checks see it: its tokens' decimals and whether USDC (6 decimals) is token 0. */
export interface UsdcPool {
  readonly dec0: number;
  readonly dec1: number;
  readonly usdcIs0: boolean;
}

/** Price of token 0 in token 1 (decimals applied) from a sqrtPriceX96. */
export const sqrtPriceRatio = (p: UsdcPool, sqrtPriceX96: bigint): number => (Number(sqrtPriceX96) / 2 ** 96) ** 2 * 10 ** (p.dec0 - p.dec1);
/** USD price of the pool's non-USDC token from a sqrtPriceX96 (USDC at 1). */
export const sqrtPriceUsd = (p: UsdcPool, sqrtPriceX96: bigint): number => (p.usdcIs0 ? 1 / sqrtPriceRatio(p, sqrtPriceX96) : sqrtPriceRatio(p, sqrtPriceX96));
/** USD volume of a trade: its USDC leg (6 decimals). */
export const usdcLeg = (p: { readonly usdcIs0: boolean }, x: { readonly amount0: bigint; readonly amount1: bigint }): number => Math.abs(Number(formatUnits(p.usdcIs0 ? x.amount0 : x.amount1, 6)));

export interface Candle {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** One-minute candles from trades in chain order, each with its time, the price after it and its volume; keyed by the minute's start. */
export function minuteCandles(trades: Iterable<{ readonly time: number; readonly price: number; readonly volume: number }>): Map<number, Candle> {
  const candles = new Map<number, Candle>();
  for (const { time, price, volume } of trades) {
    const t = Math.floor(time / 60) * 60;
    const c = candles.get(t);
    if (!c) candles.set(t, { open: price, high: price, low: price, close: price, volume });
    else candles.set(t, { open: c.open, high: Math.max(c.high, price), low: Math.min(c.low, price), close: price, volume: c.volume + volume });
  }
  return candles;
}

/** The served candles are exactly these: the same minutes in the same order, and each open, high, low, close and volume within 1e-9. */
export function expectCandles(body: readonly Record<string, unknown>[], candles: ReadonlyMap<number, Candle>, what = ''): void {
  expect(body.map((c) => Date.parse(c['timestamp'] as string) / 1000), what).toEqual([...candles.keys()]);
  for (const [i, [t, c]] of [...candles.entries()].entries()) {
    for (const k of ['open', 'high', 'low', 'close', 'volume'] as const) expectClose(body[i]![k] as number, c[k], `${what ? `${what} ` : ''}${k} at ${t}`);
  }
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
