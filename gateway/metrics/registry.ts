/**
 * The Prometheus metrics (prom-client). Nothing here runs per request: every metric reads its
 * figures when scraped, from the counters the gateway and engine keep (gateway/metrics/counters.ts,
 * the meter, ingest, the shard pool, the store). README "Metrics" lists them.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { collectDefaultMetrics, Counter, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { PLAN_NAMES } from '../../engine/read/index.js';
import { LATENCY_BUCKETS_S, REQUEST_HOSTS, ROUTES, STREAM_KINDS, type RequestCounters, type StreamCounters } from './counters.js';

export interface MetricsSources {
  readonly requests: RequestCounters;
  readonly streams: StreamCounters | null;
  /** Credits charged since start, by plan (PLAN_NAMES order). */
  creditsSpent(): readonly number[];
  /** Per chain id: events accepted since start, and the Unix time (s) of the newest one. */
  ingest(): readonly { chain: string; events: number; newestEventTime: number }[];
  /** Unix seconds. */
  now(): number;
  /** The LMDB data directory. */
  readonly dataDir: string;
  /** Per shard thread: seconds busy since it started. */
  shardBusySeconds(): readonly number[];
  /** The newest snapshot of the engine's views (null fields: none yet), and the log batches after it. */
  snapshots?(): {
    readonly ageSeconds: number | null;
    readonly bytes: number | null;
    readonly logBatchesSince: number;
    /** The stage of the snapshot being written (null: none is), and seconds since it entered it. */
    readonly stage: string | null;
    readonly stageSeconds: number | null;
  };
}

/** Prefix of every metric of the service (process_* and nodejs_* are prom-client's defaults). */
const PREFIX = 'dexdata_';

/** A histogram whose buckets are counted elsewhere: prom-client's Histogram only counts observations itself. */
class CountedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly read: () => MetricValue<string>[];

  constructor(registry: Registry, name: string, help: string, read: () => MetricValue<string>[]) {
    this.name = name;
    this.help = help;
    this.read = read;
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  async get(): Promise<Omit<MetricObjectWithValues<MetricValue<string>>, 'collect' | 'type'> & { type: 'histogram' }> {
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values: this.read() };
  }

  reset(): void {}
}

function latencyValues(c: RequestCounters): MetricValue<string>[] {
  const out: MetricValue<string>[] = [];
  const n = LATENCY_BUCKETS_S.length + 1;
  for (let h = 0; h < REQUEST_HOSTS.length; h++)
    for (let r = 0; r < ROUTES.length; r++) {
      const hr = h * ROUTES.length + r;
      let total = 0;
      for (let b = 0; b < n; b++) total += c.buckets[hr * n + b]!;
      if (total === 0) continue;
      const labels = { host: REQUEST_HOSTS[h]!, route: ROUTES[r]! };
      let cumulative = 0;
      for (let b = 0; b < n; b++) {
        cumulative += c.buckets[hr * n + b]!;
        out.push({ metricName: `${PREFIX}http_request_duration_seconds_bucket`, labels: { ...labels, le: b < LATENCY_BUCKETS_S.length ? LATENCY_BUCKETS_S[b]! : '+Inf' }, value: cumulative } as MetricValue<string>);
      }
      out.push({ metricName: `${PREFIX}http_request_duration_seconds_sum`, labels, value: c.seconds[hr]! } as MetricValue<string>);
      out.push({ metricName: `${PREFIX}http_request_duration_seconds_count`, labels, value: total } as MetricValue<string>);
    }
  return out;
}

/**
 * A counter or gauge whose samples are read from figures kept elsewhere, on each scrape (a counter's
 * figure is its running total).
 */
function scraped<L extends string>(
  registry: Registry,
  type: 'counter' | 'gauge',
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Iterable<[Partial<Record<L, string>>, number]>,
): void {
  const config = { name, help, labelNames, registers: [registry] };
  if (type === 'counter')
    new Counter<L>({
      ...config,
      collect() {
        this.reset();
        for (const [labels, v] of read()) if (v > 0) this.inc(labels, v);
      },
    });
  else
    new Gauge<L>({
      ...config,
      collect() {
        this.reset();
        for (const [labels, v] of read()) this.set(labels, v);
      },
    });
}

export function createMetricsRegistry(src: MetricsSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  scraped(registry, 'counter', `${PREFIX}http_requests_total`, 'REST requests answered, by host role, route and status.', ['host', 'route', 'status'], () => src.requests.countEntries());
  new CountedHistogram(registry, `${PREFIX}http_request_duration_seconds`, 'Time from a REST request read to its answer written, by host role and route.', () => latencyValues(src.requests));

  if (src.streams !== null) {
    const streams = src.streams;
    scraped(registry, 'gauge', `${PREFIX}streams_open`, 'SSE streams open, by stream kind.', ['kind'], () => {
      const t = streams.totals();
      return STREAM_KINDS.map((k, i) => [{ kind: k }, t.open[i]!] as [{ kind: string }, number]);
    });
    scraped(registry, 'counter', `${PREFIX}stream_events_delivered_total`, 'SSE data events delivered, by stream kind.', ['kind'], () => {
      const t = streams.totals();
      return STREAM_KINDS.map((k, i) => [{ kind: k }, t.delivered[i]!] as [{ kind: string }, number]);
    });
  }

  scraped(registry, 'counter', `${PREFIX}credits_spent_total`, 'Credits charged (REST answers and stream events), by plan.', ['plan'], () => {
    const spent = src.creditsSpent();
    return PLAN_NAMES.map((p, i) => [{ plan: p }, spent[i] ?? 0] as [{ plan: string }, number]);
  });

  scraped(registry, 'counter', `${PREFIX}ingest_events_total`, 'Events ingested since start, by chain.', ['chain'], () => src.ingest().map((c) => [{ chain: c.chain }, c.events] as [{ chain: string }, number]));
  scraped(registry, 'gauge', `${PREFIX}ingest_lag_seconds`, 'Seconds between now and the newest event ingested, by chain.', ['chain'], () => {
    const now = src.now();
    return src.ingest().map((c) => [{ chain: c.chain }, c.newestEventTime > 0 ? Math.max(0, now - c.newestEventTime) : 0] as [{ chain: string }, number]);
  });

  scraped(registry, 'gauge', `${PREFIX}lmdb_size_bytes`, 'Size of the LMDB data file.', [], () => {
    try {
      return [[{}, statSync(join(src.dataDir, 'data.mdb')).size]];
    } catch {
      return [];
    }
  });

  scraped(registry, 'counter', `${PREFIX}shard_busy_seconds_total`, 'Seconds each engine shard thread spent running tasks (applying events, ranking searches).', ['shard'], () =>
    src.shardBusySeconds().map((s, i) => [{ shard: String(i) }, s] as [{ shard: string }, number]),
  );
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
    scraped(registry, 'gauge', `${PREFIX}snapshot_stage_seconds`, 'Seconds the snapshot being written has been in its stage (absent: none is being written).', ['stage'], () => {
      const { stage, stageSeconds } = snapshots();
      return stage === null || stageSeconds === null ? [] : [[{ stage }, stageSeconds]];
    });
    scraped(registry, 'gauge', `${PREFIX}log_batches_since_snapshot`, 'Log batches a start would replay after the newest snapshot.', [], () => [[{}, snapshots().logBatchesSince]]);
  }
  return registry;
}
