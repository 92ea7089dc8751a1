/**
 * Uniswap's concentrated-liquidity arithmetic in BigInt, bit for bit as the v4 contracts compute it:
 * TickMath.getSqrtPriceAtTick, SqrtPriceMath.getAmount0Delta / getAmount1Delta with their rounding,
 * and the amounts Pool.modifyLiquidity moves for a liquidity change at the pool's current price
 * (checked against the contracts on a node in test/evm-v4-math.test.ts).
 */

export const MIN_TICK = -887272;
export const MAX_TICK = 887272;
export const Q96 = 1n << 96n;
const Q128 = 1n << 128n;
const MAX_UINT256 = (1n << 256n) - 1n;

/** TickMath's factors: bit i of |tick| multiplies by 1/sqrt(1.0001^(2^i)) in Q128.128 (i = 1..19). */
const FACTORS: readonly bigint[] = [
  0xfff97272373d413259a46990580e213an,
  0xfff2e50f5f656932ef12357cf3c7fdccn,
  0xffe5caca7e10e4e61c3624eaa0941cd0n,
  0xffcb9843d60f6159c9db58835c926644n,
  0xff973b41fa98c081472e6896dfb254c0n,
  0xff2ea16466c96a3843ec78b326b52861n,
  0xfe5dee046a99a2a811c461f1969c3053n,
  0xfcbe86c7900a88aedcffc83b479aa3a4n,
  0xf987a7253ac413176f2b074cf7815e54n,
  0xf3392b0822b70005940c7a398e4b70f3n,
  0xe7159475a2c29b7443b29c7fa6e889d9n,
  0xd097f3bdfd2022b8845ad8f792aa5825n,
  0xa9f746462d870fdf8a65dc1f90e061e5n,
  0x70d869a156d2a1b890bb3df62baf32f7n,
  0x31be135f97d08fd981231505542fcfa6n,
  0x9aa508b5b7a84e1c677de54f3e99bc9n,
  0x5d6af8dedb81196699c329225ee604n,
  0x2216e584f5fa1ea926041bedfe98n,
  0x48a170391f7dc42444e8fa2n,
];

/** sqrt(1.0001^tick) as a Q64.96, rounded as TickMath.getSqrtPriceAtTick rounds it. */
export function sqrtPriceAtTick(tick: number): bigint {
  if (!Number.isInteger(tick) || tick < MIN_TICK || tick > MAX_TICK) throw new RangeError(`tick ${tick} out of range`);
  const abs = Math.abs(tick);
  let price = (abs & 1) !== 0 ? 0xfffcb933bd6fad37aa2d162d1a594001n : Q128;
  for (let i = 0; i < FACTORS.length; i++) if ((abs & (2 << i)) !== 0) price = (price * FACTORS[i]!) >> 128n;
  if (tick > 0) price = MAX_UINT256 / price;
  // Q128.128 to Q64.96, rounding up.
  return (price + 0xffffffffn) >> 32n;
}

/** SqrtPriceMath.getAmount0Delta: liquidity * (1/sqrtA - 1/sqrtB), in either order of the prices. */
export function amount0Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  if (sqrtA > sqrtB) [sqrtA, sqrtB] = [sqrtB, sqrtA];
  if (sqrtA <= 0n) throw new RangeError('sqrt price must be positive');
  const n1 = liquidity << 96n;
  const n2 = sqrtB - sqrtA;
  if (!roundUp) return (n1 * n2) / sqrtB / sqrtA;
  // divRoundingUp(mulDivRoundingUp(n1, n2, sqrtB), sqrtA)
  const product = n1 * n2;
  const q = product / sqrtB + (product % sqrtB > 0n ? 1n : 0n);
  return q / sqrtA + (q % sqrtA > 0n ? 1n : 0n);
}

/** SqrtPriceMath.getAmount1Delta: liquidity * (sqrtB - sqrtA), in either order of the prices. */
export function amount1Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const diff = sqrtA > sqrtB ? sqrtA - sqrtB : sqrtB - sqrtA;
  const product = liquidity * diff;
  const q = product / Q96;
  return roundUp && product % Q96 > 0n ? q + 1n : q;
}

/**
 * The amounts a change of `liquidityDelta` over [tickLower, tickUpper) moves at the pool's current
 * tick and price, as magnitudes: Pool.modifyLiquidity's principal, without fees. An addition is
 * rounded up (what the position pays in), a removal down (what it is paid out).
 */
export function liquidityAmounts(tick: number, sqrtPriceX96: bigint, tickLower: number, tickUpper: number, liquidityDelta: bigint): [bigint, bigint] {
  if (liquidityDelta === 0n) return [0n, 0n];
  const roundUp = liquidityDelta > 0n;
  const l = roundUp ? liquidityDelta : -liquidityDelta;
  if (tick < tickLower) return [amount0Delta(sqrtPriceAtTick(tickLower), sqrtPriceAtTick(tickUpper), l, roundUp), 0n];
  if (tick < tickUpper) return [amount0Delta(sqrtPriceX96, sqrtPriceAtTick(tickUpper), l, roundUp), amount1Delta(sqrtPriceAtTick(tickLower), sqrtPriceX96, l, roundUp)];
  return [0n, amount1Delta(sqrtPriceAtTick(tickLower), sqrtPriceAtTick(tickUpper), l, roundUp)];
}
