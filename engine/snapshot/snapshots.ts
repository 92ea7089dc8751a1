/**
 * The snapshot folder of a store (`<data dir>/snapshots`): which files are complete, which one a
 * start loads, which ones a rollback may rebuild a chain from, and which ones go.
 *
 * Invariant: every file named `<seq>.snap` here was complete when it got that name, and describes
 * the views after log batch `seq` of the log as it stands (a rollback that rewrites a batch at or
 * before `seq` removes the file first: `dropFrom`).
 */
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOG_EXPORT_VERSION, type Catalog } from '../catalog/catalog.js';
import type { EngineViews } from '../state/views.js';
import { DERIVED_ROW_COLUMNS, seqOfFileName, SNAPSHOT_SUFFIX, tableMatch, type SnapshotHeader } from './format.js';
import { incompatibility, loadViewsDeferred, readHeader, SnapshotError } from './load.js';
import type { BlockLoader } from './block-loader.js';
import { runRows, type CaptureBuffers, type ShardCapture, type ShardRuns } from './capture.js';
import { layoutSnapshot, type MainCut, type SnapshotBase } from './write.js';
import { SnapshotWriter } from './writer-thread.js';

export interface SnapshotFile {
  readonly seq: number;
  readonly path: string;
  readonly bytes: number;
}

export interface SnapshotStats {
  /** Complete snapshots on disk, and the newest one's log batch, age and size. */
  readonly count: number;
  readonly newestSeq: number | null;
  readonly newestAgeSeconds: number | null;
  readonly newestBytes: number | null;
  /** Longest a shard was held at once for the last snapshot's cut (its changed rows, or one slice of its ring blocks and window slots: shard-cut.ts). */
  readonly lastPauseMs: number | null;
  /** The most time one shard spent copying for that cut in all, in slices between its tasks. */
  readonly lastCopyMs: number | null;
  /** Of lastPauseMs: the longest a shard was held when the cut reached it, and the longest slice after. */
  readonly lastCutMs: number | null;
  readonly lastSliceMs: number | null;
  /** How long the main thread (ingest) was held for the last snapshot's cut: its columns, the catalog, the source's state. */
  readonly lastMainMs: number | null;
  readonly lastWriteMs: number | null;
  /** Whether the last snapshot was written over the one before it (only the rows changed since copied), and how many pool and token rows its cut copied. */
  readonly lastDelta: boolean | null;
  readonly lastRowsCopied: number | null;
  /** Of those, pool rows and token rows. */
  readonly lastPoolsCopied: number | null;
  readonly lastTokensCopied: number | null;
  /** Ring blocks the shards copied whole for the last snapshot, and those whose candles (the pool did not trade since the one before it) were taken from that file. */
  readonly lastBlocksCopied: number | null;
  readonly lastBlocksKept: number | null;
  /** Bytes the shards' capture buffers hold after the last cut (row columns, block columns), and those they let go of at it. */
  readonly captureBuffers: CaptureBuffers | null;
  readonly writing: boolean;
  /** Where the snapshot being written is (null: none is), and since when (Unix ms). */
  readonly stage: SnapshotStage | null;
  readonly stageSinceMs: number | null;
  /** Seconds since then, as of the stats' time. */
  readonly stageSeconds: number | null;
  /** Milliseconds the last snapshot spent in each stage (null: none written yet). */
  readonly lastStagesMs: Readonly<Record<SnapshotStage, number>> | null;
}

/**
 * A snapshot's write after its cut, in order: the shards reaching the cut and copying their rows,
 * ring blocks and window slots; their store writes up to the cut becoming durable; the file; the
 * older snapshots beyond those kept and the log they made unnecessary going.
 */
export const SNAPSHOT_STAGES = ['shard_copies', 'store_durable', 'file', 'prune'] as const;
export type SnapshotStage = (typeof SNAPSHOT_STAGES)[number];

/** When the engine snapshots its views, how many it keeps, and whether the log before them goes. */
export interface SnapshotPolicy {
  /** Seconds between snapshots while events arrive. */
  readonly intervalSeconds: number;
  /** A snapshot once this many events were ingested since the last one, sooner than the interval. */
  readonly everyEvents: number;
  readonly keep: number;
  /** Remove log batches up to the oldest snapshot kept (a start and a rollback then read snapshots). */
  readonly pruneLog: boolean;
}

