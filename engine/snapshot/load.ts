/**
 * Reading snapshot files: the header (to choose one), the whole views at a start, or the rows of
 * some pools and tokens when a chain is rolled back behind the newest snapshot.
 */
import { closeSync, fstatSync, openSync, read, readSync } from 'node:fs';
import type { Catalog, CatalogSectionReader } from '../catalog/catalog.js';
import { CATALOG_V1, convertCatalogV1 } from '../catalog/export-v1.js';
import { ringOpenedAt, type ColumnSpec, type EngineViews } from '../state/views.js';
import { INTERVALS } from '../state/layout.js';
import { assignSnapshotBlocks, loadBlockRows, restoreBlocks, WINDOW_SLOTS } from './blocks.js';
import type { BlockLoader } from './block-loader.js';
import { markBlockRows } from '../state/ring-blocks.js';
import { poolOpenedName, READABLE_CATALOG_VERSIONS, READABLE_FORMAT_VERSIONS, rowBytes, SNAPSHOT_END, SNAPSHOT_FORMAT_VERSION, SNAPSHOT_MAGIC, tableMatch, TYPE_ARRAYS, type SnapshotColumn, type SnapshotHeader, type SnapshotSection } from './format.js';
import { rowAsOfIntoSlots } from './slot-as-of.js';

export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

function readExactly(fd: number, into: Uint8Array, offset: number): void {
  let done = 0;
  while (done < into.byteLength) {
    const n = readSync(fd, into, done, into.byteLength - done, offset + done);
    if (n === 0) throw new SnapshotError(`snapshot ends early at byte ${offset + done}`);
    done += n;
  }
}

/** The header of a complete snapshot file; throws SnapshotError for an incomplete or foreign file. */
export function readHeader(path: string): SnapshotHeader {
  const fd = openSync(path, 'r');
  try {
    return headerOf(fd, path);
  } finally {
    closeSync(fd);
  }
}

function headerOf(fd: number, path: string): SnapshotHeader {
  const size = fstatSync(fd).size;
  const head = Buffer.alloc(12);
  if (size < 12 + SNAPSHOT_END.length) throw new SnapshotError(`${path}: too short to be a snapshot`);
  readExactly(fd, head, 0);
  if (!head.subarray(0, 8).equals(SNAPSHOT_MAGIC)) throw new SnapshotError(`${path}: not a snapshot file`);
  const json = Buffer.alloc(head.readUInt32LE(8));
  readExactly(fd, json, 12);
  const header = JSON.parse(json.toString()) as SnapshotHeader;
  if (!READABLE_FORMAT_VERSIONS.includes(header.version)) throw new SnapshotError(`${path}: format version ${header.version}, this build reads ${READABLE_FORMAT_VERSIONS.join(' and ')} (writes ${SNAPSHOT_FORMAT_VERSION})`);
  const end = Buffer.alloc(SNAPSHOT_END.length);
  if (header.bytes !== size) throw new SnapshotError(`${path}: ${size} bytes, the header says ${header.bytes} (incomplete)`);
  readExactly(fd, end, size - end.length);
  if (!end.equals(SNAPSHOT_END)) throw new SnapshotError(`${path}: no closing mark (incomplete)`);
  return header;
}

