/**
 * Service configuration: one zod schema, validated once at start with every problem listed at
 * once, then frozen. Sources, lowest precedence first: defaults, a JSON config file, environment
 * variables (DEXDATA_*), command-line flags.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { z } from 'zod';
import { INTERVALS } from './state/layout.js';
import { DEFAULT_SNAPSHOT_POLICY, type SnapshotPolicy } from './snapshot/snapshots.js';
import { DEFAULT_TIER_POLICY, MIN_QUIET_AFTER_SECONDS, type TierPolicy } from './shards/tiers.js';
import { EngineViews, type EngineCapacity } from './state/views.js';
import { ringBlockBytes } from './state/ring-blocks.js';
import { EvmChainsSchema } from './sources/evm/config.js';
import { applyPresets, PRESET_IDS, type NamedNetwork } from './sources/evm/presets.js';
import { SolanaChainsSchema } from './sources/solana/config.js';
import { SOLANA_PRESET } from './sources/solana/preset.js';
import { LARGE_UNIVERSE_MIN_POOLS } from './sources/simulator/large.js';
import { MAX_POOLS } from './sources/simulator/simulator.js';

const SimulatorConfig = z
  .object({
    seed: z.number().int().min(0).max(2 ** 32 - 1).default(42),
    pools: z.number().int().min(1).max(MAX_POOLS).default(20_000),
    backfillDays: z.number().min(0).max(365).default(30),
    swapsPerSecond: z.number().positive().max(100_000).default(1),
    newPoolsPerHour: z.number().min(0).max(100_000).default(2),
    networks: z.array(z.string().min(1)).min(1).optional(),
    /** Fixed start of simulated history (Unix s); by default first start minus backfillDays. */
    genesisTime: z.number().int().min(0).optional(),
  })
  .strict();

const GatewayConfig = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65_535).default(8080),
    /** The HTTP front (gateway/edge): "on" on the REST and agent ports, "all" on the stream ports too, "off" uWS directly. */
    front: z.enum(['on', 'all', 'off']).default('off'),
  })
  .strict();

const CapacityConfig = z
  .object({
    pools: z.number().int().min(16).max(4_000_000).optional(),
    tokens: z.number().int().min(16).max(4_000_000).optional(),
    chains: z.number().int().min(1).max(1024).default(64),
    /** Pools that may hold candle rings at once (ring blocks); by default as many as a quarter of the machine's memory holds, at most one per pool. */
    ringBlocks: z.number().int().min(64).max(100_000_000).optional(),
    /** Pools that may hold rolling-window figures at once (window slots: those that traded within 30 days); by default one per pool. */
    windowSlots: z.number().int().min(64).max(100_000_000).optional(),
  })
  .strict();

/** Hot and quiet pools: a pool quiet this long gives its candle rings back (its candles are in LMDB). */
const TiersConfig = z
  .object({
    quietAfterSeconds: z.number().int().min(MIN_QUIET_AFTER_SECONDS).default(DEFAULT_TIER_POLICY.quietAfterSeconds),
  })
  .strict();

/**
 * The plans a request can be evaluated against; `keyless` is the plan of callers without a key;
 * `explorer` is the plan of the key the service hands its own web explorer (gateway/explorer).
 */
export const PLAN_NAMES = ['keyless', 'free', 'dev', 'pro', 'enterprise', 'explorer'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];
/** Plans whose keys belong on the paid hosts. */
export const PAID_PLANS: ReadonlySet<PlanName> = new Set(['dev', 'pro', 'enterprise']);

export interface PlanLimits {
  readonly requestsPerMinute: number;
  /** Credits per window: a rolling 30 days advancing hourly, or the billing month from the account's creation. */
  readonly credits: number;
  readonly concurrentStreams: number;
  readonly windowKind: 'rolling' | 'billing';
  /** Finest pool OHLCV / indicator interval the plan may ask for. */
  readonly ohlcvFinestInterval: (typeof INTERVALS)[number];
  /** How far back pool OHLCV may reach, in days; null = no cap. */
  readonly ohlcvHistoryDays: number | null;
}

