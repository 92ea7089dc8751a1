/** REST host roles counted, in label order. */
export const REQUEST_HOSTS = ['freeRest', 'paidRest', 'agent'];
/**
 * Route labels: the route a path matched (not the path, whose ids would be unbounded). The agent
 * host's /api paths count as the route they stand for.
 */
export const ROUTES = [
    'root',
    'health',
    'usage',
    'stats',
    'openapi',
    'networks',
    'dexes',
    'pool_search',
    'pool',
    'pool_ohlcv',
    'pool_transactions',
    'pool_indicators',
    'token_search',
    'token',
    'token_ohlcv',
    'token_indicators',
    'multi_prices',
    'search',
    'removed',
    'other',
];
const R = Object.fromEntries(ROUTES.map((r, i) => [r, i]));
/** Statuses counted by their own label; any other is counted as `other`. */
export const STATUSES = [200, 400, 401, 402, 403, 404, 410, 429, 500, 503];
const STATUS_LABELS = [...STATUSES.map(String), 'other'];
const STATUS_INDEX = new Uint8Array(600).fill(STATUSES.length);
STATUSES.forEach((s, i) => (STATUS_INDEX[s] = i));
/**
 * One request in this many is timed for the latency histogram (its _count is the requests timed):
 * reading the clock twice costs more than the rest of the counting. A power of two.
 */
export const LATENCY_SAMPLE_EVERY = 8;
/** Upper bounds of the latency histogram's buckets, in seconds (+Inf is implied). */
export const LATENCY_BUCKETS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Positions of a path's slashes (scratch for routeOf; one thread). */
const SLASHES = new Int32Array(8);
/** Whether segment `k` of `path` (1-based, as in path.split('/')[k]) is `name`; `n` slashes were found. */
function seg(path, n, k, name) {
    if (k >= n + 1 || k < 1)
        return false;
    const from = SLASHES[k - 1] + 1;
    const to = k < n ? SLASHES[k] : path.length;
    return to - from === name.length && path.startsWith(name, from);
}
/**
 * Route index of a request path (for a 404 too: the shape it has, `other` when none). Runs on
 * every request: it reads the path in place (no split, no substring).
 */
