/**
 * Reorganisations against a real local node: blocks the engine already ingested are replaced with
 * anvil's evm_snapshot / evm_revert by blocks with other swaps (and without a pool the orphaned
 * blocks created), and the REST answers must equal the new canonical chain exactly, computed here
 * from the chain's own logs and the pair contract: pool details, reserves, prices, OHLCV (ring and
 * stored candles), transactions, token details. One reorganisation is found by the running follower,
 * one while the service was down (from the block hashes persisted with the checkpoint), one whose
 * fork is older than the newest snapshot, with the log before an older one pruned; a restart after
 * each rollback serves the same answers.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUnits, stringToHex, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvmChainConfig } from '../engine/sources/evm/config.js';
import { logPrunedThrough, pruneLog } from '../engine/snapshot/prune-log.js';
import { Snapshots } from '../engine/snapshot/snapshots.js';
import { cutSnapshot, loadState } from '../engine/snapshot/take.js';
import { anvilV2Chain, deploy, fixtures, pairHistory, read, send, startAnvil, v2Trades, V2_FACTORY, V2_PAIR, type Anvil, type PairTx, type V2Trades } from './support/evm.js';
import { followToHead, openFollowing, type FollowingService } from './support/evm-follow.js';
import { expectCandles, expectClose, minuteCandles } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const MIN = 60;
const NOW = Math.floor(Date.now() / 1000);
/** Genesis three whole hours ago: every block lies in the past and within the last 24 h. */
const T0 = Math.floor(NOW / 3600) * 3600 - 3 * 3600;

let node: Anvil;
let trades: V2Trades;
let dir = '';
let config: EvmChainConfig;
const tok: Record<'usdc' | 'weth' | 'mkr', Address> = { usdc: '0x', weth: '0x', mkr: '0x' };
let factory: Address;
let pairA: Address;
let pairB: Address | null = null;

const at = (t: number) => node.rpc('evm_setNextBlockTimestamp', [t]);
const head = async () => Number(await node.rpc<string>('eth_blockNumber'));

/** One running engine on a store: ingest with in-thread shards and a REST gateway, snapshots as a service keeps them. */
type Service = FollowingService & { snapshots: Snapshots };

/** Cuts a snapshot of the service and waits for it to be written (a cut that is skipped fails the test). */
async function cutWritten(s: Service) {
  const cut = cutSnapshot(s.views, s.ingest, s.snapshots, s.shards);
  if ('skipped' in cut) throw new Error(`snapshot cut skipped: ${cut.skipped}`);
  return cut.written;
}

async function open(): Promise<Service> {
  let snapshots: Snapshots | undefined;
  const s = await openFollowing({
    dir,
    config,
    now: NOW,
    restore: async ({ store, views, ingest }) => {
      // Snapshots as a service keeps them, the log before the oldest kept one pruned.
      snapshots = new Snapshots(join(dir, 'snapshots'), views, 5, (oldest) => pruneLog(store, oldest));
      ingest.snapshots = snapshots;
      await loadState(store, ingest, snapshots, 1, () => {});
    },
  });
  return Object.assign(s, { snapshots: snapshots! });
}

/** Follows the node until caught up, then settles the windows at NOW as a live service does. */
const follow = (s: Service) => followToHead(s, { sweep: true });

/** The WETH/USDC pair as the canonical chain has it: reserves, and every log with the reserves after it. */
async function truthA(): Promise<{ usdcIs0: boolean; reserve0: bigint; reserve1: bigint; txs: PairTx[] }> {
  const token0 = await read<Address>(node, pairA, V2_PAIR.abi, 'token0');
  const [reserve0, reserve1] = await read<[bigint, bigint, number]>(node, pairA, V2_PAIR.abi, 'getReserves');
  const txs = await pairHistory(node, pairA);
  return { usdcIs0: token0.toLowerCase() === tok.usdc.toLowerCase(), reserve0, reserve1, txs };
}

const num = (raw: bigint, decimals: number) => Number(formatUnits(raw, decimals));

