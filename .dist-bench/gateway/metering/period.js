/** Allowance windows: the rolling 30 days of free tiers, the billing month of paid plans. */
export const HOUR_S = 3_600; // 1 h
export const ROLLING_HOURS = 720; // 30 days of hourly buckets
/**
 * Periods start on the anchor's day of month and time of day (UTC), clamped to the month's last day
 * (an account made on the 31st renews on the 30th in April).
 */
export function billingPeriod(anchor, now) {
    // Asked on every metered request of a paid key; it changes once a month.
    const known = periods.get(anchor);
    if (known !== undefined && now >= known.start && now < known.end)
        return known;
    const found = computeBillingPeriod(anchor, now);
    if (periods.size >= PERIODS_MAX)
        periods.clear();
    periods.set(anchor, found);
    return found;
}
/** The last period computed per anchor; emptied when full. */
const periods = new Map();
const PERIODS_MAX = 10_000;
function computeBillingPeriod(anchor, now) {
    const a = new Date(anchor * 1000);
    const startOf = (k) => {
        const y = a.getUTCFullYear();
        const m = a.getUTCMonth() + k;
        const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
        const day = Math.min(a.getUTCDate(), lastDay);
        return Date.UTC(y, m, day, a.getUTCHours(), a.getUTCMinutes(), a.getUTCSeconds()) / 1000;
    };
    if (now < anchor)
        return { index: 0, start: anchor, end: startOf(1) };
    const n = new Date(now * 1000);
    let k = (n.getUTCFullYear() - a.getUTCFullYear()) * 12 + (n.getUTCMonth() - a.getUTCMonth());
    if (startOf(k) > now)
        k--;
    if (startOf(k + 1) <= now)
        k++;
    return { index: k, start: startOf(k), end: startOf(k + 1) };
}
//# sourceMappingURL=period.js.map