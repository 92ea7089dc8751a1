/**
 * A reorganisation that reaches pools which went quiet before their day was over, on a real local
 * node. Pools that stop trading for an hour give their ring blocks back and hand their candles to the
 * store, the open day, 12 h and 6 h candles too (a version of them kept for the swap count they had:
 * engine/store/parked.ts). A snapshot is cut while they are quiet; then blocks in which they traded
 * again are replaced by blocks in which one of them trades otherwise and the other not at all. The
 * rollback cuts the store's candles from the first orphaned event's interval on (their open day
 * candles with it) and rebuilds the chain from the snapshot: the pool that no longer trades must get
 * its open candles back as they were, the one that trades otherwise must go on from them. Every
 * candle, at every interval, is checked against the canonical chain's own logs; a restart serves the same.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUnits, stringToHex, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvmChainConfig } from '../engine/sources/evm/config.js';
import { Snapshots } from '../engine/snapshot/snapshots.js';
import { cutSnapshot, loadState } from '../engine/snapshot/take.js';
import { anvilV2Chain, deploy, deployTestTokens, fixtures, pairHistory, read, send, startAnvil, v2Trades, V2_FACTORY, V2_PAIR, type Anvil, type V2Trades } from './support/evm.js';
import { followToHead, openFollowing, type FollowingService } from './support/evm-follow.js';
import { expectClose } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const MIN = 60;
const HOUR = 3600;
const NOW = Math.floor(Date.now() / 1000);
/** 01:00 of the day before: every block lies in the past, and all of them within that one day. */
const T0 = NOW - (NOW % 86_400) - 86_400 + HOUR;
/** Candle intervals checked, with their length. */
const INTERVALS: readonly [string, number][] = [
  ['1m', MIN],
  ['1h', HOUR],
  ['6h', 6 * HOUR],
  ['12h', 12 * HOUR],
  ['24h', 24 * HOUR],
];

let node: Anvil;
let trades: V2Trades;
let dir = '';
let config: EvmChainConfig;
const tok: Record<'usdc' | 'weth' | 'mkr' | 'dai', Address> = { usdc: '0x', weth: '0x', mkr: '0x', dai: '0x' };
/** WETH/USDC and MKR/USDC: they trade, go quiet, then trade in the blocks replaced. DAI/USDC keeps the chain's clock moving. */
const pair: Record<'a' | 'b' | 'clock', Address> = { a: '0x', b: '0x', clock: '0x' };

const at = (t: number) => node.rpc('evm_setNextBlockTimestamp', [t]);
const head = async () => Number(await node.rpc<string>('eth_blockNumber'));

type Service = FollowingService & { snapshots: Snapshots };

async function open(): Promise<Service> {
  let snapshots: Snapshots | undefined;
  const s = await openFollowing({
    dir,
    config,
    now: NOW,
    tiers: { quietAfterSeconds: HOUR },
    restore: async ({ store, views, ingest }) => {
      snapshots = new Snapshots(join(dir, 'snapshots'), views, 5);
      ingest.snapshots = snapshots;
      await loadState(store, ingest, snapshots, 1, () => {});
    },
  });
  return Object.assign(s, { snapshots: snapshots! });
}

/** Follows the node to its head, then sweeps until the pools quiet for an hour have given their blocks back (a hand-over, then the free once it is on disk). */
async function follow(s: Service): Promise<void> {
  await followToHead(s, { sweep: true });
  for (let i = 0; i < 2; i++) {
    await s.shards.durable();
    await new Promise((r) => setImmediate(r));
    s.shards.sweep(1);
  }
  await s.shards.durable();
}

/** Pool id of a pair's address. */
const poolId = (s: Service, address: Address) => s.ingest.registry.pools.find((p) => p !== undefined && p.address.toLowerCase() === address.toLowerCase())!.id;

/**
 * Every candle of `address` (a pair with USDC) at every checked interval, against its canonical
 * logs: open times, the other token's USD close after each candle's last swap, and the USDC legs summed.
 */
