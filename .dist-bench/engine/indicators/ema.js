/**
 * Exponential moving average with alpha = 2 / (period + 1), seeded with the SMA of the first
 * `period` values: out[s+period-1] = SMA, then out[i] = alpha·x[i] + (1-alpha)·out[i-1].
 * Leading NaNs of x are skipped (s = first non-NaN index), so an EMA of an EMA-derived series
 * (the MACD signal) starts where its input does. NaN before the seed.
 */
export function ema(x, period) {
    const out = new Float64Array(x.length).fill(NaN);
    let s = 0;
    while (s < x.length && Number.isNaN(x[s]))
        s++;
    const seedAt = s + period - 1;
    if (seedAt >= x.length)
        return out;
    let sum = 0;
    for (let k = s; k <= seedAt; k++)
        sum += x[k];
    let prev = sum / period;
    out[seedAt] = prev;
    const alpha = 2 / (period + 1);
    for (let i = seedAt + 1; i < x.length; i++) {
        prev = alpha * x[i] + (1 - alpha) * prev;
        out[i] = prev;
    }
    return out;
}
//# sourceMappingURL=ema.js.map