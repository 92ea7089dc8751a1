/**
 * Streams across a chain reorganisation, end to end: anvil with the real Uniswap v2 contracts, the
 * EVM source following it, ingest rolling the chain back, and the stream hosts over real sockets,
 * with the streams on the main thread and on stream threads. Blocks already streamed are replaced
 * (evm_snapshot / evm_revert) by blocks without those trades; every stream of the chain must get a
 * `warning` naming the block rolled back to, then the corrected values: the price and the reserves
 * as they stand at that block (sent again although they equal values streamed earlier), no candle of
 * the orphaned blocks again, and the canonical trades that follow. Expected values come from the
 * pair contract (getReserves) with decimal.js.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import type { EvmChainConfig } from '../engine/sources/evm/config.js';
import { createEvmSource } from '../engine/sources/evm/source.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore } from '../engine/store/store.js';
import { openKeyStore } from '../gateway/auth/key-store.js';
import { startGateway } from '../gateway/server.js';
import { plansWith } from './support/access.js';
import { anvilV2Chain, deployV2Market, mineAt, read, startAnvil, V2_PAIR, type Anvil, type V2Market } from './support/evm.js';
import { openRaw, type Frame, type RawStream } from './support/streams.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const D = Decimal.clone({ precision: 80 });
const NOW = Math.floor(Date.now() / 1000);
/** Genesis three whole hours ago: every block lies in the past. */
const T0 = Math.floor(NOW / 3600) * 3600 - 3 * 3600;

let node: Anvil;
let market: V2Market;
let pair: Address;
let usdc: Address;
let weth: Address;
let config: EvmChainConfig;
/** Next block time: moves forward through the file. */
let t = T0 + 100;
const dirs: string[] = [];

const PLANS = plansWith({ dev: { requestsPerMinute: 10_000, concurrentStreams: 100 } });

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_341 });
  market = await deployV2Market(node, T0 + 10, {
    usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 12n * E6 },
    weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 9n * E18 },
  });
  usdc = market.tokens['usdc']!;
  weth = market.tokens['weth']!;
  pair = await market.createPair(weth, usdc, T0 + 20);
  await market.addLiquidity(pair, weth, 100n * E18, usdc, 300_000n * E6, T0 + 30);
  await market.swap(pair, usdc, 1_234n * E6, T0 + 40);
  config = anvilV2Chain(node, { factory: market.factory, factoryBlock: market.factoryBlock, usdc, weth });
}, 60_000);