/** Allowances are counted in 32-bit slots (gateway/metering): at most 2^31 - 1 credits per window. */
const MAX_CREDITS = 2 ** 31 - 1;
/** Per-minute counts share those slots; a gateway answers well under this many requests a minute. */
const MAX_REQUESTS_PER_MINUTE = 1_000_000_000;

export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  keyless: { requestsPerMinute: 15, credits: 10_000, concurrentStreams: 10, windowKind: 'rolling', ohlcvFinestInterval: '1h', ohlcvHistoryDays: 1 },
  free: { requestsPerMinute: 30, credits: 100_000, concurrentStreams: 10, windowKind: 'rolling', ohlcvFinestInterval: '10m', ohlcvHistoryDays: 7 },
  dev: { requestsPerMinute: 100, credits: 1_000_000, concurrentStreams: 30, windowKind: 'billing', ohlcvFinestInterval: '1m', ohlcvHistoryDays: 30 },
  pro: { requestsPerMinute: 500, credits: 5_000_000, concurrentStreams: 100, windowKind: 'billing', ohlcvFinestInterval: '1m', ohlcvHistoryDays: null },
  // Per contract: these are the figures until a contract sets others in the config file.
  enterprise: { requestsPerMinute: 3_000, credits: 100_000_000, concurrentStreams: 1_000, windowKind: 'billing', ohlcvFinestInterval: '1m', ohlcvHistoryDays: null },
  // The operator browsing the web explorer: every endpoint and stream; the credits keep a busy pool
  // page's streams (about 10 events a second) open around the clock for its rolling 30 days.
  explorer: { requestsPerMinute: 600, credits: 30_000_000, concurrentStreams: 24, windowKind: 'rolling', ohlcvFinestInterval: '1m', ohlcvHistoryDays: null },
};

/** One plan's section: every field optional in the file, defaulting to that plan's figure. */
function planSchema(d: PlanLimits) {
  return z
    .object({
      requestsPerMinute: z.number().int().min(1).max(MAX_REQUESTS_PER_MINUTE).default(d.requestsPerMinute),
      credits: z.number().int().min(0).max(MAX_CREDITS).default(d.credits),
      concurrentStreams: z.number().int().min(0).max(1_000_000).default(d.concurrentStreams),
      windowKind: z.enum(['rolling', 'billing']).default(d.windowKind),
      ohlcvFinestInterval: z.enum(INTERVALS).default(d.ohlcvFinestInterval),
      ohlcvHistoryDays: z.number().positive().max(36_500).nullable().default(d.ohlcvHistoryDays),
    })
    .strict();
}

const PlansConfig = z
  .object(Object.fromEntries(PLAN_NAMES.map((n) => [n, planSchema(DEFAULT_PLANS[n]).default(() => ({ ...DEFAULT_PLANS[n] }))])) as {
    [K in PlanName]: z.ZodDefault<ReturnType<typeof planSchema>>;
  })
  .strict();

/** The host roles of api.md: {base_url}, {pro_url}, {stream_url}, {stream_pro_url}, {mcp_url}. */
export const LISTENER_ROLES = ['freeRest', 'paidRest', 'freeStream', 'paidStream', 'agent'] as const;
export type ListenerRole = (typeof LISTENER_ROLES)[number];
/** Port of each role when not configured: gateway.port plus this offset (8080..8084 by default; 0 stays 0). */
export const LISTENER_PORT_OFFSET: Readonly<Record<ListenerRole, number>> = { freeRest: 0, paidRest: 1, freeStream: 2, paidStream: 3, agent: 4 };

const ListenerConfig = z
  .object({
    port: z.number().int().min(0).max(65_535).optional(),
    /** Public names of the host (e.g. `https://pro.example.com`); the first one is what wrong_host names. */
    hosts: z.array(z.string().min(1)).default([]),
  })
  .strict();

const ListenersConfig = z
  .object(Object.fromEntries(LISTENER_ROLES.map((r) => [r, ListenerConfig.default({ hosts: [] })])) as {
    [K in ListenerRole]: z.ZodDefault<typeof ListenerConfig>;
  })
  .strict();

