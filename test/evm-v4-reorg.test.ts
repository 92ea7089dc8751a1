/**
 * A Uniswap v4 pool's decoding state (its price and tick ranges, from which liquidity changes'
 * amounts and the reserves follow) through a reorganisation and a restart, on a real anvil: a new
 * position and swaps ingested by a running follower are orphaned when the node replaces their blocks
 * with other swaps and a removal; then the service stops, more happens on chain, and a new service on
 * the same store resumes (rebuilding the state from the PoolManager's logs). Each time the served
 * reserves must be the positions' principal computed from the PoolManager's state (extsload, the
 * package's TickMath on the node, within a unit per position of what removing each would pay), and the served transactions the PoolManager's logs, none lost or doubled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxUint256, parseAbiItem, zeroAddress, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvmChainConfig } from '../engine/sources/evm/config.js';
import { anvilChain, deploy, deployTestTokens, fixtures, mineAt, send, startAnvil, type Anvil } from './support/evm.js';
import { followToHead, openFollowing, type FollowingService } from './support/evm-follow.js';
import { MAX_SQRT_RATIO, MIN_SQRT_RATIO, sqrtPriceX96Of } from './support/evm-serve.js';
import { poolId, sendValue, V4, v4ExactPrincipal, v4PrincipalReserves, v4Slot0, type PoolKey } from './support/evm-v4.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;

let node: Anvil;
let dir = '';
let config: EvmChainConfig;
let manager: Address;
let swapRouter: Address;
let lpRouter: Address;
let tickMath: Address;
let key: PoolKey;
let id: Hex;
let at = 0;
const positions: { lower: number; upper: number; salt: Hex }[] = [];
const SALT = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`;
const lines: string[] = [];

/** A service on the store in `dir`: what it holds is loaded and its log replayed (a restart), then the source resumes from its checkpoint. */
const open = () =>
  openFollowing({
    dir,
    config,
    now: NOW,
    log: (l) => lines.push(l),
    restore: async ({ store, ingest }) => {
      ingest.registry.load(store);
      await ingest.replay();
    },
  });
const follow = (s: FollowingService) => followToHead(s);

/** The pool as served: its reserves, its swap count and the ids of its transactions listed. */
async function served(s: FollowingService): Promise<{ reserves: string[]; transactions: number; listed: string[] }> {
  const path = `/networks/anvil/pools/${id}`;
  const body = (await s.get(path)).body as { token_reserves: { reserve: string }[]; transactions: number };
  const listed = (await s.get(`${path}/transactions?limit=100`)).body as { id: string }[];
  return { reserves: body.token_reserves.map((x) => x.reserve), transactions: body.transactions, listed: listed.map((x) => x.id) };
}

const swap = async (usdcIn: boolean, amount: bigint, t: number) => {
  // ETH is token 0: USDC in is one for zero.
  const zeroForOne = !usdcIn;
  await mineAt(node, t);
  await sendValue(node, swapRouter, V4.PoolSwapTest.abi, 'swap', [key, { zeroForOne, amountSpecified: -amount, sqrtPriceLimitX96: zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n }, { takeClaims: false, settleUsingBurn: false }, '0x'], zeroForOne ? amount : 0n);
};

const modify = async (lower: number, upper: number, delta: bigint, salt: Hex, t: number) => {
  await mineAt(node, t);
  await sendValue(node, lpRouter, V4.PoolModifyLiquidityTest.abi, 'modifyLiquidity', [key, { tickLower: lower, tickUpper: upper, liquidityDelta: delta, salt }, '0x'], delta > 0n ? 1_000n * E18 : 0n);
  if (!positions.some((p) => p.lower === lower && p.upper === upper)) positions.push({ lower, upper, salt });
};

const MODIFY = parseAbiItem('event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)');
const SWAP = parseAbiItem('event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)');

/** What the PoolManager says now: the positions' principal, and the ids of the pool's swaps and non-zero liquidity changes, newest first. */
async function truth(): Promise<{ reserves: string[]; swaps: number; ids: string[] }> {
  const [r0, r1] = await v4ExactPrincipal(node, manager, tickMath, lpRouter, key, positions);
  const [w0, w1] = await v4PrincipalReserves(node, manager, lpRouter, key, positions);
  // At most a unit per position above what removing each now would pay (each rounded down).
  expect(r0 >= w0 && r0 - w0 < BigInt(positions.length) && r1 >= w1 && r1 - w1 < BigInt(positions.length)).toBe(true);
  // The PoolManager's logs of every pool, kept for this pool's id (topic 1).
  const logs = (await node.pub.getLogs({ address: manager, events: [SWAP, MODIFY], fromBlock: 0n })).filter((l) => (l.args as { id?: string }).id === id);
  const kept = logs.filter((l) => l.eventName === 'Swap' || (l.args as { liquidityDelta: bigint }).liquidityDelta !== 0n);
  return { reserves: [String(r0), String(r1)], swaps: logs.filter((l) => l.eventName === 'Swap').length, ids: kept.map((l) => `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`).reverse() };
}

