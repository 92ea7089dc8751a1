/**
 * An in-process engine with one pool traded every 6 hours over the last 40 days, and a gateway
 * serving it with keys, plans, host roles and metering, for the auth and metering tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PLANS, type PlanLimits, type PlanName } from '../../engine/config.js';
import type { ChainEvent } from '../../engine/events/model.js';
import { Ingest } from '../../engine/ingest/ingest.js';
import { LocalShards } from '../../engine/shards/local.js';
import { EngineViews } from '../../engine/state/views.js';
import { openStore, type Store } from '../../engine/store/store.js';
import { openKeyStore, type KeyStore } from '../../gateway/auth/key-store.js';
import { startGateway, type Gateway, type GatewayContext, type GatewayOptions } from '../../gateway/server.js';
import { E18, E6, NETWORKS, USDC, WETH } from './market.js';

export const DAY = 86_400;
/** 2023-12-25T12:00:30Z: half a minute into a minute, so per-minute windows are easy to reason about. */
export const NOW = 1_703_505_630;
export const HISTORY_DAYS = 40;
export const TRADE_EVERY_S = 6 * 3600; // 6 h
export const FIRST_TRADE = NOW - HISTORY_DAYS * DAY;

export const TOKENS = [USDC.address, WETH.address];
export const POOL = '0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc';

/** Every trade time fed, oldest first. */
export const TRADE_TIMES: number[] = [];
for (let t = FIRST_TRADE; t < NOW - 3600; t += TRADE_EVERY_S) TRADE_TIMES.push(t);

export interface AccessFixture {
  readonly dir: string;
  readonly store: Store;
  readonly keys: KeyStore;
  readonly context: GatewayContext;
  gateway: Gateway;
  /** Mutable clock of the gateway (Unix s). */
  now: number;
  url(role: 'freeRest' | 'paidRest' | 'agent'): string;
  /** Closes the gateway and starts a new one on the same store. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function plansWith(overrides: Partial<Record<PlanName, Partial<PlanLimits>>>): Record<PlanName, PlanLimits> {
  const out = {} as Record<PlanName, PlanLimits>;
  for (const p of Object.keys(DEFAULT_PLANS) as PlanName[]) out[p] = { ...DEFAULT_PLANS[p], ...overrides[p] };
  return out;
}

/** `options`: gateway options beyond the fixture's own (`metrics: true` counts requests, `front`, `explorer`). */
export async function startAccessFixture(plans: Record<PlanName, PlanLimits>, options: Pick<GatewayOptions, 'metrics' | 'front' | 'explorer'> = {}): Promise<AccessFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'access-test-'));
  const store = openStore(dir);
  const views = EngineViews.create({ pools: 64, tokens: 64, chains: 4 });
  const shards = new LocalShards(views, store);
  const ingest = new Ingest(store, views, shards);
  await ingest.registerNetworks(NETWORKS);
  const dex = NETWORKS[0]!.dexes[0]!;
  let block = 1000;
  const events: ChainEvent[] = [
    { kind: 'pool_created', key: { blockNumber: 10, txIndex: 0, logIndex: 0 }, timestamp: FIRST_TRADE - DAY, pool: POOL, dexId: dex.id, factory: dex.factory, protocol: 0, feePpm: 3000, token0: WETH, token1: USDC },
  ];
  TRADE_TIMES.forEach((t, i) => {
    block++;
    const price = 2000 + (i % 17);
    const key = (logIndex: number) => ({ blockNumber: block, txIndex: 0, logIndex });
    events.push(
      { kind: 'sync', key: key(0), timestamp: t, pool: POOL, reserve0: 1000n * E18, reserve1: BigInt(price * 1000) * E6 },
      {
        kind: 'swap',
        key: key(1),
        timestamp: t,
        pool: POOL,
        amount0: -E18,
        amount1: BigInt(price) * E6,
        sqrtPriceX96: 0n,
        liquidity: 0n,
        tick: 0,
        txHash: `0x${block.toString(16).padStart(64, '0')}`,
        sender: '0x1111111111111111111111111111111111111111',
        recipient: '0x2222222222222222222222222222222222222222',
      },
    );
  });
  const result = await ingest.ingest([{ chain: 'ethereum', events }]);
  await result.applied;
  await shards.flush();

  const fx: AccessFixture = {
    dir,
    store,
    keys: openKeyStore(store),
    context: { views, registry: ingest.registry, store, ranker: shards, now: () => fx.now },
    gateway: undefined as unknown as Gateway,
    now: NOW,
    url: (role) => `http://127.0.0.1:${fx.gateway.ports[role]}`,
    async restart() {
      await fx.gateway.close();
      fx.gateway = await start();
    },
    async close() {
      await fx.gateway?.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const start = () => startGateway(fx.context, { ...options, host: '127.0.0.1', port: 0, access: { plans, paidRest: { port: 0 }, agent: { port: 0 } } });
  fx.gateway = await start();
  return fx;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** GET with the key as the whole Authorization value ('' = no header). */
export async function call(url: string, key = '', headers: Record<string, string> = {}): Promise<Reply> {
  const r = await fetch(url, { headers: key === '' ? headers : { ...headers, authorization: key } });
  const text = await r.text();
  let body: unknown = null;
  if ((r.headers.get('content-type') ?? '').startsWith('application/json')) body = JSON.parse(text);
  return { status: r.status, headers: r.headers, body, text };
}
