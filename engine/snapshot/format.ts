/**
 * The snapshot file: the shared-memory views as they stood after log batch `seq` was applied.
 *
 *   [0, 8)          magic "DXSNAP01"
 *   [8, 12)         header length H, u32 little-endian
 *   [12, 12 + H)    header, JSON (SnapshotHeader)
 *   column data     each column's used rows at the offset its header entry names (8-byte aligned)
 *   ring blocks     the pools holding a ring block (i32 each), then each block column's rows for them,
 *                   in that order, in segments of consecutive pools (per shard, the rows its cut
 *                   copied, then those taken from the previous file), each a bit per 4-byte word and
 *                   the non-zero words (blocks.ts; version 3: the rows whole): a load hands them
 *                   blocks 0..n-1
 *   window slots    the same, for the pools holding a window slot and the slot columns' rows
 *   pending candles sealed candles the shards had not yet stored at the cut (msgpack), merged into the store on load
 *   source state    the source's own state at the cut (the simulator's, to resume from), possibly empty
 *   catalog         the catalog's parts (engine/catalog/parts.ts) and address tables, one section each,
 *                   to the ids in use; its meta (networks, DEXes, id allocation) is in the header
 *   last 8 bytes    magic "DXSNAPOK"
 *
 * A file is complete when its size equals the header's `bytes` and it ends with the closing magic;
 * it is written under a temporary name, synced, then renamed (write.ts), so a kill -9 at any point
 * leaves either no file or a complete one. Only columns that are not transient are kept, each to the
 * rows in use (pool and token ids below the counts), so a snapshot loads into views of any capacity
 * that holds those rows. `tableHash` names the column table the file was written with: a file loads
 * when its hash is the running engine's, or when it becomes the running engine's once the element
 * types the header gives for its row columns are put in place of this build's (a column whose type
 * changed between versions, as event times from f64 to u32: its values are converted on load,
 * tableMatch), or once its candle rings are put back as a column per field (as files written before
 * the candle records keep them: ringFieldColumns; put into the records on load, blocks.ts), or its
 * rings' candle counts as pool columns (as files written before the counts moved into the ring
 * blocks keep them: poolOpenedColumns; put into the blocks on load, load.ts), or once the minutes
 * its window figures are as of are put back in the pool row (as files written before they moved
 * into the window slots keep them: asOfInRowColumns; put into the slots on load, slot-as-of.ts),
 * or once the row columns this build derives on read are put back (DERIVED_ROW_COLUMNS: left out
 * on load), or with its catalog in export version 1 (that version's parts hashed: converted on load,
 * catalog/export-v1.ts), or any of these together; any other difference and the file is not loaded.
 */
import { createHash } from 'node:crypto';
import { CATALOG_EXPORT_VERSION, type CatalogMeta } from '../catalog/catalog.js';
import { PARTS } from '../catalog/parts.js';
import { CATALOG_V1, PARTS_V1 } from '../catalog/export-v1.js';
import { RING_OPENED_COLUMN, type ColumnSpec } from '../state/views.js';
import { CANDLE_WORDS, RING_FIELDS, type CandleField } from '../state/candle-record.js';

export const SNAPSHOT_MAGIC = Buffer.from('DXSNAP01', 'latin1');
export const SNAPSHOT_END = Buffer.from('DXSNAPOK', 'latin1');
export const SNAPSHOT_FORMAT_VERSION = 4;
/** Versions a start still loads: 3 kept ring blocks whole (an upgrade loads its snapshots, then writes version 4). */
export const READABLE_FORMAT_VERSIONS: readonly number[] = [3, 4];
/** The rows' layout the table hash covers, unchanged since version 3 (the ring blocks' encoding is told by `version`). */
const ROW_LAYOUT_VERSION = 3;
export const SNAPSHOT_SUFFIX = '.snap';
/** Data of column i starts at a multiple of this, so it can be read straight into a typed array. */
export const COLUMN_ALIGN_BYTES = 8;

export interface SnapshotColumn {
  readonly name: string;
  readonly type: ColumnSpec['type'];
  readonly scope: ColumnSpec['scope'];
  readonly stride: number;
  /** Absolute file offset and length of the column's data. */
  readonly offset: number;
  readonly bytes: number;
}

