/**
 * Relative strength index with Wilder's smoothing. Changes d[i] = x[i] - x[i-1]; the first
 * averages (at i = period) are the plain means of the gains and losses of d[1..period]; after
 * that avg = (avg·(period-1) + current) / period. RSI = 100 - 100 / (1 + avgGain / avgLoss):
 * 100 when there were only gains, NaN when there was no change at all (0/0 is not a number),
 * NaN before i = period.
 */
export function rsi(x, period) {
    const out = new Float64Array(x.length).fill(NaN);
    if (x.length <= period)
        return out;
    let gain = 0;
    let loss = 0;
    for (let i = 1; i <= period; i++) {
        const d = x[i] - x[i - 1];
        if (d > 0)
            gain += d;
        else
            loss -= d;
    }
    gain /= period;
    loss /= period;
    out[period] = rsiOf(gain, loss);
    for (let i = period + 1; i < x.length; i++) {
        const d = x[i] - x[i - 1];
        gain = (gain * (period - 1) + (d > 0 ? d : 0)) / period;
        loss = (loss * (period - 1) + (d < 0 ? -d : 0)) / period;
        out[i] = rsiOf(gain, loss);
    }
    return out;
}
function rsiOf(gain, loss) {
    if (loss === 0)
        return gain === 0 ? NaN : 100;
    return 100 - 100 / (1 + gain / loss);
}
//# sourceMappingURL=rsi.js.map