const StreamsConfig = z
  .object({
    /**
     * Tokens keyless callers may stream prices of, as `<network>:<token address>`; when absent, the
     * wrapped native token and the stablecoins of every network.
     */
    showcase: z.array(z.string().regex(/^[a-z0-9_-]+:\S+$/, 'must be <network>:<token address>')).optional(),
    /**
     * uWS threads serving the stream hosts, sharing their ports and counters; 0 = on the main thread
     * with the REST hosts. Absent: what the cores leave (defaultStreamThreads).
     */
    threads: z.number().int().min(0).max(64).optional(),
  })
  .strict();

/** Snapshots of the engine's views (engine/snapshot): a start loads the newest and replays only the log after it. */
const SnapshotsConfig = z
  .object({
    enabled: z.boolean().default(true),
    intervalSeconds: z.number().min(1).max(86_400).default(DEFAULT_SNAPSHOT_POLICY.intervalSeconds),
    everyEvents: z.number().int().min(1).default(DEFAULT_SNAPSHOT_POLICY.everyEvents),
    keep: z.number().int().min(1).max(100).default(DEFAULT_SNAPSHOT_POLICY.keep),
    /**
     * Remove log batches older than the oldest snapshot kept. On for the service: without it the log
     * is a third of the store (bench/RESULTS.md). The price: a version whose column table differs
     * from the snapshots' cannot rebuild its views and says so at its start (snapshot/take.ts).
     */
    pruneLog: z.boolean().default(true),
  })
  .strict();

/** Log levels, most verbose first (pino's names). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
/** `json`: one JSON object per line; `pretty`: coloured text for a terminal; `auto`: pretty on a terminal, else json. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

const LogConfig = z
  .object({
    level: z.enum(LOG_LEVELS).default('info'),
    format: z.enum(LOG_FORMATS).default('auto'),
  })
  .strict();

/** Prometheus port; conventionally 9464 (the OpenTelemetry Prometheus exporter's). */
export const DEFAULT_METRICS_PORT = 9464;

const MetricsConfig = z
  .object({
    /** Off: no operator port is opened and nothing is counted beyond what the service needs. */
    enabled: z.boolean().default(true),
    /** Loopback by default: the operator port is not one of the public hosts. */
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65_535).default(DEFAULT_METRICS_PORT),
  })
  .strict();

/** An IPv4 or IPv6 address, optionally with a /prefix (CIDR). */
const PROXY_ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*(?:\/\d{1,3})?)$/;

/** The web explorer (gateway/explorer): served at /explorer/ on the free REST host. */
const ExplorerConfig = z
  .object({
    enabled: z.boolean().default(true),
    /**
     * Hand the explorer page a key of the `explorer` plan (an account of its own, made at the first
     * start and given a new key at each start, metered like any other); false: the page browses
     * keyless or with a key its user enters.
     */
    plan: z.boolean().default(true),
    /** Addresses or CIDRs of the browsers the explorer key is handed to: loopback by default. */
    clients: z.array(z.string().regex(PROXY_ADDRESS, 'must be an IP address or CIDR (127.0.0.0/8, ::1)')).default(['127.0.0.0/8', '::1']),
  })
  .strict();

export const ConfigSchema = z
  .object({
    dataDir: z.string().min(1).default('./data'),
    shards: z.number().int().min(1).max(64).default(2),
    /** `simulator` (the default) or `evm`: the EVM chains and Solana clusters below, read over JSON-RPC. */
    source: z.enum(['simulator', 'evm']).default('simulator'),
    simulator: SimulatorConfig.default(SimulatorConfig.parse({})),
    gateway: GatewayConfig.default(GatewayConfig.parse({})),
    capacity: CapacityConfig.default(CapacityConfig.parse({})),
    plans: PlansConfig.default(() => PlansConfig.parse({})),
    listeners: ListenersConfig.default(() => ListenersConfig.parse({})),
    streams: StreamsConfig.default({}),
    snapshots: SnapshotsConfig.default(() => SnapshotsConfig.parse({})),
    tiers: TiersConfig.default(() => TiersConfig.parse({})),
    /** EVM chains followed when `source` is `evm` (engine/sources/evm/config.ts). */
    chains: EvmChainsSchema.default([]),
    /** Solana clusters followed when `source` is `evm` (engine/sources/solana/config.ts). */
    solana: SolanaChainsSchema.default([]),
    log: LogConfig.default(LogConfig.parse({})),
    metrics: MetricsConfig.default(MetricsConfig.parse({})),
    explorer: ExplorerConfig.default(() => ExplorerConfig.parse({})),
    /**
     * Reverse proxies (addresses or CIDRs) whose `X-Forwarded-For` / `Forwarded` headers name the
     * client; from any other peer those headers are ignored. None by default.
     */
    trustedProxies: z.array(z.string().regex(PROXY_ADDRESS, 'must be an IP address or CIDR (10.0.0.0/8, ::1)')).default([]),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.source === 'evm' && c.chains.length === 0 && c.solana.length === 0) ctx.addIssue({ code: 'custom', path: ['chains'], message: 'source "evm" needs at least one chain' });
    const evmIds = new Set(c.chains.map((x) => x.id));
    c.solana.forEach((x, i) => {
      if (evmIds.has(x.id)) ctx.addIssue({ code: 'custom', path: ['solana', i, 'id'], message: `network id "${x.id}" is also an EVM chain's` });
    });
  });

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

