/**
 * The Uniswap v4 arithmetic of the EVM source (engine/sources/evm/families/uniswap-v4/math.ts)
 * against the contracts of @uniswap/v4-core on anvil: TickMath.getSqrtPriceAtTick through the
 * package's TickMathTest, and the amounts of liquidity changes against what the PoolManager takes
 * and pays through the package's PoolModifyLiquidityTest router (callerDelta read by simulating the
 * call), at prices inside, below and above the range; and a pool's principal kept as sums over its
 * ranges (pool-state.ts) against the exact sum over every range recomputed from scratch.
 */
import { keccak256, maxUint256, toEventSignature, toHex, zeroAddress, type AbiEvent } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amount0Delta, amount1Delta, liquidityAmounts, MAX_TICK, MIN_TICK, sqrtPriceAtTick } from '../engine/sources/evm/families/uniswap-v4/math.js';
import { EVENTS } from '../engine/sources/evm/families/uniswap-v4/index.js';
import { V4PoolState } from '../engine/sources/evm/families/uniswap-v4/pool-state.js';
import { deploy, fixtures, send, startAnvil, type Anvil } from './support/evm.js';
import { balanceDelta, poolId, sendValue, V4, v4Slot0 } from './support/evm-v4.js';

let node: Anvil;

beforeAll(async () => {
  node = await startAnvil();
}, 30_000);

afterAll(async () => {
  await node?.stop();
});