afterAll(async () => {
  await node?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The engine on a fresh store following the node, with the stream hosts (`streamThreads` uWS threads; 0: the main thread). */
async function startEngine(streamThreads: number) {
  const dir = mkdtempSync(join(tmpdir(), 'streams-reorg-'));
  dirs.push(dir);
  const store = openStore(dir);
  const views = EngineViews.create({ pools: 256, tokens: 256, chains: 8 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const source = createEvmSource({ chains: [config], store, now: () => NOW, progressIntervalMs: 0 });
  await ingest.registerNetworks(source.networks);
  const gateway = await startGateway(
    { views, registry: ingest.registry, store, ranker: shards, now: () => NOW, swaps: shards.swapFeed },
    { host: '127.0.0.1', port: 0, access: { plans: PLANS, paidRest: { port: 0 }, freeStream: { port: 0 }, paidStream: { port: 0 }, streamThreads } },
  );
  const key = openKeyStore(store).create('dev', 'reorg streams', NOW).key;
  return {
    views,
    ingest,
    key,
    stream: (path: string, body?: string) => openRaw(`http://127.0.0.1:${gateway.ports.paidStream}${path}`, body === undefined ? { key } : { key, method: 'POST', body }),
    async follow(): Promise<void> {
      source.followers[0]!.caughtUp = false;
      for (let i = 0; i < 1000; i++) {
        await (await ingest.ingest(await source.advance(NOW))).applied;
        if (source.followers[0]!.caughtUp) break;
      }
    },
    async close(): Promise<void> {
      await gateway.close();
      await store.close();
    },
  };
}

async function reserves(): Promise<{ weth: bigint; usdc: bigint }> {
  const [r0, r1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
  const wethIs0 = (await read<Address>(node, pair, V2_PAIR.abi, 'token0')).toLowerCase() === weth.toLowerCase();
  return wethIs0 ? { weth: r0, usdc: r1 } : { weth: r1, usdc: r0 };
}

/** WETH in USD from the pair's reserves, exact, 18 significant digits (the streamed price's rule). */
const wethPrice = (r: { weth: bigint; usdc: bigint }) => new D(r.usdc.toString()).div(1e6).div(new D(r.weth.toString()).div(new D(10).pow(18))).toSignificantDigits(18).toFixed();
const text = (raw: bigint, decimals: number) => new D(raw.toString()).div(new D(10).pow(decimals)).toFixed();

/** Waits until a frame after the first `from` frames matches `pick`; returns the frames after `from`. */
async function after(s: RawStream, from: number, pick: (f: Frame) => boolean): Promise<Frame[]> {
  await s.waitFrames(1, (f) => s.frames.indexOf(f) >= from && pick(f), 10_000);
  return s.frames.slice(from);
}

const isWarning = (f: Frame) => f.event === 'warning';

describe('streams across a chain reorganisation on anvil', () => {
  it.each([
    ['the main thread', 0],
    ['two stream threads', 2],
  ])('warns every stream of the chain, then sends the rolled-back values and the canonical trades (streams on %s)', async (_, threads) => {
    const s = await startEngine(threads);
    const open: RawStream[] = [];
    try {
      await s.follow();
      const at0 = await reserves();
      const price = await s.stream('/sse/prices', JSON.stringify([{ chain: 'anvil', address: weth, method: 'token_price', request_id: 3 }]));
      const pool = await s.stream(`/sse/reserves?method=pool_reserves&chain=anvil&address=${pair}`);
      const swaps = await s.stream(`/sse/transactions?method=pool&chain=anvil&address=${pair}`);
      const candles = await s.stream(`/sse/ohlcv?chain=anvil&token_id=${weth}&interval=1s`);
      open.push(price, pool, swaps, candles);
      for (const x of open) expect(x.status).toBe(200);

      // Blocks the engine ingests and the streams send, then lose to a reorganisation.
      const fork = Number(await node.rpc<string>('eth_blockNumber'));
      const snapshot = await node.rpc<string>('evm_snapshot');
      await market.swap(pair, usdc, 5_000n * E6, (t += 10));
      await market.swap(pair, usdc, 7_000n * E6, (t += 10));
      const orphaned = await reserves();
      await s.follow();
      await price.waitFrames(1, (f) => f.event === 'token_price' && JSON.parse(f.data).price === wethPrice(orphaned));
      await pool.waitFrames(1, (f) => f.id !== undefined && JSON.parse(f.data).tokens.some((x: { reserve: string }) => x.reserve === text(orphaned.weth, 18)));
      await swaps.waitFrames(2);
      const orphanedCandles = await candles.waitFrames(2);
      const seen = open.map((x) => x.frames.length);

      // The node replaces them with empty blocks: the chain stands as it did at `fork`.
      await node.rpc('evm_revert', [snapshot]);
      for (let i = 0; i < 6; i++) {
        await mineAt(node, (t += 3));
        await node.rpc('evm_mine');
      }
      await s.follow();
      expect(s.ingest.rollbacks).toBe(1);
      expect(s.views.chainReorgBlock[0]).toBe(fork);

      // Every stream: the warning first (no id, no request_id), naming the block rolled back to.
      for (const [i, x] of open.entries()) {
        const got = await after(x, seen[i]!, isWarning);
        expect(got[0]!.event).toBe('warning');
        expect(got[0]!.fields).toEqual(['event', 'data']);
        expect(JSON.parse(got[0]!.data).message).toContain(`rolled back to block ${fork}`);
      }
      // Price and reserves as they stood at the fork, sent again although streamed values moved away
      // from them only by the orphaned blocks.
      const back = await after(price, seen[0]!, (f) => f.event === 'token_price');
      expect(back.map((f) => f.event)).toEqual(['warning', 'token_price']);
      expect(JSON.parse(back[1]!.data).price).toBe(wethPrice(at0));
      expect(back[1]!.requestId).toBe('3');
      const poolBack = await after(pool, seen[1]!, (f) => f.event === 'pool_reserves');
      expect(poolBack.map((f) => f.event)).toEqual(['warning', 'pool_reserves']);
      const snap = JSON.parse(poolBack[1]!.data) as { block: string; tokens: { token_id: string; reserve: string; delta: string }[] };
      const wethSide = snap.tokens.find((x) => x.token_id === weth.toLowerCase())!;
      const usdcSide = snap.tokens.find((x) => x.token_id === usdc.toLowerCase())!;
      expect([wethSide.reserve, usdcSide.reserve]).toEqual([text(at0.weth, 18), text(at0.usdc, 6)]);
      // The delta undoes the orphaned blocks' change (against the snapshot streamed last).
      expect(usdcSide.delta).toBe(text(at0.usdc - orphaned.usdc, 6));
      expect(Number(snap.block)).toBeLessThanOrEqual(fork);

      // A canonical trade after the rollback: streamed as usual, its candle included; no candle of
      // the orphaned blocks comes again.
      await market.swap(pair, weth, E18, (t += 10));
      const canonical = await reserves();
      await s.follow();
      const next = await after(price, seen[0]!, (f) => f.event === 'token_price' && JSON.parse(f.data).price === wethPrice(canonical));
      expect(next.map((f) => f.event)).toEqual(['warning', 'token_price', 'token_price']);
      const swapsAfter = await after(swaps, seen[2]!, (f) => f.event === 'pool');
      expect(swapsAfter.map((f) => f.event)).toEqual(['warning', 'pool']);
      expect(Number(JSON.parse(swapsAfter[1]!.data).block_number)).toBeGreaterThan(fork);
      const candlesAfter = await after(candles, seen[3]!, (f) => f.event === 'ohlcv');
      expect(candlesAfter.map((f) => f.event)).toEqual(['warning', 'ohlcv']);
      const orphanedTimes = orphanedCandles.map((f) => JSON.parse(f.data).timestamp as string);
      const candle = JSON.parse(candlesAfter[1]!.data) as { timestamp: string; close: number; txns: number };
      expect(orphanedTimes).not.toContain(candle.timestamp);
      expect(Date.parse(candle.timestamp) / 1000).toBe(t + 1);
      expect(candle.txns).toBe(1);
      expect(candle.close).toBeCloseTo(Number(wethPrice(canonical)), 6);
    } finally {
      for (const x of open) x.close();
      await s.close();
    }
  }, 30_000);
});
