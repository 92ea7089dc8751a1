/**
 * A gateway with all five host roles (free and paid REST, free and paid streams, agent) over a small
 * simulated market in-process, with plans roomy enough that no limit refuses a test's requests, for
 * the tests of the HTTP front (raw sockets on every host).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from '../../engine/config.js';
import { Ingest } from '../../engine/ingest/ingest.js';
import type { PoolRanker } from '../../engine/read/index.js';
import { LocalShards } from '../../engine/shards/local.js';
import { createSimulator } from '../../engine/sources/simulator/index.js';
import { EngineViews } from '../../engine/state/views.js';
import { openStore, type Store } from '../../engine/store/store.js';
import { openKeyStore } from '../../gateway/auth/key-store.js';
import type { ListenerRole } from '../../engine/config.js';
import { startGateway, type FrontMode, type Gateway } from '../../gateway/server.js';

const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z
export const HOURS = 12;
export const NOW = GENESIS + HOURS * 3600;

export const ROLES: readonly ListenerRole[] = ['freeRest', 'paidRest', 'freeStream', 'paidStream', 'agent'];

export interface AllHosts {
  readonly gateway: Gateway;
  readonly pools: readonly { chain: string; address: string }[];
  readonly tokens: readonly { chain: string; address: string }[];
  /** A pro key (the whole Authorization value). */
  readonly proKey: string;
  port(role: ListenerRole): number;
  close(): Promise<void>;
}

/** `front`: the HTTP front's mode; `ranker`: wraps the shards' pool ranker (e.g. to hold searches back). */
export async function startAllHosts(options: { front?: FrontMode; ranker?: (shards: PoolRanker) => PoolRanker } = {}): Promise<AllHosts> {
  const dir = mkdtempSync(join(tmpdir(), 'all-hosts-'));
  const store: Store = openStore(dir);
  const views = EngineViews.create({ pools: 4096, tokens: 4096, chains: 16 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  const sim = createSimulator({ seed: 5, pools: 200, genesisTime: GENESIS, swapsPerSecond: 0.5, newPoolsPerHour: 0 });
  await ingest.registerNetworks(sim.networks);
  for (let t = GENESIS + 3600; t <= NOW; t += 3600) await (await ingest.ingest(sim.advance(t))).applied;
  await shards.flush();
  const pools: { chain: string; address: string }[] = [];
  const tokens: { chain: string; address: string }[] = [];
  for (const p of ingest.registry.pools) if (p) pools.push({ chain: ingest.registry.networks[p.chain]!.id, address: p.address });
  for (const t of ingest.registry.tokens) if (t) tokens.push({ chain: ingest.registry.networks[t.chain]!.id, address: t.address });
  const roomy = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };
  const plans = {} as Record<PlanName, PlanLimits>;
  for (const p of Object.keys(DEFAULT_PLANS) as PlanName[]) plans[p] = { ...DEFAULT_PLANS[p], ...roomy };
  const proKey = openKeyStore(store).create('pro', 'all hosts', NOW).key;
  const gateway = await startGateway(
    { views, registry: ingest.registry, store, ranker: options.ranker ? options.ranker(shards) : shards, now: () => NOW, swaps: shards.swapFeed },
    {
      host: '127.0.0.1',
      port: 0,
      ...(options.front !== undefined ? { front: options.front } : {}),
      access: { plans, paidRest: { port: 0 }, agent: { port: 0 }, freeStream: { port: 0 }, paidStream: { port: 0 } },
    },
  );
  return {
    gateway,
    pools,
    tokens,
    proKey,
    port: (role) => gateway.ports[role]!,
    async close() {
      await gateway.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawReply {
  /** Everything received until the server closed (or `waitMs` passed). */
  readonly bytes: Buffer;
  /** Whether the server closed the connection within `waitMs`. */
  readonly closed: boolean;
  /** Milliseconds from the write to the close (or to `waitMs`). */
  readonly ms: number;
}

/**
 * Writes `bytes` on a new connection and reads until the server closes it or `waitMs` passes;
 * `halfClose` ends the client's side after the write; of a list of parts, the first is written at
 * once and each next one when `sendPart(received so far, its index)` holds.
 * `until` stops reading early once it holds.
 */
export function rawExchange(port: number, bytes: Buffer | string | readonly (Buffer | string)[], o: { waitMs?: number; halfClose?: boolean; until?: (got: Buffer) => boolean; sendPart?: (got: Buffer, part: number) => boolean } = {}): Promise<RawReply> {
  const waitMs = o.waitMs ?? 2_000;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const started = performance.now();
    const s = connect(port, '127.0.0.1', () => {
      if (typeof bytes === 'string' || Buffer.isBuffer(bytes)) {
        s.write(bytes);
        if (o.halfClose === true) s.end();
        return;
      }
      // Several writes, each in its own segment: the first now, each next one once `sendPart` says so.
      s.setNoDelay(true);
      sendParts(Buffer.alloc(0));
    });
    let sent = 0;
    const sendParts = (got: Buffer) => {
      if (typeof bytes === 'string' || Buffer.isBuffer(bytes)) return;
      while (sent < bytes.length && s.writable && (sent === 0 || o.sendPart?.(got, sent) === true)) s.write(bytes[sent++]!);
    };
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    s.on('data', (b: Buffer) => {
      chunks.push(b);
      const got = Buffer.concat(chunks);
      if (o.until?.(got) === true) finish(false);
      else sendParts(got);
    });
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
  });
}

export interface ParsedAnswer {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/** Splits a byte stream into the complete HTTP/1.1 answers it holds (Content-Length or chunked bodies; HEAD answers have none when `noBody` says so). */
export function parseAnswers(bytes: Buffer, noBody: (index: number) => boolean = () => false): ParsedAnswer[] {
  const out: ParsedAnswer[] = [];
  let i = 0;
  while (i < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', i);
    if (end < 0) break;
    const lines = bytes.toString('latin1', i, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? NaN);
    const headers = new Map<string, string>();
    for (const l of lines.slice(1)) {
      const c = l.indexOf(':');
      headers.set(l.slice(0, c).trim().toLowerCase(), l.slice(c + 1).trim());
    }
    i = end + 4;
    if (status >= 100 && status < 200) continue;
    let body: Buffer = Buffer.alloc(0);
    if (noBody(out.length)) {
      // no body
    } else if (headers.has('content-length')) {
      const n = Number(headers.get('content-length'));
      if (i + n > bytes.length) break; // not all here yet
      body = bytes.subarray(i, i + n);
      i += n;
    } else if ((headers.get('transfer-encoding') ?? '').toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      let complete = false;
      for (;;) {
        const lf = bytes.indexOf('\r\n', i);
        if (lf < 0) break;
        const size = parseInt(bytes.toString('latin1', i, lf), 16);
        i = lf + 2;
        if (size === 0) {
          i += 2;
          complete = true;
          break;
        }
        parts.push(bytes.subarray(i, i + size));
        i += size + 2;
      }
      if (!complete) break; // not all here yet
      body = Buffer.concat(parts);
    } else {
      body = bytes.subarray(i);
      i = bytes.length;
    }
    out.push({ status, headers, body });
  }
  return out;
}