/** The bytes of one section of a snapshot file. */
export function readSection(path: string, section: SnapshotSection): Buffer {
  // Not zeroed first: every byte is read (readExactly throws otherwise).
  const bytes = Buffer.allocUnsafeSlow(section.bytes);
  const fd = openSync(path, 'r');
  try {
    readExactly(fd, bytes, section.offset);
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** Why `header` cannot load into `views`, or null when it can. */
export function incompatibility(header: SnapshotHeader, views: EngineViews): string | null {
  if (tableMatch(header, views.columnTable) === null) return `written with another column table (${header.tableHash})`;
  if (header.pools > views.capacity.pools) return `holds ${header.pools} pool ids, capacity is ${views.capacity.pools}`;
  if (header.tokens > views.capacity.tokens) return `holds ${header.tokens} token ids, capacity is ${views.capacity.tokens}`;
  if (header.chains > views.capacity.chains) return `holds ${header.chains} chains, capacity is ${views.capacity.chains}`;
  if (!READABLE_CATALOG_VERSIONS.includes(header.catalog.meta.version)) return `catalog export version ${header.catalog.meta.version}, this build reads ${READABLE_CATALOG_VERSIONS.join(' and ')}`;
  return null;
}

function bytesOf(array: ColumnSpec['array'], elements: number, at = 0): Uint8Array {
  const size = array.BYTES_PER_ELEMENT;
  return new Uint8Array(array.buffer, array.byteOffset + at * size, elements * size);
}

/** Elements of a retyped column converted at a time. */
const CONVERT_CHUNK = 65_536;

/**
 * Reads `elements` elements of file column `col` from its element `from` into `spec.array` from
 * element `at`: straight into the shared buffer when the types agree, else through the file's type,
 * each value converted (the column's fromOlder, else as it is) and required to come out equal (a
 * time written as f64 read into u32).
 */
function readElements(fd: number, col: SnapshotColumn, spec: ColumnSpec, from: number, elements: number, at: number): void {
  if (col.type === spec.type) return readExactly(fd, bytesOf(spec.array, elements, at), col.offset + from * spec.array.BYTES_PER_ELEMENT);
  const Written = TYPE_ARRAYS[col.type];
  const chunk = new Written(Math.min(elements, CONVERT_CHUNK));
  const chunkBytes = new Uint8Array(chunk.buffer);
  for (let done = 0; done < elements; done += chunk.length) {
    const n = Math.min(chunk.length, elements - done);
    readExactly(fd, chunkBytes.subarray(0, n * Written.BYTES_PER_ELEMENT), col.offset + (from + done) * Written.BYTES_PER_ELEMENT);
    const into = spec.array.subarray(at + done, at + done + n);
    for (let i = 0; i < n; i++) {
      const v = spec.fromOlder === undefined ? chunk[i]! : spec.fromOlder(chunk[i]!);
      into[i] = v;
      if (into[i] !== v) throw new SnapshotError(`column ${col.name}: value ${v} at element ${from + done + i} does not fit ${spec.type} (written as ${col.type})`);
    }
  }
}

/** Bytes of one read of a start's parallel reads (readAll). */
const READ_PIECE_BYTES = 8 * 1024 * 1024;
/** Reads in flight at once: libuv's threads (four by default) each fault fresh shared memory in and copy into it. */
const READS_IN_FLIGHT = 4;

/** A stretch of the file to read into `into` (a column's rows, a catalog part). */
interface FileRead {
  readonly into: Uint8Array;
  readonly offset: number;
}

function readPiece(fd: number, into: Uint8Array, offset: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (done: number) =>
      read(fd, into, done, into.byteLength - done, offset + done, (err, n) => {
        if (err) reject(err);
        else if (n === 0) reject(new SnapshotError(`snapshot ends early at byte ${offset + done}`));
        else if (done + n < into.byteLength) next(done + n);
        else resolve();
      });
    next(0);
  });
}

/**
 * Fills every `into` from the file, in pieces read READS_IN_FLIGHT at a time on libuv's threads: at a
 * start the bulk of the time is the kernel faulting fresh shared memory in and copying into it,
 * which one thread would do one page after the other.
 */
