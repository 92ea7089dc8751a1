#!/usr/bin/env node
/**
 * dexdata: the service's single command.
 *   dexdata serve [flags]   run engine, ingest and gateway in one process (the default command)
 *   dexdata keys <action>   accounts and API keys (scripts/keys.ts)
 *   dexdata feedback list   feedback sent through the agent protocol (scripts/feedback.ts)
 *   dexdata help
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { CONFIG_FLAGS, ConfigError, defaultStreamThreads, engineCapacity, listenerPorts, loadConfig, snapshotPolicy } from '../engine/config.js';
import { startEngine } from '../engine/engine.js';
import type { WriteFault } from '../engine/store/durable.js';
import { createEvmSource } from '../engine/sources/evm/source.js';
import { openSimulator } from '../engine/sources/open-simulator.js';
import { startGateway } from '../gateway/server.js';
import { feedbackCommand, FEEDBACK_USAGE } from './feedback.js';
import { keysCommand, KEYS_USAGE } from './keys.js';

const USAGE = `usage: dexdata <command> [flags]

commands:
  serve    run the service: simulator or chain ingest, engine shards and the HTTP gateway (default)
  keys     accounts and API keys: create, show, list, regenerate, revoke, credits (dexdata keys help)
  status   a running service's health: engine phase and, per chain, node state, last error, blocks behind
           (--host, --port of its REST host; exit code 1 while a node is down, 2 when the service does not answer)
  feedback feedback sent with the agent tool submitFeedback: list, count (dexdata feedback help)
  help     show this text

flags (each also as an environment variable DEXDATA_<NAME>, over the config file):
  --config FILE            JSON config file (see README)
  --data-dir DIR           LMDB data directory (default ./data)
  --host HOST              listen address (default 127.0.0.1)
  --front on|all|off       the HTTP front: answers HTTP/1.0, malformed requests, pipelining (on: the REST
                           and agent ports, the default; all: the stream ports too; off: uWS serves every
                           port directly, faster, silent on those)
  --port N                 free REST port (default 8080; other hosts follow it: paid REST +1, streams +2 and +3, agent +4)
  --paid-port N            paid REST port (default port + 1)
  --agent-port N           agent host port: /api subset and MCP (default port + 4)
  --stream-port N          free stream host port: SSE for keyless callers and free keys (default port + 2)
  --paid-stream-port N     paid stream host port: SSE for dev, pro and enterprise keys (default port + 3)
  --stream-threads N       uWS threads serving the stream ports, sharing ports and counters (0 = main thread;
                           default: cores - 1 - shards, at least 0, at most 8)
  --shards N               engine shard threads (default 2)
  --source NAME            simulator (default) or evm: the EVM chains of the config file's "chains" (see README)
  --seed N                 simulator seed (default 42)
  --pools N                simulated pools (default 20000, up to 2000000; 85 % exist at genesis)
  --backfill-days N        days of history simulated at first start (default 30)
  --swaps-per-second N     average simulated swaps per second over all pools (default 1)
`;

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString()} ${line}\n`);
}

async function serve(flags: Record<string, string>): Promise<void> {
  const config = loadConfig(flags);
  const now = () => Date.now() / 1000;
  log(
    config.source === 'evm'
      ? `starting: data ${config.dataDir}, ${config.shards} shards, EVM chains ${config.chains.map((c) => `${c.id} (chain id ${c.chainId})`).join(', ')}`
      : `starting: data ${config.dataDir}, ${config.shards} shards, simulator seed ${config.simulator.seed} with ${config.simulator.pools} pools`,
  );
  const engine = await startEngine({
    dataDir: config.dataDir,
    shards: config.shards,
    capacity: engineCapacity(config),
    snapshots: snapshotPolicy(config),
    source: (store, resume) =>
      config.source === 'evm'
        ? createEvmSource({ chains: config.chains, store, now, log, ...(process.stderr.isTTY ? { progressBar: process.stderr } : {}) })
        : openSimulator(store, config.simulator, now(), resume),
    now,
    log,
  });
  const ports = listenerPorts(config);
  const gateway = await startGateway(
    { views: engine.views, registry: engine.registry, store: engine.store, ranker: engine.shards, now, swaps: engine.shards.swapFeed, engineStats: () => engine.stats() },
    {
      host: config.gateway.host,
      port: ports.freeRest,
      front: config.gateway.front,
      health: () => engine.health(),
      access: {
        plans: config.plans,
        freeRestHosts: config.listeners.freeRest.hosts,
        paidRest: { port: ports.paidRest, hosts: config.listeners.paidRest.hosts },
        agent: { port: ports.agent, hosts: config.listeners.agent.hosts },
        freeStream: { port: ports.freeStream, hosts: config.listeners.freeStream.hosts },
        paidStream: { port: ports.paidStream, hosts: config.listeners.paidStream.hosts },
        ...(config.streams.showcase !== undefined ? { showcase: config.streams.showcase } : {}),
        streamThreads: config.streams.threads ?? defaultStreamThreads(availableParallelism(), config.shards),
      },
    },
  );
  // A full disk pauses ingest (engine/store/durable.ts): streams are told, and told again when it resumes.
  const onWriteFault = (fault: WriteFault | null): void => {
    log(fault === null ? 'store: written again; ingest resumes' : `store: ${fault.message}; ingest paused, reads go on`);
    gateway.warnStreams(fault === null ? 'the service can store data again: live events resume' : `${fault.message}: live events pause until then; this stream stays open`);
  };
  engine.store.writer.onChange(onWriteFault);
  log(`REST listening on http://${config.gateway.host}:${gateway.port}`);
  log(`paid REST listening on http://${config.gateway.host}:${gateway.ports.paidRest}`);
  log(`agent host listening on http://${config.gateway.host}:${gateway.ports.agent} (REST subset /api; MCP /streamable-http, /sse, /json-rpc)`);
  const streamThreads = gateway.streamThreads?.threads ?? 0;
  log(
    `streams listening on http://${config.gateway.host}:${gateway.ports.freeStream} (free) and http://${config.gateway.host}:${gateway.ports.paidStream} (paid), ${streamThreads === 0 ? 'on the main thread' : `${streamThreads} stream thread${streamThreads > 1 ? 's' : ''}`}`,
  );

  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('shutting down');
    await gateway.close();
    await engine.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  engine.failed.catch(() => void shutdown(1));
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
async function status(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { host: { type: 'string' }, port: { type: 'string' } }, strict: true });
  const url = `http://${values.host ?? '127.0.0.1'}:${values.port ?? '8080'}/health`;
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

async function main(): Promise<void> {
  // `keys` and `feedback` take their own flags, so they are dispatched before the serve flags are parsed.
  if (process.argv[2] === 'keys') {
    const rest = process.argv.slice(3);
    if (rest[0] === 'help' || rest[0] === '--help' || rest.length === 0) {
      process.stdout.write(KEYS_USAGE);
      return;
    }
    process.exitCode = await keysCommand(rest);
    return;
  }
  if (process.argv[2] === 'status') {
    process.exitCode = await status(process.argv.slice(3));
    return;
  }
  if (process.argv[2] === 'feedback') {
    const rest = process.argv.slice(3);
    if (rest[0] === 'help' || rest[0] === '--help' || rest.length === 0) {
      process.stdout.write(FEEDBACK_USAGE);
      return;
    }
    process.exitCode = await feedbackCommand(rest);
    return;
  }
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: Object.fromEntries(CONFIG_FLAGS.map((f) => [f, { type: 'string' as const }])),
    allowPositionals: true,
    strict: true,
  });
  const command = positionals[0] ?? 'serve';
  switch (command) {
    case 'serve':
      return serve(values as Record<string, string>);
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
      process.exit(2);
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
