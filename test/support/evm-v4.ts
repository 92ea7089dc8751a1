/**
 * Uniswap v4 on a local anvil for tests: the compiled PoolManager, test routers (unlock callbacks)
 * and TickMathTest shipped in @uniswap/v4-core's out/, and the PoolManager's state read with viem
 * through `extsload` at the storage layout of the package's StateLibrary (slot0, position liquidity).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeAbiParameters, encodePacked, hexToBigInt, keccak256, parseAbi, type Abi, type Address, type Hex } from 'viem';
import type { Anvil, Artifact } from './evm.js';

const require = createRequire(import.meta.url);

function v4Artifact(name: string): Artifact {
  const a = JSON.parse(readFileSync(require.resolve(`@uniswap/v4-core/out/${name}.sol/${name}.json`), 'utf8')) as { abi: Abi; bytecode: { object: string } };
  const code = a.bytecode.object;
  return { abi: a.abi, bytecode: (code.startsWith('0x') ? code : `0x${code}`) as Hex };
}

export const V4 = {
  PoolManager: v4Artifact('PoolManager'),
  PoolSwapTest: v4Artifact('PoolSwapTest'),
  PoolModifyLiquidityTest: v4Artifact('PoolModifyLiquidityTest'),
  PoolDonateTest: v4Artifact('PoolDonateTest'),
  TickMathTest: v4Artifact('TickMathTest'),
};

export interface PoolKey {
  readonly currency0: Address;
  readonly currency1: Address;
  readonly fee: number;
  readonly tickSpacing: number;
  readonly hooks: Address;
}

/** PoolIdLibrary.toId: keccak-256 of the ABI-encoded key. */
export function poolId(key: PoolKey): Hex {
  return keccak256(
    encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }, { type: 'int24' }, { type: 'address' }], [key.currency0, key.currency1, key.fee, key.tickSpacing, key.hooks]),
  );
}

const EXTSLOAD = parseAbi(['function extsload(bytes32 slot) view returns (bytes32)']);
/** StateLibrary.POOLS_SLOT and POSITIONS_OFFSET. */
const POOLS_SLOT = 6n;
const POSITIONS_OFFSET = 6n;

async function extsload(node: Anvil, manager: Address, slot: bigint): Promise<bigint> {
  const v = await node.pub.readContract({ address: manager, abi: EXTSLOAD, functionName: 'extsload', args: [`0x${slot.toString(16).padStart(64, '0')}`] });
  return hexToBigInt(v);
}

const poolStateSlot = (id: Hex) => hexToBigInt(keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [id, POOLS_SLOT])));

/** StateLibrary.getSlot0: the pool's sqrtPriceX96 (low 160 bits) and tick (next 24, signed). */
export async function v4Slot0(node: Anvil, manager: Address, id: Hex): Promise<{ sqrtPriceX96: bigint; tick: number }> {
  const w = await extsload(node, manager, poolStateSlot(id));
  const rawTick = Number((w >> 160n) & 0xffffffn);
  return { sqrtPriceX96: w & ((1n << 160n) - 1n), tick: rawTick >= 0x800000 ? rawTick - 0x1000000 : rawTick };
}

/** StateLibrary.getPositionLiquidity of Position.calculatePositionKey(owner, tickLower, tickUpper, salt). */
export async function v4PositionLiquidity(node: Anvil, manager: Address, id: Hex, owner: Address, tickLower: number, tickUpper: number, salt: Hex): Promise<bigint> {
  const positionKey = keccak256(encodePacked(['address', 'int24', 'int24', 'bytes32'], [owner, tickLower, tickUpper, salt]));
  const mapping = poolStateSlot(id) + POSITIONS_OFFSET;
  const slot = hexToBigInt(keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [positionKey, mapping])));
  return (await extsload(node, manager, slot)) & ((1n << 128n) - 1n);
}

/** A BalanceDelta (int256: amount0 in the high 128 bits, amount1 in the low 128, each signed) as its two amounts. */
export function balanceDelta(packed: bigint): [bigint, bigint] {
  const u = BigInt.asUintN(256, packed);
  return [BigInt.asIntN(128, u >> 128n), BigInt.asIntN(128, u)];
}

/** Sends a contract call with a value and waits for it to be mined successfully; returns its hash and block. */
export async function sendValue(node: Anvil, address: Address, abi: Abi, functionName: string, args: readonly unknown[], value: bigint): Promise<{ hash: Hex; block: bigint }> {
  const hash = await node.wallet.writeContract({ address, abi, functionName, args: args as unknown[], value, account: node.account, chain: node.wallet.chain, gas: 5_000_000n });
  const receipt = await node.pub.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  if (receipt.status !== 'success') throw new Error(`${functionName} reverted in block ${receipt.blockNumber}`);
  return { hash, block: receipt.blockNumber };
}

