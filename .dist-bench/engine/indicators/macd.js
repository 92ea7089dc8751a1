import { ema } from './ema.js';
/** Moving average convergence/divergence; NaN wherever an input average is not yet defined. */
export function macd(x, fast, slow, signal) {
    const f = ema(x, fast);
    const s = ema(x, slow);
    const line = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++)
        line[i] = f[i] - s[i];
    const sig = ema(line, signal);
    const histogram = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++)
        histogram[i] = line[i] - sig[i];
    return { macd: line, signal: sig, histogram };
}
//# sourceMappingURL=macd.js.map