export const DEFAULT_SNAPSHOT_POLICY: SnapshotPolicy = {
  intervalSeconds: 300, // 5 min
  everyEvents: 2_000_000,
  keep: 2,
  // Off by default: a start whose column table differs from the snapshots' (a new version) then rebuilds from the log.
  pruneLog: false,
};

export class Snapshots {
  readonly dir: string;
  private readonly views: EngineViews;
  /** Columns of the loaded snapshot whose values were converted to this build's element type, as "name (from to to)". */
  convertedOnLoad: readonly string[] = [];
  private readonly keep: number;
  private newestTakenAtMs: number | null = null;
  private lastPauseMs: number | null = null;
  private lastCopyMs: number | null = null;
  private lastCutMs: number | null = null;
  private lastSliceMs: number | null = null;
  private lastMainMs: number | null = null;
  private lastWriteMs: number | null = null;
  private lastDelta: boolean | null = null;
  private lastRowsCopied: number | null = null;
  private lastPoolsCopied: number | null = null;
  private lastTokensCopied: number | null = null;
  private lastBlocksCopied: number | null = null;
  private lastBlocksKept: number | null = null;
  private captureBuffers: CaptureBuffers | null = null;
  private inFlight: Promise<SnapshotFile> | null = null;
  /** Writes the files on a thread of its own. */
  private readonly writer = new SnapshotWriter();
  private stage: SnapshotStage | null = null;
  private stageSinceMs = 0;
  private stagesMs: Record<SnapshotStage, number> | null = null;
  private lastStagesMs: Readonly<Record<SnapshotStage, number>> | null = null;
  /**
   * The snapshot the shards' changed-row marks are relative to (snapshot/dirty.ts): the one loaded
   * at the start or the last one written, while its file stands. A cut over it copies only the rows
   * changed since; null (none loaded, a write failed, a rollback removed it): the next cut copies all.
   */
  private baseFile: SnapshotBase | null = null;

  /** Run once each snapshot is durable and the old ones are gone, before `idle()` resolves (log pruning). */
  private readonly afterWrite: (oldestKept: number) => Promise<unknown>;

  constructor(dir: string, views: EngineViews, keep: number, afterWrite: (oldestKept: number) => Promise<unknown> = () => Promise.resolve()) {
    if (!Number.isInteger(keep) || keep < 1) throw new TypeError('keep must be a positive integer');
    this.dir = dir;
    this.views = views;
    this.keep = keep;
    this.afterWrite = afterWrite;
    mkdirSync(dir, { recursive: true });
    // A write cut short by a crash leaves only its temporary file.
    for (const name of readdirSync(dir)) if (name.endsWith(`${SNAPSHOT_SUFFIX}.tmp`)) rmSync(join(dir, name), { force: true });
  }

