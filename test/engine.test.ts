import { routedPriceUsd } from '../engine/state/exact-price.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBatch, type DecodedEvent } from '../engine/events/codec.js';
import type { ChainEventBatch } from '../engine/events/model.js';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { pruneTransactions } from '../engine/shards/prune.js';
import { u128ToBigInt } from '../engine/shards/u128.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { INTERVALS, RING_SLOTS, TOKEN_SECOND_SLOTS, WINDOWS } from '../engine/state/layout.js';
import { EngineViews, ringOpenedAt } from '../engine/state/views.js';
import { windowAsOf } from '../engine/state/window-slots.js';
import { candleValue, SECOND_U32_WORDS, SECOND_WORDS, SecondF64, SecondU32, type CandleFieldName } from '../engine/state/candle-record.js';
import { createPoolState, readPool, useStoredCandles } from '../engine/state/read.js';
import { LmdbCandles } from '../engine/shards/stored-candles.js';
import { allStoredCandles } from '../engine/store/candles.js';
import { openStore, type Store } from '../engine/store/store.js';
import { IVS, ReferenceModel } from './support/reference-model.js';

const HOUR = 3600;
const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z
const HISTORY_HOURS = 60;

/** Relative closeness for doubles summed in a different order. */
function close(actual: number, expected: number, what: string): void {
  const scale = Math.max(Math.abs(expected), 1e-12);
  if (Math.abs(actual - expected) / scale > 1e-9) expect.fail(`${what}: ${actual} != ${expected}`);
}