async function expectCandlesCanonical(s: Service, address: Address, other: Address, otherDecimals: number): Promise<void> {
  const token0 = await read<Address>(node, address, V2_PAIR.abi, 'token0');
  const usdcIs0 = token0.toLowerCase() === tok.usdc.toLowerCase();
  expect(other.toLowerCase()).toBe((usdcIs0 ? await read<Address>(node, address, V2_PAIR.abi, 'token1') : token0).toLowerCase());
  const swaps = (await pairHistory(node, address)).filter((x) => x.type === 'swap');
  const usd = (x: { r0: bigint; r1: bigint }) => Number(formatUnits(usdcIs0 ? x.r0 : x.r1, 6)) / Number(formatUnits(usdcIs0 ? x.r1 : x.r0, otherDecimals));
  const leg = (x: { amount0: bigint; amount1: bigint }) => Math.abs(Number(formatUnits(usdcIs0 ? x.amount0 : x.amount1, 6)));
  for (const [iv, seconds] of INTERVALS) {
    const want = new Map<number, { close: number; volume: number }>();
    for (const x of swaps) {
      const open = x.time - (x.time % seconds);
      const c = want.get(open) ?? { close: 0, volume: 0 };
      c.close = usd(x);
      c.volume += leg(x);
      want.set(open, c);
    }
    const got = await s.get(`/networks/anvil/pools/${address}/ohlcv?interval=${iv}&start=${T0 - 86_400}&limit=1000&inversed=${usdcIs0}`);
    expect(got.status, iv).toBe(200);
    const list = got.body as { timestamp: string; close: number; volume: number }[];
    expect(list.map((c) => Date.parse(c.timestamp) / 1000), `${address} ${iv} candle times`).toEqual([...want.keys()]);
    for (const [i, w] of [...want.values()].entries()) {
      expectClose(list[i]!.close, w.close, `${address} ${iv} close ${i}`);
      expectClose(list[i]!.volume, w.volume, `${address} ${iv} volume ${i}`);
    }
  }
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_341 });
  trades = v2Trades(node);
  Object.assign(
    tok,
    await deployTestTokens(node, T0 + 10, {
      usdc: ['USD Coin', 'USDC', 6, 10n ** 9n * E6],
      weth: ['Wrapped Ether', 'WETH', 18, 10n ** 6n * E18],
      dai: ['Dai Stablecoin', 'DAI', 18, 10n ** 9n * E18],
    }),
  );
  await at(T0 + 13);
  tok.mkr = await deploy(node, fixtures().Bytes32Token, [stringToHex('Maker', { size: 32 }), stringToHex('MKR', { size: 32 }), 10n ** 6n * E18]);
  await at(T0 + 14);
  const factory = await deploy(node, V2_FACTORY, [node.account]);
  const factoryBlock = await head();
  let t = T0 + 20;
  for (const [key, other] of [['a', tok.weth], ['b', tok.mkr], ['clock', tok.dai]] as const) {
    await at(t++);
    await send(node, factory, V2_FACTORY.abi, 'createPair', [other, tok.usdc]);
    pair[key] = await read<Address>(node, factory, V2_FACTORY.abi, 'getPair', [other, tok.usdc]);
  }
  await trades.addLiquidity(pair.a, tok.weth, 100n * E18, tok.usdc, 300_000n * E6, T0 + 30);
  await trades.addLiquidity(pair.b, tok.mkr, 200n * E18, tok.usdc, 400_000n * E6, T0 + 35);
  await trades.addLiquidity(pair.clock, tok.dai, 500_000n * E18, tok.usdc, 500_000n * E6, T0 + 40);
  // Twenty minutes of trading on both pairs: their 1 min rings (8 candles) spill into the store.
  for (let m = 2; m <= 21; m++) {
    await trades.swap(pair.a, m % 2 === 0 ? tok.weth : tok.usdc, m % 2 === 0 ? E18 / BigInt(m) : 900n * E6 * BigInt(m), T0 + m * MIN + 5);
    await trades.swap(pair.b, m % 3 === 0 ? tok.mkr : tok.usdc, m % 3 === 0 ? E18 / BigInt(m) : 700n * E6 * BigInt(m), T0 + m * MIN + 25);
  }
  // An hour and more later, only the clock pair trades: both others are quiet for an hour.
  await trades.swap(pair.clock, tok.dai, 1_000n * E18, T0 + 90 * MIN);
  config = anvilV2Chain(node, { factory, factoryBlock, usdc: tok.usdc, weth: tok.weth });
  dir = mkdtempSync(join(tmpdir(), 'evm-reorg-quiet-'));
}, 60_000);