  /** Snapshot files by log batch, oldest first (names only: completeness is checked on load). */
  list(): SnapshotFile[] {
    const out: SnapshotFile[] = [];
    for (const name of readdirSync(this.dir)) {
      const seq = seqOfFileName(name);
      if (seq === null) continue;
      const path = join(this.dir, name);
      out.push({ seq, path, bytes: statSync(path).size });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /**
   * The header of the newest snapshot that is complete, fits these views and is not past the log
   * head, or null when none does. Skipped files are told to `log`.
   */
  newest(logHead: number, log: (line: string) => void): (SnapshotHeader & { readonly path: string }) | null {
    for (const file of this.list().reverse()) {
      try {
        if (file.seq > logHead) throw new SnapshotError(`${file.path}: past the log head ${logHead}`);
        const header = readHeader(file.path);
        const why = incompatibility(header, this.views);
        if (why !== null) throw new SnapshotError(`${file.path}: ${why}`);
        return { ...header, path: file.path };
      } catch (err) {
        log(`snapshot ${file.path} skipped: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return null;
  }

  /**
   * Loads snapshot `path` (chosen by `newest`) into the (fresh, zeroed) views and the (new, empty)
   * catalog; settles once its columns and catalog are in, with `blocks`, which settles once its ring
   * blocks are in too (read on `loader`'s thread when given one).
   */
  async load(path: string, catalog: Catalog, loader: BlockLoader | null = null): Promise<{ blocks: Promise<void> }> {
    const { header, blocks } = await loadViewsDeferred(path, this.views, catalog, loader);
    this.newestTakenAtMs = header.takenAtMs;
    // A file written with other column types, ring columns or an older catalog export is no base for a delta cut (its rows are not this build's bytes): the next cut is full.
    const { retyped, ringFields, poolOpened, asOfInRow, derivedKept } = tableMatch(header, this.views.columnTable)!;
    const catalogConverted = header.catalog.meta.version !== CATALOG_EXPORT_VERSION;
    this.baseFile = retyped.size === 0 && !ringFields && !poolOpened && !asOfInRow && !derivedKept && !catalogConverted ? { path, header } : null;
    this.convertedOnLoad = [...retyped].map((name) => `${name} (${header.columns.find((c) => c.name === name)!.type} to ${this.views.columnTable.find((c) => c.name === name)!.type})`);
    if (ringFields) this.convertedOnLoad = [...this.convertedOnLoad, 'candle rings (a column per field to one record column per interval)'];
    if (poolOpened) this.convertedOnLoad = [...this.convertedOnLoad, 'candle counts (pool columns to the ring blocks)'];
    if (asOfInRow) this.convertedOnLoad = [...this.convertedOnLoad, 'window as-of minutes (the pool row to the window slots)'];
    if (derivedKept) this.convertedOnLoad = [...this.convertedOnLoad, `${DERIVED_ROW_COLUMNS.map((c) => c.name).join(' and ')} (left out: derived on read)`];
    if (catalogConverted) this.convertedOnLoad = [...this.convertedOnLoad, `the catalog (export version ${header.catalog.meta.version} to ${CATALOG_EXPORT_VERSION})`];
    return { blocks };
  }

  /** The newest complete, compatible snapshot taken before log batch `seq` (a rollback's base), or null. */
  before(seq: number): SnapshotFile | null {
    for (const file of this.list().reverse()) {
      if (file.seq >= seq) continue;
      try {
        if (incompatibility(readHeader(file.path), this.views) === null) return file;
      } catch {
        // incomplete or foreign: try an older one
      }
    }
    return null;
  }

  /** Removes every snapshot of log batch `seq` or later (their batches are being rewritten). */
  dropFrom(seq: number): void {
    for (const file of this.list()) if (file.seq >= seq) rmSync(file.path, { force: true });
    if (this.baseFile !== null && this.baseFile.header.seq >= seq) this.baseFile = null;
  }

  /** The snapshot a cut now would be a delta over, or null (a full cut). */
  get base(): SnapshotBase | null {
    return this.baseFile;
  }

  get writing(): boolean {
    return this.inFlight !== null;
  }

  /**
   * Writes the snapshot of a cut once the shards have handed their rows over (`shardParts`, in shard
   * order) and their store writes up to the cut are on disk (`durable`, called then); `mainMs`: what
   * the cut held the main thread. Settles once the file is durable, the older files beyond `keep` are
   * gone and the log they made unnecessary is pruned.
   */
  take(cut: MainCut, shardParts: Promise<readonly { readonly runs: ShardRuns; readonly capture: ShardCapture }[]>, durable: () => Promise<void>, mainMs: number): Promise<SnapshotFile> {
    if (this.inFlight !== null) throw new Error('a snapshot is already being written');
    const over = this.baseFile;
    // Until this write succeeds the shards' marks are relative to it alone: a failure means a full cut next.
    this.baseFile = null;
    this.stagesMs = { shard_copies: 0, store_durable: 0, file: 0, prune: 0 };
    this.enter('shard_copies');
    const run = shardParts.then(async (parts) => {
      // The store writes of the batches up to the cut are on disk before the snapshot says so.
      this.enter('store_durable');
      await durable();
      this.enter('file');
      const { held, ...captured } = layoutSnapshot(this.views, cut, parts, parts.some((p) => p.capture.rows !== undefined) ? over : null);
      // The cut's own copies move to the writer's thread: nothing here reads them after this.
      const path = await this.writer.write(this.dir, captured, cut);
      this.baseFile = { path, header: captured.header, held };
      this.lastCutMs = Math.max(...parts.map((p) => p.capture.heldMs));
      this.lastSliceMs = Math.max(...parts.map((p) => p.capture.sliceMs));
      this.lastPauseMs = Math.max(this.lastCutMs, this.lastSliceMs);
      this.lastCopyMs = Math.max(...parts.map((p) => p.capture.copyMs));
      this.lastMainMs = mainMs;
      this.lastDelta = captured.base !== undefined;
      this.lastPoolsCopied = parts.reduce((n, { runs, capture }) => n + (capture.rows ? capture.rows.pools.length : runRows(runs.pools)), 0);
      this.lastTokensCopied = parts.reduce((n, { runs, capture }) => n + (capture.rows ? capture.rows.tokens.length : runRows(runs.tokens)), 0);
      this.lastRowsCopied = this.lastPoolsCopied + this.lastTokensCopied;
      this.lastBlocksCopied = parts.reduce((n, { capture }) => n + capture.blocks.pools.length, 0);
      this.lastBlocksKept = parts.reduce((n, { capture }) => n + capture.blocks.kept.pools.length, 0);
      this.captureBuffers = parts.reduce((a, { capture: { buffers: b } }) => ({ rows: a.rows + b.rows, blocks: a.blocks + b.blocks, released: a.released + b.released }), { rows: 0, blocks: 0, released: 0 });
      this.newestTakenAtMs = captured.header.takenAtMs;
      this.enter('prune');
      const files = this.list();
      const gone = Math.max(0, files.length - this.keep);
      for (const old of files.slice(0, gone)) rmSync(old.path, { force: true });
      await this.afterWrite(files[gone]!.seq);
      this.enter(null);
      // Together, so /stats never pairs one snapshot's write with another's stages.
      this.lastWriteMs = this.stagesMs!.file;
      this.lastStagesMs = this.stagesMs;
      return { seq: cut.seq, path, bytes: captured.header.bytes };
    });
    this.inFlight = run.finally(() => {
      this.inFlight = null;
      this.stage = null;
    });
    return this.inFlight;
  }

  /** Moves the snapshot being written to `stage` (null: done), adding the time of the one it leaves. */
  private enter(stage: SnapshotStage | null): void {
    const now = Date.now();
    if (this.stage !== null && this.stagesMs !== null) this.stagesMs[this.stage] += now - this.stageSinceMs;
    this.stage = stage;
    this.stageSinceMs = now;
  }

  /** Ends the writer's thread (after `idle()`). */
  close(): void {
    this.writer.close();
  }

  /** Resolves once a snapshot being written is on disk (or failed). */
  async idle(): Promise<void> {
    await this.inFlight?.catch(() => {});
  }

  stats(nowMs = Date.now()): SnapshotStats {
    const files = this.list();
    const newest = files.at(-1);
    return {
      count: files.length,
      newestSeq: newest?.seq ?? null,
      newestAgeSeconds: newest && this.newestTakenAtMs !== null ? Math.max(0, (nowMs - this.newestTakenAtMs) / 1000) : null,
      newestBytes: newest?.bytes ?? null,
      lastPauseMs: this.lastPauseMs,
      lastCopyMs: this.lastCopyMs,
      lastCutMs: this.lastCutMs,
      lastSliceMs: this.lastSliceMs,
      lastMainMs: this.lastMainMs,
      lastWriteMs: this.lastWriteMs,
      lastDelta: this.lastDelta,
      lastRowsCopied: this.lastRowsCopied,
      lastPoolsCopied: this.lastPoolsCopied,
      lastTokensCopied: this.lastTokensCopied,
      lastBlocksCopied: this.lastBlocksCopied,
      lastBlocksKept: this.lastBlocksKept,
      captureBuffers: this.captureBuffers,
      writing: this.writing,
      stage: this.stage,
      stageSinceMs: this.stage === null ? null : this.stageSinceMs,
      stageSeconds: this.stage === null ? null : Math.max(0, (nowMs - this.stageSinceMs) / 1000),
      lastStagesMs: this.lastStagesMs,
    };
  }
}
