/** The indicators the service computes, in the order they are documented and rendered. */
export const INDICATOR_NAMES = ['sma', 'ema', 'rsi', 'macd', 'bbands'];
//# sourceMappingURL=names.js.map