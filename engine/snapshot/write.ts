/**
 * Taking a snapshot: the copies of a cut (capture.ts) are laid out as one file (format.ts), and
 * `writeSnapshot` puts them on disk in the background, each shard's runs straight at their rows'
 * place (no second copy), under a temporary name, synced, renamed, the folder synced: a kill -9 at
 * any point leaves the files before it as they were.
 */
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pack } from 'msgpackr';
import type { CatalogExport } from '../catalog/catalog.js';
import { PARTS } from '../catalog/parts.js';
import type { ColumnSpec, EngineViews } from '../state/views.js';
import { shardRowColumns, type ShardCapture, type ShardRuns } from './capture.js';
import { appendBits, maskBytes, type BlockCapture } from './blocks.js';
import {
  alignUp,
  blockColumns,
  type BlockSegment,
  type BlocksSection,
  columnTableHash,
  keptColumns,
  SNAPSHOT_END,
  SNAPSHOT_FORMAT_VERSION,
  SNAPSHOT_MAGIC,
  snapshotFileName,
  rowBytes,
  usedBytes,
  usedRows,
  type SnapshotColumn,
  type SnapshotHeader,
} from './format.js';

export interface CapturedViews {
  readonly header: SnapshotHeader;
  /**
   * What to write where, in order: the header, each main-thread column, each shard's runs at their
   * rows' place (or, in a delta cut, each shard row column as the base file's rows with the changed
   * ones written over them), the sections, the closing mark. Bytes not written (rows of no shard,
   * padding) read as zero.
   */
  readonly writes: readonly ({ readonly offset: number; readonly bytes: Uint8Array } | PatchedColumn | KeptColumn)[];
  /** The snapshot a delta cut's columns are read from. */
  readonly base?: string;
}

/**
 * A shard row column of a delta cut: `rows` rows of `rowBytes`, each the base file's row (zero past
 * its `from.bytes`), then each shard's changed rows over them, and zero outside `covered` (the
 * [first, end) runs of ids in use at the cut, ascending): what a full cut would hold.
 */
export interface PatchedColumn {
  readonly offset: number;
  readonly rows: number;
  readonly rowBytes: number;
  readonly from: { readonly offset: number; readonly bytes: number };
  readonly covered: readonly number[];
  readonly patches: readonly { readonly ids: Int32Array; readonly data: Uint8Array }[];
}

/**
 * A segment of a block column (a shard's pools kept from the base: blocks.ts BlockCapture.kept)
 * taken from the base file: the rows of its pools at file positions `positions` (ascending), from
 * the base's column `from` (its segments, and the words each of its pools kept), written as one
 * segment: the mask at `maskOffset`, the `bytes` of words at `offset`.
 */
export interface KeptColumn {
  readonly maskOffset: number;
  readonly offset: number;
  readonly bytes: number;
  /** 4-byte words per row. */
  readonly perRow: number;
  readonly positions: Int32Array;
  readonly from: { readonly segments: readonly BlockSegment[]; readonly counts: Int32Array };
}

/**
 * Where a file written by this process keeps its ring blocks or window slots, beyond its header:
 * the position of each shard's first pool in the section's list, and per block column (table order)
 * the words each pool of the list kept in it, for candle columns (ColumnSpec.candles; empty for the
 * others). A delta cut over the file takes from it the candle rows of pools that did not trade since.
 */
export interface HeldLayout {
  readonly shardStarts: readonly number[];
  readonly counts: readonly Int32Array[];
}

export interface HeldLayouts {
  readonly blocks: HeldLayout;
  readonly windowSlots: HeldLayout;
}

/** The snapshot a delta cut is written over: its file and the columns it holds (and where its held rows are, when this process wrote it). */
export interface SnapshotBase {
  readonly path: string;
  readonly header: SnapshotHeader;
  readonly held?: HeldLayouts;
}

