/**
 * The two ends of a snapshot's life in an engine: `cutSnapshot` between ingest steps, and
 * `loadState` at a start (the newest usable snapshot, its pending candles into the store, the
 * registry, then the log after it).
 */
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import type { Ingest } from '../ingest/ingest.js';
import type { ShardDispatcher } from '../pipeline.js';
import type { EngineViews } from '../state/views.js';
import type { Store } from '../store/store.js';
import type { Source } from '../sources/source.js';
import { runsByShard, type ShardCapture, type ShardRuns } from './capture.js';
import { blockColumns, keptColumns, rowBytes, usedRows, type SnapshotHeader } from './format.js';
import { blockStats } from '../state/ring-blocks.js';
import { windowSlots } from '../state/window-slots.js';
import { restorePending } from './pending.js';
import { settleWatermarks, storedByEveryShard } from '../shards/assignment.js';
import { logPrunedThrough } from './prune-log.js';
import type { SnapshotFile, Snapshots } from './snapshots.js';
import { cutMain } from './write.js';
import type { BlockLoader } from './block-loader.js';

/** Shards that can hand over their rows at a cut. */
export interface CuttableShards extends ShardDispatcher {
  readonly shards: number;
  shardOf(chain: number): number;
  /**
   * Each shard's rows (runs[shard]; with `delta`, only those it changed since its previous capture)
   * and pending candles, after the tasks submitted before; with `held` too, the candles of its ring
   * blocks only for the pools whose candles it wrote since (blocks.ts HeldRowsCopy).
   */
  capture(runs: readonly ShardRuns[], delta: boolean, held: boolean): Promise<ShardCapture[]>;
  /** Resolves once every store write the shards issued so far is on disk. */
  durable(): Promise<void>;
}

export interface Cut {
  readonly seq: number;
  /** Main-thread time of the cut (its own columns and the catalog copied, the source's state saved, rows split among the shards). */
  readonly mainMs: number;
  /** The part of mainMs the source took to save its state. */
  readonly sourceMs: number;
  readonly written: Promise<SnapshotFile>;
}

/**
 * Cuts a snapshot after the last batch ingested (call between ingest steps, with no snapshot being
 * written): the main thread copies its columns (and the source's state, when it keeps one) now, each
 * shard its rows when its queue reaches the cut, while ingest goes on; the file is written in the
 * background. Every event the source produced so far must be ingested (the cut is between steps).
 * Skipped (with the reason) when the copies would take more than half the memory available: a
 * universe that large needs the tiered state, and a start then replays the log.
 */
export function cutSnapshot(views: EngineViews, ingest: Ingest, snapshots: Snapshots, shards: CuttableShards, source?: Source): Cut | { readonly skipped: string } {
  const seq = ingest.head;
  // Over the previous snapshot, a cut copies only the rows changed since: the guard is for full cuts.
  const delta = snapshots.base !== null;
  if (!delta) {
    const need = cutBytes(views);
    const available = availableMemoryBytes();
    if (need > CUT_MEMORY_SHARE * available) {
      return { skipped: `a cut would copy ${gib(need)} of shared memory and ${gib(available)} is available; starts replay the log meanwhile` };
    }
  }
  const t0 = performance.now();
  const sourceState = source?.saveState?.();
  const sourceMs = performance.now() - t0;
  const main = cutMain(views, seq, ingest.registry.export({ viewColumns: false, shareAppendOnly: true }), sourceState);
  const runs = runsByShard(views, shards.shards, (c) => shards.shardOf(c), main.pools, main.tokens, (t) => ingest.registry.tokenLive(t));
  const mainMs = performance.now() - t0;
  // The ring blocks' candles too, when this process wrote the file it is relative to (it knows where that file keeps them).
  const held = delta && snapshots.base!.held !== undefined;
  const parts = ingest.afterHandOver(() => shards.capture(runs, delta, held)).then((captures) => captures.map((capture, i) => ({ runs: runs[i]!, capture })));
  return { seq, mainMs, sourceMs, written: snapshots.take(main, parts, () => shards.durable(), mainMs) };
}

/** A cut may take at most this share of the memory available (its copies live until the file is written). */
const CUT_MEMORY_SHARE = 0.5;

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/** Bytes a cut copies: every kept column to the rows in use but those taken without a copy (cutMain), and the ring blocks and window slots in use. */
export function cutBytes(views: EngineViews): number {
  let n = 0;
  for (const c of keptColumns(views.columnTable)) {
    if (c.writer === 'ingest' && (c.scope === 'pool' || c.scope === 'token')) continue;
    n += usedRows(c, views.poolCount, views.tokenCount, views.capacity.chains) * rowBytes(c);
  }
  const hot = blockStats(views).used;
  for (const c of blockColumns(views.columnTable)) n += hot * rowBytes(c);
  const slots = blockStats(views, windowSlots(views)).used;
  for (const c of blockColumns(views.columnTable, 'windowSlot')) n += slots * rowBytes(c);
  return n;
}

