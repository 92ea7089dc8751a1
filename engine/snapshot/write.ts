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
import type { EngineViews } from '../state/views.js';
import { shardRowColumns, type ShardCapture, type ShardRuns } from './capture.js';
import {
  alignUp,
  blockColumns,
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
  readonly writes: readonly ({ readonly offset: number; readonly bytes: Uint8Array } | PatchedColumn)[];
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

/** The snapshot a delta cut is written over: its file and the columns it holds. */
export interface SnapshotBase {
  readonly path: string;
  readonly header: SnapshotHeader;
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
export function layoutSnapshot(views: EngineViews, cut: MainCut, shards: readonly { readonly runs: ShardRuns; readonly capture: ShardCapture }[], over: SnapshotBase | null = null): CapturedViews {
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
  // Ring blocks, then window slots: each the pools holding one, then per column each shard's segment.
  const held = [
    { cols: blockColumns(views.columnTable, 'block'), of: (c: ShardCapture) => c.blocks },
    { cols: blockColumns(views.columnTable, 'windowSlot'), of: (c: ShardCapture) => c.windowSlots },
  ].map((h) => ({ ...h, pools: shards.reduce((n, s) => n + h.of(s.capture).pools.length, 0) }));
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
    const [blocks, windowSlots] = held.map(({ cols, of, pools }): BlocksSection => {
      const offset = at;
      at = alignUp(at + pools * 4);
      // Per block column, each shard's segment: its mask, then its non-zero words.
      const columns = cols.map((c, i) => ({
        name: c.name,
        segments: shards.map(({ capture }) => {
          const { mask, words } = of(capture).columns[i]!;
          const maskOffset = at;
          const offset = alignUp(at + mask.byteLength);
          at = alignUp(offset + words.byteLength);
          return { pools: of(capture).pools.length, maskOffset, offset, bytes: words.byteLength };
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
  // Ring blocks and window slots: each shard's pools after the shards before it, then each column's segments.
  [header.blocks, header.windowSlots].forEach((section, h) => {
    const of = held[h]!.of;
    let prior = 0;
    for (const { capture } of shards) {
      const { pools } = of(capture);
      writes.push({ offset: section.offset + prior * 4, bytes: new Uint8Array(pools.buffer, pools.byteOffset, pools.byteLength) });
      prior += pools.length;
    }
    section.columns.forEach((col, i) => {
      if (!('segments' in col)) throw new Error('a snapshot is written with sparse ring blocks');
      col.segments.forEach((seg, s) => {
        const { mask, words } = of(shards[s]!.capture).columns[i]!;
        writes.push({ offset: seg.maskOffset, bytes: mask }, { offset: seg.offset, bytes: words });
      });
    });
  });
  writes.push({ offset: header.bytes - SNAPSHOT_END.length, bytes: SNAPSHOT_END });
  return delta ? { header, writes, base: over!.path } : { header, writes };
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
 * gathered write, and each delta column on its own (it reads the base chunk by chunk).
 */
function writeTasks(writes: CapturedViews['writes'], file: FileHandle, base: FileHandle | null): (() => Promise<void>)[] {
  const tasks: (() => Promise<void>)[] = [];
  const plain: { readonly offset: number; readonly bytes: Uint8Array }[] = [];
  for (const w of writes) {
    if ('bytes' in w) {
      if (w.bytes.byteLength > 0) plain.push(w);
    } else tasks.push(() => writePatched(file, base!, w));
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