export interface SnapshotHeader {
  readonly version: number;
  readonly tableHash: string;
  /** Every log batch up to this one is applied in the views, none after it. */
  readonly seq: number;
  /** Pool and token id bounds (counts) and chain capacity the rows were taken to. */
  readonly pools: number;
  readonly tokens: number;
  readonly chains: number;
  /** Wall clock (ms) when the views were copied. */
  readonly takenAtMs: number;
  /** Size of the whole file. */
  readonly bytes: number;
  readonly columns: readonly SnapshotColumn[];
  /** Sealed candles the shards held for the store at the cut (msgpack of PendingChunkData[]): merged into it on load. */
  readonly pending: SnapshotSection & { readonly chunks: number };
  /** The source's state as of the cut (empty for sources that keep none): a simulator resumes from it. */
  readonly source: SnapshotSection;
  readonly blocks: BlocksSection;
  /** Pools that held a window slot at the cut, laid out as `blocks` (blocks.ts). */
  readonly windowSlots: BlocksSection;
  /** The catalog as of the cut: a start restores it from these sections instead of reading every pool and token record. */
  readonly catalog: CatalogSection;
}

/** The catalog's export (Catalog.export without the view columns, which the snapshot keeps as columns). */
export interface CatalogSection {
  readonly meta: CatalogMeta;
  readonly sections: readonly (SnapshotSection & { readonly name: string })[];
}

/** Pools that held a ring block at the cut: their ids (i32) at `offset`, then each block column's rows, in their order. */
export interface BlocksSection {
  readonly offset: number;
  readonly pools: number;
  readonly columns: readonly BlockColumnSection[];
}

/** A block column's rows: version 4 per shard without their zero words (`segments`), version 3 whole at `offset`. */
export type BlockColumnSection =
  | { readonly name: string; readonly segments: readonly BlockSegment[] }
  | { readonly name: string; readonly offset: number; readonly bytes: number };

/**
 * The rows of `pools` consecutive pools of the file (of one shard) in one block column, read as
 * 4-byte words: at `maskOffset` a bit per word (u32s, least significant bit first; set: not zero),
 * at `offset` the `bytes` of the non-zero words in order.
 */
export interface BlockSegment {
  readonly pools: number;
  readonly maskOffset: number;
  readonly offset: number;
  readonly bytes: number;
}

export interface SnapshotSection {
  readonly offset: number;
  readonly bytes: number;
}

/** The columns a snapshot keeps row by row (ring blocks and window slots are kept per pool holding one: blockColumns). */
export function keptColumns(table: readonly ColumnSpec[]): ColumnSpec[] {
  return table.filter((c) => !c.transient && c.scope !== 'block' && c.scope !== 'windowSlot');
}

/** The ring block (or window slot) columns a snapshot keeps, for the pools holding one. */
export function blockColumns(table: readonly ColumnSpec[], scope: 'block' | 'windowSlot' = 'block'): ColumnSpec[] {
  return table.filter((c) => !c.transient && c.scope === scope);
}

/** What the table hash covers of a column. */
type ColumnShape = Pick<ColumnSpec, 'name' | 'type' | 'scope' | 'stride' | 'transient'>;

/** Catalog export versions a start still loads: 1 is converted on load (catalog/export-v1.ts). */
export const READABLE_CATALOG_VERSIONS: readonly number[] = [CATALOG_V1, CATALOG_EXPORT_VERSION];

/**
 * Hash of the kept columns' names, types, scopes and strides and of the catalog's parts, with the
 * layout versions; `catalogVersion` 1 hashes that version's parts (files written before version 2).
 */
export function columnTableHash(table: readonly ColumnShape[], catalogVersion = CATALOG_EXPORT_VERSION): string {
  const shape = table.filter((c) => !c.transient).map((c) => [c.name, c.type, c.scope, c.stride]);
  const catalog = catalogVersion === CATALOG_V1 ? PARTS_V1 : PARTS.map((p) => [p.name, p.ctor.BYTES_PER_ELEMENT, p.scope, p.stride]);
  return createHash('sha256').update(JSON.stringify([ROW_LAYOUT_VERSION, shape, catalogVersion, catalog])).digest('hex').slice(0, 16);
}

/**
 * The block columns of `table` as files before the candle records kept them: each ring's record
 * column (`ring.<iv>.candles`) as one column per candle field (`ring.<iv>.<field>`, RING_FIELDS order,
 * a slot per candle), every other column as it is. Derived from the candle record's field list.
 */