export function routeOf(path) {
    // `n` slashes: the path has n segments, path.split('/') would have n + 1 parts.
    let n = 0;
    let i = path.startsWith('/api/') ? 4 : 0;
    while (i >= 0) {
        if (n === SLASHES.length)
            return R.other;
        SLASHES[n++] = i;
        i = path.indexOf('/', i + 1);
    }
    const parts = n + 1;
    if (parts === 2) {
        if (SLASHES[0] + 1 === path.length)
            return R.root;
        if (seg(path, n, 1, 'networks'))
            return R.networks;
        if (seg(path, n, 1, 'health'))
            return R.health;
        if (seg(path, n, 1, 'search'))
            return R.search;
        if (seg(path, n, 1, 'stats'))
            return R.stats;
        if (seg(path, n, 1, 'usage'))
            return R.usage;
        if (seg(path, n, 1, 'openapi.json'))
            return R.openapi;
        if (seg(path, n, 1, 'pools'))
            return R.removed;
        return R.other;
    }
    if (parts === 3) {
        if (!seg(path, n, 2, 'search'))
            return R.other;
        return seg(path, n, 1, 'pools') ? R.pool_search : seg(path, n, 1, 'tokens') ? R.token_search : R.other;
    }
    if (!seg(path, n, 1, 'networks'))
        return R.other;
    const pools = seg(path, n, 3, 'pools');
    const tokens = !pools && seg(path, n, 3, 'tokens');
    if (parts === 4)
        return seg(path, n, 3, 'dexes') ? R.dexes : pools ? R.removed : R.other;
    if (parts === 5) {
        if (pools)
            return seg(path, n, 4, 'search') ? R.pool_search : seg(path, n, 4, 'filter') ? R.removed : R.pool;
        if (tokens)
            return seg(path, n, 4, 'search') ? R.token_search : seg(path, n, 4, 'filter') || seg(path, n, 4, 'top') ? R.removed : R.token;
        return seg(path, n, 3, 'multi') && seg(path, n, 4, 'prices') ? R.multi_prices : R.other;
    }
    if (parts === 6) {
        if (seg(path, n, 5, 'pools'))
            return pools ? R.other : tokens || seg(path, n, 3, 'dexes') ? R.removed : R.other;
        if (pools)
            return seg(path, n, 5, 'ohlcv') ? R.pool_ohlcv : seg(path, n, 5, 'transactions') ? R.pool_transactions : seg(path, n, 5, 'indicators') ? R.pool_indicators : R.other;
        if (tokens)
            return seg(path, n, 5, 'ohlcv') ? R.token_ohlcv : seg(path, n, 5, 'indicators') ? R.token_indicators : R.other;
    }
    return R.other;
}
/** Requests by host, route and status, and their latency by host and route. Main thread only. */
export class RequestCounters {
    /** [host][route][status] -> requests answered. */
    counts = new Float64Array(REQUEST_HOSTS.length * ROUTES.length * STATUS_LABELS.length);
    /** [host][route][bucket] -> requests answered within the bucket's bound (not cumulative; the last is +Inf). */
    buckets = new Float64Array(REQUEST_HOSTS.length * ROUTES.length * (LATENCY_BUCKETS_S.length + 1));
    /** [host][route] -> seconds spent answering. */
    seconds = new Float64Array(REQUEST_HOSTS.length * ROUTES.length);
    /** Counts one answer; `seconds` < 0: not timed (LATENCY_SAMPLE_EVERY). */
    record(host, route, status, seconds) {
        const hr = host * ROUTES.length + route;
        this.counts[hr * STATUS_LABELS.length + (status < 600 ? STATUS_INDEX[status] : STATUSES.length)] += 1;
        if (seconds < 0)
            return;
        let b = 0;
        while (b < LATENCY_BUCKETS_S.length && seconds > LATENCY_BUCKETS_S[b])
            b++;
        this.buckets[hr * (LATENCY_BUCKETS_S.length + 1) + b] += 1;
        this.seconds[hr] += seconds;
    }
    /** Every non-zero count with its labels. */
    *countEntries() {
        for (let h = 0; h < REQUEST_HOSTS.length; h++)
            for (let r = 0; r < ROUTES.length; r++)
                for (let s = 0; s < STATUS_LABELS.length; s++) {
                    const v = this.counts[(h * ROUTES.length + r) * STATUS_LABELS.length + s];
                    if (v > 0)
                        yield [{ host: REQUEST_HOSTS[h], route: ROUTES[r], status: STATUS_LABELS[s] }, v];
                }
    }
}
/** Stream kinds: the stream endpoints. */
export const STREAM_KINDS = ['prices', 'reserves', 'transactions', 'ohlcv'];
const KIND_OF_METHOD = { token_price: 0, pool_reserves: 1, token_reserves: 1, pool: 2, token: 2, ohlcv: 3 };
/** Stream kind index of a subscription method. */
export function streamKindOf(method) {
    return KIND_OF_METHOD[method];
}
/** Counters per stream kind: opened, closed, events delivered. */
const STREAM_FIELDS = 3;
/**
 * Stream counters in shared memory, one row per thread that hosts streams (row 0: the main thread,
 * row i: stream thread i), so each row has a single writer and no write needs to be atomic.
 */
export class StreamCounters {
    buffer;
    cells;
    row;
    constructor(rows, buffer, row = 0) {
        this.buffer = buffer ?? new SharedArrayBuffer(rows * STREAM_KINDS.length * STREAM_FIELDS * 8);
        this.cells = new Float64Array(this.buffer);
        this.row = row * STREAM_KINDS.length * STREAM_FIELDS;
    }
    /** The same counters seen from another thread, writing its own row. */
    static forThread(buffer, row) {
        return new StreamCounters(0, buffer, row);
    }
    opened(kind) {
        this.cells[this.row + kind * STREAM_FIELDS] += 1;
    }
    closed(kind) {
        this.cells[this.row + kind * STREAM_FIELDS + 1] += 1;
    }
    delivered(kind, events) {
        this.cells[this.row + kind * STREAM_FIELDS + 2] += events;
    }
    /** Per kind, summed over every row: streams open now and events delivered so far. */
    totals() {
        const open = STREAM_KINDS.map(() => 0);
        const delivered = STREAM_KINDS.map(() => 0);
        const rows = this.cells.length / (STREAM_KINDS.length * STREAM_FIELDS);
        for (let r = 0; r < rows; r++)
            for (let k = 0; k < STREAM_KINDS.length; k++) {
                const at = (r * STREAM_KINDS.length + k) * STREAM_FIELDS;
                open[k] += this.cells[at] - this.cells[at + 1];
                delivered[k] += this.cells[at + 2];
            }
        return { open, delivered };
    }
}
//# sourceMappingURL=counters.js.map