afterAll(async () => {
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('a reorganisation that reaches pools quiet before their day was over', () => {
  it('rolls back exactly from the snapshot they were quiet in: open candles put back for the pool that no longer trades, gone on from for the one that trades otherwise; a restart serves the same', async () => {
    const answers = new Map<string, string>();
    const paths = () =>
      [pair.a, pair.b].flatMap((p) => [`/networks/anvil/pools/${p}`, ...INTERVALS.map(([iv]) => `/networks/anvil/pools/${p}/ohlcv?interval=${iv}&start=${T0 - 86_400}&limit=1000`)]);
    const s = await open();
    try {
      await follow(s);
      const a = poolId(s, pair.a);
      const b = poolId(s, pair.b);
      // Both went quiet with their day (and 12 h, 6 h) candles open: a version of those was kept for each.
      expect(s.views.poolBlock[a]).toBe(0);
      expect(s.views.poolBlock[b]).toBe(0);
      for (const p of [a, b]) expect(s.store.parked.get([p, s.views.txnsTotal[p]!]), `pool ${p} open candles kept`).toBeDefined();
      await expectCandlesCanonical(s, pair.a, tok.weth, 18);
      await expectCandlesCanonical(s, pair.b, tok.mkr, 18);
      const cut = cutSnapshot(s.views, s.ingest, s.snapshots, s.shards);
      if ('skipped' in cut) throw new Error(`snapshot cut skipped: ${cut.skipped}`);
      const snapshot = await cut.written;

      // Orphaned: both trade again, the same day, and go quiet again (their open candles handed over with those swaps in).
      const fork = await head();
      const nodeSnapshot = await node.rpc<string>('evm_snapshot');
      await trades.swap(pair.a, tok.usdc, 20_000n * E6, T0 + 100 * MIN + 5);
      await trades.swap(pair.b, tok.usdc, 30_000n * E6, T0 + 101 * MIN + 5);
      await trades.swap(pair.clock, tok.usdc, 10_000n * E6, T0 + 170 * MIN);
      await follow(s);
      await expectCandlesCanonical(s, pair.a, tok.weth, 18);
      await expectCandlesCanonical(s, pair.b, tok.mkr, 18);
      expect(s.views.poolBlock[a]).toBe(0);

      // Canonical: pool A does not trade again; pool B trades otherwise.
      await node.rpc('evm_revert', [nodeSnapshot]);
      await trades.swap(pair.b, tok.mkr, E18 / 3n, T0 + 104 * MIN + 5);
      await trades.swap(pair.clock, tok.dai, 2_000n * E18, T0 + 172 * MIN);
      await follow(s);
      expect(s.ingest.rollbacks).toBe(1);
      expect(s.ingest.lastRollback).toMatchObject({ toBlock: fork });
      expect(s.ingest.lastRollback!.batchesReplayed).toBeLessThanOrEqual(s.ingest.head - snapshot.seq);
      await expectCandlesCanonical(s, pair.a, tok.weth, 18);
      await expectCandlesCanonical(s, pair.b, tok.mkr, 18);
      for (const path of paths()) {
        const r = await s.get(path);
        expect(r.status, path).toBe(200);
        answers.set(path, r.text);
      }
    } finally {
      await s.close();
    }

    const s2 = await open();
    try {
      await follow(s2);
      expect(s2.ingest.rollbacks).toBe(0);
      for (const path of paths()) expect((await s2.get(path)).text, path).toBe(answers.get(path));
      await expectCandlesCanonical(s2, pair.a, tok.weth, 18);
      await expectCandlesCanonical(s2, pair.b, tok.mkr, 18);
    } finally {
      await s2.close();
    }
  }, 120_000);
});