/** The main thread's half of a cut: its own columns copied, and the id bounds the shards' rows are taken to. */
export interface MainCut {
  readonly seq: number;
  readonly pools: number;
  readonly tokens: number;
  readonly chains: number;
  readonly takenAtMs: number;
  /**
   * Each kept column ingest writes, to the rows in use: chain and fixed columns copied; pool and
   * token columns (written once, when the catalog makes the id) as views of the shared memory.
   */
  readonly copies: ReadonlyMap<string, Uint8Array>;
  /**
   * [first, end) pairs of the pool and token ids below the bounds not handed out at the cut (the rest
   * of each chain's open id block): their rows, in the columns and catalog parts taken as views, may
   * be written after the cut, so the file holds zeros there instead.
   */
  readonly unallocated: { readonly pool: readonly number[]; readonly token: readonly number[] };
  /** The source's own state as of the cut (a simulator resumes from it), when it keeps one. */
  readonly sourceState?: Uint8Array;
  /**
   * The catalog as of the cut, without the view columns (kept as columns): its append-only parts
   * as views of the shared memory (their rows in use do not change), the rest copied.
   */
  readonly catalog: CatalogExport;
}

/**
 * The main thread's part of a cut (between two ingest steps: the views are as of batch `seq`): the
 * kept columns ingest writes, with the catalog's export (Catalog.export({ viewColumns: false,
 * shareAppendOnly: true })). Pool and token rows ingest writes (and the catalog's append-only parts)
 * are taken without a copy: a row is written when its id is handed out and not again while a
 * snapshot is being written (only a rollback rewrites one, and it waits for the write: rollback.ts),
 * and the rows of ids handed out after the cut are left zero in the file (`unallocated`). So the main thread
 * copies only what changes: chain clocks, counts, the catalog's lists and address tables.
 */
export function cutMain(views: EngineViews, seq: number, catalog: CatalogExport, sourceState?: Uint8Array, nowMs = Date.now()): MainCut {
  const pools = views.poolCount;
  const tokens = views.tokenCount;
  const chains = views.capacity.chains;
  const copies = new Map<string, Uint8Array>();
  for (const c of keptColumns(views.columnTable)) {
    if (c.writer === 'ingest') {
      const rows = usedBytes(c, pools, tokens, chains);
      copies.set(c.name, c.scope === 'pool' || c.scope === 'token' ? rows : rows.slice());
    } else if (c.writer !== 'shard' || (c.scope !== 'pool' && c.scope !== 'token')) throw new Error(`column ${c.name}: a snapshot cannot take a ${c.scope} column written by ${c.writer}`);
  }
  const unallocated = { pool: openRanges(catalog.meta.poolIds.open), token: openRanges(catalog.meta.tokenIds.open) };
  return { seq, pools, tokens, chains, takenAtMs: nowMs, copies, unallocated, catalog, ...(sourceState ? { sourceState } : {}) };
}

/** The [at, end) pairs of the open id blocks of an allocation (CatalogMeta's poolIds.open: [chain, at, end] each). */
function openRanges(open: readonly (readonly [number, number, number])[]): number[] {
  return open.flatMap(([, at, end]) => (at < end ? [at, end] : []));
}

/**
 * The writes of `bytes` (a pool or token section of `rowBytes` per id at `offset`) but the rows of ids
 * not handed out at the cut: those stay zero (the file is sized first). Other scopes: all of it.
 */
function allocatedParts(cut: MainCut, scope: string, offset: number, rowBytes: number, bytes: Uint8Array): { offset: number; bytes: Uint8Array }[] {
  if (scope !== 'pool' && scope !== 'token') return [{ offset, bytes }];
  const r = cut.unallocated[scope];
  const gaps: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) gaps.push([r[i]! * rowBytes, Math.min(bytes.byteLength, r[i + 1]! * rowBytes)]);
  gaps.sort((a, b) => a[0] - b[0]);
  const out: { offset: number; bytes: Uint8Array }[] = [];
  let at = 0;
  for (const [from, to] of gaps) {
    if (from > at) out.push({ offset: offset + at, bytes: bytes.subarray(at, Math.min(from, bytes.byteLength)) });
    at = Math.max(at, to);
  }
  if (at < bytes.byteLength) out.push({ offset: offset + at, bytes: bytes.subarray(at) });
  return out;
}

