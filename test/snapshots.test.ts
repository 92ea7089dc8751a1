/**
 * Snapshots of the engine's views: a start that loads one and replays the log after it must hold
 * exactly what a start that replays the whole log holds, column by column; a snapshot file cut
 * short (a kill -9 while it was written) is never loaded.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import type * as EngineModule from '../engine/engine.js';
import type * as LogModule from '../engine/log.js';
import type { Engine } from '../engine/engine.js';
import { columnTableHash, keptColumns, usedBytes, type SnapshotHeader } from '../engine/snapshot/format.js';
import { ROW_WINDOW_FIGURES, ROW_WINDOWS } from '../engine/search/figures.js';
import { rowWindowValue, windowAsOf } from '../engine/state/window-slots.js';
import { WINDOW_BASES, WINDOWS } from '../engine/state/layout.js';
import { readHeader, restoreRows } from '../engine/snapshot/load.js';
import { EngineViews } from '../engine/state/views.js';
import { poolReserve } from '../engine/state/reserve-price.js';
import { CANDLE_WORDS, candleValue } from '../engine/state/candle-record.js';
import { shardRowColumns } from '../engine/snapshot/capture.js';
import { createSimulator } from '../engine/sources/simulator/index.js';
import { catalogDump } from './support/catalog-dump.js';
import { decodeSupply } from '../engine/catalog/catalog.js';
import { heldCandles, token1Changes } from './support/held-candles.js';
import { settle } from './support/settle.js';

// The compiled engine (npm test builds first): its shard threads load their compiled entry.
const { startEngine } = (await import('../dist/engine/engine.js' as string)) as typeof EngineModule;
const { createLog } = (await import('../dist/engine/log.js' as string)) as typeof LogModule;

const HOUR = 3600;
const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z
const CAPACITY = { pools: 4096, tokens: 4096, chains: 16 };
const SIM = { seed: 11, pools: 500, genesisTime: GENESIS, swapsPerSecond: 0.5, newPoolsPerHour: 3 };
const dirs: string[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'dexdata-snapshots-'));
  dirs.push(d);
  return d;
}

/**
 * The rows of a block column as format.ts describes version 4: per segment (a shard's pools, in file
 * order) a bit per 4-byte word, least significant first in each u32, and the non-zero words in order.
 */
function sparseBlockRows(file: Buffer, col: { name: string; segments?: readonly { pools: number; maskOffset: number; offset: number; bytes: number }[] }, pools: number, rowBytes: number): Buffer {
  expect(col.segments, `block column ${col.name} is written without its zero words`).toBeDefined();
  const out = Buffer.alloc(pools * rowBytes);
  let row = 0;
  for (const seg of col.segments!) {
    const words = (seg.pools * rowBytes) / 4;
    let kept = 0;
    for (let w = 0; w < words; w++) {
      const bit = (file[seg.maskOffset + (w >> 5) * 4 + ((w & 31) >> 3)]! >> (w & 7)) & 1;
      if (bit === 0) continue;
      file.copy(out, row * rowBytes + w * 4, seg.offset + kept * 4, seg.offset + kept * 4 + 4);
      kept++;
    }
    expect(kept * 4, `block column ${col.name}: the words the mask marks`).toBe(seg.bytes);
    row += seg.pools;
  }
  expect(row).toBe(pools);
  return out;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An engine on the simulator whose clock is `clock.now` (Unix s); `lines` collects its log when given. */
async function engineAt(dir: string, clock: { now: number }, snapshots: boolean, sim: typeof SIM = SIM, lines?: string[]): Promise<Engine> {
  const engine = await startEngine({
    dataDir: dir,
    shards: 2,
    capacity: CAPACITY,
    source: createSimulator(sim),
    now: () => clock.now,
    catchUpStepSeconds: 2 * HOUR,
    liveTickMs: 20,
    snapshots: snapshots ? { intervalSeconds: 86_400, everyEvents: Number.MAX_SAFE_INTEGER, keep: 10, pruneLog: false } : null,
    // Pools quiet for two hours give their rings back: the runs compared let go of them at different moments.
    tiers: { quietAfterSeconds: 2 * HOUR },
    ...(lines ? { log: createLog({ level: 'info', format: 'json', destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) }) } : {}),
  });
  await engine.caughtUp;
  return engine;
}

/** A store whose only snapshot is one cut at `clock.now` (the engine that cut it stopped): its directory, the engine, the cut's batch and file. */
async function singleSnapshot(clock: { now: number }): Promise<{ dir: string; first: Engine; seq: number; path: string; name: string; bytes: Buffer; header: SnapshotHeader }> {
  const dir = tempDir();
  const first = await engineAt(dir, clock, true);
  const seq = (await first.snapshot())!;
  await first.stop();
  const snaps = join(dir, 'snapshots');
  const name = `${String(seq).padStart(12, '0')}.snap`;
  for (const n of readdirSync(snaps)) if (n !== name) rmSync(join(snaps, n));
  const path = join(snaps, name);
  return { dir, first, seq, path, name, bytes: readFileSync(path), header: readHeader(path) };
}

/**
 * Every kept column's rows in use, as bytes by column name; each pool's ranked window figures; the candles each pool's rings hold, by
 * interval, from its ring block or, for a pool that went quiet, from LMDB; and token 1's window price
 * changes as readers see them (kept per pool only while it is quiet: winRefPrice1).
 */
function viewBytes(engine: Engine): Map<string, Buffer> {
  const { views } = engine;
  const out = new Map<string, Buffer>();
  for (const c of keptColumns(views.columnTable)) {
    if (c.name.startsWith('winRefPrice1.')) continue;
    out.set(c.name, Buffer.from(usedBytes(c, views.poolCount, views.tokenCount, views.capacity.chains)));
  }
  // The window figures search ranks by, per pool, wherever they are kept (a window slot, or none: window-slots.ts).
  for (const f of ROW_WINDOW_FIGURES) {
    for (const w of ROW_WINDOWS[f]) out.set(`window ${f} ${w}`, Buffer.from(Float64Array.from({ length: views.poolCount }, (_, p) => rowWindowValue(views, f, w, p)).buffer));
  }
  // The minute each pool's window figures are as of, per window base, wherever it is kept.
  for (let b = 0; b < WINDOW_BASES.length; b++) out.set(`window as of ${b}`, Buffer.from(Uint32Array.from({ length: views.poolCount }, (_, p) => windowAsOf(views, b, p)).buffer));
  for (const [interval, values] of heldCandles(views, engine.store)) out.set(`held candles ${interval}`, Buffer.from(Float64Array.from(values).buffer));
  out.set('token 1 price changes', Buffer.from(Float64Array.from(token1Changes(views)).buffer));
  return out;
}

function expectSameViews(actual: Map<string, Buffer>, expected: Map<string, Buffer>): void {
  expect([...actual.keys()]).toEqual([...expected.keys()]);
  for (const [name, bytes] of expected) {
    const got = actual.get(name)!;
    if (got.equals(bytes)) continue;
    let i = 0;
    while (i < bytes.length && got[i] === bytes[i]) i++;
    expect.fail(`column ${name} differs from byte ${i} of ${bytes.length} (${got.length} bytes in the other)`);
  }
}

