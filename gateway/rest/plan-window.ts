/**
 * The plan limits of candle endpoints (api.md, Authentication rules 11 and 12): the finest interval,
 * checked first, then the history window. A range reaching before the window starts at its edge; a
 * range wholly before it is refused with plan_required naming the parameter. Pool OHLCV and pool
 * indicators apply them.
 */
import { intervalIndex, type PlanLimits, type PlanName } from '../../engine/read/index.js';
import { ApiError } from '../errors.js';
import { readQuery } from '../http/query.js';

const DAY_S = 86_400; // 1 day
/** Interval of keyless callers that name none (everyone else gets the schema's 24h). */
const KEYLESS_DEFAULT_INTERVAL = '1h';
const INTERVAL_PARAM: ReadonlySet<string> = new Set(['interval']);
/** Plans in order of price: a plan_required answer names the first one that would allow the request. */
const UPGRADE_ORDER: readonly PlanName[] = ['free', 'dev', 'pro', 'enterprise'];

/** The plan a request is evaluated against; absent when the gateway runs without plans. */
export interface OhlcvPlanGate {
  readonly tier: PlanName;
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
}

/** Earliest open time the plan reaches (Unix s), -Infinity when uncapped. */
export function windowEdge(limits: PlanLimits, now: number): number {
  return limits.ohlcvHistoryDays === null ? -Infinity : now - limits.ohlcvHistoryDays * DAY_S;
}

function planRequired(gate: OhlcvPlanGate, param: string, message: string, allows: (l: PlanLimits) => boolean): ApiError {
  const required = UPGRADE_ORDER.find((p) => allows(gate.plans[p])) ?? 'enterprise';
  return new ApiError('plan_required', message, { tier: gate.tier, required_tier: required, param });
}

export interface PlanWindow {
  readonly interval: string;
  readonly start: number;
  /** Earliest time the plan lets warm-up or history reach. */
  readonly edge: number;
}

/** `interval` and `start` as the plan allows them, or throws plan_required. */
export function applyPlanWindow(gate: OhlcvPlanGate | undefined, rawQuery: string, interval: string, start: number, end: number, now: number): PlanWindow {
  if (gate === undefined) return { interval, start, edge: -Infinity };
  let asked = interval;
  if (gate.tier === 'keyless' && readQuery(rawQuery, INTERVAL_PARAM)['interval'] === undefined) asked = KEYLESS_DEFAULT_INTERVAL;
  const limits = gate.plans[gate.tier];
  const finest = limits.ohlcvFinestInterval;
  const index = intervalIndex(asked);
  if (index < intervalIndex(finest)) {
    throw planRequired(gate, 'interval', `interval ${asked} needs a higher plan; the ${gate.tier} plan allows ${finest} and coarser`, (l) => intervalIndex(l.ohlcvFinestInterval) <= index);
  }
  const edge = windowEdge(limits, now);
  if (end < edge) {
    throw planRequired(gate, 'start', `the ${gate.tier} plan reaches back ${limits.ohlcvHistoryDays} days; the range asked ends before that`, (l) => windowEdge(l, now) <= end);
  }
  return { interval: asked, start: start < edge ? edge : start, edge };
}