/** Lays out the file from the main thread's copies and each shard's runs (capture.ts), without copying them again. */
export function layoutSnapshot(views: EngineViews, cut: MainCut, shards: readonly { readonly runs: ShardRuns; readonly capture: ShardCapture }[], over: SnapshotBase | null = null): CapturedViews & { readonly held: HeldLayouts } {
  const delta = shards.length > 0 && shards.every((s) => s.capture.rows !== undefined);
  if (delta !== shards.some((s) => s.capture.rows !== undefined)) throw new Error('a cut mixes delta and full shard captures');
  if (delta && over === null) throw new Error('a delta cut needs the snapshot it is relative to');
  const sourceState = cut.sourceState ?? new Uint8Array(0);
  const rowColumns = shardRowColumns(views.columnTable);
  const kept = keptColumns(views.columnTable);
  const sizes = kept.map((c) => cut.copies.get(c.name)?.byteLength ?? usedRows(c, cut.pools, cut.tokens, cut.chains) * rowBytes(c));
  const pending = shards.flatMap((s) => s.capture.pending);
  const pendingBytes = pack(pending) as Uint8Array;
  const tableHash = columnTableHash(views.columnTable);
  // Ring blocks, then window slots: each the pools holding one, then per column each shard's segment
  // of the rows it copied and, in a delta cut, one of those the base holds (keptFromBase).
  const held = [
    { cols: blockColumns(views.columnTable, 'block'), of: (c: ShardCapture) => c.blocks, base: over?.header.blocks, layout: over?.held?.blocks },
    { cols: blockColumns(views.columnTable, 'windowSlot'), of: (c: ShardCapture) => c.windowSlots, base: over?.header.windowSlots, layout: over?.held?.windowSlots },
  ].map((h) => {
    const kept = shards.map(({ capture }, s) => keptFromBase(h.of(capture), s, h.cols, h.base, h.layout));
    return { ...h, kept, pools: shards.reduce((n, s, i) => n + h.of(s.capture).pools.length + kept[i]!.positions.length, 0) };
  });
  // The header's length depends on the offsets it lists: lay out with room to spare, widen until it fits.
  const draft = (base: number): SnapshotHeader => {
    let at = base;
    const columns = kept.map((c, i) => {
      const col: SnapshotColumn = { name: c.name, type: c.type, scope: c.scope, stride: c.stride, offset: at, bytes: sizes[i]! };
      at = alignUp(at + sizes[i]!);
      return col;
    });
    const pendingSection = { offset: at, bytes: pendingBytes.byteLength, chunks: pending.length };
    at = alignUp(at + pendingBytes.byteLength);
    const sourceSection = { offset: at, bytes: sourceState.byteLength };
    at = alignUp(at + sourceState.byteLength);
    const catalogSections = cut.catalog.sections.map(({ name, bytes }) => {
      const section = { name, offset: at, bytes: bytes.byteLength };
      at = alignUp(at + bytes.byteLength);
      return section;
    });
    const [blocks, windowSlots] = held.map(({ cols, of, pools, kept }): BlocksSection => {
      const offset = at;
      at = alignUp(at + pools * 4);
      // Per block column, each shard's segment: its mask, then its non-zero words.
      const columns = cols.map((c, i) => ({
        name: c.name,
        segments: shards.flatMap(({ capture }, s) => {
          const segment = (n: number, maskLength: number, wordBytes: number): BlockSegment => {
            const maskOffset = at;
            const offset = alignUp(at + maskLength);
            at = alignUp(offset + wordBytes);
            return { pools: n, maskOffset, offset, bytes: wordBytes };
          };
          const { mask, words } = of(capture).columns[i]!;
          const k = kept[s]!;
          // A candle column's rows of the pools kept are the base's; any other column's are copied as those of the rest.
          const fromBase = c.candles && k.positions.length > 0;
          const copiedRows = segment(of(capture).pools.length + (fromBase ? 0 : k.positions.length), mask.byteLength, words.byteLength);
          if (!fromBase) return [copiedRows];
          return [copiedRows, segment(k.positions.length, maskBytes(k.positions.length * (rowBytes(c) / 4)), k.words[i]! * 4)];
        }),
      }));
      return { offset, pools, columns };
    }) as [BlocksSection, BlocksSection];
    return {
      version: SNAPSHOT_FORMAT_VERSION,
      tableHash,
      seq: cut.seq,
      pools: cut.pools,
      tokens: cut.tokens,
      chains: cut.chains,
      takenAtMs: cut.takenAtMs,
      bytes: at + SNAPSHOT_END.length,
      columns,
      pending: pendingSection,
      source: sourceSection,
      blocks,
      windowSlots,
      catalog: { meta: cut.catalog.meta, sections: catalogSections },
    };
  };
  let base = alignUp(12 + Buffer.byteLength(JSON.stringify(draft(0))) + 64);
  let header = draft(base);
  let json = Buffer.from(JSON.stringify(header));
  while (12 + json.length > base) {
    base = alignUp(12 + json.length + 64);
    header = draft(base);
    json = Buffer.from(JSON.stringify(header));
  }
  const head = Buffer.alloc(12 + json.length);
  SNAPSHOT_MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, 8);
  json.copy(head, 12);
  const writes: CapturedViews['writes'][number][] = [{ offset: 0, bytes: head }];
  const covered = delta ? { pool: mergeRuns(shards.map((s) => s.runs.pools)), token: mergeRuns(shards.map((s) => s.runs.tokens)) } : null;
  kept.forEach((c, i) => {
    const at = header.columns[i]!.offset;
    const copy = cut.copies.get(c.name);
    if (copy !== undefined) return void writes.push(...allocatedParts(cut, c.scope, at, rowBytes(c), copy));
    const row = rowBytes(c);
    const k = rowColumns.indexOf(c);
    if (covered !== null) {
      const was = over!.header.columns.find((b) => b.name === c.name);
      if (was === undefined) throw new Error(`the base snapshot has no column ${c.name}`);
      const pools = c.scope === 'pool';
      return void writes.push({
        offset: at,
        rows: usedRows(c, cut.pools, cut.tokens, cut.chains),
        rowBytes: row,
        from: { offset: was.offset, bytes: was.bytes },
        covered: pools ? covered.pool : covered.token,
        patches: shards.map(({ capture }) => ({ ids: pools ? capture.rows!.pools : capture.rows!.tokens, data: capture.columns[k]! })),
      });
    }
    for (const { runs, capture } of shards) {
      const r = c.scope === 'pool' ? runs.pools : runs.tokens;
      const data = capture.columns[k]!;
      let from = 0;
      for (let j = 0; j < r.length; j += 2) {
        const n = (r[j + 1]! - r[j]!) * row;
        writes.push({ offset: at + r[j]! * row, bytes: data.subarray(from, from + n) });
        from += n;
      }
    }
  });
  writes.push({ offset: header.pending.offset, bytes: pendingBytes });
  writes.push({ offset: header.source.offset, bytes: sourceState });
  cut.catalog.sections.forEach(({ name, bytes }, i) => {
    const at = header.catalog.sections[i]!.offset;
    const part = PARTS.find((p) => p.name === name);
    writes.push(...(part ? allocatedParts(cut, part.scope, at, part.ctor.BYTES_PER_ELEMENT * part.stride, bytes) : [{ offset: at, bytes }]));
  });
  // Ring blocks and window slots: each shard's pools after the shards before it (those it copied,
  // then those kept), then each column's segments: the rows copied, the rows kept from the base.
  const layouts = [header.blocks, header.windowSlots].map((section, h): HeldLayout => {
    const { of, kept, base, cols } = held[h]!;
    const shardStarts: number[] = [];
    let prior = 0;
    shards.forEach(({ capture }, s) => {
      shardStarts.push(prior);
      for (const pools of [of(capture).pools, kept[s]!.pools]) {
        writes.push({ offset: section.offset + prior * 4, bytes: new Uint8Array(pools.buffer, pools.byteOffset, pools.byteLength) });
        prior += pools.length;
      }
    });
    section.columns.forEach((col, i) => {
      if (!('segments' in col)) throw new Error('a snapshot is written with sparse ring blocks');
      let seg = 0;
      shards.forEach(({ capture }, s) => {
        const { mask, words } = of(capture).columns[i]!;
        const copiedRows = col.segments[seg++]!;
        writes.push({ offset: copiedRows.maskOffset, bytes: mask }, { offset: copiedRows.offset, bytes: words });
        const k = kept[s]!;
        if (!cols[i]!.candles || k.positions.length === 0) return;
        const keptRows = col.segments[seg++]!;
        const from = base!.columns[i]!;
        if (from.name !== col.name || !('segments' in from)) throw new Error(`the base snapshot keeps no sparse block column ${col.name} in its place`);
        writes.push({ maskOffset: keptRows.maskOffset, offset: keptRows.offset, bytes: keptRows.bytes, perRow: rowBytes(cols[i]!) / 4, positions: k.positions, from: { segments: from.segments, counts: k.baseCounts[i]! } });
      });
    });
    // What each pool of the list kept, per candle column, for a delta cut over this file.
    const counts = cols.map((c, i) => {
      if (!c.candles) return new Int32Array(0);
      const out = new Int32Array(prior);
      let at = 0;
      shards.forEach(({ capture }, s) => {
        const k = kept[s]!;
        const fromBase = c.candles && k.positions.length > 0;
        const copiedRows = of(capture).pools.length + (fromBase ? 0 : k.positions.length);
        out.set(of(capture).columns[i]!.counts.subarray(0, copiedRows), at);
        at += copiedRows;
        if (fromBase) {
          out.set(k.counts[i]!, at);
          at += k.positions.length;
        }
      });
      return out;
    });
    return { shardStarts, counts };
  });
  writes.push({ offset: header.bytes - SNAPSHOT_END.length, bytes: SNAPSHOT_END });
  const layout: HeldLayouts = { blocks: layouts[0]!, windowSlots: layouts[1]! };
  return delta ? { header, writes, base: over!.path, held: layout } : { header, writes, held: layout };
}

