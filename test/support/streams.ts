/**
 * A gateway with its stream hosts over a real in-process engine (ingest, LocalShards, LMDB), whose
 * market the test moves by feeding events; and a raw SSE reader over node:http that keeps every
 * field of every frame (request_id lines included), for the stream tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlanLimits, PlanName } from '../../engine/config.js';
import type { ChainEvent, TokenInfo } from '../../engine/events/model.js';
import { Ingest } from '../../engine/ingest/ingest.js';
import { LocalShards } from '../../engine/shards/local.js';
import { EngineViews } from '../../engine/state/views.js';
import { openStore, type Store } from '../../engine/store/store.js';
import { openKeyStore, type KeyStore, type KeyedPlan } from '../../gateway/auth/key-store.js';
import { startGateway, type Gateway, type GatewayContext } from '../../gateway/server.js';
import { E18, E6, NETWORKS, USDC, WETH } from './market.js';

export { E18, E6, USDC, WETH } from './market.js';

/** 2026-03-02T10:00:00Z */
export const START = 1_772_445_600;

/** Not a showcase token (role other). */
export const PEPE: TokenInfo = { address: '0x6982508145454Ce325dDbE47a25d4ec3d2311933', name: 'Pepe', symbol: 'PEPE', decimals: 18, totalSupply: 10n ** 30n, role: 3 };
/** WETH/USDC */
export const POOL_A = '0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc';
/** PEPE/WETH */
export const POOL_P = '0xA43fe16908251ee70EF74718545e4FE6C5cCEc9f';


/** One swap fed to the engine: a Sync to the reserves after it, then the Swap (pool's view amounts). */
export interface Trade {
  pool: string;
  t: number;
  r0: bigint;
  r1: bigint;
  a0: bigint;
  a1: bigint;
  txHash?: string;
}

export interface StreamFixture {
  readonly store: Store;
  readonly keys: KeyStore;
  readonly context: GatewayContext;
  readonly gateway: Gateway;
  readonly shards: LocalShards;
  /** Mutable clock (Unix s) of the gateway, its ticks and pings. */
  now: number;
  /** The block of the last trade fed. */
  block: number;
  url(role: 'freeStream' | 'paidStream' | 'freeRest' | 'paidRest'): string;
  key(plan: KeyedPlan): string;
  /** Feeds trades (each in its own block unless `sameBlock`), applied when it resolves. */
  trade(trades: readonly Trade[], sameBlock?: boolean): Promise<void>;
  /** Creates a pool of the first DEX on ethereum in a block of its own, applied when it resolves. */
  createPool(pool: string, token0: TokenInfo, token1: TokenInfo): Promise<void>;
  close(): Promise<void>;
}

let txCounter = 0;