async function readAll(fd: number, reads: readonly FileRead[]): Promise<void> {
  const pieces: FileRead[] = [];
  for (const { into, offset } of reads) {
    for (let at = 0; at < into.byteLength; at += READ_PIECE_BYTES) pieces.push({ into: into.subarray(at, at + READ_PIECE_BYTES), offset: offset + at });
  }
  let next = 0;
  let failed = false;
  const reader = async () => {
    while (next < pieces.length && !failed) {
      const { into, offset } = pieces[next++]!;
      try {
        await readPiece(fd, into, offset);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  // Every read ends before this does (the caller closes the file), the first failure then thrown.
  const settled = await Promise.allSettled(Array.from({ length: Math.min(READS_IN_FLIGHT, pieces.length) }, reader));
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
}

/**
 * Reads every kept column of the snapshot straight into the views' shared buffers (before any shard
 * runs), and the catalog's sections straight into `catalog` (new and empty: ingest's writer).
 */
export async function loadViews(path: string, views: EngineViews, catalog: Catalog): Promise<SnapshotHeader> {
  return (await loadViewsDeferred(path, views, catalog, null)).header;
}

/**
 * As loadViews, with the ring blocks' rows read on `loader`'s thread when it has one: `blocks`
 * settles once they are in. Until then no shard may apply a batch, and readers of a ring block
 * wait (state/ring-blocks.ts awaitBlockRows): the service can listen meanwhile. The columns and the
 * catalog's parts are read several at a time (readAll).
 */
export async function loadViewsDeferred(path: string, views: EngineViews, catalog: Catalog, loader: BlockLoader | null): Promise<{ header: SnapshotHeader; blocks: Promise<void> }> {
  const fd = openSync(path, 'r');
  try {
    const header = headerOf(fd, path);
    const why = incompatibility(header, views);
    if (why !== null) throw new SnapshotError(`${path}: ${why}`);
    assignSnapshotBlocks(fd, header.blocks, views);
    // Before any reader can see a block: an older file's candle counts, from its pool columns.
    loadPoolOpened(fd, header, views, null);
    // Window slots are read here, before any shard or reader runs (a few words per pool that traded within 30 days).
    assignSnapshotBlocks(fd, header.windowSlots, views, WINDOW_SLOTS);
    loadBlockRows(fd, header.windowSlots, views);
    let blocks: Promise<void>;
    if (loader?.threaded) {
      markBlockRows(views, 'loading');
      blocks = loader.load({ path, section: header.blocks }, views);
      blocks.catch(() => {}); // told to whoever awaits it
    } else {
      loadBlockRows(fd, header.blocks, views);
      blocks = Promise.resolve();
    }
    const byName = new Map(views.columnTable.map((c) => [c.name, c]));
    const reads: FileRead[] = [];
    /** Columns written with another type: converted value by value once the others are in. */
    const retyped: [SnapshotColumn, ColumnSpec][] = [];
    for (const col of header.columns) {
      const spec = byName.get(col.name);
      // Derived on read now (format.ts DERIVED_ROW_COLUMNS): left out. Kept in the pool row by older
      // files (format.ts asOfInRowColumns): into the slots below, once every row is in. An older
      // file's candle counts (pool columns): into the ring blocks (loadPoolOpened).
      if (spec === undefined || spec.scope !== col.scope) continue;
      if (col.type === spec.type) reads.push({ into: bytesOf(spec.array, col.bytes / spec.array.BYTES_PER_ELEMENT), offset: col.offset });
      else retyped.push([col, spec]);
    }
    const sections = new Map(header.catalog.sections.map((c) => [c.name, c]));
    const section = (name: string) => {
      const c = sections.get(name);
      if (c === undefined) throw new SnapshotError(`${path}: no catalog section ${name}`);
      return c;
    };
    const inFile: CatalogSectionReader = {
      has: (name) => sections.has(name),
      bytes: (name) => section(name).bytes,
      read: (name, into) => readExactly(fd, into, section(name).offset),
    };
    // An export of version 1: the sections it changed are made in memory now, the others read as they are.
    const v1 = header.catalog.meta.version === CATALOG_V1 ? convertCatalogV1(header.catalog.meta, inFile) : null;
    const restore = catalog.restoreInto(v1?.meta ?? header.catalog.meta, v1?.sections ?? inFile);
    for (const { name, into } of restore.reads) {
      if (v1?.converted.has(name)) v1.sections.read(name, into);
      else reads.push({ into, offset: section(name).offset });
    }
    await readAll(fd, reads);
    for (const [col, spec] of retyped) readElements(fd, col, spec, 0, col.bytes / TYPE_ARRAYS[col.type].BYTES_PER_ELEMENT, 0);
    const inRow = rowAsOfColumns(header, views);
    if (inRow !== null) {
      let n = 0;
      for (let p = 0; p < header.pools; p++) n += views.poolExists[p]!;
      const pools = new Int32Array(n);
      for (let p = 0, i = 0; p < header.pools; p++) if (views.poolExists[p] === 1) pools[i++] = p;
      rowAsOfIntoSlots(views, inRow.map((col) => readPoolRows(fd, col, pools)), pools);
    }
    restore.finish();
    return { header, blocks };
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies the shard-written rows of `pools` and `tokens` from the snapshot into the views (rows the
 * snapshot does not hold are left as they are), and the ring blocks of those pools that held one,
 * under the pools' and tokens' seqlocks. Runs on the shard that owns these rows, right after it
 * zeroed them and gave their blocks back (rollback).
 */
export function restoreRows(path: string, views: EngineViews, pools: readonly number[], tokens: readonly number[]): SnapshotHeader {
  const fd = openSync(path, 'r');
  try {
    const header = headerOf(fd, path);
    const why = incompatibility(header, views);
    if (why !== null) throw new SnapshotError(`${path}: ${why}`);
    const inPools = pools.filter((p) => p < header.pools);
    const inTokens = tokens.filter((t) => t < header.tokens);
    const byName = new Map(views.columnTable.map((c) => [c.name, c]));
    for (const p of inPools) Atomics.add(views.poolSeq, p, 1);
    for (const t of inTokens) Atomics.add(views.tokenSeq, t, 1);
    for (const col of header.columns) {
      const spec = byName.get(col.name);
      if (spec === undefined || spec.writer !== 'shard' || (col.scope !== 'pool' && col.scope !== 'token') || spec.scope !== col.scope) continue;
      copyRows(fd, col, spec, col.scope === 'pool' ? inPools : inTokens);
    }
    restoreBlocks(fd, header.blocks, views, inPools);
    loadPoolOpened(fd, header, views, inPools);
    restoreBlocks(fd, header.windowSlots, views, inPools, WINDOW_SLOTS);
    const inRow = rowAsOfColumns(header, views);
    if (inRow !== null) rowAsOfIntoSlots(views, inRow.map((col) => readPoolRows(fd, col, inPools)), inPools);
    for (const p of inPools) Atomics.add(views.poolSeq, p, 1);
    for (const t of inTokens) Atomics.add(views.tokenSeq, t, 1);
    return header;
  } finally {
    closeSync(fd);
  }
}

/** The file's pool row columns of the window as-of minutes, in WINDOW_BASES order, when it keeps them there (format.ts asOfInRowColumns); else null. */
function rowAsOfColumns(header: SnapshotHeader, views: EngineViews): SnapshotColumn[] | null {
  if (!tableMatch(header, views.columnTable)!.asOfInRow) return null;
  return views.winAsOf.map((array) => {
    const name = views.columnTable.find((c) => c.array === array)!.name;
    const col = header.columns.find((c) => c.name === name && c.scope === 'pool');
    if (col === undefined || col.type !== 'u32' || col.stride !== 1) throw new SnapshotError(`no pool row column ${name} (u32) in a file keeping the window as-of minutes in the row`);
    return col;
  });
}

/** The values of u32 pool row column `col` of pools `pools` (in that order), reading the span from the lowest to the highest once. */
function readPoolRows(fd: number, col: SnapshotColumn, pools: ArrayLike<number>): Uint32Array {
  const out = new Uint32Array(pools.length);
  if (pools.length === 0) return out;
  let lo = Infinity;
  let hi = -1;
  for (let i = 0; i < pools.length; i++) {
    const p = pools[i]!;
    if (p < lo) lo = p;
    if (p > hi) hi = p;
  }
  const span = new Uint32Array(hi - lo + 1);
  readExactly(fd, new Uint8Array(span.buffer), col.offset + lo * 4);
  for (let i = 0; i < pools.length; i++) out[i] = span[pools[i]! - lo]!;
  return out;
}

/**
 * An older file's candle counts (pool columns `ring.<iv>.opened`: format.ts poolOpenedColumns) put
 * into the ring blocks of the pools that hold one now (`pools`, or every pool of the file when
 * null), which took them from the file: the counts their candles are numbered by. Nothing for a
 * file written with the counts in the blocks.
 */
function loadPoolOpened(fd: number, header: SnapshotHeader, views: EngineViews, pools: readonly number[] | null): void {
  const interval = new Map(INTERVALS.map((iv, i) => [poolOpenedName(iv), i]));
  for (const col of header.columns) {
    const i = interval.get(col.name);
    if (i === undefined || col.scope !== 'pool') continue;
    const counts = new Uint32Array(col.bytes / 4);
    readExactly(fd, new Uint8Array(counts.buffer), col.offset);
    const put = (p: number) => {
      const b = views.poolBlock[p]! - 1;
      if (b >= 0 && p < counts.length) views.ringOpened[ringOpenedAt(b, i)] = counts[p]!;
    };
    if (pools === null) for (let p = 0; p < counts.length; p++) put(p);
    else for (const p of pools) put(p);
  }
}

/** Reads the span of rows from the lowest to the highest wanted id once, then copies the wanted rows (a retyped column row by row, converted). */
function copyRows(fd: number, col: SnapshotColumn, spec: ColumnSpec, rows: readonly number[]): void {
  if (rows.length === 0) return;
  if (col.type !== spec.type) {
    for (const r of rows) readElements(fd, col, spec, r * col.stride, col.stride, r * col.stride);
    return;
  }
  let lo = Infinity;
  let hi = -1;
  for (const r of rows) {
    if (r < lo) lo = r;
    if (r > hi) hi = r;
  }
  const row = rowBytes(spec);
  const span = Buffer.alloc((hi - lo + 1) * row);
  readExactly(fd, span, col.offset + lo * row);
  for (const r of rows) {
    const from = (r - lo) * row;
    bytesOf(spec.array, col.stride, r * col.stride).set(span.subarray(from, from + row));
  }
}