/** What the kernel says could be allocated without swapping (MemAvailable), or free memory elsewhere. */
function availableMemoryBytes(): number {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

export interface LoadedState {
  /** The snapshot loaded, or null (the whole log was replayed). */
  readonly snapshot: (SnapshotHeader & { readonly path: string }) | null;
  readonly replayedBatches: number;
}

/** The views as of the snapshot a start loaded (or empty), before the log after it is replayed. */
export interface OpenedState {
  readonly snapshot: (SnapshotHeader & { readonly path: string }) | null;
  /** Settles once the snapshot's ring blocks are in the views: before it, no batch may be applied and no ring read. */
  readonly blocks: Promise<void>;
  /** Log batches up to this one had every effect stored (the settled shard watermarks): a replay stores only those after it. */
  readonly storedThrough: number;
}

/**
 * Fills fresh views at a start and replays the log after what they hold (openState, then the
 * replay once the ring blocks are in).
 */
export async function loadState(store: Store, ingest: Ingest, snapshots: Snapshots | null, shards: number, log: (line: string) => void): Promise<LoadedState> {
  const { snapshot, blocks } = await openState(store, ingest, snapshots, shards, log);
  await blocks;
  return { snapshot, replayedBatches: await ingest.replay(snapshot?.seq ?? 0) };
}

/**
 * Fills fresh views at a start, up to the log replay: the newest usable snapshot (its pending
 * candles merged into the store first, then its columns and catalog read in, its ring blocks on
 * `loader`'s thread when given one), then the catalog entries made after it (their records: static
 * columns, id bounds). Throws when the log was pruned past what any usable snapshot covers. A
 * snapshot whose held candles cannot be stored (a full disk) is given up for the whole log.
 */
export async function openState(store: Store, ingest: Ingest, snapshots: Snapshots | null, shards: number, log: (line: string) => void, loader: BlockLoader | null = null): Promise<OpenedState> {
  let snapshot = snapshots?.newest(ingest.head, log) ?? null;
  const prunedThrough = logPrunedThrough(store);
  let storedThrough = 0;
  if (snapshot) {
    try {
      storedThrough = await restorePending(store, snapshot, shards);
    } catch (err) {
      // The held candles cannot be stored (a full disk): without them the snapshot is not whole, so
      // the views stay empty and the whole log is replayed, when there is one.
      if (prunedThrough > 0) throw err;
      log(`snapshot ${snapshot.path} not used, its held candles could not be stored (${err instanceof Error ? err.message : String(err)}): the whole log is replayed`);
      snapshot = null;
    }
  }
  // Without a snapshot the watermarks are settled on their own (restorePending does it with its candles).
  if (snapshot === null) {
    try {
      storedThrough = await store.root.transaction(() => settleWatermarks(store, shards));
    } catch (err) {
      // A full disk: the shards still replay from the lowest watermark; a crash before their next commits may repeat more of the log.
      storedThrough = storedByEveryShard(store);
      log(`shard watermarks not settled (${err instanceof Error ? err.message : String(err)}): the log after batch ${storedThrough} is stored again as it is replayed`);
    }
  }
  if (prunedThrough > (snapshot?.seq ?? 0)) {
    throw new Error(
      `${store.path}: the log is pruned through batch ${prunedThrough} and no snapshot there fits this version (the reasons are logged above), ` +
        'so its views cannot be rebuilt: start the version that wrote the snapshots, or start on an empty data directory ' +
        '(the simulator makes its history again, an EVM source reads it again from its node); ' +
        'with "snapshots": { "pruneLog": false } the whole log is kept and a new version rebuilds from it',
    );
  }
  let blocks = Promise.resolve();
  if (snapshot) {
    ({ blocks } = await snapshots!.load(snapshot.path, ingest.registry, loader));
    if (snapshots!.convertedOnLoad.length > 0) log(`snapshot ${snapshot.path} was written by an earlier version: converted on load ${snapshots!.convertedOnLoad.join(', ')}; the next snapshot is written whole`);
    ingest.registry.loadSince(store);
  } else {
    loader?.close();
    ingest.registry.load(store);
  }
  return { snapshot, blocks, storedThrough };
}
