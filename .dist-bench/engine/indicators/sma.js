/**
 * Simple moving average: out[i] = mean of x[i-period+1..i]; NaN before a full window (i < period-1)
 * or when the window holds a NaN.
 */
export function sma(x, period) {
    const out = new Float64Array(x.length).fill(NaN);
    // Each window summed afresh: O(n·period), but free of the drift of a running sum.
    for (let i = period - 1; i < x.length; i++) {
        let s = 0;
        for (let k = i - period + 1; k <= i; k++)
            s += x[k];
        out[i] = s / period;
    }
    return out;
}
//# sourceMappingURL=sma.js.map