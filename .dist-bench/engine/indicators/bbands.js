import { sma } from './sma.js';
/** Bollinger bands: SMA(period) ± k · population standard deviation of the same window. */
export function bbands(x, period, k) {
    const middle = sma(x, period);
    const upper = new Float64Array(x.length).fill(NaN);
    const lower = new Float64Array(x.length).fill(NaN);
    for (let i = period - 1; i < x.length; i++) {
        const m = middle[i];
        let ss = 0;
        for (let j = i - period + 1; j <= i; j++)
            ss += (x[j] - m) ** 2;
        const sd = Math.sqrt(ss / period);
        upper[i] = m + k * sd;
        lower[i] = m - k * sd;
    }
    return { upper, middle, lower };
}
//# sourceMappingURL=bbands.js.map