type Json = Record<string, unknown>;

/**
 * The settings that are also flags and environment variables: flag name, variable, config path,
 * type and help text. The command line (scripts/cli.ts) is derived from this one list; a default
 * shown in help is read from ConfigSchema unless `defaultText` says how it is derived.
 */
export interface ConfigOverride {
  readonly flag: string;
  readonly env: string;
  readonly path: readonly string[];
  /** `list`: comma-separated values; `boolean`: true or false. */
  readonly type: 'string' | 'number' | 'boolean' | 'list';
  readonly help: string;
  /** The value the flag names, for help: `N`, `DIR`, ... */
  readonly value: string;
  readonly defaultText?: string;
}

export const CONFIG_OVERRIDES: readonly ConfigOverride[] = [
  { flag: 'data-dir', env: 'DEXDATA_DATA_DIR', path: ['dataDir'], type: 'string', value: 'DIR', help: 'LMDB data directory' },
  { flag: 'shards', env: 'DEXDATA_SHARDS', path: ['shards'], type: 'number', value: 'N', help: 'engine shard threads' },
  { flag: 'source', env: 'DEXDATA_SOURCE', path: ['source'], type: 'string', value: 'NAME', help: 'simulator, or evm: the EVM chains of the config file\'s "chains"' },
  { flag: 'host', env: 'DEXDATA_HOST', path: ['gateway', 'host'], type: 'string', value: 'HOST', help: 'listen address of the public hosts' },
  { flag: 'port', env: 'DEXDATA_PORT', path: ['gateway', 'port'], type: 'number', value: 'N', help: 'free REST port; the other hosts follow it (paid REST +1, streams +2 and +3, agent +4); 0 = any free port' },
  { flag: 'paid-port', env: 'DEXDATA_PAID_PORT', path: ['listeners', 'paidRest', 'port'], type: 'number', value: 'N', help: 'paid REST port', defaultText: 'port + 1' },
  { flag: 'agent-port', env: 'DEXDATA_AGENT_PORT', path: ['listeners', 'agent', 'port'], type: 'number', value: 'N', help: 'agent host port: /api subset and MCP', defaultText: 'port + 4' },
  { flag: 'stream-port', env: 'DEXDATA_STREAM_PORT', path: ['listeners', 'freeStream', 'port'], type: 'number', value: 'N', help: 'free stream host port: SSE for keyless callers and free keys', defaultText: 'port + 2' },
  { flag: 'paid-stream-port', env: 'DEXDATA_PAID_STREAM_PORT', path: ['listeners', 'paidStream', 'port'], type: 'number', value: 'N', help: 'paid stream host port: SSE for dev, pro and enterprise keys', defaultText: 'port + 3' },
  { flag: 'stream-threads', env: 'DEXDATA_STREAM_THREADS', path: ['streams', 'threads'], type: 'number', value: 'N', help: 'uWS threads serving the stream ports (0 = the main thread)', defaultText: 'cores - 1 - shards, 0 to 8' },
  { flag: 'seed', env: 'DEXDATA_SEED', path: ['simulator', 'seed'], type: 'number', value: 'N', help: 'simulator seed' },
  { flag: 'pools', env: 'DEXDATA_POOLS', path: ['simulator', 'pools'], type: 'number', value: 'N', help: `simulated pools (up to ${MAX_POOLS}; 85 % exist at genesis; from ${LARGE_UNIVERSE_MIN_POOLS} a large universe whose activity follows a power law)` },
  { flag: 'backfill-days', env: 'DEXDATA_BACKFILL_DAYS', path: ['simulator', 'backfillDays'], type: 'number', value: 'N', help: 'days of history simulated at first start' },
  { flag: 'genesis-time', env: 'DEXDATA_GENESIS_TIME', path: ['simulator', 'genesisTime'], type: 'number', value: 'UNIX_S', help: 'fixed start of simulated history', defaultText: 'first start minus backfill-days' },
  { flag: 'swaps-per-second', env: 'DEXDATA_SWAPS_PER_SECOND', path: ['simulator', 'swapsPerSecond'], type: 'number', value: 'N', help: 'average simulated swaps per second over all pools' },
  { flag: 'log-level', env: 'DEXDATA_LOG_LEVEL', path: ['log', 'level'], type: 'string', value: 'LEVEL', help: `least severe level logged: ${LOG_LEVELS.join(', ')}` },
  { flag: 'log-format', env: 'DEXDATA_LOG_FORMAT', path: ['log', 'format'], type: 'string', value: 'FORMAT', help: 'json (one object per line), pretty (for a terminal) or auto (pretty on a terminal, else json)' },
  { flag: 'metrics', env: 'DEXDATA_METRICS', path: ['metrics', 'enabled'], type: 'boolean', value: 'BOOL', help: 'serve Prometheus metrics at /metrics on the operator port (false: off)' },
  { flag: 'metrics-host', env: 'DEXDATA_METRICS_HOST', path: ['metrics', 'host'], type: 'string', value: 'HOST', help: 'listen address of the operator port' },
  { flag: 'metrics-port', env: 'DEXDATA_METRICS_PORT', path: ['metrics', 'port'], type: 'number', value: 'N', help: 'operator port (/metrics); 0 = any free port' },
  { flag: 'trusted-proxies', env: 'DEXDATA_TRUSTED_PROXIES', path: ['trustedProxies'], type: 'list', value: 'LIST', help: 'comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For / Forwarded is honoured' },
  { flag: 'front', env: 'DEXDATA_FRONT', path: ['gateway', 'front'], type: 'string', value: 'MODE', help: 'the HTTP front: on (REST and agent ports), all (stream ports too) or off (uWS on every port)' },
  { flag: 'quiet-after', env: 'DEXDATA_QUIET_AFTER', path: ['tiers', 'quietAfterSeconds'], type: 'number', value: 'SECONDS', help: 'a pool this long without a swap gives its candle rings back (its candles are read from LMDB)' },
  { flag: 'ring-blocks', env: 'DEXDATA_RING_BLOCKS', path: ['capacity', 'ringBlocks'], type: 'number', value: 'N', help: 'pools that may hold candle rings at once', defaultText: 'a quarter of the memory, at most one per pool' },
  { flag: 'window-slots', env: 'DEXDATA_WINDOW_SLOTS', path: ['capacity', 'windowSlots'], type: 'number', value: 'N', help: 'pools that may hold rolling-window figures at once (those that traded within 30 days)', defaultText: 'one per pool' },
  { flag: 'explorer', env: 'DEXDATA_EXPLORER', path: ['explorer', 'enabled'], type: 'boolean', value: 'BOOL', help: 'serve the web explorer at /explorer/ on the free REST host (false: off)' },
  { flag: 'explorer-plan', env: 'DEXDATA_EXPLORER_PLAN', path: ['explorer', 'plan'], type: 'boolean', value: 'BOOL', help: 'hand the explorer page a key of the metered explorer plan (false: it browses keyless or with a key entered)' },
  { flag: 'explorer-clients', env: 'DEXDATA_EXPLORER_CLIENTS', path: ['explorer', 'clients'], type: 'list', value: 'LIST', help: 'comma-separated addresses or CIDRs of the browsers the explorer key is handed to' },
  { flag: 'snapshot-interval', env: 'DEXDATA_SNAPSHOT_INTERVAL', path: ['snapshots', 'intervalSeconds'], type: 'number', value: 'SECONDS', help: 'seconds between snapshots of the engine views while events arrive' },
];

