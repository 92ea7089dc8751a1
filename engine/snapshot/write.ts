/**
 * Taking a snapshot: the copies of a cut (capture.ts) are laid out as one file (format.ts), and
 * `writeSnapshot` puts it on disk in the background (temporary name, fsync, rename, fsync of the
 * folder: a kill -9 at any point leaves the files before it as they were).
 */
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pack } from 'msgpackr';
import type { ColumnSpec, EngineViews } from '../state/views.js';
import { assembleRows, shardRowColumns, type ShardCapture, type ShardRuns } from './capture.js';
import {
  alignUp,
  columnTableHash,
  keptColumns,
  SNAPSHOT_END,
  SNAPSHOT_FORMAT_VERSION,
  SNAPSHOT_MAGIC,
  snapshotFileName,
  usedRows,
  type SnapshotColumn,
  type SnapshotHeader,
} from './format.js';

export interface CapturedViews {
  readonly header: SnapshotHeader;
  /** The header's bytes (magic, length, JSON, padding), then one buffer per column, in header order. */
  readonly parts: readonly Uint8Array[];
}

/** The main thread's half of a cut: its own columns copied, and the id bounds the shards' rows are taken to. */
export interface MainCut {
  readonly seq: number;
  readonly pools: number;
  readonly tokens: number;
  readonly chains: number;
  readonly takenAtMs: number;
  readonly copies: ReadonlyMap<string, Uint8Array>;
  /** The source's own state as of the cut (a simulator resumes from it), when it keeps one. */
  readonly sourceState?: Uint8Array;
}

function usedBytes(c: ColumnSpec, pools: number, tokens: number, chains: number): Uint8Array {
  const elements = usedRows(c, pools, tokens, chains) * c.stride;
  return new Uint8Array(c.array.buffer, c.array.byteOffset, elements * c.array.BYTES_PER_ELEMENT);
}

/** Copies the kept columns ingest writes (main thread, between two ingest steps: they are as of batch `seq`). */
export function cutMain(views: EngineViews, seq: number, sourceState?: Uint8Array, nowMs = Date.now()): MainCut {
  const pools = views.poolCount;
  const tokens = views.tokenCount;
  const chains = views.capacity.chains;
  const copies = new Map<string, Uint8Array>();
  for (const c of keptColumns(views.columnTable)) {
    if (c.writer === 'ingest') copies.set(c.name, usedBytes(c, pools, tokens, chains).slice());
    else if (c.writer !== 'shard' || (c.scope !== 'pool' && c.scope !== 'token')) throw new Error(`column ${c.name}: a snapshot cannot take a ${c.scope} column written by ${c.writer}`);
  }
  return { seq, pools, tokens, chains, takenAtMs: nowMs, copies, ...(sourceState ? { sourceState } : {}) };
}

/** Lays out the file from the main thread's copies and each shard's runs (capture.ts). */
export function layoutSnapshot(views: EngineViews, cut: MainCut, shards: readonly { readonly runs: ShardRuns; readonly capture: ShardCapture }[]): CapturedViews {
  const sourceState = cut.sourceState ?? new Uint8Array(0);
  const rowColumns = shardRowColumns(views.columnTable);
  const datas: Uint8Array[] = [];
  const shapes: Omit<SnapshotColumn, 'offset'>[] = [];
  for (const c of keptColumns(views.columnTable)) {
    let data = cut.copies.get(c.name);
    if (data === undefined) {
      const i = rowColumns.indexOf(c);
      const rows = c.scope === 'pool' ? cut.pools : cut.tokens;
      data = assembleRows(c, rows, shards.map((s) => ({ runs: c.scope === 'pool' ? s.runs.pools : s.runs.tokens, data: s.capture.columns[i]! })));
    }
    datas.push(data);
    shapes.push({ name: c.name, type: c.type, scope: c.scope, stride: c.stride, bytes: data.byteLength });
  }
  const pending = shards.flatMap((s) => s.capture.pending);
  const pendingBytes = pack(pending) as Uint8Array;
  const tableHash = columnTableHash(views.columnTable);
  // The header's length depends on the offsets it lists: lay out with room to spare, widen until it fits.
  const draft = (base: number): SnapshotHeader => {
    let at = base;
    const columns = shapes.map((s) => {
      const col: SnapshotColumn = { ...s, offset: at };
      at = alignUp(at + s.bytes);
      return col;
    });
    const pendingSection = { offset: at, bytes: pendingBytes.byteLength, chunks: pending.length };
    at = alignUp(at + pendingBytes.byteLength);
    const sourceSection = { offset: at, bytes: sourceState.byteLength };
    at = alignUp(at + sourceState.byteLength);
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
  const head = Buffer.alloc(base);
  SNAPSHOT_MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, 8);
  json.copy(head, 12);
  const parts: Uint8Array[] = [head];
  const padded = (d: Uint8Array) => {
    parts.push(d);
    const pad = alignUp(d.byteLength) - d.byteLength;
    if (pad > 0) parts.push(new Uint8Array(pad));
  };
  for (const d of datas) padded(d);
  padded(pendingBytes);
  padded(sourceState);
  parts.push(SNAPSHOT_END);
  return { header, parts };
}

/** Writes a captured snapshot into `dir`; resolves with its path once it is durable under its final name. */
export async function writeSnapshot(dir: string, captured: CapturedViews): Promise<string> {
  const path = join(dir, snapshotFileName(captured.header.seq));
  const tmp = `${path}.tmp`;
  const file = await open(tmp, 'w');
  try {
    for (const part of captured.parts) {
      let done = 0;
      while (done < part.byteLength) done += (await file.write(part, done, part.byteLength - done)).bytesWritten;
    }
    await file.sync();
  } catch (err) {
    await file.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
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
