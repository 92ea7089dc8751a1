import type { OhlcvPlanGate } from './plan-window.js';

/**
 * A set of routes: answers the request, or returns null when the path is not one of its own.
 * `gate` is the caller's plan where plans apply (for plan-capped candle routes).
 */
export type RouteSet = (segments: readonly string[], query: string, gate?: OhlcvPlanGate) => Buffer | null;
