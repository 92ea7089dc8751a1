/**
 * A reorganisation that orphans a Uniswap v3 `Collect` on a real anvil: a position burned without
 * collecting (its amounts stay in the pool), then the collect (a reserve movement, no transaction),
 * ingested by a running follower; the node replaces that block with a swap instead. The served
 * reserves must be the pool's token balances (`balanceOf`) before the fork, with the collect, and
 * after the rollback, without it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxUint256, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvmChainConfig } from '../engine/sources/evm/config.js';
import { anvilChain, balancesOf, deploy, deployTestTokens, fixtures, mineAt, read, send, startAnvil, V3_COLLECT, V3_FACTORY, V3_POOL, type Anvil } from './support/evm.js';
import { followToHead, openFollowing, type FollowingService } from './support/evm-follow.js';
import { MAX_SQRT_RATIO, MIN_SQRT_RATIO, sqrtPriceX96Of } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;

let node: Anvil;
let dir = '';
let config: EvmChainConfig;
let pool: Address;
let caller: Address;
let token0: Address;
let token1: Address;
let usdcIs0 = false;
const f = () => fixtures();

const open = () => openFollowing({ dir, config, now: NOW });
const follow = (s: FollowingService) => followToHead(s);

/** The pool's reserves as served. */
async function reserves(s: FollowingService): Promise<string[]> {
  const { body } = await s.get(`/networks/anvil/pools/${pool}`);
  return (body as { token_reserves: { reserve: string }[] }).token_reserves.map((x) => x.reserve);
}

const swap = async (usdcIn: boolean, amount: bigint, t: number) => {
  const zeroForOne = usdcIn === usdcIs0;
  await mineAt(node, t);
  await send(node, caller, f().V3Caller.abi, 'swap', [pool, zeroForOne, amount, zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n]);
};

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_341 });
  let t = T0 + 10;
  const { usdc, weth } = await deployTestTokens(node, t, { usdc: ['USD Coin', 'USDC', 6, 10n ** 12n * E6], weth: ['Wrapped Ether', 'WETH', 18, 10n ** 9n * E18] });
  t += 2;
  await mineAt(node, t++);
  const factory = await deploy(node, V3_FACTORY);
  const factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await mineAt(node, t++);
  caller = await deploy(node, f().V3Caller);
  for (const token of [usdc, weth]) {
    await mineAt(node, t++);
    await send(node, token, f().TestToken.abi, 'approve', [caller, maxUint256]);
  }
  await mineAt(node, t++);
  await send(node, factory, V3_FACTORY.abi, 'createPool', [usdc, weth, 3000]);
  pool = await read<Address>(node, factory, V3_FACTORY.abi, 'getPool', [usdc, weth, 3000]);
  usdcIs0 = usdc.toLowerCase() < weth.toLowerCase();
  [token0, token1] = usdcIs0 ? [usdc, weth] : [weth, usdc];
  await mineAt(node, t++);
  await send(node, pool, V3_POOL.abi, 'initialize', [sqrtPriceX96Of(usdcIs0, 18, 3_000n)]);
  await mineAt(node, T0 + 300);
  await send(node, caller, f().V3Caller.abi, 'mint', [pool, -887220, 887220, 5_000_000_000_000_000n]);
  await swap(true, 6_000n * E6, T0 + 6 * 60);
  await swap(false, 2n * E18, T0 + 7 * 60);
  // Burned, not collected: the amounts stay in the pool, owed to the position.
  await mineAt(node, T0 + 8 * 60);
  await send(node, caller, f().V3Caller.abi, 'burnOnly', [pool, -887220, 887220, 2_000_000_000_000_000n]);
  config = anvilChain(node, { factory: { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: factory }, startBlock: factoryBlock, usdc, weth });
  dir = mkdtempSync(join(tmpdir(), 'evm-v3-reorg-'));
}, 60_000);

afterAll(async () => {
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('a reorganisation of a v3 pool on anvil', () => {
  it('a block holding a Collect, rolled back: the reserves are the pool balances before, with and without it', async () => {
    const s = await open();
    try {
      await follow(s);
      const before = await balancesOf(node, pool, token0, token1);
      expect(await reserves(s)).toEqual(before.map(String));
      const snapshot = await node.rpc<string>('evm_snapshot');

      // Orphaned: the collect, then a swap.
      await mineAt(node, T0 + 9 * 60);
      await send(node, caller, f().V3Caller.abi, 'collect', [pool, -887220, 887220]);
      await swap(true, 1_000n * E6, T0 + 9 * 60 + 30);
      await follow(s);
      expect(await node.pub.getLogs({ address: pool, event: V3_COLLECT, fromBlock: 0n })).toHaveLength(1);
      const withCollect = await balancesOf(node, pool, token0, token1);
      expect(withCollect[0] < before[0] || withCollect[1] < before[1]).toBe(true);
      expect(await reserves(s)).toEqual(withCollect.map(String));

      // The node replaces those blocks: two swaps, no collect (the burned amounts are still owed).
      await node.rpc('evm_revert', [snapshot]);
      await swap(false, E18 / 3n, T0 + 9 * 60 + 10);
      await swap(true, 500n * E6, T0 + 9 * 60 + 40);
      await swap(false, E18 / 9n, T0 + 10 * 60);
      await follow(s);
      expect(s.ingest.rollbacks).toBe(1);
      expect(await node.pub.getLogs({ address: pool, event: V3_COLLECT, fromBlock: 0n })).toHaveLength(0);
      const after = await balancesOf(node, pool, token0, token1);
      expect(await reserves(s)).toEqual(after.map(String));
    } finally {
      await s.close();
    }
  }, 60_000);
});