export function ringFieldColumns<C extends ColumnShape>(table: readonly C[]): (C | LegacyRingColumn)[] {
  return table.flatMap((c): (C | LegacyRingColumn)[] => {
    const ring = ringOfRecords(c);
    if (ring === null) return [c];
    const slots = c.stride / CANDLE_WORDS;
    return RING_FIELDS.map((f) => ({ name: `ring.${ring}.${f.name}`, type: f.type, scope: 'block', stride: slots, transient: c.transient, records: c.name, field: f, slots }));
  });
}

/**
 * `table` as files written before the candle counters moved into the ring blocks kept them: no
 * block column `ring.opened`, and before each ring's record column (`ring.<iv>.candles`) a pool
 * column `ring.<iv>.opened` (u32, the pool's candles of that interval ever opened). Derived from
 * the table: the rings' record columns name the intervals.
 */
export function poolOpenedColumns<C extends ColumnShape>(table: readonly C[]): (C | PoolOpenedColumn)[] {
  return table.flatMap((c): (C | PoolOpenedColumn)[] => {
    if (c.scope === 'block' && c.name === RING_OPENED_COLUMN) return [];
    const ring = ringOfRecords(c);
    if (ring === null) return [c];
    return [{ name: poolOpenedName(ring), type: 'u32', scope: 'pool', stride: 1, transient: false, interval: ring }, c];
  });
}

/** A pool column of an older file holding a ring's candle count (poolOpenedColumns). */
export interface PoolOpenedColumn extends ColumnShape {
  /** The interval's name (layout.ts INTERVALS). */
  readonly interval: string;
}

/** The pool column an older file kept interval `iv`'s candle counts in. */
export function poolOpenedName(iv: string): string {
  return `ring.${iv}.opened`;
}

/** One per-field ring column of an older file: which record column and field it is now. */
export interface LegacyRingColumn extends ColumnShape {
  readonly records: string;
  readonly field: CandleField;
  readonly slots: number;
}

/** The interval name of a ring's record column, or null for any other column. */
function ringOfRecords(c: Pick<ColumnSpec, 'name' | 'scope'>): string | null {
  const m = c.scope === 'block' ? /^ring\.([^.]+)\.candles$/.exec(c.name) : null;
  return m === null ? null : m[1]!;
}

/** Whether `c` is a window slot column that files written before it left the pool row kept there (`winAsOf.<base>`). */
export function isSlotAsOf(c: Pick<ColumnSpec, 'name' | 'scope'>): boolean {
  return c.scope === 'windowSlot' && c.name.startsWith('winAsOf.');
}

/**
 * The columns of `table` as files before the window slots held the as-of minutes kept them: each
 * `winAsOf.<base>` a pool row column, in the same place of the table (views.ts declares them there).
 */
export function asOfInRowColumns<C extends ColumnShape>(table: readonly C[]): C[] {
  return table.map((c) => (isSlotAsOf(c) ? { ...c, scope: 'pool' as const } : c));
}

/**
 * Row columns files written before kept that this build derives from other columns when read (the
 * reserves with decimals applied: state/reserve-price.ts poolReserve), each with the column it
 * followed in the table. A file keeping them loads; their data is left out.
 */
export const DERIVED_ROW_COLUMNS: readonly (ColumnShape & { readonly after: string })[] = [
  { name: 'reserve0', type: 'f64', scope: 'pool', stride: 1, transient: false, after: 'priceUsd1' },
  { name: 'reserve1', type: 'f64', scope: 'pool', stride: 1, transient: false, after: 'reserve0' },
];

/** The columns of `table` as files before DERIVED_ROW_COLUMNS were derived kept them: each back after the column it followed. */
export function withDerivedColumns<C extends ColumnShape>(table: readonly C[]): (C | ColumnShape)[] {
  const out: (C | ColumnShape)[] = [];
  const put = (c: C | ColumnShape) => {
    out.push(c);
    for (const d of DERIVED_ROW_COLUMNS) if (d.after === c.name) put({ name: d.name, type: d.type, scope: d.scope, stride: d.stride, transient: d.transient });
  };
  for (const c of table) put(c);
  return out;
}