describe('Uniswap v4 math in BigInt', () => {
  it('the family\'s event signatures are the PoolManager ABI\'s, and its topics their keccak-256', () => {
    const abi = (V4.PoolManager.abi as readonly { type: string }[]).filter((x): x is AbiEvent => x.type === 'event');
    const signatures = new Set(abi.map((e) => toEventSignature(e).replace(/ indexed/g, '').replace(/ \w+(?=[,)])/g, '')));
    for (const e of Object.values(EVENTS)) {
      expect(signatures.has(e.signature), e.signature).toBe(true);
      expect(e.topic).toBe(keccak256(toHex(e.signature)));
    }
  });

  it('getSqrtPriceAtTick equals TickMath on the node at the bounds, every bit and a spread of ticks', async () => {
    const tm = await deploy(node, V4.TickMathTest);
    const ticks = new Set<number>([MIN_TICK, MAX_TICK, 0, 1, -1, 60, -60, 887220, -887220]);
    for (let b = 0; b < 20; b++) {
      ticks.add(1 << b);
      ticks.add(-(1 << b));
      ticks.add((1 << b) - 1);
    }
    let x = 12345;
    for (let i = 0; i < 60; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      ticks.add((x % (2 * MAX_TICK + 1)) - MAX_TICK);
    }
    for (const t of ticks) {
      if (t < MIN_TICK || t > MAX_TICK) continue;
      const want = (await node.pub.readContract({ address: tm, abi: V4.TickMathTest.abi, functionName: 'getSqrtPriceAtTick', args: [t] })) as bigint;
      expect(sqrtPriceAtTick(t), `tick ${t}`).toBe(want);
    }
    expect(() => sqrtPriceAtTick(MAX_TICK + 1)).toThrow(RangeError);
  });

  it('rounding: up for what a position pays in, down for what it is paid, and the two differ by at most one unit', () => {
    const a = sqrtPriceAtTick(-600);
    const b = sqrtPriceAtTick(600);
    for (const l of [1n, 999n, 10n ** 18n + 7n, 2n ** 127n]) {
      const up0 = amount0Delta(a, b, l, true);
      const down0 = amount0Delta(b, a, l, false);
      expect(up0 - down0 === 0n || up0 - down0 === 1n).toBe(true);
      const up1 = amount1Delta(a, b, l, true);
      const down1 = amount1Delta(b, a, l, false);
      expect(up1 - down1 === 0n || up1 - down1 === 1n).toBe(true);
    }
    expect(liquidityAmounts(0, sqrtPriceAtTick(0), -60, 60, 0n)).toEqual([0n, 0n]);
  });

  it('liquidityAmounts equals the PoolManager\'s callerDelta for additions and removals below, inside and above the range', async () => {
    const manager = await deploy(node, V4.PoolManager, [node.account]);
    const router = await deploy(node, V4.PoolModifyLiquidityTest, [manager]);
    const token = await deploy(node, fixtures().TestToken, ['USD Coin', 'USDC', 6, 10n ** 30n]);
    await send(node, token, fixtures().TestToken.abi, 'approve', [router, maxUint256]);
    // A native/USDC pool at tick 1000 (price exactly at a tick) and one at a price between ticks.
    const key = { currency0: zeroAddress, currency1: token, fee: 3000, tickSpacing: 60, hooks: zeroAddress } as const;
    await send(node, manager, V4.PoolManager.abi, 'initialize', [key, sqrtPriceAtTick(1000) + 123_456_789n]);
    const id = poolId(key);
    const salt = `0x${'0'.repeat(63)}1` as const;
    const checked: string[] = [];
    for (const [lower, upper] of [
      [1200, 2400], // above the price: token 0 only
      [-600, 1020], // about it
      [-1800, 960], // below it: token 1 only
      [-887220, 887220],
    ] as const) {
      for (const delta of [10n ** 18n + 12_345n, -(10n ** 17n + 3n)]) {
        const { tick, sqrtPriceX96 } = await v4Slot0(node, manager, id);
        const params = { tickLower: lower, tickUpper: upper, liquidityDelta: delta, salt };
        const { result } = await node.pub.simulateContract({ address: router, abi: V4.PoolModifyLiquidityTest.abi, functionName: 'modifyLiquidity', args: [key, params, '0x'], value: 10n ** 21n, account: node.account });
        // The caller's view: negative, paid in.
        const [caller0, caller1] = balanceDelta(result as bigint);
        const [a0, a1] = liquidityAmounts(tick, sqrtPriceX96, lower, upper, delta);
        // A new position has no fees owed (no swap happened): the delta is the principal alone.
        expect([delta > 0n ? -caller0 : caller0, delta > 0n ? -caller1 : caller1], `${lower}..${upper} by ${delta}`).toEqual([a0, a1]);
        await sendValue(node, router, V4.PoolModifyLiquidityTest.abi, 'modifyLiquidity', [key, params, '0x'], 10n ** 21n);
        checked.push(`${lower}:${upper}:${a0}:${a1}`);
      }
    }
    expect(checked.some((c) => c.endsWith(':0'))).toBe(true);
    expect(checked.some((c) => /:0:\d+$/.test(c))).toBe(true);
  });

  it('a pool\'s principal kept as sums equals the exact sum over its ranges after every price move and liquidity change', () => {
    const q96 = 1n << 96n;
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const start = -200_000;
    const state = new V4PoolState(sqrtPriceAtTick(start), start);
    const ranges = new Map<string, { lower: number; upper: number; l: bigint }>();
    let tick = start;
    let price = sqrtPriceAtTick(start);
    const exact = (): [bigint, bigint] => {
      // Σ L*Q96*(sU - x)/(x*sU) and Σ L*(y - sL)/Q96 as exact fractions, rounded down once.
      let n0 = 0n;
      let d0 = 1n;
      let n1 = 0n;
      for (const r of ranges.values()) {
        const sl = sqrtPriceAtTick(r.lower);
        const su = sqrtPriceAtTick(r.upper);
        const add0 = (n: bigint, d: bigint) => {
          n0 = n0 * d + n * d0;
          d0 *= d;
        };
        if (tick < r.lower) add0(r.l * q96 * (su - sl), sl * su);
        else if (tick < r.upper) {
          add0(r.l * q96 * (su - price), price * su);
          n1 += r.l * (price - sl);
        } else n1 += r.l * (su - sl);
      }
      return [n0 / d0, n1 / q96];
    };
    let crossings = 0;
    for (let step = 0; step < 400; step++) {
      if (rnd(3) === 0 || ranges.size === 0) {
        const lower = start + (rnd(80) - 40) * 60;
        const upper = lower + (1 + rnd(20)) * 60;
        const id = `${lower}:${upper}`;
        const r = ranges.get(id);
        const delta = r && rnd(2) === 0 ? -(r.l / BigInt(1 + rnd(2))) : BigInt(1 + rnd(1_000_000)) * 10n ** 12n;
        state.changeLiquidity(lower, upper, delta);
        const l = (r?.l ?? 0n) + delta;
        if (l > 0n) ranges.set(id, { lower, upper, l });
        else ranges.delete(id);
      } else {
        const next = start + rnd(5_000) - 2_500;
        // A price within the tick, or exactly at its bound as a swap down leaves it (tick one below).
        const atBound = rnd(4) === 0;
        price = atBound ? sqrtPriceAtTick(next + 1) : sqrtPriceAtTick(next) + BigInt(rnd(1000));
        for (const r of ranges.values()) if ((tick < r.lower) !== (next < r.lower) || (tick < r.upper) !== (next < r.upper)) crossings++;
        tick = next;
        state.movePrice(price, tick);
      }
      expect(state.reserves(), `step ${step}`).toEqual(exact());
    }
    expect(crossings).toBeGreaterThan(100);
  });
});
