#!/usr/bin/env node
/**
 * dexdata: the service's single command, declared as a table (commander):
 *   dexdata serve [flags]     run engine, ingest and gateway in one process (the default command)
 *   dexdata keys <action>     accounts and API keys (scripts/keys.ts)
 *   dexdata status            a running service's health
 *   dexdata networks          the built-in registry of EVM networks and their DEX factories
 *   dexdata feedback <action> feedback sent through the agent protocol (scripts/feedback.ts)
 * Every command and action answers --help. The serve flags are derived from CONFIG_OVERRIDES
 * (engine/config.ts), the one list that also names the environment variables and config keys; their
 * values are validated together by loadConfig, every problem listed at once (exit code 2). An
 * unknown flag, command or missing argument is a one-line message and exit code 2.
 */
import { availableParallelism } from 'node:os';
import type { MetricsServer } from '../gateway/metrics/server.js';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CONFIG_FILE_FLAG, CONFIG_FLAGS, CONFIG_OVERRIDES, ConfigError, NETWORK_FLAGS, START_FLAGS, defaultStreamThreads, engineCapacity, listenerPorts, tierPolicy, loadConfig, overrideDefault, snapshotPolicy, type Config } from '../engine/config.js';
import { startEngine } from '../engine/engine.js';
import { createLog, errorText, type Log } from '../engine/log.js';
import type { WriteFault } from '../engine/store/durable.js';
import { combineSources } from '../engine/sources/combined.js';
import { SOLANA_PRESET } from '../engine/sources/solana/preset.js';
import { NETWORK_PRESETS, PRESET_IDS, PRESETS_VERSION } from '../engine/sources/evm/presets.js';
import { openSimulator } from '../engine/sources/open-simulator.js';
import { startGateway, type Gateway } from '../gateway/server.js';
import { ListenError } from '../gateway/http/listen.js';
import { FEEDBACK_ACTIONS, feedbackCommand } from './feedback.js';
import { KEYED_PLANS } from '../gateway/auth/key-store.js';
import { KEYS_ACTIONS, keysCommand } from './keys.js';
import { threadPoolSize, threadPoolSizeOf } from './thread-pool.cjs';

/** Exit code of a usage error: unknown flag or command, bad or missing argument, invalid configuration. */
const USAGE_EXIT_CODE = 2;

/** What a command runs with: the validated configuration and the log made from it. */
export interface Bundle {
  readonly config: Readonly<Config>;
  readonly log: Log;
}