/** How a file's columns map onto the running table (tableMatch). */
export interface TableMatch {
  /** Row columns whose element type in the file differs from the table's: their values are converted on load. */
  readonly retyped: ReadonlySet<string>;
  /** The file keeps candle rings as one column per field (before the candle records): converted on load. */
  readonly ringFields: boolean;
  /** The file keeps the window as-of minutes in the pool row (before the window slots held them): put into the slots on load. */
  readonly asOfInRow: boolean;
  /** The file keeps DERIVED_ROW_COLUMNS (left out on load). */
  readonly derivedKept: boolean;
  /**
   * The file keeps the rings' candle counts as pool columns (`ring.<iv>.opened`, before they moved
   * into the ring blocks): a pool holding a block takes its counts from them on load; the rest drop theirs.
   */
  readonly poolOpened: boolean;
}

/**
 * How a snapshot's columns map onto `table`: `retyped` names the row columns whose element type in
 * the file differs from the table's (their values are converted on load), `ringFields` says the file
 * keeps its candle rings a column per field (converted into the records on load), `poolOpened` that
 * it keeps the rings' candle counts as pool columns (put into the ring blocks on load); all empty when
 * the file was written with this very table; null when the file's table differs in anything else
 * (a column added, dropped, rescoped or restrided, the catalog's parts, the layout version). The
 * catalog's parts are hashed as the export version the header names wrote them.
 */
export function tableMatch(header: Pick<SnapshotHeader, 'tableHash' | 'columns' | 'catalog'>, table: readonly ColumnShape[]): TableMatch | null {
  const catalogVersion = header.catalog.meta.version;
  if (header.tableHash === columnTableHash(table, catalogVersion)) return { retyped: new Set(), ringFields: false, poolOpened: false, asOfInRow: false, derivedKept: false };
  const inFile = new Map(header.columns.map((c) => [c.name, c]));
  // Each older layout as a change of the table, applied in the order the table changed back through them.
  for (let mask = 1; mask < 32; mask++) {
    const [poolOpened, asOfInRow, derivedKept, ringFields, anyRetyped] = [1, 2, 4, 8, 16].map((bit) => (mask & bit) !== 0);
    let shapes: readonly ColumnShape[] = table;
    if (poolOpened) shapes = poolOpenedColumns(shapes);
    if (asOfInRow) shapes = asOfInRowColumns(shapes);
    if (derivedKept) shapes = withDerivedColumns(shapes);
    if (ringFields) shapes = ringFieldColumns(shapes);
    const retyped = new Set<string>();
    const asWritten = shapes.map((c) => {
      const f = inFile.get(c.name);
      if (!anyRetyped || f === undefined || f.type === c.type || f.scope !== c.scope || f.stride !== c.stride) return c;
      retyped.add(c.name);
      return { ...c, type: f.type };
    });
    if (anyRetyped && retyped.size === 0) continue;
    if (header.tableHash === columnTableHash(asWritten, catalogVersion)) return { retyped, ringFields, poolOpened, asOfInRow, derivedKept };
  }
  return null;
}

/** The typed array of each column type (a retyped column's file data is read through its file type's). */
export const TYPE_ARRAYS = { f64: Float64Array, u32: Uint32Array, i32: Int32Array, u16: Uint16Array, u8: Uint8Array } as const satisfies Record<ColumnSpec['type'], unknown>;

/** Rows of a column the views hold in use: pools and tokens below their id bounds, every chain. */
export function usedRows(c: Pick<ColumnSpec, 'scope'>, pools: number, tokens: number, chains: number): number {
  return c.scope === 'pool' ? pools : c.scope === 'token' ? tokens : c.scope === 'chain' ? chains : 1;
}

/** Bytes of one row of a column (its stride of elements). */
export function rowBytes(c: Pick<ColumnSpec, 'stride' | 'array'>): number {
  return c.stride * c.array.BYTES_PER_ELEMENT;
}

/** The rows in use of a column, as a byte view of its shared buffer (no copy). */
export function usedBytes(c: ColumnSpec, pools: number, tokens: number, chains: number): Uint8Array {
  return new Uint8Array(c.array.buffer, c.array.byteOffset, usedRows(c, pools, tokens, chains) * rowBytes(c));
}

export function snapshotFileName(seq: number): string {
  return `${String(seq).padStart(12, '0')}${SNAPSHOT_SUFFIX}`;
}

export function seqOfFileName(name: string): number | null {
  const m = /^(\d{12})\.snap$/.exec(name);
  return m ? Number(m[1]) : null;
}

export const alignUp = (n: number) => Math.ceil(n / COLUMN_ALIGN_BYTES) * COLUMN_ALIGN_BYTES;