/** Every answer checked against the canonical chain, computed from its logs and the pair contract. */
async function expectCanonical(s: Service): Promise<void> {
  const p = await truthA();
  const wethUsd = (r0: bigint, r1: bigint) => num(p.usdcIs0 ? r0 : r1, 6) / num(p.usdcIs0 ? r1 : r0, 18);
  const swaps = p.txs.filter((x) => x.type === 'swap');
  const usdcLeg = (x: PairTx) => Math.abs(num(p.usdcIs0 ? x.amount0 : x.amount1, 6));

  // Pool details: reserves, price, swap count and the 24 h volume (every swap is within 24 h).
  const d = await s.get(`/networks/anvil/pools/${pairA}`);
  expect(d.status).toBe(200);
  expect(d.body.token_reserves.map((r: { reserve: string }) => r.reserve)).toEqual([p.reserve0.toString(), p.reserve1.toString()]);
  expect(d.body.transactions).toBe(swaps.length);
  expectClose(d.body.volume_usd, swaps.reduce((a, x) => a + usdcLeg(x), 0), '24 h volume');
  const inv = await s.get(`/networks/anvil/pools/${pairA}?inversed=${p.usdcIs0}`);
  expectClose(inv.body.last_price_usd, wethUsd(p.reserve0, p.reserve1), 'WETH last_price_usd');

  // Token details and prices.
  const weth = await s.get(`/networks/anvil/tokens/${tok.weth}`);
  expect(weth.status).toBe(200);
  expectClose(weth.body.price_usd, wethUsd(p.reserve0, p.reserve1), 'WETH price_usd');
  const prices = await s.get(`/networks/anvil/multi/prices?tokens=${tok.weth},${tok.usdc}`);
  expect(prices.status).toBe(200);
  expect(JSON.stringify(prices.body)).toContain(String(wethUsd(p.reserve0, p.reserve1)).slice(0, 8));

  // Transactions: exactly the canonical logs, newest first.
  const t = await s.get(`/networks/anvil/pools/${pairA}/transactions?limit=100`);
  expect(t.status).toBe(200);
  const want = [...p.txs].reverse();
  expect(t.body.map((x: { id: string }) => x.id)).toEqual(want.map((x) => x.id));
  expect(t.body.map((x: { transaction_hash: string }) => x.transaction_hash)).toEqual(want.map((x) => x.hash));
  expect(t.body.map((x: { amount_0: string }) => x.amount_0)).toEqual(want.map((x) => formatUnits(x.amount0, p.usdcIs0 ? 6 : 18)));
  expect(t.body.map((x: { amount_1: string }) => x.amount_1)).toEqual(want.map((x) => formatUnits(x.amount1, p.usdcIs0 ? 18 : 6)));

  // OHLCV, 1 min: WETH in USD after each swap, volume from the USDC legs; ring and stored candles.
  const candles = minuteCandles(swaps.map((x) => ({ time: x.time, price: wethUsd(x.r0, x.r1), volume: usdcLeg(x) })));
  const o = await s.get(`/networks/anvil/pools/${pairA}/ohlcv?interval=1m&start=${T0}&limit=1000&inversed=${p.usdcIs0}`);
  expect(o.status).toBe(200);
  expectCandles(o.body, candles);
  // Hourly candles: volume per hour.
  const hours = new Map<number, number>();
  for (const x of swaps) hours.set(x.time - (x.time % 3600), (hours.get(x.time - (x.time % 3600)) ?? 0) + usdcLeg(x));
  const h = await s.get(`/networks/anvil/pools/${pairA}/ohlcv?interval=1h&start=${T0}&inversed=${p.usdcIs0}`);
  expect(h.body.map((c: { timestamp: string }) => Date.parse(c.timestamp) / 1000)).toEqual([...hours.keys()]);
  for (const [i, v] of [...hours.values()].entries()) expectClose(h.body[i].volume, v, `hourly volume ${i}`);
}

/** Answers compared across a restart. */
const PATHS = () => [
  `/networks/anvil/pools/${pairA}`,
  `/networks/anvil/pools/${pairA}/transactions?limit=100`,
  `/networks/anvil/pools/${pairA}/ohlcv?interval=1m&start=${T0}&limit=1000`,
  `/networks/anvil/pools/${pairA}/ohlcv?interval=5m&start=${T0}`,
  `/networks/anvil/tokens/${tok.weth}`,
  `/networks/anvil/tokens/${tok.usdc}`,
  `/networks/anvil/pools/search?limit=10`,
  '/stats',
];

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_339 });
  trades = v2Trades(node);
  const f = fixtures();
  await at(T0 + 10);
  tok.usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 9n * E6]);
  await at(T0 + 11);
  tok.weth = await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 6n * E18]);
  await at(T0 + 12);
  tok.mkr = await deploy(node, f.Bytes32Token, [stringToHex('Maker', { size: 32 }), stringToHex('MKR', { size: 32 }), 10n ** 6n * E18]);
  await at(T0 + 13);
  factory = await deploy(node, V2_FACTORY, [node.account]);
  const factoryBlock = await head();
  await at(T0 + 20);
  await send(node, factory, V2_FACTORY.abi, 'createPair', [tok.weth, tok.usdc]);
  pairA = await read<Address>(node, factory, V2_FACTORY.abi, 'getPair', [tok.weth, tok.usdc]);
  await trades.addLiquidity(pairA, tok.weth, 100n * E18, tok.usdc, 300_000n * E6, T0 + 30);
  // Ten minutes of trading before anything is replaced: the 1 min ring (8 candles) spills into the store.
  for (let m = 3; m <= 12; m++) await trades.swap(pairA, m % 2 === 0 ? tok.weth : tok.usdc, m % 2 === 0 ? E18 / BigInt(m) : 1_000n * E6 * BigInt(m), T0 + m * MIN + 5);
  config = anvilV2Chain(node, { factory, factoryBlock, usdc: tok.usdc, weth: tok.weth });
  dir = mkdtempSync(join(tmpdir(), 'evm-reorg-'));
}, 60_000);