/** Writes `oldHeader` over the header of file `old` (the cut `header`'s bytes with other columns): it must fit before the first section. */
function writeHeaderInPlace(old: Buffer, header: SnapshotHeader, oldHeader: SnapshotHeader): void {
  expect(oldHeader.tableHash).not.toBe(header.tableHash);
  const json = Buffer.from(JSON.stringify(oldHeader));
  expect(12 + json.length).toBeLessThanOrEqual(header.columns[0]!.offset);
  old.fill(0, 12, header.columns[0]!.offset);
  old.writeUInt32LE(json.length, 8);
  json.copy(old, 12);
}

/**
 * An older file made from cut `now` (its header `header`): the cut's sections moved down behind a
 * longer header, then what `extra` appends (at offsets relative to where the sections start), then
 * the end mark. `describe(moved, base, bytes)` gives the older file's header from the cut's, every
 * offset moved to the sections' new start `base`, the file being `bytes` long.
 */
function olderFile(now: Buffer, header: SnapshotHeader, extra: (append: (b: ArrayBufferView) => number) => void, describe: (moved: SnapshotHeader, base: number, bytes: number) => SnapshotHeader): { old: Buffer; oldHeader: SnapshotHeader } {
  const first = header.columns[0]!.offset;
  const parts: Buffer[] = [];
  let at = 0;
  const append = (b: ArrayBufferView) => {
    const pad = (8 - (at % 8)) % 8;
    parts.push(Buffer.alloc(pad), Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    at += pad;
    const offset = at;
    at += b.byteLength;
    return offset;
  };
  append(now.subarray(first, now.length - 8));
  extra(append);
  parts.push(Buffer.from('DXSNAPOK', 'latin1'));
  const draft = (base: number) => {
    const shift = base - first;
    const move = (x: unknown): unknown =>
      Array.isArray(x) ? x.map(move) : x !== null && typeof x === 'object' ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, (k === 'offset' || k === 'maskOffset') && typeof v === 'number' ? v + shift : move(v)])) : x;
    return describe(move(header) as SnapshotHeader, base, base + at + 8);
  };
  let base = first;
  while (12 + Buffer.byteLength(JSON.stringify(draft(base))) > base) base += 4096;
  const oldHeader = draft(base);
  expect(oldHeader.tableHash).not.toBe(header.tableHash);
  const json = Buffer.from(JSON.stringify(oldHeader));
  const start = Buffer.alloc(base);
  now.copy(start, 0, 0, 8);
  start.writeUInt32LE(json.length, 8);
  json.copy(start, 12);
  const old = Buffer.concat([start, ...parts]);
  expect(old.length).toBe(oldHeader.bytes);
  return { old, oldHeader };
}

/** A copy of the store in `dir` whose snapshot file `name` is `bytes` instead (an older version's file of the same cut). */
function storeWithFile(dir: string, name: string, bytes: Buffer): { other: string; oldPath: string } {
  const other = tempDir();
  cpSync(dir, other, { recursive: true });
  const oldPath = join(other, 'snapshots', name);
  writeFileSync(oldPath, bytes);
  return { other, oldPath };
}

/**
 * Starts an engine on the cut as written (`dir`) and one on the same cut converted from an older
 * layout (`other`): both load snapshot `seq`, the converted one replays nothing, logs `conversion`,
 * and holds the same views.
 */
async function startBothOn(dir: string, other: string, clock: { now: number }, seq: number, conversion: string): Promise<{ onNow: Engine; onOld: Engine }> {
  const onNow = await engineAt(dir, clock, true);
  expect(onNow.status().loadedSnapshot).toBe(seq);
  const lines: string[] = [];
  const onOld = await engineAt(other, clock, true, SIM, lines);
  expect(onOld.status().loadedSnapshot).toBe(seq);
  expect(onOld.status().replayedBatches).toBe(0);
  expect(lines.join('\n')).toContain(conversion);
  expectSameViews(viewBytes(onOld), viewBytes(onNow));
  return { onNow, onOld };
}

/**
 * After a start on a converted snapshot (`onOld`, data in `dir`) and one on the same cut as written
 * (`onNow`): both run on, the same hours later they hold the same views, and the converted one's
 * first cut is written whole, in this version's table. Stops both.
 */
async function expectRunOnAlike(onNow: Engine, onOld: Engine, dir: string, clock: { now: number }, tableHash: string): Promise<void> {
  clock.now += 3 * HOUR;
  await settle(onNow, clock, true);
  await settle(onOld, clock, true);
  expectSameViews(viewBytes(onOld), viewBytes(onNow));
  const next = (await onOld.snapshot())!;
  expect((onOld.stats() as { snapshots: { last_delta: boolean | null } }).snapshots.last_delta).toBe(false);
  expect(readHeader(join(dir, 'snapshots', `${String(next).padStart(12, '0')}.snap`)).tableHash).toBe(tableHash);
  expectFileIsViews(onOld, dir, next, 'the first cut after the conversion');
  await onNow.stop();
  await onOld.stop();
}

/**
 * The snapshot file of log batch `seq` in `dir` holds exactly the engine's views (the clock standing
 * still since the cut): every kept column, and each pool's ring block rows. Returns the pools it lists
 * holding a block.
 */
function expectFileIsViews(engine: Engine, dir: string, seq: number, label: string): Int32Array {
  // The clock stands still: the views are as the cut took them. Every kept column of the file equals them.
  const path = join(dir, 'snapshots', `${String(seq).padStart(12, '0')}.snap`);
  const header = readHeader(path);
  const file = readFileSync(path);
  const { views } = engine;
  for (const c of keptColumns(views.columnTable)) {
    const col = header.columns.find((x) => x.name === c.name)!;
    const want = Buffer.from(usedBytes(c, header.pools, header.tokens, views.capacity.chains));
    const got = file.subarray(col.offset, col.offset + col.bytes);
    if (!got.equals(want)) {
      let i = 0;
      while (i < want.length && got[i] === want[i]) i++;
      expect.fail(`${label}: column ${c.name} of the snapshot differs from the views at byte ${i} of ${want.length}`);
    }
  }
  // The ring blocks and window slots (those of pools changed since the previous cut copied, the
  // rest taken from the previous file): each pool the file lists holds one, with the same rows, and
  // every pool holding one is listed.
  const listed = (section: SnapshotHeader['blocks'], held: Int32Array, what: string): Int32Array => {
    const pools = new Int32Array(file.buffer.slice(file.byteOffset + section.offset, file.byteOffset + section.offset + section.pools * 4));
    expect(new Set(pools).size).toBe(pools.length);
    let holding = 0;
    for (let p = 0; p < views.poolCount; p++) if (held[p] !== 0) holding++;
    expect(pools.length, `${label}: pools holding ${what}`).toBe(holding);
    for (const col of section.columns) {
      const spec = views.columnTable.find((c) => c.name === col.name)!;
      const size = spec.stride * spec.array.BYTES_PER_ELEMENT;
      const all = new Uint8Array(spec.array.buffer, spec.array.byteOffset, spec.array.byteLength);
      const rows = sparseBlockRows(file, col, pools.length, size);
      pools.forEach((p, i) => {
        const b = held[p]! - 1;
        expect(b, `pool ${p} holds ${what}`).toBeGreaterThanOrEqual(0);
        const got = rows.subarray(i * size, (i + 1) * size);
        if (!got.equals(all.subarray(b * size, (b + 1) * size))) expect.fail(`${label}: column ${col.name} of pool ${p} differs from the views`);
      });
    }
    return pools;
  };
  listed(header.windowSlots, views.poolWindowSlot, 'a window slot');
  return listed(header.blocks, views.poolBlock, 'a ring block');
}