/** `streamThreads`: serve the stream hosts from that many uWS threads sharing their ports (0: the calling thread). */
export async function startStreamFixture(plans: Record<PlanName, PlanLimits>, options: { showcase?: readonly string[]; streamThreads?: number } = {}): Promise<StreamFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'streams-test-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: 64, tokens: 64, chains: 4 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  await ingest.registerNetworks(NETWORKS);
  const dex = NETWORKS[0]!.dexes[0]!;
  const created: ChainEvent[] = [
    { kind: 'pool_created', key: { blockNumber: 10, txIndex: 0, logIndex: 0 }, timestamp: START - 3600, pool: POOL_A, dexId: dex.id, factory: dex.factory, protocol: 0, feePpm: 3000, token0: WETH, token1: USDC },
    { kind: 'pool_created', key: { blockNumber: 10, txIndex: 1, logIndex: 0 }, timestamp: START - 3600, pool: POOL_P, dexId: dex.id, factory: dex.factory, protocol: 0, feePpm: 3000, token0: PEPE, token1: WETH },
  ];
  await (await ingest.ingest([{ chain: 'ethereum', events: created }])).applied;

  const keys = openKeyStore(store);
  const made = new Map<KeyedPlan, string>();
  // The gateway reads the clock while it starts (stream threads copy it), before fx exists.
  let started = false;
  const context: GatewayContext = { views, registry: ingest.registry, store, ranker: shards, now: () => (started ? fx.now : START), swaps: shards.swapFeed };
  const gateway = await startGateway(context, {
    host: '127.0.0.1',
    port: 0,
    access: {
      plans,
      paidRest: { port: 0 },
      freeStream: { port: 0 },
      paidStream: { port: 0 },
      ...(options.showcase ? { showcase: options.showcase } : {}),
      ...(options.streamThreads !== undefined ? { streamThreads: options.streamThreads } : {}),
    },
  });
  const fx: StreamFixture = {
    store,
    keys,
    context,
    gateway,
    shards,
    now: START,
    block: 1000,
    url: (role) => `http://127.0.0.1:${gateway.ports[role]}`,
    key(plan) {
      let k = made.get(plan);
      if (k === undefined) {
        k = keys.create(plan, `streams ${plan}`, fx.now).key;
        made.set(plan, k);
      }
      return k;
    },
    async trade(trades, sameBlock = false) {
      const events: ChainEvent[] = [];
      let tx = 0;
      if (sameBlock) fx.block++;
      for (const tr of trades) {
        if (!sameBlock) {
          fx.block++;
          tx = 0;
        }
        const key = (logIndex: number) => ({ blockNumber: fx.block, txIndex: tx, logIndex });
        events.push(
          { kind: 'sync', key: key(0), timestamp: tr.t, pool: tr.pool, reserve0: tr.r0, reserve1: tr.r1 },
          {
            kind: 'swap',
            key: key(1),
            timestamp: tr.t,
            pool: tr.pool,
            amount0: tr.a0,
            amount1: tr.a1,
            sqrtPriceX96: 0n,
            liquidity: 0n,
            tick: 0,
            txHash: tr.txHash ?? `0x${(++txCounter).toString(16).padStart(64, '0')}`,
            sender: '0x1111111111111111111111111111111111111111',
            recipient: '0x2222222222222222222222222222222222222222',
          },
        );
        tx++;
      }
      await (await ingest.ingest([{ chain: 'ethereum', events }])).applied;
    },
    async createPool(pool, token0, token1) {
      fx.block++;
      const e: ChainEvent = { kind: 'pool_created', key: { blockNumber: fx.block, txIndex: 0, logIndex: 0 }, timestamp: fx.now, pool, dexId: dex.id, factory: dex.factory, protocol: 0, feePpm: 3000, token0, token1 };
      await (await ingest.ingest([{ chain: 'ethereum', events: [e] }])).applied;
    },
    async close() {
      await gateway.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  started = true;
  return fx;
}

/** A trade in POOL_A (WETH/USDC) leaving 1000 WETH against `usdcPerWeth` x 1000 USDC; the trader bought 1 WETH. */
export function wethTrade(t: number, usdcPerWeth: bigint | number, txHash?: string): Trade {
  const price = BigInt(usdcPerWeth);
  return { pool: POOL_A, t, r0: 1000n * E18, r1: price * 1000n * E6, a0: -E18, a1: price * E6, ...(txHash ? { txHash } : {}) };
}

/** One SSE frame: its fields (a repeated `data` joined with newlines). */
export interface Frame {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
  readonly requestId?: string;
  readonly retry?: string;
  /** Field names in the order they came. */
  readonly fields: readonly string[];
}

export interface RawStream {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** The whole body for a non-stream answer. */
  readonly body: string;
  readonly frames: Frame[];
  /** Resolves when `n` frames matching `pick` have arrived (default: data events, i.e. frames with an id). */
  waitFrames(n: number, pick?: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame[]>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  readonly isEnded: () => boolean;
  close(): void;
}

function parseFrame(block: string): Frame | null {
  const fields: string[] = [];
  let event = 'message';
  const data: string[] = [];
  let id: string | undefined;
  let requestId: string | undefined;
  let retry: string | undefined;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const at = line.indexOf(':');
    const name = at < 0 ? line : line.slice(0, at);
    let value = at < 0 ? '' : line.slice(at + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    fields.push(name);
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
    else if (name === 'id') id = value;
    else if (name === 'request_id') requestId = value;
    else if (name === 'retry') retry = value;
  }
  if (fields.length === 0) return null;
  return { event, data: data.join('\n'), fields, ...(id !== undefined ? { id } : {}), ...(requestId !== undefined ? { requestId } : {}), ...(retry !== undefined ? { retry } : {}) };
}

export const isData = (f: Frame): boolean => f.id !== undefined;

/** Opens a stream (or gets a refusal) with node:http; resolves once the status and headers are in. */
export function openRaw(url: string, options: { method?: string; key?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers['authorization'] = options.key;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const req: ClientRequest = httpRequest(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const frames: Frame[] = [];
      let buffer = '';
      let body = '';
      let ended = false;
      const waiters: (() => void)[] = [];
      const notify = () => {
        for (const w of waiters.splice(0)) w();
      };
      let endResolve!: () => void;
      const endedP = new Promise<void>((r) => (endResolve = r));
      const finish = () => {
        if (ended) return;
        ended = true;
        endResolve();
        notify();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk.length < 65_536 && body.length < 1_000_000 ? chunk : '';
        buffer += chunk;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const f = parseFrame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (f !== null) frames.push(f);
          cut = buffer.indexOf('\n\n');
        }
        notify();
      });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const stream: RawStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        get body() {
          return body;
        },
        frames,
        ended: endedP,
        isEnded: () => ended,
        waitFrames(n, pick = isData, timeoutMs = 5_000) {
          return new Promise((ok, fail) => {
            const check = () => {
              const got = frames.filter(pick);
              if (got.length >= n) {
                clearTimeout(timer);
                ok(got);
                return;
              }
              if (ended) {
                clearTimeout(timer);
                fail(new Error(`stream ended with ${got.length} of ${n} frames: ${JSON.stringify(frames)}`));
                return;
              }
              waiters.push(check);
            };
            const timer = setTimeout(() => fail(new Error(`timed out with ${frames.filter(pick).length} of ${n} frames: ${JSON.stringify(frames)}`)), timeoutMs);
            check();
          });
        },
        close() {
          req.destroy();
          res.destroy();
        },
      };
      resolve(stream);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** A whole non-stream answer: status, headers and parsed JSON body. */
export async function refusal(url: string, options: { method?: string; key?: string; body?: string } = {}): Promise<{ status: number; headers: IncomingMessage['headers']; body: any }> {
  const s = await openRaw(url, options);
  await s.ended;
  return { status: s.status, headers: s.headers, body: JSON.parse(s.body) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