/**
 * A shard's pools kept from the base (BlockCapture.kept): their ids, base file positions, and per
 * candle column (ColumnSpec.candles; empty for the others) the words each of them kept there and in all.
 */
interface KeptFromBase {
  readonly pools: Int32Array;
  readonly positions: Int32Array;
  readonly counts: readonly Int32Array[];
  readonly words: readonly number[];
  /** The base's words per pool of its whole list, per column (what KeptColumn reads by). */
  readonly baseCounts: readonly Int32Array[];
}

/** The pools shard `shard` kept from the base (`capture.kept`), located in it (`base`, `layout`: its section, and where this process put its rows). */
function keptFromBase(capture: BlockCapture, shard: number, cols: readonly ColumnSpec[], base: BlocksSection | undefined, layout: HeldLayout | undefined): KeptFromBase {
  const { kept } = capture;
  if (kept.pools.length === 0) return { pools: kept.pools, positions: kept.at, counts: cols.map(() => new Int32Array(0)), words: cols.map(() => 0), baseCounts: [] };
  if (base === undefined || layout === undefined) throw new Error('a shard kept ring rows from a snapshot whose layout is not known');
  const start = layout.shardStarts[shard]!;
  const positions = kept.at.map((i) => start + i);
  const counts = layout.counts.map((all, i) => (cols[i]!.candles ? positions.map((p) => all[p]!) : new Int32Array(0)));
  return { pools: kept.pools, positions, counts, words: counts.map((c) => c.reduce((n, x) => n + x, 0)), baseCounts: layout.counts };
}

