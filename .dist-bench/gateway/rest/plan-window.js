import { intervalIndex } from '../../engine/state/layout.js';
import { ApiError } from '../errors.js';
import { readQuery } from '../http/query.js';
const DAY_S = 86_400; // 1 day
/** Interval of keyless callers that name none (everyone else gets the schema's 24h). */
const KEYLESS_DEFAULT_INTERVAL = '1h';
const INTERVAL_PARAM = new Set(['interval']);
/** Plans in order of price: a plan_required answer names the first one that would allow the request. */
const UPGRADE_ORDER = ['free', 'dev', 'pro', 'enterprise'];
/** Earliest open time the plan reaches (Unix s), -Infinity when uncapped. */
export function windowEdge(limits, now) {
    return limits.ohlcvHistoryDays === null ? -Infinity : now - limits.ohlcvHistoryDays * DAY_S;
}
function planRequired(gate, param, message, allows) {
    const required = UPGRADE_ORDER.find((p) => allows(gate.plans[p])) ?? 'enterprise';
    return new ApiError('plan_required', message, { tier: gate.tier, required_tier: required, param });
}
/** `interval` and `start` as the plan allows them, or throws plan_required. */
export function applyPlanWindow(gate, rawQuery, interval, start, end, now) {
    if (gate === undefined)
        return { interval, start, edge: -Infinity };
    let asked = interval;
    if (gate.tier === 'keyless' && readQuery(rawQuery, INTERVAL_PARAM)['interval'] === undefined)
        asked = KEYLESS_DEFAULT_INTERVAL;
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
//# sourceMappingURL=plan-window.js.map