/** The liquidity router's callerDelta for a change now, simulated (the caller's view: negative, paid in); [0, 0] for a zero change that reverts (no such position). */
async function simulateChange(node: Anvil, lpRouter: Address, key: PoolKey, lower: number, upper: number, delta: bigint, salt: Hex): Promise<[bigint, bigint]> {
  try {
    const { result } = await node.pub.simulateContract({
      address: lpRouter,
      abi: V4.PoolModifyLiquidityTest.abi,
      functionName: 'modifyLiquidity',
      args: [key, { tickLower: lower, tickUpper: upper, liquidityDelta: delta, salt }, '0x'],
      value: key.currency0 === '0x0000000000000000000000000000000000000000' ? 10n ** 21n : 0n,
      account: node.account,
    });
    return balanceDelta(result as bigint);
  } catch (err) {
    // A zero change of a position that does not exist reverts (CannotUpdateEmptyPosition): nothing owed.
    if (delta === 0n) return [0n, 0n];
    throw err;
  }
}

/**
 * The principal a liquidity change of the router's position moves now, in the pool's view
 * (+ paid in): the PoolManager's callerDelta less the fees owed to the position (a zero change's delta).
 */
export async function v4Principal(node: Anvil, lpRouter: Address, key: PoolKey, lower: number, upper: number, delta: bigint, salt: Hex): Promise<[bigint, bigint]> {
  const [c0, c1] = await simulateChange(node, lpRouter, key, lower, upper, delta, salt);
  const [f0, f1] = await simulateChange(node, lpRouter, key, lower, upper, 0n, salt);
  return [-(c0 - f0), -(c1 - f1)];
}

/** A pool's principal now: over the router's positions, what removing each one's liquidity (read with extsload) would pay, fees apart. */
export async function v4PrincipalReserves(node: Anvil, manager: Address, lpRouter: Address, key: PoolKey, positions: readonly { lower: number; upper: number; salt: Hex }[]): Promise<[bigint, bigint]> {
  const id = poolId(key);
  let r0 = 0n;
  let r1 = 0n;
  for (const pos of positions) {
    const liquidity = await v4PositionLiquidity(node, manager, id, lpRouter, pos.lower, pos.upper, pos.salt);
    if (liquidity === 0n) continue;
    const [a0, a1] = await v4Principal(node, lpRouter, key, pos.lower, pos.upper, -liquidity, pos.salt);
    r0 -= a0;
    r1 -= a1;
  }
  return [r0, r1];
}

/** floor of a sum of fractions, exactly. */
class Fraction {
  num = 0n;
  den = 1n;
  add(n: bigint, d: bigint): void {
    this.num = this.num * d + n * this.den;
    this.den *= d;
  }
  floor(): bigint {
    return this.num / this.den;
  }
}

/**
 * A pool's principal computed independently of the source, exactly: the router's positions'
 * liquidity (extsload), the pool's slot0 (extsload) and the ticks' sqrt prices from the package's
 * TickMathTest on the node; each position's amounts at that price on the side Pool.modifyLiquidity
 * uses (by tick), as exact fractions summed, then rounded down once.
 */
export async function v4ExactPrincipal(node: Anvil, manager: Address, tickMath: Address, lpRouter: Address, key: PoolKey, positions: readonly { lower: number; upper: number; salt: Hex }[]): Promise<[bigint, bigint]> {
  const id = poolId(key);
  const { sqrtPriceX96: p, tick } = await v4Slot0(node, manager, id);
  const at = async (t: number) => (await node.pub.readContract({ address: tickMath, abi: V4.TickMathTest.abi, functionName: 'getSqrtPriceAtTick', args: [t] })) as bigint;
  const q96 = 1n << 96n;
  const a0 = new Fraction();
  const a1 = new Fraction();
  for (const pos of positions) {
    const l = await v4PositionLiquidity(node, manager, id, lpRouter, pos.lower, pos.upper, pos.salt);
    if (l === 0n) continue;
    const sl = await at(pos.lower);
    const su = await at(pos.upper);
    // token 0: L * Q96 * (sU - x) / (x * sU); token 1: L * (y - sL) / Q96.
    if (tick < pos.lower) a0.add(l * q96 * (su - sl), sl * su);
    else if (tick < pos.upper) {
      a0.add(l * q96 * (su - p), p * su);
      a1.add(l * (p - sl), q96);
    } else a1.add(l * (su - sl), q96);
  }
  return [a0.floor(), a1.floor()];
}
