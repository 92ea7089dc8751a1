/**
 * Exact pool maths on integer (bigint) amounts, plus the floating-point estimates used only to
 * choose trade sizes. Whatever the estimates say, reserves change exclusively through the
 * integer formulas, so replaying the emitted amounts reproduces the reserves exactly.
 */
/** Fee denominator: fees are in millionths. */
export const PPM = 1000000n;
export const PPM_NUMBER = 1_000_000;
/** Uniswap v3 tick bounds. */
export const MIN_TICK = -887272;
export const MAX_TICK = 887272;
const LOG_TICK_BASE = Math.log(1.0001);
const Q192_SHIFT = 192n;
const TWO_POW_52 = 4503599627370496n;
/** Roots above this need a second Newton step (see isqrt). */
const NEWTON_SECOND_STEP_ABOVE = 2 ** 104;
/**
 * Uniswap v2 `getAmountOut` generalised to any fee:
 * amountIn*(1e6-fee)*rOut / (rIn*1e6 + amountIn*(1e6-fee)), integer division. Always < rOut.
 */
export function cpAmountOut(amountIn, reserveIn, reserveOut, feeComplementPpm) {
    const inWithFee = amountIn * feeComplementPpm;
    return (inWithFee * reserveOut) / (reserveIn * PPM + inWithFee);
}
/** Input that remains after the fee (floor), used to move concentrated virtual reserves. */
export function afterFee(amountIn, feeComplementPpm) {
    return (amountIn * feeComplementPpm) / PPM;
}
/**
 * Output of a trade on virtual reserves along x_v*y_v = L^2: the virtual output reserve after
 * the trade is rounded up, so the product never decreases.
 */
export function virtualAmountOut(inputAfterFee, virtualIn, virtualOut) {
    const product = virtualIn * virtualOut;
    const newIn = virtualIn + inputAfterFee;
    return virtualOut - (product + newIn - 1n) / newIn;
}
/** floor(sqrt(n)) for n >= 0. */
export function isqrt(n) {
    if (n < 0n)
        throw new RangeError('isqrt of a negative number');
    if (n < TWO_POW_52) {
        let r = BigInt(Math.floor(Math.sqrt(Number(n))));
        while (r * r > n)
            r--;
        while ((r + 1n) * (r + 1n) <= n)
            r++;
        return r;
    }
    const approx = Number(n);
    if (!Number.isFinite(approx))
        return isqrtNewton(n, 1n << BigInt((n.toString(2).length >> 1) + 1));
    // The float root is within 1.5 * 2^-53 (relative) + 1 of the true one; one integer Newton
    // step lands at or above floor(sqrt(n)) (AM-GM) and, for roots up to 2^104, less than one
    // unit above it. Larger roots take a second step. The loop removes what is left.
    const root = Math.sqrt(approx);
    let x = BigInt(Math.floor(root)) + 1n;
    x = (x + n / x) >> 1n;
    if (root > NEWTON_SECOND_STEP_ABOVE)
        x = (x + n / x) >> 1n;
    while (x * x > n)
        x--;
    return x;
}
/**
 * floor(sqrt(n)) from a positive estimate, typically the previous root of a slightly changed n:
 * then one division and one multiplication usually settle it. Correct for any estimate > 0.
 */
export function isqrtNear(n, estimate) {
    if (estimate <= 0n)
        return isqrt(n);
    // One Newton step from anywhere lands at or above floor(sqrt(n)); from above, it descends.
    let x = (estimate + n / estimate) >> 1n;
    for (;;) {
        if (x * x <= n)
            return x;
        const y = (x + n / x) >> 1n;
        if (y >= x)
            return x;
        x = y;
    }
}
/** Newton from an over-estimate: decreases monotonically to floor(sqrt(n)). */
function isqrtNewton(n, overestimate) {
    let x = overestimate;
    for (;;) {
        const y = (x + n / x) >> 1n;
        if (y >= x)
            return x;
        x = y;
    }
}
/** Uniswap v3 style Q64.96 square root price of token1 per token0 (raw units). */
export function sqrtPriceX96(virtual0, virtual1) {
    return isqrt((virtual1 << Q192_SHIFT) / virtual0);
}
/** floor(log_1.0001(price)), clamped to the v3 tick range. */
export function tickAtPrice(price) {
    if (!(price > 0))
        return MIN_TICK;
    const tick = Math.floor(Math.log(price) / LOG_TICK_BASE);
    return tick < MIN_TICK ? MIN_TICK : tick > MAX_TICK ? MAX_TICK : tick;
}
/** Non-negative float to bigint, truncating; NaN and negatives give 0. */
export function floorToBigInt(x) {
    return x >= 1 ? BigInt(Math.floor(x)) : 0n;
}
/**
 * Fee-inclusive input that moves an x*y=k curve from price y/x to `targetPrice` (token1 per
 * token0, raw units), in floating point. Positive: that much token1 goes in; negative: minus
 * that much token0 goes in.
 */
export function arbitrageInput(x, y, targetPrice, feeFraction) {
    const k = x * y;
    if (targetPrice * x > y)
        return (Math.sqrt(k * targetPrice) - y) / (1 - feeFraction);
    return -(Math.sqrt(k / targetPrice) - x) / (1 - feeFraction);
}
/**
 * Largest fee-inclusive input (float) whose output along virtualIn*virtualOut = const stays at
 * or below maxOut.
 */
export function maxInputForOutput(virtualIn, virtualOut, maxOut, feeFraction) {
    if (!(maxOut > 0))
        return 0;
    const outAfter = virtualOut - maxOut;
    if (outAfter <= 0)
        return Infinity;
    return ((virtualIn * virtualOut) / outAfter - virtualIn) / (1 - feeFraction);
}
//# sourceMappingURL=amm.js.map