/**
 * Networks of the built-in registry (engine/sources/evm/presets.ts) named on the command line, each
 * with its JSON-RPC endpoints: `--network base --rpc URL`, repeatable (the n-th --rpc belongs to the
 * n-th --network; one --rpc may list fallbacks, comma-separated). In `flags` the names arrive
 * comma-joined and the RPC lists space-joined, as in their environment variables.
 */
export const NETWORK_FLAGS = {
  network: { flag: 'network', env: 'DEXDATA_NETWORK', value: 'NAME', help: `follow a network of the built-in registry (${PRESET_IDS.join(', ')}; see dexdata networks); repeatable, implies --source evm` },
  rpc: { flag: 'rpc', env: 'DEXDATA_RPC', value: 'URL', help: 'JSON-RPC endpoint of the --network before it (comma-separated fallbacks); one per --network; the environment variable takes them space-separated' },
  ws: { flag: 'ws', env: 'DEXDATA_WS', value: 'URL', help: "Solana: the node's PubSub WebSocket endpoint (ws:// or wss://; default: the first --rpc URL as ws/wss, an explicit port plus one)" },
} as const;

/**
 * Where every EVM chain starts on a first start, instead of its factories' deployment blocks (the
 * chains' `fromBlock` / `recentDays`, which these replace). Pools created earlier are taken up when
 * they first trade. Solana networks take them too, as their `startSlot` / `recentDays`.
 */
