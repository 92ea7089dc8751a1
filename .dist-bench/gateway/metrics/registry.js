/**
 * The Prometheus metrics (prom-client). Nothing here runs per request: every metric reads its
 * figures when scraped, from the counters the gateway and engine keep (gateway/metrics/counters.ts,
 * the meter, ingest, the shard pool, the store). README "Metrics" lists them.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { PLAN_NAMES } from '../../engine/config.js';
import { LATENCY_BUCKETS_S, REQUEST_HOSTS, ROUTES, STREAM_KINDS } from './counters.js';
/** Prefix of every metric of the service (process_* and nodejs_* are prom-client's defaults). */
const PREFIX = 'dexdata_';
/** A histogram whose buckets are counted elsewhere: prom-client's Histogram only counts observations itself. */
class CountedHistogram {
    type = 'histogram';
    aggregator = 'sum';
    name;
    help;
    read;
    constructor(registry, name, help, read) {
        this.name = name;
        this.help = help;
        this.read = read;
        registry.registerMetric(this);
    }
    async get() {
        return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values: this.read() };
    }
    reset() { }
}
function latencyValues(c) {
    const out = [];
    const n = LATENCY_BUCKETS_S.length + 1;
    for (let h = 0; h < REQUEST_HOSTS.length; h++)
        for (let r = 0; r < ROUTES.length; r++) {
            const hr = h * ROUTES.length + r;
            let total = 0;
            for (let b = 0; b < n; b++)
                total += c.buckets[hr * n + b];
            if (total === 0)
                continue;
            const labels = { host: REQUEST_HOSTS[h], route: ROUTES[r] };
            let cumulative = 0;
            for (let b = 0; b < n; b++) {
                cumulative += c.buckets[hr * n + b];
                out.push({ metricName: `${PREFIX}http_request_duration_seconds_bucket`, labels: { ...labels, le: b < LATENCY_BUCKETS_S.length ? LATENCY_BUCKETS_S[b] : '+Inf' }, value: cumulative });
            }
            out.push({ metricName: `${PREFIX}http_request_duration_seconds_sum`, labels, value: c.seconds[hr] });
            out.push({ metricName: `${PREFIX}http_request_duration_seconds_count`, labels, value: total });
        }
    return out;
}
/**
 * A counter or gauge whose samples are read from figures kept elsewhere, on each scrape (a counter's
 * figure is its running total).
 */
function scraped(registry, type, name, help, labelNames, read) {
    const config = { name, help, labelNames, registers: [registry] };
    if (type === 'counter')
        new Counter({
            ...config,
            collect() {
                this.reset();
                for (const [labels, v] of read())
                    if (v > 0)
                        this.inc(labels, v);
            },
        });
    else
        new Gauge({
            ...config,
            collect() {
                this.reset();
                for (const [labels, v] of read())
                    this.set(labels, v);
            },
        });
}
export function createMetricsRegistry(src) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    scraped(registry, 'counter', `${PREFIX}http_requests_total`, 'REST requests answered, by host role, route and status.', ['host', 'route', 'status'], () => src.requests.countEntries());
    new CountedHistogram(registry, `${PREFIX}http_request_duration_seconds`, 'Time from a REST request read to its answer written, by host role and route.', () => latencyValues(src.requests));
    if (src.streams !== null) {
        const streams = src.streams;
        scraped(registry, 'gauge', `${PREFIX}streams_open`, 'SSE streams open, by stream kind.', ['kind'], () => {
            const t = streams.totals();
            return STREAM_KINDS.map((k, i) => [{ kind: k }, t.open[i]]);
        });
        scraped(registry, 'counter', `${PREFIX}stream_events_delivered_total`, 'SSE data events delivered, by stream kind.', ['kind'], () => {
            const t = streams.totals();
            return STREAM_KINDS.map((k, i) => [{ kind: k }, t.delivered[i]]);
        });
    }
    scraped(registry, 'counter', `${PREFIX}credits_spent_total`, 'Credits charged (REST answers and stream events), by plan.', ['plan'], () => {
        const spent = src.creditsSpent();
        return PLAN_NAMES.map((p, i) => [{ plan: p }, spent[i] ?? 0]);
    });
    scraped(registry, 'counter', `${PREFIX}ingest_events_total`, 'Events ingested since start, by chain.', ['chain'], () => src.ingest().map((c) => [{ chain: c.chain }, c.events]));
    scraped(registry, 'gauge', `${PREFIX}ingest_lag_seconds`, 'Seconds between now and the newest event ingested, by chain.', ['chain'], () => {
        const now = src.now();
        return src.ingest().map((c) => [{ chain: c.chain }, c.newestEventTime > 0 ? Math.max(0, now - c.newestEventTime) : 0]);
    });
    scraped(registry, 'gauge', `${PREFIX}lmdb_size_bytes`, 'Size of the LMDB data file.', [], () => {
        try {
            return [[{}, statSync(join(src.dataDir, 'data.mdb')).size]];
        }
        catch {
            return [];
        }
    });
    scraped(registry, 'counter', `${PREFIX}shard_busy_seconds_total`, 'Seconds each engine shard thread spent running tasks (applying events, ranking searches).', ['shard'], () => src.shardBusySeconds().map((s, i) => [{ shard: String(i) }, s]));
    const snapshots = src.snapshots;
    if (snapshots !== undefined) {
        scraped(registry, 'gauge', `${PREFIX}snapshot_age_seconds`, 'Seconds since the newest snapshot of the engine views was cut (absent: none yet).', [], () => {
            const a = snapshots().ageSeconds;
            return a === null ? [] : [[{}, a]];
        });
        scraped(registry, 'gauge', `${PREFIX}snapshot_size_bytes`, 'Size of the newest snapshot file (absent: none yet).', [], () => {
            const b = snapshots().bytes;
            return b === null ? [] : [[{}, b]];
        });
        scraped(registry, 'gauge', `${PREFIX}log_batches_since_snapshot`, 'Log batches a start would replay after the newest snapshot.', [], () => [[{}, snapshots().logBatchesSince]]);
    }
    return registry;
}
//# sourceMappingURL=registry.js.map