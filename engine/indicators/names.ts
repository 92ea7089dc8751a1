/** The indicators the service computes, in the order they are documented and rendered. */
export const INDICATOR_NAMES = ['sma', 'ema', 'rsi', 'macd', 'bbands'] as const;
export type IndicatorName = (typeof INDICATOR_NAMES)[number];