async function expectServedIsChain(s: FollowingService, what: string): Promise<void> {
  const want = await truth();
  const got = await served(s);
  expect(got.reserves, what).toEqual(want.reserves);
  expect(got.transactions, what).toBe(want.swaps);
  expect(got.listed, what).toEqual(want.ids);
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_342 });
  const f = fixtures();
  let t = T0 + 10;
  const { usdc, weth } = await deployTestTokens(node, t, { usdc: ['USD Coin', 'USDC', 6, 10n ** 12n * E6], weth: ['Wrapped Ether', 'WETH', 18, 10n ** 9n * E18] });
  t += 2;
  await mineAt(node, t++);
  manager = await deploy(node, V4.PoolManager, [node.account]);
  const managerBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await mineAt(node, t++);
  swapRouter = await deploy(node, V4.PoolSwapTest, [manager]);
  await mineAt(node, t++);
  lpRouter = await deploy(node, V4.PoolModifyLiquidityTest, [manager]);
  await mineAt(node, t++);
  tickMath = await deploy(node, V4.TickMathTest);
  for (const router of [swapRouter, lpRouter]) {
    await mineAt(node, t++);
    await send(node, usdc, f.TestToken.abi, 'approve', [router, maxUint256]);
  }
  key = { currency0: zeroAddress, currency1: usdc, fee: 3000, tickSpacing: 60, hooks: zeroAddress };
  id = poolId(key);
  await mineAt(node, t++);
  await send(node, manager, V4.PoolManager.abi, 'initialize', [key, sqrtPriceX96Of(false, 18, 3_000n)]);
  at = Math.round((await v4Slot0(node, manager, id)).tick / 60) * 60;
  await modify(-887220, 887220, 10n ** 15n, SALT(1), T0 + 300);
  await modify(at - 600, at + 600, 4n * 10n ** 15n, SALT(2), T0 + 310);
  await swap(true, 8_000n * E6, T0 + 6 * 60);
  await swap(false, 3n * E18, T0 + 7 * 60);
  config = anvilChain(node, { factory: { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: manager }, startBlock: managerBlock, usdc, weth });
  dir = mkdtempSync(join(tmpdir(), 'evm-v4-reorg-'));
}, 60_000);

afterAll(async () => {
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('a Uniswap v4 pool through a reorganisation and a restart', () => {
  it('orphaned liquidity changes and swaps are undone in the pool\'s state; a restart rebuilds it', async () => {
    const s = await open();
    try {
      await follow(s);
      await expectServedIsChain(s, 'before the fork');
      const snapshot = await node.rpc<string>('evm_snapshot');

      // Orphaned: a new position above the price, a swap through it, part of the narrow one removed.
      await modify(at + 600, at + 1200, 3n * 10n ** 15n, SALT(3), T0 + 9 * 60);
      await swap(true, 15_000n * E6, T0 + 9 * 60 + 20);
      await modify(at - 600, at + 600, -(10n ** 15n), SALT(2), T0 + 9 * 60 + 40);
      await follow(s);
      await expectServedIsChain(s, 'with the blocks to be orphaned');

      // The node replaces those blocks: other swaps and a larger removal, no new position.
      await node.rpc('evm_revert', [snapshot]);
      positions.splice(2);
      await swap(false, E18, T0 + 9 * 60 + 10);
      await modify(at - 600, at + 600, -(2n * 10n ** 15n), SALT(2), T0 + 9 * 60 + 30);
      await swap(true, 2_000n * E6, T0 + 9 * 60 + 50);
      await swap(false, E18 / 5n, T0 + 10 * 60);
      await follow(s);
      expect(s.ingest.rollbacks).toBe(1);
      await expectServedIsChain(s, 'after the rollback');
    } finally {
      await s.close();
    }

    // Stopped; the chain goes on; a new service on the same store resumes.
    await modify(at - 1200, at + 1200, 2n * 10n ** 15n, SALT(4), T0 + 11 * 60);
    await swap(true, 5_000n * E6, T0 + 11 * 60 + 30);
    await modify(-887220, 887220, -(10n ** 14n), SALT(1), T0 + 12 * 60);
    const r = await open();
    try {
      await follow(r);
      expect(r.ingest.droppedDuplicates).toBe(0);
      expect(lines.some((l) => /uniswap_v4 pool states rebuilt from \d+ logs/.test(l)), lines.join('\n')).toBe(true);
      await expectServedIsChain(r, 'after the restart');
    } finally {
      await r.close();
    }
  }, 90_000);
});