export const START_FLAGS = {
  fromBlock: { flag: 'from-block', env: 'DEXDATA_FROM_BLOCK', value: 'N', path: 'fromBlock', solanaPath: 'startSlot', help: 'EVM chains: start reading at block N on a first start (pools created before are taken up when they first trade); Solana: at slot N' },
  recent: { flag: 'recent', env: 'DEXDATA_RECENT', value: 'DAYS', path: 'recentDays', solanaPath: 'recentDays', help: 'EVM chains and Solana: start at the first block of the last DAYS days on a first start (found by block time)' },
} as const;

/** Lays --from-block / --recent (or their variables) over every Solana entry of `raw` (none: unchanged). */
function applySolanaStartFlags(raw: Json, flags: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv): void {
  const given = Object.values(START_FLAGS).filter((f) => (flags[f.flag] ?? env[f.env]) !== undefined);
  const solana = raw['solana'];
  if (given.length !== 1 || !Array.isArray(solana)) return;
  const f = given[0]!;
  const n = Number(flags[f.flag] ?? env[f.env]);
  raw['solana'] = solana.map((c: unknown) => {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return c;
    const { startSlot: _s, recentDays: _r, ...rest } = c as Json;
    return { ...rest, [f.solanaPath]: n };
  });
}

/** Lays --from-block / --recent (or their variables) over every chain entry; problems pushed to `problems`. */
function applyStartFlags(chains: unknown, flags: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv, problems: string[], solana = false): unknown {
  const given = Object.values(START_FLAGS)
    .map((f) => ({ f, value: flags[f.flag] ?? env[f.env] }))
    .filter((x): x is { f: (typeof START_FLAGS)[keyof typeof START_FLAGS]; value: string } => x.value !== undefined);
  if (given.length === 0) return chains;
  if (given.length > 1) {
    problems.push(`--${START_FLAGS.fromBlock.flag} and --${START_FLAGS.recent.flag}: give one of them, not both`);
    return chains;
  }
  const { f, value } = given[0]!;
  const n = Number(value);
  const valid = value.trim() !== '' && Number.isFinite(n) && (f === START_FLAGS.fromBlock ? Number.isInteger(n) && n >= 0 : n > 0);
  if (!valid) {
    problems.push(`--${f.flag} must be ${f === START_FLAGS.fromBlock ? 'a block number (an integer >= 0)' : 'a number of days (> 0)'}, got "${value}"`);
    return chains;
  }
  if (!Array.isArray(chains) || chains.length === 0) {
    if (solana) return chains;
    problems.push(`--${f.flag} needs EVM chains (--network, or "chains" in the config file)`);
    return chains;
  }
  return chains.map((c: unknown) => {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return c;
    const { fromBlock: _f, recentDays: _r, ...rest } = c as Json;
    return { ...rest, [f.path]: n };
  });
}