describe('engine views against a reference recomputation of the event log', () => {
  let dir: string;
  let store: Store;
  let views: EngineViews;
  let shards: LocalShards;
  let ingest: Ingest;
  const fed: ChainEventBatch[][] = [];
  const ref = new ReferenceModel();
  let events: DecodedEvent[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dexdata-engine-'));
    store = openStore(dir);
    views = EngineViews.create({ pools: 4096, tokens: 4096, chains: 16 });
    shards = new LocalShards(views, store);
    useStoredCandles(views, new LmdbCandles(store));
    ingest = new Ingest(store, views, shards);
    const sim = createSimulator({ seed: 7, pools: 400, genesisTime: GENESIS, swapsPerSecond: 0.25, newPoolsPerHour: 2 });
    await ingest.registerNetworks(sim.networks);
    for (let t = GENESIS + HOUR; t <= GENESIS + HISTORY_HOURS * HOUR; t += HOUR) {
      const batches = await sim.advance(t);
      fed.push(batches);
      await (await ingest.ingest(batches)).applied;
    }
    await shards.flush();
    for (const { value } of store.log.getRange({ start: 1 })) events.push(...decodeBatch(value).events);
    for (const e of events) ref.apply(e);
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ingested a substantial history', () => {
    const swaps = events.filter((e) => e.kind === 'swap').length;
    expect(swaps).toBeGreaterThan(20_000);
    expect(views.poolCount).toBeGreaterThanOrEqual(400);
  });

  it('keeps raw reserves exactly', () => {
    for (const [id, p] of ref.pools) {
      expect(u128ToBigInt(views.reserveRaw, id * 8), `pool ${id} reserve0`).toBe(p.r0);
      expect(u128ToBigInt(views.reserveRaw, id * 8 + 4), `pool ${id} reserve1`).toBe(p.r1);
    }
  });

  it('routes token USD prices like the reference', () => {
    for (const [id] of ref.tokens) {
      close(routedPriceUsd(views, id), ref.price(id), `token ${id} price`);
      expect(views.tokenRoutePool[id]! - 1, `token ${id} route`).toBe(ref.tokens.get(id)!.routePool);
    }
    // Plausibility: every chain's reference stablecoin is exactly 1 USD.
    for (const [id, t] of ref.tokens) if (t.role === 0) expect(routedPriceUsd(views, id)).toBe(1);
  });

  it('keeps every candle of every interval: the newest in the ring, every older one in LMDB', async () => {
    let checkedRing = 0;
    let checkedStore = 0;
    const stored = new Map<string, readonly number[]>();
    for (const { key, record } of allStoredCandles(store)) stored.set(key.join('/'), record);
    for (const [id, p] of ref.pools) {
      for (let i = 0; i < INTERVALS.length; i++) {
        const ring = views.rings[i]!;
        const expected = [...p.candles[i]!.entries()].sort((a, b) => a[0] - b[0]);
        // Counted in its ring block (views.ts ringOpened); a pool that never swapped holds none.
        const opened = views.poolBlock[id] === 0 ? 0 : views.ringOpened[ringOpenedAt(views.poolBlock[id]! - 1, i)]!;
        expect(opened, `pool ${id} ${INTERVALS[i]} candles`).toBe(expected.length);
        const kept = Math.min(opened, RING_SLOTS[i]!);
        for (let k = 0; k < kept; k++) {
          // The pool's candles sit in its ring block (every pool that traded holds one: nothing went quiet here).
          const slot = (views.poolBlock[id]! - 1) * RING_SLOTS[i]! + ((opened - 1 - k) % RING_SLOTS[i]!);
          const [time, c] = expected[expected.length - 1 - k]!;
          const field = (f: CandleFieldName) => candleValue(ring, slot, f);
          expect(field('time')).toBe(time);
          close(field('open0'), c.open0, 'open0');
          close(field('high0'), c.high0, 'high0');
          close(field('low0'), c.low0, 'low0');
          close(field('close0'), c.close0, 'close0');
          close(field('close1'), c.close1, 'close1');
          close(field('volumeUsd'), c.volumeUsd, 'volume');
          expect(field('txns')).toBe(c.txns);
          expect(field('buys')).toBe(c.buys);
          checkedRing++;
        }
        // Every candle the ring no longer holds is in the store.
        for (const [time, c] of expected.slice(0, expected.length - kept)) {
          const rec = stored.get(`${id}/${i}/${time}`);
          expect(rec, `sealed candle ${id}/${INTERVALS[i]}/${time}`).toBeDefined();
          close(rec![0]!, c.open0, 'stored open0');
          close(rec![1]!, c.high0, 'stored high0');
          close(rec![2]!, c.low0, 'stored low0');
          close(rec![3]!, c.close0, 'stored close0');
          close(rec![8]!, c.volumeUsd, 'stored volume');
          expect(rec![10]).toBe(c.txns);
          checkedStore++;
        }
      }
    }
    expect(checkedRing).toBeGreaterThan(10_000);
    expect(checkedStore).toBeGreaterThan(10_000);
  });

  it('keeps the 1 s candles of every token (USD price, volume, swaps) for the candle stream', () => {
    let checked = 0;
    for (const [tk, m] of ref.seconds) {
      const expected = [...m.entries()].sort((a, b) => a[0] - b[0]);
      const opened = views.secOpened[tk]!;
      expect(opened, `token ${tk} seconds`).toBe(expected.length);
      for (let k = 0; k < Math.min(opened, TOKEN_SECOND_SLOTS); k++) {
        const slot = (views.tokenSecondBlock[tk]! - 1) * TOKEN_SECOND_SLOTS + ((opened - 1 - k) % TOKEN_SECOND_SLOTS);
        const [time, c] = expected[expected.length - 1 - k]!;
        // One record per second (candle-record.ts SecondF64 / SecondU32).
        const f = (F: SecondF64) => views.secCells[slot * SECOND_WORDS + F]!;
        const u = (U: SecondU32) => views.secWords[slot * SECOND_U32_WORDS + U]!;
        expect(u(SecondU32.time)).toBe(time);
        close(f(SecondF64.open), c.open, 'second open');
        close(f(SecondF64.high), c.high, 'second high');
        close(f(SecondF64.low), c.low, 'second low');
        close(f(SecondF64.close), c.close, 'second close');
        close(f(SecondF64.priceSum), c.priceSum, 'second price sum');
        close(f(SecondF64.volumeUsd), c.volumeUsd, 'second volume');
        expect(u(SecondU32.txns)).toBe(c.txns);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it('keeps every rolling window equal to a recomputation, before and after the clock moves on', () => {
    for (const now of [GENESIS + HISTORY_HOURS * HOUR, GENESIS + HISTORY_HOURS * HOUR + 7 * HOUR + 1234]) {
      views.chainClock.fill(now);
      shards.sweep(ingest.registry.networks.length);
      let nonZero = 0;
      const state = createPoolState();
      for (const [id] of ref.pools) {
        if (windowAsOf(views, 0, id) === 0) continue; // never traded
        expect(readPool(views, id, state)).toBe(true);
        WINDOWS.forEach((w, wi) => {
          const exp = ref.window(id, w.seconds, w.base, now);
          close(state.winVolumeUsd[wi]!, exp.volumeUsd, `pool ${id} ${w.name} volume at ${now}`);
          close(state.winBuyVolumeUsd[wi]!, exp.buyVolumeUsd, `pool ${id} ${w.name} buy volume`);
          expect(state.winTxns[wi], `pool ${id} ${w.name} txns`).toBe(exp.txns);
          expect(state.winBuys[wi], `pool ${id} ${w.name} buys`).toBe(exp.buys);
          close(state.winPriceChange[wi]!, exp.priceChange, `pool ${id} ${w.name} price change`);
          if (exp.txns > 0) nonZero++;
        });
      }
      expect(nonZero).toBeGreaterThan(100);
    }
  });

  it('ignores events it has already ingested', async () => {
    const head = ingest.head;
    const before = Buffer.from(views.buffers.columns['ring.1m.candles']!.slice(0)).toString('base64');
    const txnsBefore = views.txnsTotal.reduce((a, b) => a + b, 0);
    for (const batches of fed.slice(0, 10)) {
      const r = await ingest.ingest(batches);
      expect(r.accepted).toBe(0);
      await r.applied;
    }
    expect(ingest.head).toBe(head);
    expect(views.txnsTotal.reduce((a, b) => a + b, 0)).toBe(txnsBefore);
    expect(Buffer.from(views.buffers.columns['ring.1m.candles']!.slice(0)).toString('base64')).toBe(before);
  });

  it('stores every swap, add and remove, and prunes exactly those past retention', async () => {
    const kinds = new Set(['swap', 'mint', 'burn']);
    const fromLog = events.filter((e) => kinds.has(e.kind)) as (DecodedEvent & { timestamp: number })[];
    expect(store.txs.getCount()).toBe(fromLog.length);
    const cutoff = GENESIS + 30 * HOUR;
    const chains = ingest.registry.networks.map((n) => n.index);
    const removed = await pruneTransactions(store, views, chains, cutoff);
    expect(removed).toBe(fromLog.filter((e) => e.timestamp < cutoff).length);
    expect(store.txs.getCount()).toBe(fromLog.filter((e) => e.timestamp >= cutoff).length);
    for (const { value } of store.txs.getRange()) expect(value[10] as number).toBeGreaterThanOrEqual(cutoff);
  });

  it('prunes the same transactions when it skips the pools whose oldest kept one is inside the window', async () => {
    const kinds = new Set(['swap', 'mint', 'burn']);
    const fromLog = events.filter((e) => kinds.has(e.kind)) as (DecodedEvent & { timestamp: number })[];
    const chains = ingest.registry.networks.map((n) => n.index);
    const keptFrom = new Uint32Array(views.capacity.pools);
    let last = GENESIS + 30 * HOUR;
    for (const hours of [31, 31, 33, 40]) {
      const cutoff = GENESIS + hours * HOUR;
      const removed = await pruneTransactions(store, views, chains, cutoff, keptFrom);
      expect(removed).toBe(fromLog.filter((e) => e.timestamp >= last && e.timestamp < cutoff).length);
      expect(store.txs.getCount()).toBe(fromLog.filter((e) => e.timestamp >= cutoff).length);
      last = cutoff;
    }
    expect(fromLog.filter((e) => e.timestamp >= GENESIS + 31 * HOUR && e.timestamp < GENESIS + 40 * HOUR).length).toBeGreaterThan(0);
  });

  it('interval table matches the ring layout', () => {
    expect(IVS).toEqual(views.rings.map((r) => r.seconds));
  });
});