/** The shards' [first, end) runs as one ascending list, touching runs joined. */
function mergeRuns(lists: readonly (readonly number[])[]): number[] {
  const pairs: [number, number][] = [];
  for (const l of lists) for (let i = 0; i < l.length; i += 2) pairs.push([l[i]!, l[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [first, end] of pairs) {
    if (out.length > 0 && out[out.length - 1]! >= first) out[out.length - 1] = Math.max(out[out.length - 1]!, end);
    else out.push(first, end);
  }
  return out;
}

/** Bytes of a delta column handled at once: read from the base, patched, written. */
const PATCH_CHUNK_BYTES = 4 * 2 ** 20; // 4 MiB

/** Writes one delta column (PatchedColumn) chunk by chunk: the base's rows, zero outside the runs in use, the changed rows over them. */
async function writePatched(file: FileHandle, base: FileHandle, w: PatchedColumn): Promise<void> {
  const total = w.rows * w.rowBytes;
  const rowsPerChunk = Math.max(1, Math.floor(PATCH_CHUNK_BYTES / w.rowBytes));
  const buf = new Uint8Array(Math.min(total, rowsPerChunk * w.rowBytes));
  const cursors = w.patches.map(() => 0);
  let run = 0;
  for (let first = 0; first < w.rows; first += rowsPerChunk) {
    const end = Math.min(w.rows, first + rowsPerChunk);
    const bytes = (end - first) * w.rowBytes;
    const chunk = buf.subarray(0, bytes);
    // The base's rows (it may hold fewer than the cut).
    const fromBase = Math.max(0, Math.min(bytes, w.from.bytes - first * w.rowBytes));
    await readFully(base, chunk.subarray(0, fromBase), w.from.offset + first * w.rowBytes);
    chunk.fill(0, fromBase);
    // Ids in no run at the cut (not handed out, or taken out by a rollback) hold zeros, as in a full cut.
    let id = first;
    while (id < end) {
      while (run < w.covered.length && w.covered[run + 1]! <= id) run += 2;
      const runFirst = run < w.covered.length ? w.covered[run]! : end;
      if (runFirst > id) {
        const gapEnd = Math.min(end, runFirst);
        chunk.fill(0, (id - first) * w.rowBytes, (gapEnd - first) * w.rowBytes);
        id = gapEnd;
      } else id = Math.min(end, w.covered[run + 1]!);
    }
    // The rows the shards changed since the base.
    w.patches.forEach(({ ids, data }, s) => {
      let k = cursors[s]!;
      while (k < ids.length && ids[k]! < end) {
        const at = (ids[k]! - first) * w.rowBytes;
        if (at >= 0) chunk.set(data.subarray(k * w.rowBytes, (k + 1) * w.rowBytes), at);
        k++;
      }
      cursors[s] = k;
    });
    await writeFully(file, chunk, w.offset + first * w.rowBytes);
  }
}

/** Bytes of kept rows' words gathered from the base before they are written. */
const KEPT_CHUNK_BYTES = 2 ** 20; // 1 MiB: several tasks gather at once on the writer thread

/**
 * Writes one segment of rows kept from the base (KeptColumn): each row's mask bits from its base
 * segment's mask, its words read from the base (runs of rows that follow each other there in one
 * read), gathered a chunk at a time.
 */
async function writeKept(file: FileHandle, base: FileHandle, w: KeptColumn): Promise<void> {
  const { perRow, positions, from } = w;
  const mask = new Uint32Array(maskBytes(positions.length * perRow) >>> 2);
  const buf = new Uint8Array(Math.min(w.bytes, Math.max(KEPT_CHUNK_BYTES, perRow * 4)));
  /** Reads into `buf` not made yet: [place in buf, bytes, base offset] each. */
  const runs: number[] = [];
  let filled = 0;
  let written = 0;
  const flush = async () => {
    for (let r = 0; r < runs.length; r += 3) await readFully(base, buf.subarray(runs[r]!, runs[r]! + runs[r + 1]!), runs[r + 2]!);
    await writeFully(file, buf.subarray(0, filled), w.offset + written);
    written += filled;
    filled = 0;
    runs.length = 0;
  };
  // The base segment of the position at hand, its first position, and the words kept before position `j` in it.
  let seg = -1;
  let first = 0;
  let end = 0;
  let j = 0;
  let word = 0;
  let segMask: Uint32Array | null = null;
  for (let k = 0; k < positions.length; k++) {
    const pos = positions[k]!;
    while (pos >= end) {
      if (++seg >= from.segments.length) throw new RangeError(`the base snapshot has no pool at position ${pos} of its list`);
      first = end;
      end += from.segments[seg]!.pools;
      j = first;
      word = 0;
      segMask = null;
    }
    while (j < pos) word += from.counts[j++]!;
    const s = from.segments[seg]!;
    if (segMask === null) {
      segMask = new Uint32Array(maskBytes(s.pools * perRow) >>> 2);
      await readFully(base, new Uint8Array(segMask.buffer), s.maskOffset);
    }
    appendBits(mask, k * perRow, segMask, (pos - first) * perRow, perRow);
    const n = from.counts[pos]! * 4;
    if (filled + n > buf.length) await flush();
    const src = s.offset + word * 4;
    const last = runs.length - 3;
    if (last >= 0 && runs[last]! + runs[last + 1]! === filled && runs[last + 2]! + runs[last + 1]! === src) runs[last + 1] = runs[last + 1]! + n;
    else if (n > 0) runs.push(filled, n, src);
    filled += n;
  }
  if (filled > 0) await flush();
  if (written !== w.bytes) throw new RangeError(`rows kept from the base snapshot: ${written} bytes of words where ${w.bytes} were laid out`);
  await writeFully(file, new Uint8Array(mask.buffer), w.maskOffset);
}

async function readFully(file: FileHandle, into: Uint8Array, offset: number): Promise<void> {
  let done = 0;
  while (done < into.byteLength) {
    const n = (await file.read(into, done, into.byteLength - done, offset + done)).bytesRead;
    if (n === 0) throw new RangeError(`the base snapshot ends early at byte ${offset + done}`);
    done += n;
  }
}

async function writeFully(file: FileHandle, bytes: Uint8Array, offset: number): Promise<void> {
  let done = 0;
  while (done < bytes.byteLength) done += (await file.write(bytes, done, bytes.byteLength - done, offset + done)).bytesWritten;
}

/** Writes `parts` one after another from `offset` in as few calls as the system takes (a short write goes on where it stopped). */
async function writeGathered(file: FileHandle, parts: readonly Uint8Array[], offset: number): Promise<void> {
  let rest = parts;
  while (rest.length > 0) {
    let n = (await file.writev(rest as Uint8Array[], offset)).bytesWritten;
    offset += n;
    let i = 0;
    while (i < rest.length && n >= rest[i]!.byteLength) n -= rest[i++]!.byteLength;
    rest = i < rest.length ? [rest[i]!.subarray(n), ...rest.slice(i + 1)] : [];
  }
}

/** Buffers in one gathered write (Linux's IOV_MAX), and the bytes it stops adding more at. */
const GATHER_PARTS = 1024;
const GATHER_BYTES = 64 * 2 ** 20; // 64 MiB
/**
 * Writes a snapshot keeps in flight at once. Each write waits for a thread of libuv's pool, which it
 * shares with the store's writers (scripts/thread-pool.cts): one write at a time, a catch-up's first
 * snapshot (192 MiB in 4,570 writes at 2 M pools) took 48 s (bench/RESULTS.md).
 */
const WRITES_IN_FLIGHT = 16;

/**
 * The writes of a snapshot as tasks: byte writes in offset order, those that touch joined into one
 * gathered write, and each delta column and segment of rows kept on its own (they read the base).
 */
function writeTasks(writes: CapturedViews['writes'], file: FileHandle, base: FileHandle | null): (() => Promise<void>)[] {
  const tasks: (() => Promise<void>)[] = [];
  const plain: { readonly offset: number; readonly bytes: Uint8Array }[] = [];
  for (const w of writes) {
    if ('positions' in w) tasks.push(() => writeKept(file, base!, w));
    else if ('patches' in w) tasks.push(() => writePatched(file, base!, w));
    else if (w.bytes.byteLength > 0) plain.push(w);
  }
  plain.sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < plain.length; i++) {
    if (plain[i]!.offset < plain[i - 1]!.offset + plain[i - 1]!.bytes.byteLength) throw new Error(`snapshot writes overlap at byte ${plain[i]!.offset}`);
  }
  for (let i = 0; i < plain.length; ) {
    const at = plain[i]!.offset;
    const parts = [plain[i]!.bytes];
    let end = at + plain[i]!.bytes.byteLength;
    let bytes = plain[i]!.bytes.byteLength;
    for (i++; i < plain.length && plain[i]!.offset === end && parts.length < GATHER_PARTS && bytes < GATHER_BYTES; i++) {
      parts.push(plain[i]!.bytes);
      end += plain[i]!.bytes.byteLength;
      bytes += plain[i]!.bytes.byteLength;
    }
    tasks.push(parts.length === 1 ? () => writeFully(file, parts[0]!, at) : () => writeGathered(file, parts, at));
  }
  return tasks;
}

/** Runs `tasks` with at most `width` in flight; rejects with the first failure once those in flight have settled. */
async function inFlight(tasks: readonly (() => Promise<void>)[], width: number): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | null = null;
  const lane = async () => {
    while (failure === null && next < tasks.length) {
      const task = tasks[next++]!;
      try {
        await task();
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, lane));
  if (failure !== null) throw (failure as { err: unknown }).err;
}

/** Writes a captured snapshot into `dir`; resolves with its path once it is durable under its final name. */
export async function writeSnapshot(dir: string, captured: CapturedViews): Promise<string> {
  const path = join(dir, snapshotFileName(captured.header.seq));
  const tmp = `${path}.tmp`;
  const file = await open(tmp, 'w');
  let base: FileHandle | null = null;
  try {
    // The full size first: what no write covers (rows of no shard, padding) reads as zero.
    await file.truncate(captured.header.bytes);
    if (captured.base !== undefined) base = await open(captured.base, 'r');
    // Positional writes to parts of the file no two writes share: in any order, several at once.
    await inFlight(writeTasks(captured.writes, file, base), WRITES_IN_FLIGHT);
    await file.sync();
  } catch (err) {
    await file.close().catch(() => {});
    await base?.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  await base?.close();
  await file.close();
  await rename(tmp, path);
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return path;
}