describe('snapshots', () => {
  it('a start from a snapshot plus the log after it holds exactly what a full replay holds, view by view', async () => {
    const dir = tempDir();
    const clock = { now: GENESIS + 30 * HOUR };
    const first = await engineAt(dir, clock, true);
    const cut = await first.snapshot();
    expect(cut).toBeGreaterThan(0);
    const cutPools = first.registry.poolCount;
    // Twelve more hours, in steps: candles leave their rings, new pools appear, windows move.
    clock.now += 12 * HOUR;
    await settle(first, clock);
    expect(first.status().logHead).toBeGreaterThan(cut!);
    await first.stop();
    // Keep only the snapshot of the cut: the next start loads it and replays the twelve hours after it.
    for (const name of readdirSync(join(dir, 'snapshots'))) if (!name.startsWith(String(cut).padStart(12, '0'))) rmSync(join(dir, 'snapshots', name));

    const fromSnapshot = await engineAt(dir, clock, true);
    await settle(fromSnapshot, clock);
    expect(fromSnapshot.status().loadedSnapshot).toBe(cut);
    expect(fromSnapshot.status().replayedBatches).toBe(fromSnapshot.status().logHead - cut!);
    const a = viewBytes(fromSnapshot);
    const catalogA = catalogDump(fromSnapshot.registry);
    const quietA = (fromSnapshot.stats() as { pools_quiet: number }).pools_quiet;
    await fromSnapshot.stop();

    const fullReplay = await engineAt(dir, clock, false);
    await settle(fullReplay, clock);
    expect(fullReplay.status().loadedSnapshot).toBe(0);
    expect(fullReplay.status().replayedBatches).toBe(fullReplay.status().logHead);
    const b = viewBytes(fullReplay);
    const catalogB = catalogDump(fullReplay.registry);
    const quietB = (fullReplay.stats() as { pools_quiet: number }).pools_quiet;
    await fullReplay.stop();

    expect(a.get('counts')!.readInt32LE(0)).toBeGreaterThan(SIM.pools * 0.85);
    expect(quietA).toBeGreaterThan(0);
    expect(quietB).toBeGreaterThan(0);
    expectSameViews(a, b);
    // The catalog restored from the snapshot, plus the records made after it, answers as one rebuilt from every record.
    expect(catalogA.counts[0]).toBeGreaterThan(cutPools);
    expect(catalogA).toEqual(catalogB);
  }, 240_000);

  it('a start from a snapshot behind a run whose quiet pools traded again the same day and handed their open candles over again holds exactly what that run held', async () => {
    const dir = tempDir();
    // A quieter market, from 02:00 of the second day: pools go quiet for two hours, open day candles included, and many trade again later that day.
    const sim = { ...SIM, swapsPerSecond: 0.2 };
    const clock = { now: GENESIS + 26 * HOUR };
    const first = await engineAt(dir, clock, true, sim);
    const hours = async (engine: Engine, n: number) => {
      for (let h = 0; h < n; h++) {
        clock.now += HOUR;
        await settle(engine, clock, true);
      }
    };
    await hours(first, 4);
    const cut = (await first.snapshot())!;
    expect(cut).toBeGreaterThan(0);
    // Twelve more hours of the same day: the run goes further than the snapshot.
    await hours(first, 12);
    const live = viewBytes(first);
    // Pools that handed open candles over before the cut and again after it: the store now holds their
    // open candles with swaps a start from the cut has yet to apply.
    const batches = new Map<number, number[]>();
    for (const { key, value } of first.store.parked.getRange()) {
      const list = batches.get(key[0]) ?? [];
      list.push(value[0]!);
      batches.set(key[0], list);
    }
    const again = [...batches.values()].filter((b) => b.some((s) => s <= cut) && b.some((s) => s > cut)).length;
    expect(again).toBeGreaterThan(5);
    await first.stop();
    for (const name of readdirSync(join(dir, 'snapshots'))) if (!name.startsWith(String(cut).padStart(12, '0'))) rmSync(join(dir, 'snapshots', name));

    const restarted = await engineAt(dir, clock, true, sim);
    try {
      await settle(restarted, clock, true);
      expect(restarted.status().loadedSnapshot).toBe(cut);
      expectSameViews(viewBytes(restarted), live);
    } finally {
      await restarted.stop();
    }
  }, 240_000);

  it('a snapshot written over the one before it (only the rows changed since copied) holds exactly the views at its cut', async () => {
    const dir = tempDir();
    const clock = { now: GENESIS + 20 * HOUR };
    const engine = await engineAt(dir, clock, true);
    let stopped = false;
    type Snap = { last_delta: boolean | null; last_rows_copied: number | null; last_blocks_copied: number | null; last_blocks_kept: number | null };
    const snap = () => (engine.stats() as { snapshots: Snap }).snapshots;
    try {
      expect(await engine.snapshot()).toBeGreaterThan(0);
      // The first cut of a process that loaded none copies every row, ring block and window slot.
      expect(snap().last_delta).toBe(false);
      expect(snap().last_blocks_kept).toBe(0);
      const all = snap().last_rows_copied!;
      expect(all).toBeGreaterThan(SIM.pools * 0.85);
      // More cuts, each after hours in which some pools traded, new ones appeared and others went
      // quiet, or seconds in which a few traded (a cut then takes most ring blocks from the file before).
      let kept = 0;
      for (const seconds of [HOUR, 20, 3 * HOUR, 30, 5 * HOUR]) {
        clock.now += seconds;
        await settle(engine, clock, true);
        const seq = (await engine.snapshot())!;
        expect(snap().last_delta).toBe(true);
        const copied = snap().last_rows_copied!;
        // Pools that traded within the longest window (30 days: here every one that ever traded) are
        // written each minute their windows move; those that never did (and, on a real network, the
        // many that have not for 30 days) are not copied again.
        expect(copied).toBeGreaterThan(0);
        expect(copied).toBeLessThan(all);
        const hot = expectFileIsViews(engine, dir, seq, `after ${seconds} s`);
        expect(hot.length).toBeGreaterThan(0);
        expect(snap().last_blocks_copied! + snap().last_blocks_kept!).toBe(hot.length);
        if (seconds < 60) {
          // Seconds after a cut, most pools holding a block have not been written since.
          expect(snap().last_blocks_kept!, `ring blocks taken from the file before, ${seconds} s after it`).toBeGreaterThan(hot.length / 2);
          kept += snap().last_blocks_kept!;
        }
      }
      expect(kept).toBeGreaterThan(0);
      // A start on the one written at the stop (a delta cut too) holds what the engine held.
      const before = viewBytes(engine);
      stopped = true;
      await engine.stop();
      const again = await engineAt(dir, clock, true);
      try {
        expect(again.status().replayedBatches).toBe(0);
        expectSameViews(viewBytes(again), before);
      } finally {
        await again.stop();
      }
    } finally {
      if (!stopped) await engine.stop();
    }
  }, 240_000);

  it('after the first (full) cut, the capture buffers the shards keep follow the rows delta cuts copy, and the files still hold exactly the views', async () => {
    const dir = tempDir();
    const clock = { now: GENESIS + 20 * HOUR };
    // Few swaps among many pools: most never trade, so a delta cut copies far fewer rows than the full one.
    const sim = { ...SIM, pools: 2000, swapsPerSecond: 0.002 };
    const engine = await engineAt(dir, clock, true, sim);
    type Snap = { last_delta: boolean | null; last_pools_copied: number | null; last_tokens_copied: number | null; capture_buffer_bytes: { rows: number; blocks: number } | null };
    const snap = () => (engine.stats() as { snapshots: Snap }).snapshots;
    const rowBytes = (scope: 'pool' | 'token') => shardRowColumns(engine.views.columnTable).reduce((n, c) => n + (c.scope === scope ? c.stride * c.array.BYTES_PER_ELEMENT : 0), 0);
    const copiedBytes = () => snap().last_pools_copied! * rowBytes('pool') + snap().last_tokens_copied! * rowBytes('token');
    // Per shard and column, a buffer is at most twice the room (a quarter more, whole 8-byte words) of what the delta cuts so far needed.
    const slack = 2 * 2 * 8 * shardRowColumns(engine.views.columnTable).length;
    try {
      expect(await engine.snapshot()).toBeGreaterThan(0);
      expect(snap().last_delta).toBe(false);
      const full = snap().capture_buffer_bytes!.rows;
      expect(full).toBeGreaterThanOrEqual(copiedBytes());
      let deltaBytes = 0;
      for (const hours of [1, 2, 1]) {
        clock.now += hours * HOUR;
        await settle(engine, clock, true);
        const seq = (await engine.snapshot())!;
        expect(snap().last_delta).toBe(true);
        deltaBytes += copiedBytes();
        expect(deltaBytes, 'the delta cuts copy far fewer rows than the full one').toBeLessThan(full / 5);
        expect(snap().capture_buffer_bytes!.rows, `capture buffers for rows after the delta cut ${hours} h later`).toBeLessThanOrEqual(2 * 1.25 * deltaBytes + slack);
        expectFileIsViews(engine, dir, seq, `after ${hours} h`);
      }
    } finally {
      await engine.stop();
    }
  }, 240_000);

  it('a snapshot file cut short, as a kill -9 leaves it, is never loaded: the start falls back to the one before', async () => {
    const dir = tempDir();
    const clock = { now: GENESIS + 20 * HOUR };
    const first = await engineAt(dir, clock, true);
    const older = (await first.snapshot())!;
    clock.now += 4 * HOUR;
    await settle(first, clock);
    const newer = (await first.snapshot())!;
    expect(newer).toBeGreaterThan(older);
    await first.stop();
    const snaps = join(dir, 'snapshots');
    const newest = join(snaps, `${String(newer).padStart(12, '0')}.snap`);
    const whole = readFileSync(newest);
    // Cut at several points, as a write stopped there leaves it: under the temporary name (always the
    // case for a kill -9 mid-write), or even under the final name.
    for (const at of [0, 11, 200, Math.floor(whole.length / 3), whole.length - 1]) {
      for (const name of readdirSync(snaps)) if (name !== `${String(older).padStart(12, '0')}.snap`) rmSync(join(snaps, name));
      writeFileSync(`${newest}.tmp`, whole.subarray(0, at));
      writeFileSync(newest, whole);
      truncateSync(newest, at);
      const lines: string[] = [];
      const engine = await startEngine({
        dataDir: dir,
        shards: 1,
        capacity: CAPACITY,
        source: createSimulator(SIM),
        now: () => clock.now,
        snapshots: { intervalSeconds: 86_400, everyEvents: Number.MAX_SAFE_INTEGER, keep: 10, pruneLog: false },
        log: createLog({ level: 'info', format: 'json', destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) }),
      });
      expect(engine.status().loadedSnapshot, `cut at byte ${at}`).toBe(older);
      expect(lines.some((l) => l.includes('skipped'))).toBe(true);
      // The temporary file of the interrupted write is gone.
      expect(readdirSync(snaps).some((n) => n.endsWith('.tmp'))).toBe(false);
      await engine.caughtUp;
      // stop() leaves a complete snapshot of the head in place of the broken one.
      await engine.stop();
      expect(statSync(newest).size).toBeGreaterThan(0);
    }
  }, 240_000);
  it('a start on a snapshot written before ring blocks were kept without their zero words (format 3) holds exactly what a start on the same cut in format 4 holds', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, bytes: v4, header } = await singleSnapshot(clock);
    expect(header.version).toBe(4);
    expect(header.blocks.pools).toBeGreaterThan(0);
    // The same cut in format 3: each block column's rows whole, appended after the sections, the
    // header saying so (it is shorter, so it fits where the format 4 header was).
    const end = v4.length - 8;
    const parts: Buffer[] = [v4.subarray(0, end)];
    let at = end;
    const columns = header.blocks.columns.map((col) => {
      const spec = first.views.columnTable.find((c) => c.name === col.name)!;
      const rows = sparseBlockRows(v4, col as Parameters<typeof sparseBlockRows>[1], header.blocks.pools, spec.stride * spec.array.BYTES_PER_ELEMENT);
      const pad = (8 - (at % 8)) % 8;
      parts.push(Buffer.alloc(pad), rows);
      at += pad;
      const out = { name: col.name, offset: at, bytes: rows.length };
      at += rows.length;
      return out;
    });
    parts.push(Buffer.from('DXSNAPOK', 'latin1'));
    const v3 = Buffer.concat(parts);
    const json = Buffer.from(JSON.stringify({ ...header, version: 3, bytes: v3.length, blocks: { ...header.blocks, columns } }));
    expect(12 + json.length).toBeLessThanOrEqual(header.columns[0]!.offset);
    v3.fill(0, 12, header.columns[0]!.offset);
    v3.writeUInt32LE(json.length, 8);
    json.copy(v3, 12);
    const other = tempDir();
    cpSync(dir, other, { recursive: true });
    writeFileSync(join(other, 'snapshots', `${String(seq).padStart(12, '0')}.snap`), v3);

    const on4 = await engineAt(dir, clock, true);
    expect(on4.status().loadedSnapshot).toBe(seq);
    const want = viewBytes(on4);
    await on4.stop();
    const on3 = await engineAt(other, clock, true);
    expect(on3.status().loadedSnapshot).toBe(seq);
    expect(on3.status().replayedBatches).toBe(0);
    expectSameViews(viewBytes(on3), want);
    await on3.stop();
    // Its stop wrote nothing new (nothing happened since): the format 3 file is still the one kept.
    expect(readHeader(join(other, 'snapshots', `${String(seq).padStart(12, '0')}.snap`)).version).toBe(3);
  }, 240_000);
  it('a start on a snapshot written when event times were f64 converts them: it holds what a start on the same cut holds, a rollback restores rows from it, and the next cut is written whole', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, name, bytes: now, header } = await singleSnapshot(clock);
    const table = first.views.columnTable;
    // The columns earlier versions wrote as f64 (Unix seconds): the same values, eight bytes each, appended after the sections.
    const times = ['lastEventTime', 'lastSwapTime', 'reserveTime', 'tokenPriceTime'];
    for (const t of times) expect(table.find((c) => c.name === t)?.type, t).toBe('u32');
    const parts: Buffer[] = [now.subarray(0, now.length - 8)];
    let at = now.length - 8;
    let nonZero = 0;
    const columns = header.columns.map((col) => {
      if (!times.includes(col.name)) return col;
      const u32 = new Uint32Array(now.buffer.slice(now.byteOffset + col.offset, now.byteOffset + col.offset + col.bytes));
      for (const v of u32) if (v > GENESIS) nonZero++;
      const f64 = Buffer.from(Float64Array.from(u32).buffer);
      const pad = (8 - (at % 8)) % 8;
      parts.push(Buffer.alloc(pad), f64);
      at += pad;
      const out = { ...col, type: 'f64' as const, offset: at, bytes: f64.length };
      at += f64.length;
      return out;
    });
    expect(nonZero, 'event times in the converted columns').toBeGreaterThan(SIM.pools);
    parts.push(Buffer.from('DXSNAPOK', 'latin1'));
    const old = Buffer.concat(parts);
    const earlierTable = table.map((c) => (times.includes(c.name) ? { ...c, type: 'f64' as const } : c));
    const oldHeader: SnapshotHeader = { ...header, tableHash: columnTableHash(earlierTable), bytes: old.length, columns };
    writeHeaderInPlace(old, header, oldHeader);
    const { other, oldPath } = storeWithFile(dir, name, old);

    // A rollback behind the snapshot copies some pools' and tokens' rows from it: the same rows from either file.
    const restored = (file: string) => {
      const views = EngineViews.create(CAPACITY);
      const pools = [0, 3, 7, 42, 199, header.pools - 1];
      const tokens = [0, 1, 5, 77, header.tokens - 1];
      restoreRows(file, views, pools, tokens);
      return times.map((t) => Buffer.from(usedBytes(views.columnTable.find((c) => c.name === t)!, header.pools, header.tokens, CAPACITY.chains)));
    };
    const rowsNow = restored(path);
    expect(rowsNow.some((b) => b.some((x) => x !== 0))).toBe(true);
    expect(restored(oldPath)).toEqual(rowsNow);

    const { onNow, onOld } = await startBothOn(dir, other, clock, seq, 'lastEventTime (f64 to u32)');

    await expectRunOnAlike(onNow, onOld, other, clock, header.tableHash);
  }, 240_000);
  it('a start on a snapshot written when candle rings were kept a column per field puts them into the candle records: it holds what a start on the same cut holds, a rollback restores ring blocks from it, and the next cut is written whole', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, name, bytes: now, header } = await singleSnapshot(clock);
    const table = first.views.columnTable;
    expect(header.blocks.pools).toBeGreaterThan(0);
    // How earlier versions kept a ring: a column per candle field, in this order, a slot per candle.
    const FIELDS = [['time', 'u32'], ['open0', 'f64'], ['high0', 'f64'], ['low0', 'f64'], ['close0', 'f64'], ['open1', 'f64'], ['high1', 'f64'], ['low1', 'f64'], ['close1', 'f64'], ['volumeUsd', 'f64'], ['buyVolumeUsd', 'f64'], ['txns', 'u32'], ['buys', 'u32']] as const;
    const ringOf = (n: string) => /^ring\.([^.]+)\.candles$/.exec(n)?.[1];
    const ringDigests = (views: EngineViews) =>
      views.columnTable.filter((c) => ringOf(c.name) !== undefined).map((c) => `${c.name} ${createHash('sha256').update(new Uint8Array(c.array.buffer, c.array.byteOffset, c.array.byteLength)).digest('hex')}`);
    const earlierTable = table.flatMap((c): Parameters<typeof columnTableHash>[0][number][] => {
      const iv = ringOf(c.name);
      const slots = c.stride / CANDLE_WORDS;
      return iv === undefined ? [c] : FIELDS.map(([f, type]) => ({ name: `ring.${iv}.${f}`, type, scope: 'block' as const, stride: slots, transient: false }));
    });
    expect(earlierTable.length).toBe(table.length + 9 * 12);
    // The old file: this cut's sections moved down to make room for the longer header, the per-field
    // ring columns (each shard's rows without their zero words) appended after them.
    const sparse = (words: Uint32Array) => {
      const mask = new Uint32Array(Math.ceil(words.length / 32));
      const kept: number[] = [];
      words.forEach((w, i) => {
        if (w === 0) return;
        mask[i >> 5] = mask[i >> 5]! | (1 << (i & 31));
        kept.push(w);
      });
      return { mask, kept: Uint32Array.from(kept) };
    };
    const ringFieldsSeen = new Set<string>();
    type OldBlockColumn = { name: string; moved: boolean } & Record<string, unknown>;
    let blockColumnsOld: OldBlockColumn[] = [];
    const { old } = olderFile(now, header, (append) => {
      blockColumnsOld = header.blocks.columns.flatMap((col): OldBlockColumn[] => {
        const iv = ringOf(col.name);
        if (iv === undefined) return [{ ...col, moved: true }];
        const spec = table.find((c) => c.name === col.name)!;
        const slots = spec.stride / CANDLE_WORDS;
        const segs = (col as unknown as { segments: { pools: number; maskOffset: number; offset: number; bytes: number }[] }).segments;
        const records = segs.map((seg) => {
          const b = sparseBlockRows(now, { name: col.name, segments: [seg] }, seg.pools, spec.stride * 8);
          return { pools: seg.pools, ring: { cells: new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), words: new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)) } };
        });
        return FIELDS.map(([f, type]) => {
          const segments = records.map(({ pools, ring }) => {
            const values = type === 'f64' ? new Float64Array(pools * slots) : new Uint32Array(pools * slots);
            for (let k = 0; k < values.length; k++) values[k] = candleValue(ring, k, f);
            if (values.some((x) => x !== 0)) ringFieldsSeen.add(f);
            const { mask, kept } = sparse(new Uint32Array(values.buffer));
            const maskOffset = append(mask);
            return { pools, maskOffset, offset: append(kept), bytes: kept.byteLength };
          });
          return { name: `ring.${iv}.${f}`, segments, moved: false };
        });
      });
    }, (moved, base, bytes) => {
      // The block columns kept are the cut's, moved; the per-field ones start at base.
      const columns = blockColumnsOld.map(({ moved: kept, ...c }) => (kept ? moved.blocks.columns.find((m) => m.name === c.name)! : JSON.parse(JSON.stringify(c, (k, v) => ((k === 'offset' || k === 'maskOffset') && typeof v === 'number' ? v + base : v)))));
      return { ...moved, tableHash: columnTableHash(earlierTable), bytes, blocks: { ...moved.blocks, columns } } as SnapshotHeader;
    });
    expect([...ringFieldsSeen].sort()).toEqual(FIELDS.map(([f]) => f).sort());
    const { other, oldPath } = storeWithFile(dir, name, old);

    // A rollback behind the snapshot restores some pools' ring blocks from it: the same candles from either file.
    const restored = (file: string) => {
      const views = EngineViews.create(CAPACITY);
      const pools = [0, 3, 7, 42, 199, 250, header.pools - 1];
      restoreRows(file, views, pools, []);
      const held = pools.filter((p) => views.poolBlock[p] !== 0);
      return { held, rings: ringDigests(views) };
    };
    const ringsNow = restored(path);
    expect(ringsNow.held.length).toBeGreaterThan(0);
    expect(restored(oldPath)).toEqual(ringsNow);

    const { onNow, onOld } = await startBothOn(dir, other, clock, seq, 'candle rings (a column per field to one record column per interval)');
    // Every ring block row too, byte for byte.
    expect(ringDigests(onOld.views)).toEqual(ringDigests(onNow.views));

    await expectRunOnAlike(onNow, onOld, other, clock, header.tableHash);
  }, 240_000);
  it('a start on a snapshot written when the window as-of minutes were in the pool row puts them into the window slots: it holds what a start on the same cut holds, a rollback restores them from it, and the next cut is written whole', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, name, bytes: now, header } = await singleSnapshot(clock);
    const table = first.views.columnTable;
    const asOfNames = table.filter((c) => c.name.startsWith('winAsOf.')).map((c) => c.name);
    expect(asOfNames.length).toBe(WINDOW_BASES.length);
    for (const n of asOfNames) expect(table.find((c) => c.name === n)!.scope, n).toBe('windowSlot');
    // Each pool's minutes as an earlier version kept them in its row: its window slot's, or, without
    // one, the minute its longest window on that base became empty after its last swap (0: never swapped).
    const u32Of = (offset: number, bytes: number) => new Uint32Array(now.buffer.slice(now.byteOffset + offset, now.byteOffset + offset + bytes));
    const lastSwapCol = header.columns.find((c) => c.name === 'lastSwapTime')!;
    const lastSwap = u32Of(lastSwapCol.offset, lastSwapCol.bytes);
    const slotPools = new Int32Array(now.buffer.slice(now.byteOffset + header.windowSlots.offset, now.byteOffset + header.windowSlots.offset + header.windowSlots.pools * 4));
    expect(slotPools.length).toBeGreaterThan(0);
    let slotNotQuiet = 0;
    const rows = asOfNames.map((n, b) => {
      const longest = Math.max(...WINDOW_BASES[b]!.windows.map((w) => WINDOWS[w]!.seconds));
      const row = Uint32Array.from({ length: header.pools }, (_, p) => (lastSwap[p] === 0 ? 0 : lastSwap[p]! - (lastSwap[p]! % 60) + longest));
      const col = header.windowSlots.columns.find((c) => c.name === n)!;
      const inSlots = sparseBlockRows(now, col, slotPools.length, 4);
      slotPools.forEach((p, i) => {
        const m = inSlots.readUInt32LE(i * 4);
        if (m !== row[p]) slotNotQuiet++;
        row[p] = m;
      });
      return row;
    });
    // Pools whose slot holds minutes a pool without one does not read: a conversion that left them out would show.
    expect(slotNotQuiet).toBeGreaterThan(10);
    // The old file: this cut's sections as they are, the slots' as-of columns left out of their section,
    // the row columns appended after the sections.
    const parts: Buffer[] = [now.subarray(0, now.length - 8)];
    let at = now.length - 8;
    const rowColumns = rows.map((row, b) => {
      const pad = (8 - (at % 8)) % 8;
      parts.push(Buffer.alloc(pad), Buffer.from(row.buffer));
      at += pad;
      const col = { name: asOfNames[b]!, type: 'u32' as const, scope: 'pool' as const, stride: 1, offset: at, bytes: row.byteLength };
      at += row.byteLength;
      return col;
    });
    parts.push(Buffer.from('DXSNAPOK', 'latin1'));
    const old = Buffer.concat(parts);
    const earlierTable = table.map((c) => (asOfNames.includes(c.name) ? { ...c, scope: 'pool' as const } : c));
    const oldHeader: SnapshotHeader = {
      ...header,
      tableHash: columnTableHash(earlierTable),
      bytes: old.length,
      columns: [...header.columns, ...rowColumns],
      windowSlots: { ...header.windowSlots, columns: header.windowSlots.columns.filter((c) => !asOfNames.includes(c.name)) },
    };
    writeHeaderInPlace(old, header, oldHeader);
    const { other, oldPath } = storeWithFile(dir, name, old);

    // A rollback behind the snapshot restores some pools' rows and slots from it: the same minutes from either file, those of the old rows.
    const pools = [0, 3, 7, 42, 199, header.pools - 1, ...slotPools.slice(0, 5)];
    const restored = (file: string) => {
      const views = EngineViews.create(CAPACITY);
      restoreRows(file, views, pools, []);
      return asOfNames.map((_, b) => pools.map((p) => windowAsOf(views, b, p)));
    };
    const minutesNow = restored(path);
    expect(minutesNow).toEqual(rows.map((row) => pools.map((p) => row[p]!)));
    expect(restored(oldPath)).toEqual(minutesNow);

    const { onNow, onOld } = await startBothOn(dir, other, clock, seq, 'window as-of minutes (the pool row to the window slots)');
    for (let b = 0; b < rows.length; b++) expect(Uint32Array.from({ length: header.pools }, (_, p) => windowAsOf(onOld.views, b, p))).toEqual(rows[b]);

    await expectRunOnAlike(onNow, onOld, other, clock, header.tableHash);
  }, 240_000);
  it('a start on a snapshot written when the reserves with decimals applied were kept in the pool row leaves them out: it holds what a start on the same cut holds, derives the very values the file kept, a rollback restores rows from it, and the next cut is written whole', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, name, bytes: now, header } = await singleSnapshot(clock);
    const table = first.views.columnTable;
    expect(table.some((c) => c.name === 'reserve0' || c.name === 'reserve1')).toBe(false);
    // What earlier versions kept per pool, as their writer computed it after every reserve change:
    // the raw u128 words summed as a number, over 10^decimals of the pool's token.
    const colOf = (n: string) => header.columns.find((c) => c.name === n)!;
    const bytesOf = (n: string) => now.buffer.slice(now.byteOffset + colOf(n).offset, now.byteOffset + colOf(n).offset + colOf(n).bytes);
    const raw = new Uint32Array(bytesOf('reserveRaw'));
    const decimals = [new Uint8Array(bytesOf('poolDecimals0')), new Uint8Array(bytesOf('poolDecimals1'))];
    const kept = [0, 1].map((side) =>
      Float64Array.from({ length: header.pools }, (_, p) => {
        const w = raw.subarray(p * 8 + side * 4, p * 8 + side * 4 + 4);
        return (w[0]! + w[1]! * 2 ** 32 + w[2]! * 2 ** 64 + w[3]! * 2 ** 96) / 10 ** decimals[side]![p]!;
      }),
    );
    expect(kept[0]!.filter((x) => x > 0).length).toBeGreaterThan(SIM.pools / 2);
    const appended: SnapshotHeader['columns'][number][] = [];
    // The earlier table: each after the column it followed (priceUsd1, then reserve0).
    const at1 = table.findIndex((c) => c.name === 'priceUsd1') + 1;
    const earlierTable = [...table.slice(0, at1), ...[0, 1].map((side) => ({ name: `reserve${side}`, type: 'f64' as const, scope: 'pool' as const, stride: 1, transient: false })), ...table.slice(at1)];
    // The old file: this cut's sections moved down to make room for the longer header, the two
    // columns appended after them.
    const { old } = olderFile(
      now,
      header,
      (append) => kept.forEach((values, side) => (appended[side] = { name: `reserve${side}`, type: 'f64', scope: 'pool', stride: 1, offset: append(values), bytes: values.byteLength })),
      (moved, base, bytes) => ({ ...moved, tableHash: columnTableHash(earlierTable), bytes, columns: [...moved.columns, ...appended.map((c) => ({ ...c, offset: c.offset + base }))] }),
    );
    const { other, oldPath } = storeWithFile(dir, name, old);

    // A rollback behind the snapshot copies some pools' rows from it: the same reserves from either file, those it kept.
    const pools = [0, 3, 7, 42, 199, header.pools - 1];
    const restored = (file: string) => {
      const views = EngineViews.create(CAPACITY);
      // Static columns (ingest's) stay in the views through a rollback: the decimals are there.
      views.poolDecimals0.set(decimals[0]!);
      views.poolDecimals1.set(decimals[1]!);
      restoreRows(file, views, pools, []);
      return [0, 1].map((side) => pools.map((p) => poolReserve(views, p, side as 0 | 1)));
    };
    const reservesNow = restored(path);
    expect(reservesNow).toEqual(kept.map((values) => pools.map((p) => values[p]!)));
    expect(restored(oldPath)).toEqual(reservesNow);

    const { onNow, onOld } = await startBothOn(dir, other, clock, seq, 'reserve0 and reserve1 (left out: derived on read)');
    // Every pool's reserves, derived from its raw words, are the very values the older file kept, bit for bit.
    for (const side of [0, 1] as const) expect(Buffer.from(Float64Array.from({ length: header.pools }, (_, p) => poolReserve(onOld.views, p, side)).buffer).equals(Buffer.from(kept[side]!.buffer))).toBe(true);

    await expectRunOnAlike(onNow, onOld, other, clock, header.tableHash);
  }, 240_000);
  it('a start on a snapshot written when the rings counted their candles in pool columns puts the counts into the ring blocks: it holds what a start on the same cut holds, a rollback restores ring blocks from it, and the next cut is written whole', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, name, bytes: now, header } = await singleSnapshot(clock);
    const table = first.views.columnTable;
    expect(header.blocks.pools).toBeGreaterThan(0);
    // How earlier versions kept the counts: a pool column `ring.<iv>.opened` (u32) before each ring's record column, none in the blocks.
    const ringOf = (n: string) => /^ring\.([^.]+)\.candles$/.exec(n)?.[1];
    const intervals = table.map((c) => ringOf(c.name)).filter((iv): iv is string => iv !== undefined);
    expect(intervals.length).toBe(9);
    const earlierTable = table.flatMap((c): Parameters<typeof columnTableHash>[0][number][] => {
      if (c.name === 'ring.opened') return [];
      const iv = ringOf(c.name);
      return iv === undefined ? [c] : [{ name: `ring.${iv}.opened`, type: 'u32', scope: 'pool', stride: 1, transient: false }, c];
    });
    expect(earlierTable.length).toBe(table.length + 8);
    // The counts of the pools the cut lists holding a block, from its `ring.opened` rows (16 words a block, interval i at word i).
    const hot = new Int32Array(now.buffer.slice(now.byteOffset + header.blocks.offset, now.byteOffset + header.blocks.offset + header.blocks.pools * 4));
    const openedCol = header.blocks.columns.find((c) => c.name === 'ring.opened')!;
    const rows = sparseBlockRows(now, openedCol as Parameters<typeof sparseBlockRows>[1], hot.length, 64);
    const counts = intervals.map(() => new Uint32Array(header.pools));
    // A pool without a block keeps a count in the old file (its candles ever opened) that a load must drop: any number will do.
    for (const c of counts) for (let p = 0; p < header.pools; p++) c[p] = 1000 + p;
    let nonZero = 0;
    hot.forEach((p, k) => {
      for (let i = 0; i < intervals.length; i++) {
        counts[i]![p] = rows.readUInt32LE(k * 64 + i * 4);
        if (counts[i]![p]! > 0) nonZero++;
      }
    });
    expect(nonZero).toBeGreaterThan(hot.length);
    // The old file: this cut's sections moved down to make room for the longer header, the pool columns appended after them.
    let appended: SnapshotHeader['columns'][number][] = [];
    const { old } = olderFile(
      now,
      header,
      (append) => (appended = intervals.map((iv, i) => ({ name: `ring.${iv}.opened`, type: 'u32' as const, scope: 'pool' as const, stride: 1, offset: append(counts[i]!), bytes: counts[i]!.byteLength }))),
      (moved, base, bytes) => ({
        ...moved,
        tableHash: columnTableHash(earlierTable),
        bytes,
        columns: [...moved.columns, ...appended.map((c) => ({ ...c, offset: c.offset + base }))],
        blocks: { ...moved.blocks, columns: moved.blocks.columns.filter((c) => c.name !== 'ring.opened') },
      }),
    );
    const { other, oldPath } = storeWithFile(dir, name, old);

    // A rollback behind the snapshot restores some pools' ring blocks from it: the same blocks, counts included, from either file.
    const countsOf = (views: EngineViews, pools: readonly number[]) => pools.map((p) => (views.poolBlock[p] === 0 ? [] : Array.from(views.ringOpened.subarray((views.poolBlock[p]! - 1) * 16, views.poolBlock[p]! * 16))));
    const restored = (file: string) => {
      const views = EngineViews.create(CAPACITY);
      const pools = [0, 3, 7, 42, 199, 250, ...hot.slice(0, 5), header.pools - 1];
      restoreRows(file, views, pools, []);
      return { held: pools.filter((p) => views.poolBlock[p] !== 0), counts: countsOf(views, pools) };
    };
    const blocksNow = restored(path);
    expect(blocksNow.held.length).toBeGreaterThan(0);
    expect(blocksNow.counts.flat().some((n) => n > 0)).toBe(true);
    expect(restored(oldPath)).toEqual(blocksNow);

    const { onNow, onOld } = await startBothOn(dir, other, clock, seq, 'candle counts (pool columns to the ring blocks)');
    // Every held block's counts too.
    expect(countsOf(onOld.views, Array.from(hot))).toEqual(countsOf(onNow.views, Array.from(hot)));

    await expectRunOnAlike(onNow, onOld, other, clock, header.tableHash);
  }, 240_000);
  it('a start on a snapshot whose catalog is export version 1 (address texts by reference part, supplies as digits, chains linked, f64 times) converts it: it holds what a start on the same cut holds, the same catalog, a rollback restores rows from it, and the next cut is written whole', async () => {
    const clock = { now: GENESIS + 26 * HOUR };
    const { dir, first, seq, path, name, bytes: now, header } = await singleSnapshot(clock);
    const table = first.views.columnTable;
    const meta = header.catalog.meta;
    expect(meta.version).toBe(2);
    const part = (n: string) => {
      const c = header.catalog.sections.find((x) => x.name === n)!;
      return new Uint8Array(now.buffer.slice(now.byteOffset + c.offset, now.byteOffset + c.offset + c.bytes));
    };
    const column = (n: string) => {
      const c = header.columns.find((x) => x.name === n)!;
      return new Uint8Array(now.buffer.slice(now.byteOffset + c.offset, now.byteOffset + c.offset + c.bytes));
    };
    const u32 = (b: Uint8Array) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    const counts = u32(part('counts'));
    const [poolBound, tokenBound] = [counts[0]!, counts[1]!];
    const IN_HEAP = 8;
    // Version 2's heap texts: a LEB128 length, then the bytes.
    const heap2 = part('heap');
    const text2 = (at: number): [number, number] => {
      let n = 0;
      let shift = 0;
      for (;;) {
        const b = heap2[at++]!;
        n += (b & 127) * 2 ** shift;
        if (b < 128) return [at, at + n];
        shift += 7;
      }
    };
    // Version 1's heap, written anew: offset 0 is never a text.
    const heap1: number[] = [0];
    const put = (bytes: Uint8Array) => {
      const at = heap1.length;
      let n = bytes.length;
      while (n >= 128) {
        heap1.push((n % 128) | 128);
        n = Math.floor(n / 128);
      }
      heap1.push(n, ...bytes);
      return at;
    };
    /** Row `id`'s address as version 1 kept it: EVM bytes as they are, a text moved to the heap and referenced. */
    const refs = (addr: Uint8Array, state: Uint8Array, bound: number) => {
      const ref = new Uint32Array(bound);
      for (let id = 0; id < bound; id++) {
        if ((state[id]! & IN_HEAP) === 0) continue;
        const [from, end] = text2(new DataView(addr.buffer, addr.byteOffset).getUint32(id * 20, true));
        ref[id] = put(heap2.subarray(from, end));
        addr.fill(0, id * 20, id * 20 + 20);
        state[id] = state[id]! & ~IN_HEAP;
      }
      return ref;
    };
    const tokenState = part('tokenState');
    const tokenText = u32(part('tokenText'));
    let tokensWithSupply = 0;
    for (let t = 0; t < tokenBound; t++) {
      if ((tokenState[t]! & 3) === 0) continue;
      const [nameFrom, nameEnd] = text2(tokenText[t]!);
      const [symbolFrom, symbolEnd] = text2(nameEnd);
      const [supplyFrom, supplyEnd] = text2(symbolEnd);
      tokenText[t] = put(heap2.subarray(nameFrom, nameEnd));
      put(heap2.subarray(symbolFrom, symbolEnd));
      const supply = decodeSupply(heap2.subarray(supplyFrom, supplyEnd));
      if (supply.length > 10) tokensWithSupply++;
      put(new TextEncoder().encode(supply));
    }
    expect(tokensWithSupply, 'tokens with a supply of more than ten digits').toBeGreaterThan(10);
    const tokenAddr = part('tokenAddr');
    const tokenAddrRef = refs(tokenAddr, tokenState, tokenBound);
    const poolAddr = part('poolAddr');
    const poolState = part('poolState');
    const poolAddrRef = refs(poolAddr, poolState, poolBound);
    expect(poolAddrRef.some((r) => r !== 0), 'pools with base58 addresses').toBe(true);
    expect(poolAddr.some((b) => b !== 0), 'pools with EVM addresses').toBe(true);
    counts[4] = heap1.length;
    // Each chain's live pools linked in id order (creation order).
    const poolChain = new Uint16Array(column('poolChain').buffer);
    const chains = part('chainPoolCount').byteLength / 4;
    const [chainFirst, chainLast, nextInChain] = [new Int32Array(chains), new Int32Array(chains), new Int32Array(poolBound)];
    for (let p = 0; p < poolBound; p++) {
      if ((poolState[p]! & 3) !== 1) continue;
      const c = poolChain[p]!;
      if (chainLast[c] === 0) chainFirst[c] = p + 1;
      else nextInChain[chainLast[c]! - 1] = p + 1;
      chainLast[c] = p + 1;
    }
    // Address table slots without their tags: id + 1, at the places the same hash gave them.
    const untagged = (n: string, idBits: number) => Int32Array.from(new Int32Array(part(n).buffer), (v) => (v <= 0 ? v : v & (idBits >= 31 ? 0x7fffffff : 2 ** idBits - 1)));
    const addedAt = Float64Array.from(u32(part('tokenAddedAt')));
    const v1Parts: [string, ArrayBufferView][] = [
      ['poolAddr', poolAddr],
      ['poolAddrRef', poolAddrRef],
      ['poolState', poolState],
      ['poolNextInChain', nextInChain],
      ['tokenAddr', tokenAddr],
      ['tokenAddrRef', tokenAddrRef],
      ['tokenState', tokenState],
      ['tokenText', tokenText],
      ['tokenAddedAt', addedAt],
      ['chainFirstPool', chainFirst],
      ['chainLastPool', chainLast],
      ['heap', Uint8Array.from(heap1)],
      ['counts', counts],
      ['poolSlots', untagged('poolSlots', meta.poolSlotIdBits)],
      ['tokenSlots', untagged('tokenSlots', meta.tokenSlotIdBits)],
    ];
    // The columns version 1 files kept as f64: pool creation times, and the block of each pool's last sync (0: none).
    const createdAt = Float64Array.from(u32(column('poolCreatedAt')));
    const syncBlock = Float64Array.from(u32(column('syncBlock')), (mark) => (mark === 0 ? 0 : mark - 1));
    expect(syncBlock.filter((b) => b > 0).length, 'pools with a sync').toBeGreaterThan(10);
    const f64Columns: [string, Float64Array][] = [
      ['poolCreatedAt', createdAt],
      ['syncBlock', syncBlock],
    ];
    const placed = new Map<string, number>();
    const { old } = olderFile(
      now,
      header,
      (append) => {
        for (const [n, b] of [...v1Parts, ...f64Columns]) placed.set(n, append(b));
      },
      (moved, base, bytes) => {
        const sections = new Map(moved.catalog.sections.map((c) => [c.name, c]));
        for (const [n, b] of v1Parts) sections.set(n, { name: n, offset: placed.get(n)! + base, bytes: b.byteLength });
        for (const gone of ['poolSlotIdBits', 'tokenSlotIdBits']) expect(gone in moved.catalog.meta).toBe(true);
        const { poolSlotIdBits: _p, tokenSlotIdBits: _t, ...rest } = moved.catalog.meta;
        const earlierTable = table.map((c) => (f64Columns.some(([n]) => n === c.name) ? { ...c, type: 'f64' as const } : c));
        return {
          ...moved,
          tableHash: columnTableHash(earlierTable, 1),
          bytes,
          columns: moved.columns.map((c) => {
            const f = f64Columns.find(([n]) => n === c.name);
            return f === undefined ? c : { ...c, type: 'f64' as const, offset: placed.get(c.name)! + base, bytes: f[1].byteLength };
          }),
          catalog: { meta: { ...rest, version: 1 } as typeof meta, sections: [...sections.values()] },
        };
      },
    );
    const { other, oldPath } = storeWithFile(dir, name, old);

    // A rollback behind the snapshot restores some pools' rows from it: the same sync marks from either file.
    const restored = (file: string) => {
      const views = EngineViews.create(CAPACITY);
      const pools = Array.from({ length: poolBound }, (_, p) => p).filter((p) => syncBlock[p]! > 0).slice(0, 20);
      restoreRows(file, views, pools, []);
      return pools.map((p) => views.syncBlock[p]);
    };
    const marksNow = restored(path);
    expect(marksNow.every((m) => m! > 0)).toBe(true);
    expect(restored(oldPath)).toEqual(marksNow);

    const { onNow, onOld } = await startBothOn(dir, other, clock, seq, 'the catalog (export version 1 to 2)');
    expect(catalogDump(onOld.registry)).toEqual(catalogDump(onNow.registry));

    await expectRunOnAlike(onNow, onOld, other, clock, header.tableHash);
    // Still the same catalog after three hours more of pools and tokens created on both.
    expect(catalogDump(onOld.registry)).toEqual(catalogDump(onNow.registry));
  }, 240_000);
});