/** The networks named by --network / --rpc (or their environment variables); problems pushed to `problems`. */
function namedNetworks(flags: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv, problems: string[]): NamedNetwork[] {
  const names = (flags[NETWORK_FLAGS.network.flag] ?? env[NETWORK_FLAGS.network.env] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  const rpcs = (flags[NETWORK_FLAGS.rpc.flag] ?? env[NETWORK_FLAGS.rpc.env] ?? '').split(/\s+/).filter((x) => x !== '');
  if (names.length !== rpcs.length) {
    if (names.length > 0 || rpcs.length > 0)
      problems.push(`--rpc: ${names.length} network${names.length === 1 ? '' : 's'} named and ${rpcs.length} --rpc given; give one --rpc after each --network`);
    return [];
  }
  return names.map((id, i) => ({ id, rpcUrls: rpcs[i]!.split(',').filter((u) => u !== '') }));
}

/** Flags every command that reads the data directory takes. */
export const CONFIG_FILE_FLAG = { flag: 'config', env: 'DEXDATA_CONFIG', help: 'JSON config file (see README)', value: 'FILE' } as const;

export const CONFIG_FLAGS = [CONFIG_FILE_FLAG.flag, ...CONFIG_OVERRIDES.map((o) => o.flag)] as const;

/** The default a flag shows in help: its `defaultText`, else the schema's default at its path, else none. */
export function overrideDefault(o: ConfigOverride): string | undefined {
  if (o.defaultText !== undefined) return o.defaultText;
  let node: unknown = ConfigSchema.parse({});
  for (const key of o.path) node = typeof node === 'object' && node !== null ? (node as Json)[key] : undefined;
  if (node === undefined) return undefined;
  return Array.isArray(node) ? (node.length === 0 ? 'none' : node.join(',')) : String(node);
}

function setPath(target: Json, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Json;
  }
  node[path[path.length - 1]!] = value;
}

/**
 * Builds the configuration. `flags` are parsed command-line flags (`--port 9000` as `{port: '9000'}`).
 * Throws ConfigError listing every problem found.
 */
export function loadConfig(flags: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const problems: string[] = [];
  let raw: Json = {};
  const file = flags[CONFIG_FILE_FLAG.flag] ?? env[CONFIG_FILE_FLAG.env];
  if (file) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) problems.push(`${file}: must hold a JSON object`);
      else raw = parsed as Json;
    } catch (err) {
      problems.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const o of CONFIG_OVERRIDES) {
    for (const [origin, value] of [
      [`environment variable ${o.env}`, env[o.env]],
      [`flag --${o.flag}`, flags[o.flag]],
    ] as const) {
      if (value === undefined) continue;
      if (o.type === 'number') {
        const n = Number(value);
        if (value.trim() === '' || !Number.isFinite(n)) problems.push(`${origin} must be a number, got "${value}"`);
        else setPath(raw, o.path, n);
      } else if (o.type === 'boolean') {
        if (value !== 'true' && value !== 'false') problems.push(`${origin} must be true or false, got "${value}"`);
        else setPath(raw, o.path, value === 'true');
      } else if (o.type === 'list') {
        setPath(
          raw,
          o.path,
          value
            .split(',')
            .map((x) => x.trim())
            .filter((x) => x !== ''),
        );
      } else setPath(raw, o.path, value);
    }
  }
  const named = namedNetworks(flags, env, problems);
  if (named.length > 0) {
    if (raw['source'] === undefined) raw['source'] = 'evm';
    else if (raw['source'] !== 'evm') problems.push(`--network needs source "evm", the configuration says "${String(raw['source'])}"`);
  }
  // `--network solana` fills the `solana` section (its entry there, if any, laid over the preset's defaults).
  const solanaNamed = named.filter((n) => n.id === SOLANA_PRESET.id);
  if (solanaNamed.length > 0) {
    const given = Array.isArray(raw['solana']) ? (raw['solana'] as unknown[]) : [];
    const over = given.find((e): e is Json => typeof e === 'object' && e !== null && (e as Json)['id'] === SOLANA_PRESET.id);
    const ws = flags[NETWORK_FLAGS.ws.flag] ?? env[NETWORK_FLAGS.ws.env];
    raw['solana'] = [...given.filter((e) => e !== over), { ...(over ?? {}), id: SOLANA_PRESET.id, rpcUrls: [...solanaNamed[0]!.rpcUrls], ...(ws !== undefined ? { wsUrl: ws } : {}) }];
  } else if ((flags[NETWORK_FLAGS.ws.flag] ?? env[NETWORK_FLAGS.ws.env]) !== undefined) problems.push(`--${NETWORK_FLAGS.ws.flag} needs --network solana`);
  const hasSolana = Array.isArray(raw['solana']) && raw['solana'].length > 0;
  const chains = applyStartFlags(applyPresets(raw['chains'], named.filter((n) => n.id !== SOLANA_PRESET.id), problems), flags, env, problems, hasSolana);
  if (hasSolana && problems.length === 0) applySolanaStartFlags(raw, flags, env);
  if (chains !== undefined) raw['chains'] = chains;
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return deepFreeze(result.data);
}