async function serve({ config, log }: Bundle): Promise<void> {
  const now = () => Date.now() / 1000;
  const engineLog = log.child({ component: 'engine' });
  const line = (text: string) => engineLog.info(text);
  const pool = threadPoolSizeOf(process.env);
  log.info(
    config.source === 'evm'
      ? `starting: data ${config.dataDir}, ${config.shards} shards, thread pool ${pool}, chains ${[...config.chains.map((c) => `${c.id} (chain id ${c.chainId})`), ...config.solana.map((c) => `${c.id} (Solana, ${c.commitment})`)].join(', ')}`
      : `starting: data ${config.dataDir}, ${config.shards} shards, thread pool ${pool}, simulator seed ${config.simulator.seed} with ${config.simulator.pools} pools`,
  );
  // The store's writers hold pool threads while they write (thread-pool.cts): a short pool stalls file writes behind them.
  if (pool < threadPoolSize(config.shards)) {
    log.warn(
      `libuv's thread pool has ${pool} threads and the store's ${config.shards + 1} writers (the main thread and ${config.shards} shards) can hold as many of them for as long as they write: ` +
        `snapshot files and DNS lookups then wait; start with UV_THREADPOOL_SIZE=${threadPoolSize(config.shards)} (dexdata sizes it itself unless it is set or the shards are set in a config file)`,
    );
  }
  // The engine opens its source and replays the log after its snapshot once the listeners are bound.
  let listening!: () => void;
  const bound = new Promise<void>((resolve) => (listening = resolve));
  const engine = await startEngine({
    listening: bound,
    dataDir: config.dataDir,
    shards: config.shards,
    capacity: engineCapacity(config),
    snapshots: snapshotPolicy(config),
    tiers: tierPolicy(config),
    // A network's source (and its chain's libraries) is imported only when one of its networks is followed.
    source: async (store, resume) =>
      config.source === 'evm'
        ? combineSources([
            ...(config.chains.length > 0
              ? [(await import('../engine/sources/evm/source.js')).createEvmSource({ chains: config.chains, store, now, log: line, ...(process.stderr.isTTY ? { progressBar: process.stderr } : {}) })]
              : []),
            ...(config.solana.length > 0 ? [(await import('../engine/sources/solana/source.js')).createSolanaSource({ chains: config.solana, store, now, log: line })] : []),
          ])
        : openSimulator(store, config.simulator, now(), resume, engineLog),
    now,
    log: engineLog,
  });
  const ports = listenerPorts(config);
  const streamThreads = config.streams.threads ?? defaultStreamThreads(availableParallelism(), config.shards);
  // A full disk pauses ingest (engine/store/durable.ts): streams are told, and told again when it resumes.
  let gatewayUp: Gateway | null = null;
  engine.store.writer.onChange((fault: WriteFault | null): void => {
    if (fault === null) log.info('store: written again; ingest resumes');
    else log.warn(`store: ${fault.message}; ingest paused, reads go on`);
    gatewayUp?.warnStreams(fault === null ? 'the service can store data again: live events resume' : `${fault.message}: live events pause until then; this stream stays open`);
  });
  const starting = startGateway(
    { views: engine.views, registry: engine.registry, store: engine.store, ranker: engine.shards, now, swaps: engine.shards.swapFeed, log: log.child({ component: 'gateway' }), engineStats: () => engine.stats() },
    {
      host: config.gateway.host,
      port: ports.freeRest,
      front: config.gateway.front,
      health: () => engine.health(),
      metrics: config.metrics.enabled,
      trustedProxies: config.trustedProxies,
      ...(config.explorer.enabled ? { explorer: { issueKey: config.explorer.plan, clients: config.explorer.clients } } : {}),
      access: {
        plans: config.plans,
        freeRestHosts: config.listeners.freeRest.hosts,
        paidRest: { port: ports.paidRest, hosts: config.listeners.paidRest.hosts },
        agent: { port: ports.agent, hosts: config.listeners.agent.hosts },
        freeStream: { port: ports.freeStream, hosts: config.listeners.freeStream.hosts },
        paidStream: { port: ports.paidStream, hosts: config.listeners.paidStream.hosts },
        ...(config.streams.showcase !== undefined ? { showcase: config.streams.showcase } : {}),
        streamThreads,
      },
      // Serving: the engine opens its source and replays the log after its snapshot meanwhile; the agent port follows.
      onServing: (open) => {
        listening();
        log.info(`REST listening on http://${config.gateway.host}:${open.freeRest}`);
        if (config.explorer.enabled) {
          log.info(
            `explorer on http://${config.gateway.host}:${open.freeRest}/explorer/ (${config.explorer.plan ? `explorer plan key for browsers at ${config.explorer.clients.join(', ')}` : 'explorer plan off: keyless or a key entered'}; --explorer false turns it off)`,
          );
        }
        log.info(`paid REST listening on http://${config.gateway.host}:${open.paidRest}`);
        log.info(
          `streams listening on http://${config.gateway.host}:${open.freeStream} (free) and http://${config.gateway.host}:${open.paidStream} (paid), ${streamThreads === 0 ? 'on the main thread' : `${streamThreads} stream thread${streamThreads > 1 ? 's' : ''}`}`,
        );
      },
    },
  );
  // Signals are handled from the moment the ports may serve: a stop during the agent protocol's load waits for it, then closes.
  let metrics: MetricsServer | null = null;
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down');
    metrics?.close();
    await starting.then(
      (g) => g.close(),
      () => undefined,
    );
    await engine.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  engine.failed.catch((err: unknown) => {
    log.fatal(`engine failed: ${errorText(err)}`);
    void shutdown(1);
  });
  /** A start that cannot serve (a port in use, most often) ends in one line saying why, and a clean stop. */
  const cannotServe = async (err: unknown): Promise<never> => {
    log.fatal(err instanceof ListenError ? err.message : `cannot serve: ${errorText(err)}`);
    await shutdown(1);
    return new Promise<never>(() => undefined);
  };
  const gateway = await starting.catch(cannotServe);
  gatewayUp = gateway;
  log.info(`agent host listening on http://${config.gateway.host}:${gateway.ports.agent} (REST subset /api; MCP /streamable-http, /sse, /json-rpc)`);

  if (config.metrics.enabled && gateway.counters !== null) {
    const counters = gateway.counters;
    // Imported once the REST hosts listen: the metrics host is not on the serving path.
    const [{ createMetricsRegistry }, { METRICS_PATH, startMetricsServer }] = await Promise.all([import('../gateway/metrics/registry.js'), import('../gateway/metrics/server.js')]);
    const registry = createMetricsRegistry({
      requests: counters.requests,
      streams: counters.streams,
      creditsSpent: counters.creditsSpent,
      ingest: () => [...engine.ingest.eventsByChain].map(([chain, events]) => ({ chain, events, newestEventTime: engine.ingest.checkpoint(chain).time })),
      now: () => Date.now() / 1000,
      dataDir: config.dataDir,
      shardBusySeconds: () => engine.shards.busySeconds(),
      snapshots: () => {
        const st = engine.status();
        const sn = st.snapshots;
        return {
          ageSeconds: sn?.newestAgeSeconds ?? null,
          bytes: sn?.newestBytes ?? null,
          logBatchesSince: st.logSinceSnapshot,
          stage: sn?.stage ?? null,
          stageSeconds: sn?.stageSeconds ?? null,
        };
      },
    });
    metrics = await startMetricsServer(registry, config.metrics.host, config.metrics.port, log).catch(cannotServe);
    if (stopping) metrics.close();
    log.info(`metrics listening on http://${config.metrics.host}:${metrics.port}${METRICS_PATH}`);
  }
}

