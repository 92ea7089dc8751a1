/**
 * State of a network's pools (structure of arrays, dense chain-local index) and its exact
 * integer transitions. No randomness and no events here: callers decide what happens and
 * read the resulting amounts from `amount0`, `amount1` and `liquidityDelta`.
 *
 * Invariants:
 * - Real reserves are >= 0 and change only through the methods below, by exactly the amounts
 *   they report, so replaying reported amounts reproduces the reserves.
 * - Constant-product pools trade on their real reserves with the Uniswap v2 formula.
 * - Concentrated pools trade on virtual reserves along x_v * y_v = L^2 (one v3 position: real
 *   reserves plus the constant offsets of its price range); a swap pays out at most
 *   CONCENTRATED_MAX_OUT_FRACTION of the real output reserve.
 * - The float shadows equal Number() of their bigint and are updated with them.
 */
import { MAX_TICK, MIN_TICK, PPM, PPM_NUMBER, afterFee, cpAmountOut, floorToBigInt, isqrt, isqrtNear, maxInputForOutput, sqrtPriceX96, tickAtPrice, virtualAmountOut, } from './amm.js';
/** A concentrated pool never pays out more than this share of its real output reserve in one swap. */
export const CONCENTRATED_MAX_OUT_FRACTION = 0.9;
/** A concentrated position is re-centred once one side holds less than this share of its value. */
export const RECENTRE_MIN_SIDE_SHARE = 0.03;
/** Uniswap v2 locks this many LP units on the first mint. */
export const CP_MINIMUM_LIQUIDITY = 1000n;
/** Smallest real reserve a pool starts (or re-centres) with, raw units. */
export const MIN_RESERVE = 1000000n;
const AMPLIFICATION_SCALE = 1_000_000;
const AMPLIFICATION_SCALE_BIG = 1000000n;
function tickSpacing(feePpm) {
    if (feePpm <= 100)
        return 1;
    if (feePpm <= 500)
        return 10;
    if (feePpm <= 1000)
        return 20;
    if (feePpm <= 3000)
        return 60;
    return 200;
}
function minBig(a, b) {
    return a < b ? a : b;
}
export class PoolBook {
    address = [];
    token0 = [];
    token1 = [];
    dex = [];
    feePpm = [];
    concentrated = [];
    createdAt = [];
    /** USD liquidity at creation. */
    liquidityUsd = [];
    /** Real reserves (raw units). */
    reserve0 = [];
    reserve1 = [];
    /** Float shadows of the real and virtual reserves. */
    reserve0f = [];
    reserve1f = [];
    virtual0f = [];
    virtual1f = [];
    /** Concentrated pools: active liquidity isqrt(x_v * y_v); constant-product pools: 0. */
    liquidity = [];
    /** Constant-product pools: LP token supply; concentrated pools: 0. */
    lpSupply = [];
    tickLower = [];
    tickUpper = [];
    /** Results of the last successful operation. */
    amount0 = 0n;
    amount1 = 0n;
    liquidityDelta = 0n;
    feeComplement = [];
    amplification = [];
    /** Concentrated pools: virtual reserves; constant-product pools: 0. */
    virtual0 = [];
    virtual1 = [];
    /** Deposit planned by planRecentre. */
    recentre0 = 0n;
    recentre1 = 0n;
    get size() {
        return this.address.length;
    }
    add(pool) {
        const p = this.address.length;
        const { reserve0: r0, reserve1: r1 } = pool;
        this.address.push(pool.address);
        this.token0.push(pool.token0);
        this.token1.push(pool.token1);
        this.dex.push(pool.dex);
        this.feePpm.push(pool.feePpm);
        this.feeComplement.push(PPM - BigInt(pool.feePpm));
        this.concentrated.push(pool.concentrated);
        this.amplification.push(pool.concentrated ? pool.amplification : 1);
        this.createdAt.push(pool.createdAt);
        this.liquidityUsd.push(pool.liquidityUsd);
        this.reserve0.push(r0);
        this.reserve1.push(r1);
        this.reserve0f.push(Number(r0));
        this.reserve1f.push(Number(r1));
        if (pool.concentrated) {
            const amp = BigInt(Math.round(pool.amplification * AMPLIFICATION_SCALE));
            const v0 = (r0 * amp) / AMPLIFICATION_SCALE_BIG;
            const v1 = (r1 * amp) / AMPLIFICATION_SCALE_BIG;
            this.virtual0.push(v0);
            this.virtual1.push(v1);
            this.virtual0f.push(Number(v0));
            this.virtual1f.push(Number(v1));
            this.liquidity.push(isqrt(v0 * v1));
            this.lpSupply.push(0n);
            this.tickLower.push(0);
            this.tickUpper.push(0);
            this.setTickRange(p);
        }
        else {
            this.virtual0.push(0n);
            this.virtual1.push(0n);
            this.virtual0f.push(0);
            this.virtual1f.push(0);
            this.liquidity.push(0n);
            this.lpSupply.push(isqrt(r0 * r1));
            this.tickLower.push(MIN_TICK);
            this.tickUpper.push(MAX_TICK);
        }
        return p;
    }
    /** Liquidity reported by the creation deposit (v2 keeps CP_MINIMUM_LIQUIDITY locked). */
    initialMintLiquidity(p) {
        if (this.concentrated[p])
            return this.liquidity[p];
        const lp = this.lpSupply[p];
        return lp > CP_MINIMUM_LIQUIDITY ? lp - CP_MINIMUM_LIQUIDITY : lp;
    }
    /** Reserves that set the price (float): virtual for concentrated pools, real otherwise. */
    curve0(p) {
        return this.concentrated[p] ? this.virtual0f[p] : this.reserve0f[p];
    }
    curve1(p) {
        return this.concentrated[p] ? this.virtual1f[p] : this.reserve1f[p];
    }
    /** Price of token0 in token1 (raw units). */
    price(p) {
        return this.curve1(p) / this.curve0(p);
    }
    /** Concentrated pools: Q64.96 square root price isqrt((y_v << 192) / x_v). */
    sqrtPriceX96(p) {
        return sqrtPriceX96(this.virtual0[p], this.virtual1[p]);
    }
    /** Concentrated pools: floor(log_1.0001(price)). */
    tick(p) {
        return tickAtPrice(this.virtual1f[p] / this.virtual0f[p]);
    }
    /** Uniswap v2 swap of exactly amountIn; false (and no change) when nothing would come out. */
    swapConstantProduct(p, zeroForOne, amountIn) {
        if (amountIn <= 0n)
            return false;
        const r0 = this.reserve0[p];
        const r1 = this.reserve1[p];
        const fee = this.feeComplement[p];
        const out = zeroForOne ? cpAmountOut(amountIn, r0, r1, fee) : cpAmountOut(amountIn, r1, r0, fee);
        if (out <= 0n)
            return false;
        const amount0 = zeroForOne ? amountIn : -out;
        const amount1 = zeroForOne ? -out : amountIn;
        this.setReserves(p, r0 + amount0, r1 + amount1);
        this.amount0 = amount0;
        this.amount1 = amount1;
        return true;
    }
    /**
     * Swap along the virtual curve of a fee-inclusive input given as a float, capped so that at
     * most CONCENTRATED_MAX_OUT_FRACTION of the real output reserve leaves; false when nothing trades.
     */
    swapConcentrated(p, zeroForOne, amountInFloat) {
        const v0 = this.virtual0[p];
        const v1 = this.virtual1[p];
        const realOut = zeroForOne ? this.reserve1[p] : this.reserve0[p];
        const v0f = this.virtual0f[p];
        const v1f = this.virtual1f[p];
        const realOutF = zeroForOne ? this.reserve1f[p] : this.reserve0f[p];
        const cap = maxInputForOutput(zeroForOne ? v0f : v1f, zeroForOne ? v1f : v0f, CONCENTRATED_MAX_OUT_FRACTION * realOutF, this.feePpm[p] / PPM_NUMBER);
        const amountIn = floorToBigInt(amountInFloat < cap ? amountInFloat : cap);
        const effective = afterFee(amountIn, this.feeComplement[p]);
        if (effective <= 0n)
            return false;
        const out = zeroForOne ? virtualAmountOut(effective, v0, v1) : virtualAmountOut(effective, v1, v0);
        if (out <= 0n || out > realOut)
            return false;
        const amount0 = zeroForOne ? amountIn : -out;
        const amount1 = zeroForOne ? -out : amountIn;
        const n0 = zeroForOne ? v0 + effective : v0 - out;
        const n1 = zeroForOne ? v1 - out : v1 + effective;
        this.setConcentrated(p, this.reserve0[p] + amount0, this.reserve1[p] + amount1, n0, n1);
        this.amount0 = amount0;
        this.amount1 = amount1;
        return true;
    }
    /** Adds (mint) or removes (burn) partPpm millionths of the liquidity at the current price. */
    changeLiquidity(p, mint, partPpm) {
        const r0 = this.reserve0[p];
        const r1 = this.reserve1[p];
        if (this.concentrated[p]) {
            // A v3 position of the same range scales real and virtual reserves alike.
            const v0 = this.virtual0[p];
            const v1 = this.virtual1[p];
            const d0 = (r0 * partPpm) / PPM;
            const d1 = (r1 * partPpm) / PPM;
            const dv0 = (v0 * partPpm) / PPM;
            const dv1 = (v1 * partPpm) / PPM;
            if (dv0 <= 0n || dv1 <= 0n)
                return false;
            const before = this.liquidity[p];
            if (mint)
                this.setConcentrated(p, r0 + d0, r1 + d1, v0 + dv0, v1 + dv1);
            else
                this.setConcentrated(p, r0 - d0, r1 - d1, v0 - dv0, v1 - dv1);
            this.amount0 = d0;
            this.amount1 = d1;
            this.liquidityDelta = mint ? this.liquidity[p] - before : before - this.liquidity[p];
            return true;
        }
        const supply = this.lpSupply[p];
        if (mint) {
            const d0 = (r0 * partPpm) / PPM;
            const d1 = (d0 * r1) / r0;
            const minted = minBig((d0 * supply) / r0, (d1 * supply) / r1);
            if (minted <= 0n)
                return false;
            this.setReserves(p, r0 + d0, r1 + d1);
            this.lpSupply[p] = supply + minted;
            this.amount0 = d0;
            this.amount1 = d1;
            this.liquidityDelta = minted;
            return true;
        }
        const burned = (supply * partPpm) / PPM;
        const d0 = (burned * r0) / supply;
        const d1 = (burned * r1) / supply;
        if (burned <= 0n || d0 <= 0n || d1 <= 0n)
            return false;
        this.setReserves(p, r0 - d0, r1 - d1);
        this.lpSupply[p] = supply - burned;
        this.amount0 = d0;
        this.amount1 = d1;
        this.liquidityDelta = burned;
        return true;
    }
    /**
     * Whether a concentrated position has drifted (almost) out of range and can be re-centred:
     * then the same value, split half and half at the current price, is kept for applyRecentre.
     */
    planRecentre(p) {
        const x = this.reserve0f[p];
        const y = this.reserve1f[p];
        const price = this.virtual1f[p] / this.virtual0f[p];
        const value1 = x * price + y;
        const share0 = (x * price) / value1;
        if (share0 >= RECENTRE_MIN_SIDE_SHARE && share0 <= 1 - RECENTRE_MIN_SIDE_SHARE)
            return false;
        const n0 = floorToBigInt(value1 / 2 / price);
        const n1 = floorToBigInt(value1 / 2);
        if (n0 < MIN_RESERVE || n1 < MIN_RESERVE)
            return false;
        this.recentre0 = n0;
        this.recentre1 = n1;
        return true;
    }
    /** Replaces the whole position by the planned one (after the caller reported the withdrawal). */
    applyRecentre(p) {
        const n0 = this.recentre0;
        const n1 = this.recentre1;
        const amp = BigInt(Math.round(this.amplification[p] * AMPLIFICATION_SCALE));
        this.setConcentrated(p, n0, n1, (n0 * amp) / AMPLIFICATION_SCALE_BIG, (n1 * amp) / AMPLIFICATION_SCALE_BIG);
        this.setTickRange(p);
        this.amount0 = n0;
        this.amount1 = n1;
        this.liquidityDelta = this.liquidity[p];
    }
    /** The v3 range of a position centred on the current price, rounded outwards to tick spacing. */
    setTickRange(p) {
        const price = this.virtual1f[p] / this.virtual0f[p];
        const shrink = 1 - 1 / this.amplification[p];
        const spacing = tickSpacing(this.feePpm[p]);
        this.tickLower[p] = Math.max(MIN_TICK, Math.floor(tickAtPrice(price * shrink * shrink) / spacing) * spacing);
        this.tickUpper[p] = Math.min(MAX_TICK, Math.ceil(tickAtPrice(price / (shrink * shrink)) / spacing) * spacing);
    }
    setReserves(p, r0, r1) {
        this.reserve0[p] = r0;
        this.reserve1[p] = r1;
        this.reserve0f[p] = Number(r0);
        this.reserve1f[p] = Number(r1);
    }
    setConcentrated(p, r0, r1, v0, v1) {
        this.setReserves(p, r0, r1);
        this.virtual0[p] = v0;
        this.virtual1[p] = v1;
        this.virtual0f[p] = Number(v0);
        this.virtual1f[p] = Number(v1);
        this.liquidity[p] = isqrtNear(v0 * v1, this.liquidity[p]);
    }
}
//# sourceMappingURL=pools.js.map