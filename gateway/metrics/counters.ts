/**
 * What the gateway counts for /metrics, kept cheap on the request path: each request adds to plain
 * typed arrays indexed by small integers (host role, route, status), and prom-client reads them only
 * when scraped (gateway/metrics/registry.ts). The label sets are declared here once (the routes in
 * gateway/rest/routes.ts, which the router dispatches on).
 */
import { ROUTES } from '../rest/routes.js';
import type { StreamMethod } from '../streams/request.js';

/** REST host roles counted, in label order. */
export const REQUEST_HOSTS = ['freeRest', 'paidRest', 'agent'] as const;
export type RequestHost = (typeof REQUEST_HOSTS)[number];

/**
 * Route labels: the route a request matched (rest/routes.ts; not the path, whose ids would be
 * unbounded), recorded by the router and the refusals before it. The agent host's /api paths count
 * as the route they stand for.
 */
export { ROUTES } from '../rest/routes.js';

/** Statuses counted by their own label; any other is counted as `other`. */
export const STATUSES = [200, 400, 401, 402, 403, 404, 410, 429, 500, 503] as const;
const STATUS_LABELS = [...STATUSES.map(String), 'other'];
const STATUS_INDEX = new Uint8Array(600).fill(STATUSES.length);
STATUSES.forEach((s, i) => (STATUS_INDEX[s] = i));

/**
 * One request in this many is timed for the latency histogram (its _count is the requests timed):
 * reading the clock twice costs more than the rest of the counting. A power of two.
 */
export const LATENCY_SAMPLE_EVERY = 8;

/** Upper bounds of the latency histogram's buckets, in seconds (+Inf is implied). */
export const LATENCY_BUCKETS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/** Requests by host, route and status, and their latency by host and route. Main thread only. */
export class RequestCounters {
  /** [host][route][status] -> requests answered. */
  readonly counts = new Float64Array(REQUEST_HOSTS.length * ROUTES.length * STATUS_LABELS.length);
  /** [host][route][bucket] -> requests answered within the bucket's bound (not cumulative; the last is +Inf). */
  readonly buckets = new Float64Array(REQUEST_HOSTS.length * ROUTES.length * (LATENCY_BUCKETS_S.length + 1));
  /** [host][route] -> seconds spent answering. */
  readonly seconds = new Float64Array(REQUEST_HOSTS.length * ROUTES.length);

  /** Counts one answer; `seconds` < 0: not timed (LATENCY_SAMPLE_EVERY). */
  record(host: number, route: number, status: number, seconds: number): void {
    const hr = host * ROUTES.length + route;
    this.counts[hr * STATUS_LABELS.length + (status < 600 ? STATUS_INDEX[status]! : STATUSES.length)]! += 1;
    if (seconds < 0) return;
    let b = 0;
    while (b < LATENCY_BUCKETS_S.length && seconds > LATENCY_BUCKETS_S[b]!) b++;
    this.buckets[hr * (LATENCY_BUCKETS_S.length + 1) + b]! += 1;
    this.seconds[hr]! += seconds;
  }

  /** Every non-zero count with its labels. */
  *countEntries(): Generator<[labels: { host: string; route: string; status: string }, value: number]> {
    for (let h = 0; h < REQUEST_HOSTS.length; h++)
      for (let r = 0; r < ROUTES.length; r++)
        for (let s = 0; s < STATUS_LABELS.length; s++) {
          const v = this.counts[(h * ROUTES.length + r) * STATUS_LABELS.length + s]!;
          if (v > 0) yield [{ host: REQUEST_HOSTS[h]!, route: ROUTES[r]!, status: STATUS_LABELS[s]! }, v];
        }
  }
}

/** Stream kinds: the stream endpoints. */
export const STREAM_KINDS = ['prices', 'reserves', 'transactions', 'ohlcv'] as const;
const KIND_OF_METHOD: Readonly<Record<StreamMethod, number>> = { token_price: 0, pool_reserves: 1, token_reserves: 1, pool: 2, token: 2, ohlcv: 3 };

/** Stream kind index of a subscription method. */
export function streamKindOf(method: StreamMethod): number {
  return KIND_OF_METHOD[method];
}

/** Counters per stream kind: opened, closed, events delivered. */
const STREAM_FIELDS = 3;

/**
 * Stream counters in shared memory, one row per thread that hosts streams (row 0: the main thread,
 * row i: stream thread i), so each row has a single writer and no write needs to be atomic.
 */
export class StreamCounters {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Float64Array;
  private readonly row: number;

  constructor(rows: number, buffer?: SharedArrayBuffer, row = 0) {
    this.buffer = buffer ?? new SharedArrayBuffer(rows * STREAM_KINDS.length * STREAM_FIELDS * 8);
    this.cells = new Float64Array(this.buffer);
    this.row = row * STREAM_KINDS.length * STREAM_FIELDS;
  }

  /** The same counters seen from another thread, writing its own row. */
  static forThread(buffer: SharedArrayBuffer, row: number): StreamCounters {
    return new StreamCounters(0, buffer, row);
  }

  opened(kind: number): void {
    this.cells[this.row + kind * STREAM_FIELDS]! += 1;
  }
  closed(kind: number): void {
    this.cells[this.row + kind * STREAM_FIELDS + 1]! += 1;
  }
  delivered(kind: number, events: number): void {
    this.cells[this.row + kind * STREAM_FIELDS + 2]! += events;
  }

  /** Per kind, summed over every row: streams open now and events delivered so far. */
  totals(): { open: number[]; delivered: number[] } {
    const open = STREAM_KINDS.map(() => 0);
    const delivered = STREAM_KINDS.map(() => 0);
    const rows = this.cells.length / (STREAM_KINDS.length * STREAM_FIELDS);
    for (let r = 0; r < rows; r++)
      for (let k = 0; k < STREAM_KINDS.length; k++) {
        const at = (r * STREAM_KINDS.length + k) * STREAM_FIELDS;
        open[k]! += this.cells[at]! - this.cells[at + 1]!;
        delivered[k]! += this.cells[at + 2]!;
      }
    return { open, delivered };
  }
}