interface ChainHealthLine {
  chain: string;
  state: string;
  node_down_since: string | null;
  last_error: string | null;
  last_success_at: string | null;
  head_block: number | null;
  next_block: number;
  blocks_behind: number | null;
  reorgs: number;
  last_reorg_block: number | null;
  rpc_retries: number;
}

/** `dexdata status`: prints the /health detail of a running service, one line per chain. */
async function status(values: { host: string; port: string }): Promise<number> {
  const url = `http://${values.host}:${values.port}/health`;
  let body: { status?: string; phase?: string; chains?: ChainHealthLine[] };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    body = (await res.json()) as typeof body;
  } catch (err) {
    process.stderr.write(`no answer from ${url}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  process.stdout.write(`service: ${body.status ?? 'unknown'}${body.phase ? `, engine ${body.phase}` : ''}\n`);
  for (const c of body.chains ?? []) {
    const parts = [`${c.chain}: ${c.state}`];
    if (c.node_down_since) parts.push(`node down since ${c.node_down_since}`);
    parts.push(`head ${c.head_block ?? 'unknown'}`, `next block ${c.next_block}`, `${c.blocks_behind ?? 'unknown'} blocks behind`);
    parts.push(`last answer ${c.last_success_at ?? 'never'}`, `${c.rpc_retries} RPC retries`);
    parts.push(`${c.reorgs} reorgs${c.last_reorg_block !== null ? ` (last back to block ${c.last_reorg_block})` : ''}`);
    if (c.last_error) parts.push(`last error: ${c.last_error}`);
    process.stdout.write(`${parts.join(', ')}\n`);
  }
  return body.status === 'ok' ? 0 : 1;
}

/** The flags of a command that reads the configuration: all of CONFIG_OVERRIDES, or those named. */
function addConfigFlags(cmd: Command, only?: readonly string[]): Command {
  cmd.addOption(new Option(`--${CONFIG_FILE_FLAG.flag} <${CONFIG_FILE_FLAG.value}>`, `${CONFIG_FILE_FLAG.help} (env ${CONFIG_FILE_FLAG.env}; default: none)`));
  for (const o of CONFIG_OVERRIDES) {
    if (only !== undefined && !only.includes(o.flag)) continue;
    const shown = overrideDefault(o);
    cmd.addOption(new Option(`--${o.flag} <${o.value}>`, `${o.help} (env ${o.env}; default: ${shown ?? 'none'})`));
  }
  return cmd;
}

/** Repeatable values of one flag, in order. */
const collect = (value: string, previous: readonly string[] = []): string[] => [...previous, value];

/** --network (a name of the registry, checked here: an unknown one is a usage error) and --rpc, both repeatable. */
function addNetworkFlags(cmd: Command): Command {
  const n = NETWORK_FLAGS.network;
  const r = NETWORK_FLAGS.rpc;
  cmd.addOption(
    new Option(`--${n.flag} <${n.value}>`, `${n.help} (env ${n.env}, comma-separated; default: none)`).argParser((value: string, previous?: string[]) => {
      for (const name of value.split(',')) if (!PRESET_IDS.includes(name.trim())) throw new InvalidArgumentError(`unknown network "${name.trim()}"; the registry has ${PRESET_IDS.join(', ')} (dexdata networks lists them)`);
      return collect(value, previous);
    }),
  );
  cmd.addOption(new Option(`--${r.flag} <${r.value}>`, `${r.help} (env ${r.env}; default: none)`).argParser(collect));
  const w = NETWORK_FLAGS.ws;
  cmd.addOption(new Option(`--${w.flag} <${w.value}>`, `${w.help} (env ${w.env})`));
  for (const s of Object.values(START_FLAGS)) cmd.addOption(new Option(`--${s.flag} <${s.value}>`, `${s.help} (env ${s.env}; default: the factories' deployment blocks)`));
  return cmd;
}

/** Parsed config flags as loadConfig takes them: flag name -> text, for the flags given. */
function configFlags(opts: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const flag of [...CONFIG_FLAGS, ...Object.values(START_FLAGS).map((s) => s.flag), NETWORK_FLAGS.ws.flag]) {
    // commander names options in camelCase: --data-dir -> dataDir.
    const v = opts[flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
    if (typeof v === 'string') out[flag] = v;
  }
  // Repeated --network and --rpc, joined as their environment variables take them.
  const networks = opts[NETWORK_FLAGS.network.flag];
  const rpcs = opts[NETWORK_FLAGS.rpc.flag];
  if (Array.isArray(networks)) out[NETWORK_FLAGS.network.flag] = networks.join(',');
  if (Array.isArray(rpcs)) out[NETWORK_FLAGS.rpc.flag] = rpcs.join(' ');
  return out;
}

/** `dexdata networks`: the registry's networks, one line each, and the totals. */
function printNetworks(): void {
  let factories = 0;
  for (const p of NETWORK_PRESETS) {
    factories += p.factories.length;
    const dexes = p.factories.map((f) => `${f.dexId} (${f.protocol})`).join(', ');
    process.stdout.write(`${p.id}: ${p.displayName}, chain id ${p.chainId}, ${p.factories.length} factories: ${dexes}; wrapped native ${p.wrappedNative.symbol}, stablecoins ${p.stablecoins.map((s) => s.symbol).join(', ')}\n`);
  }
  const sol = SOLANA_PRESET;
  factories += sol.programs.length;
  process.stdout.write(`${sol.id}: ${sol.displayName}, ${sol.programs.length} DEX programs: ${sol.programs.map((p) => `${p.dexId} (${p.family})`).join(', ')}; wrapped native ${sol.wrappedNative.symbol}, stablecoins ${sol.stablecoins.map((s) => s.symbol).join(', ')}\n`);
  process.stdout.write(`${NETWORK_PRESETS.length + 1} networks, ${factories} factories (registry version ${PRESETS_VERSION})\n`);
}

/** Flags of the commands that only open the data directory. */
const DATA_DIR_FLAGS = ['data-dir'] as const;

function buildProgram(): Command {
  const program = new Command('dexdata')
    .description('Self-hostable DEX market-data service: REST and SSE over a sharded in-memory engine with an LMDB store.')
    .showSuggestionAfterError(true)
    .exitOverride()
    // One line per error, whatever commander appends (a suggestion), on stderr.
    .configureOutput({ outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')}\n`) });

  addNetworkFlags(addConfigFlags(program.command('serve', { isDefault: true }).description('run the service: simulator or chain ingest, engine shards and the HTTP gateway (the default command)'))).action(async (opts: Record<string, unknown>) => {
    const config = loadConfig(configFlags(opts));
    await serve({ config, log: createLog(config.log) });
  });

  const keys = program.command('keys').description('accounts and API keys: only hashes are stored; a key is printed once');
  for (const a of KEYS_ACTIONS) {
    const cmd = keys.command(a.name).description(a.help);
    for (const arg of a.args) cmd.argument(`<${arg}>`, arg === 'account' ? 'account number' : 'credits to add (a positive integer)');
    if (a.name === 'create') {
      cmd.addOption(new Option('--plan <plan>', 'plan of the account').choices(KEYED_PLANS).makeOptionMandatory());
      cmd.addOption(new Option('--label <text>', 'a label to recognise the account by (default: none)'));
    }
    addConfigFlags(cmd, DATA_DIR_FLAGS).action(async (...args: unknown[]) => {
      const positional = args.slice(0, a.args.length) as string[];
      const opts = args[a.args.length] as Record<string, unknown>;
      process.exitCode = await keysCommand(a.name, positional, { ...(typeof opts['plan'] === 'string' ? { plan: opts['plan'] } : {}), ...(typeof opts['label'] === 'string' ? { label: opts['label'] } : {}) }, configFlags(opts));
    });
  }

  program
    .command('status')
    .description('a running service\'s health: engine phase and, per chain, node state, last error, blocks behind (exit code 1 while a node is down, 2 when the service does not answer)')
    .addOption(new Option('--host <host>', 'address of its free REST host').default('127.0.0.1'))
    .addOption(new Option('--port <n>', 'port of its free REST host').default('8080'))
    .action(async (opts: { host: string; port: string }) => {
      process.exitCode = await status(opts);
    });

  program
    .command('networks')
    .description('the built-in registry of EVM networks: chain id, DEX factories and their protocols, anchors for USD prices (serve --network NAME --rpc URL follows one)')
    .action(() => printNetworks());

  const feedback = program.command('feedback').description('feedback sent with the agent tool submitFeedback');
  for (const a of FEEDBACK_ACTIONS) {
    const cmd = feedback.command(a.name).description(a.help);
    if (a.name === 'list') {
      cmd.addOption(new Option('--limit <n>', 'at most n records (default: all)'));
      cmd.addOption(new Option('--since <time>', 'only records received at or after: RFC 3339, yyyy-mm-dd, Unix seconds or -7d (default: all)'));
      cmd.addOption(new Option('--json', 'one JSON object per line instead of text (default: false)'));
    }
    addConfigFlags(cmd, DATA_DIR_FLAGS).action(async (opts: Record<string, unknown>) => {
      const options = {
        ...(typeof opts['limit'] === 'string' ? { limit: opts['limit'] } : {}),
        ...(typeof opts['since'] === 'string' ? { since: opts['since'] } : {}),
        ...(opts['json'] === true ? { json: true } : {}),
      };
      process.exitCode = await feedbackCommand(a.name, options, configFlags(opts));
    });
  }
  return program;
}

async function main(): Promise<void> {
  const program = buildProgram();
  // With serve the default command, anything not a flag nor a command name would be taken as its argument.
  const first = process.argv[2];
  if (first !== undefined && !first.startsWith('-') && first !== 'help' && !program.commands.some((c) => c.name() === first)) {
    process.stderr.write(`error: unknown command '${first}' (commands: ${program.commands.map((c) => c.name()).join(', ')}; see dexdata --help)\n`);
    process.exit(USAGE_EXIT_CODE);
  }
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // Help and version print and end well; every other commander error is a usage error, already printed.
    process.exit(err.exitCode === 0 ? 0 : USAGE_EXIT_CODE);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(USAGE_EXIT_CODE);
  }
  process.stderr.write(`${errorText(err)}\n`);
  process.exit(1);
});