afterAll(async () => {
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('reorganisations on anvil', () => {
  it('blocks replaced under a running follower: rolled back and replayed, every answer equals the new canonical chain', async () => {
    const s = await open();
    try {
      await follow(s);
      await expectCanonical(s);
      const fork = await head();
      const snapshot = await node.rpc<string>('evm_snapshot');

      // Orphaned: a new MKR/WETH pool with liquidity and a trade, and thirteen minutes of WETH/USDC trades.
      await at(T0 + 20 * MIN);
      await send(node, factory, V2_FACTORY.abi, 'createPair', [tok.mkr, tok.weth]);
      pairB = await read<Address>(node, factory, V2_FACTORY.abi, 'getPair', [tok.mkr, tok.weth]);
      await trades.addLiquidity(pairB, tok.mkr, 1_000n * E18, tok.weth, 50n * E18, T0 + 20 * MIN + 10);
      await trades.swap(pairB, tok.mkr, 20n * E18, T0 + 20 * MIN + 30);
      for (let m = 21; m <= 33; m++) await trades.swap(pairA, tok.usdc, 7_000n * E6, T0 + m * MIN + 1);
      await follow(s);
      expect((await s.get(`/networks/anvil/pools/${pairB}`)).status).toBe(200);
      expect((await s.get(`/networks/anvil/tokens/${tok.mkr}`)).status).toBe(200);
      expect(JSON.stringify((await s.get('/search?query=MKR')).body)).toContain(tok.mkr.toLowerCase());
      await expectCanonical(s);
      expect(s.views.chainReorgs[0]).toBe(0);

      // The node replaces them: other trades, other times, no MKR pool.
      await node.rpc('evm_revert', [snapshot]);
      await trades.swap(pairA, tok.weth, 3n * E18, T0 + 21 * MIN + 40);
      await trades.swap(pairA, tok.weth, E18 / 7n, T0 + 22 * MIN + 5);
      await trades.swap(pairA, tok.usdc, 2_500n * E6, T0 + 24 * MIN + 50);
      await follow(s);

      expect(s.ingest.rollbacks).toBe(1);
      expect(s.views.chainReorgs[0]).toBe(1);
      expect(s.views.chainReorgBlock[0]).toBe(fork);
      expect(s.ingest.lastRollback).toMatchObject({ toBlock: fork, poolsRemoved: 1, tokensRemoved: 1 });
      expect(s.source.progress()[0]).toMatchObject({ reorgs: 1, lastReorgBlock: fork });
      expect((await s.get(`/networks/anvil/pools/${pairB}`)).status).toBe(404);
      expect((await s.get(`/networks/anvil/tokens/${tok.mkr}`)).status).toBe(404);
      const tokens = await s.get('/networks/anvil/tokens/search?limit=10');
      expect(tokens.status).toBe(200);
      expect(JSON.stringify(tokens.body)).not.toContain(tok.mkr.toLowerCase());
      expect(JSON.stringify(tokens.body)).toContain(tok.weth.toLowerCase());
      const found = await s.get('/search?query=MKR');
      expect(found.status).toBe(200);
      expect(JSON.stringify(found.body)).not.toContain(tok.mkr.toLowerCase());
      const search = await s.get('/networks/anvil/pools/search?limit=10');
      expect(JSON.stringify(search.body)).not.toContain(pairB!.toLowerCase().slice(2));
      expect((await s.get('/stats')).body).toMatchObject({ pools: 1, tokens: 2 });
      await expectCanonical(s);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('blocks replaced while the service was down: found from the persisted block hashes on resume; a restart after the rollback serves the same', async () => {
    // The service ingests more trades, then stops before the node replaces them.
    const snapshot = await (async () => {
      const s = await open();
      try {
        const snap = await node.rpc<string>('evm_snapshot');
        for (let m = 26; m <= 38; m++) await trades.swap(pairA, m % 3 === 0 ? tok.weth : tok.usdc, m % 3 === 0 ? E18 / 2n : 4_000n * E6, T0 + m * MIN + 2);
        await follow(s);
        await expectCanonical(s);
        return snap;
      } finally {
        await s.close();
      }
    })();
    const canonicalHead = await (async () => {
      await node.rpc('evm_revert', [snapshot]);
      return head();
    })();
    // Canonical: one trade in an orphaned minute, then eleven minutes later on, which move the 1 min
    // ring past every orphaned minute (a stored orphaned candle would show between them).
    await trades.swap(pairA, tok.weth, E18, T0 + 27 * MIN + 30);
    for (let m = 40; m <= 50; m++) await trades.swap(pairA, m % 2 === 0 ? tok.usdc : tok.weth, m % 2 === 0 ? 3_000n * E6 : E18 / 3n, T0 + m * MIN + 3);

    const s2 = await open();
    const answers = new Map<string, unknown>();
    try {
      await follow(s2);
      expect(s2.ingest.rollbacks).toBe(1);
      expect(s2.views.chainReorgs[0]).toBe(1);
      expect(s2.views.chainReorgBlock[0]).toBe(canonicalHead);
      await expectCanonical(s2);
      for (const path of PATHS()) answers.set(path, (await s2.get(path)).body);
    } finally {
      await s2.close();
    }

    // A restart after the rollback: the views rebuilt from the rolled-back log answer the same.
    const s3 = await open();
    try {
      await follow(s3);
      expect(s3.ingest.rollbacks).toBe(0);
      expect(s3.ingest.droppedDuplicates).toBe(0);
      for (const path of PATHS()) expect((await s3.get(path)).body, path).toEqual(answers.get(path));
      await expectCanonical(s3);
    } finally {
      await s3.close();
    }
  }, 60_000);

  it('a fork older than the newest snapshot, the log before an older one pruned: the chain is rebuilt from the older snapshot; a restart serves the same', async () => {
    const s = await open();
    const answers = new Map<string, unknown>();
    try {
      await follow(s);
      const older = await cutWritten(s);
      const fork = await head();
      const nodeSnapshot = await node.rpc<string>('evm_snapshot');
      // Orphaned: seven minutes of trades, ingested and covered by a newer snapshot.
      for (let m = 52; m <= 58; m++) await trades.swap(pairA, m % 2 === 0 ? tok.usdc : tok.weth, m % 2 === 0 ? 5_000n * E6 : E18 / 4n, T0 + m * MIN + 4);
      await follow(s);
      await expectCanonical(s);
      const newer = await cutWritten(s);
      expect(newer.seq).toBeGreaterThan(older.seq);
      // The log up to the older snapshot is gone: only a snapshot can rebuild the chain now.
      expect(logPrunedThrough(s.store)).toBe(older.seq);
      expect(s.store.log.get(older.seq)).toBeUndefined();

      await node.rpc('evm_revert', [nodeSnapshot]);
      await trades.swap(pairA, tok.weth, E18 / 5n, T0 + 53 * MIN + 20);
      for (let m = 60; m <= 70; m++) await trades.swap(pairA, m % 2 === 0 ? tok.weth : tok.usdc, m % 2 === 0 ? E18 / 6n : 2_000n * E6, T0 + m * MIN + 7);
      await follow(s);
      expect(s.ingest.rollbacks).toBe(1);
      expect(s.ingest.lastRollback).toMatchObject({ toBlock: fork });
      // Rebuilt from the older snapshot: only the batches after it were applied again.
      expect(s.ingest.lastRollback!.batchesReplayed).toBeLessThanOrEqual(s.ingest.head - older.seq);
      expect(existsSync(newer.path)).toBe(false);
      expect(existsSync(older.path)).toBe(true);
      await expectCanonical(s);
      for (const path of PATHS()) answers.set(path, (await s.get(path)).body);
    } finally {
      await s.close();
    }

    const s2 = await open();
    try {
      await follow(s2);
      expect(s2.ingest.rollbacks).toBe(0);
      for (const path of PATHS()) expect((await s2.get(path)).body, path).toEqual(answers.get(path));
      await expectCanonical(s2);
    } finally {
      await s2.close();
    }
  }, 60_000);
});