/** When the engine's pools give their ring blocks back. */
export function tierPolicy(config: Config): TierPolicy {
  return config.tiers;
}

/** What the engine is given for its snapshots (null: none). */
export function snapshotPolicy(config: Config): SnapshotPolicy | null {
  const { enabled, ...policy } = config.snapshots;
  return enabled ? policy : null;
}

/** Share of the machine's memory the ring blocks (and the tokens' second blocks) may take when the configuration names no count. */
const RING_BLOCK_MEMORY_SHARE = 0.25;
const SECOND_BLOCK_MEMORY_SHARE = 1 / 32;

/**
 * Capacity of the shared views: room for the configured pools plus years of new ones, and as many
 * ring blocks as RING_BLOCK_MEMORY_SHARE of the memory holds (at most one per pool id). Blocks never
 * handed out are never touched, so they cost address space, not memory.
 */
export function engineCapacity(config: Config, memoryBytes = totalmem()): Required<EngineCapacity> {
  const growth = Math.ceil(config.simulator.newPoolsPerHour * 24 * 365);
  const pools = config.capacity.pools ?? Math.max(65_536, Math.ceil(config.simulator.pools * 1.25) + growth);
  const tokens = config.capacity.tokens ?? pools;
  const one = EngineViews.create({ pools: 1, tokens: 1, chains: 1, blocks: 1, secondBlocks: 1, windowSlots: 1 });
  const blocks = config.capacity.ringBlocks ?? Math.min(pools, Math.floor((memoryBytes * RING_BLOCK_MEMORY_SHARE) / ringBlockBytes(one)));
  const secondBlocks = Math.min(tokens, Math.floor((memoryBytes * SECOND_BLOCK_MEMORY_SHARE) / ringBlockBytes(one, 'secondBlock')));
  // Slots never handed out are never touched: one per pool costs address space, not memory.
  const windowSlots = Math.min(pools, config.capacity.windowSlots ?? pools);
  return { pools, tokens, chains: config.capacity.chains, blocks, secondBlocks, windowSlots };
}

/**
 * Stream threads when the configuration names none: the cores left once the main thread and the
 * shard threads have one each (none on 2 cores: the streams then share the main thread), at most 8.
 */
export function defaultStreamThreads(cores: number, shards: number): number {
  return Math.max(0, Math.min(8, cores - 1 - shards));
}

/** Port of each host role: the configured one, else gateway.port plus the role's offset (0 = any free port). */
export function listenerPorts(config: Config): Record<ListenerRole, number> {
  const base = config.gateway.port;
  const out = {} as Record<ListenerRole, number>;
  for (const r of LISTENER_ROLES) out[r] = config.listeners[r].port ?? (base === 0 ? 0 : base + LISTENER_PORT_OFFSET[r]);
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
