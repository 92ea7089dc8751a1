/**
 * The two ends of a snapshot's life in an engine: `cutSnapshot` between ingest steps, and
 * `loadState` at a start (the newest usable snapshot, its pending candles into the store, the
 * registry, then the log after it).
 */
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import { runsByShard } from './capture.js';
import { blockColumns, keptColumns, rowBytes, usedRows } from './format.js';
import { blockStats } from '../state/ring-blocks.js';
import { restorePending } from './pending.js';
import { logPrunedThrough } from './prune-log.js';
import { cutMain } from './write.js';
/**
 * Cuts a snapshot after the last batch ingested (call between ingest steps, with no snapshot being
 * written): the main thread copies its columns (and the source's state, when it keeps one) now, each
 * shard its rows when its queue reaches the cut, while ingest goes on; the file is written in the
 * background. Every event the source produced so far must be ingested (the cut is between steps).
 * Skipped (with the reason) when the copies would take more than half the memory available: a
 * universe that large needs the tiered state, and a start then replays the log.
 */
export function cutSnapshot(views, ingest, snapshots, shards, source) {
    const seq = ingest.head;
    const need = cutBytes(views);
    const available = availableMemoryBytes();
    if (need > CUT_MEMORY_SHARE * available) {
        return { skipped: `a cut would copy ${gib(need)} of shared memory and ${gib(available)} is available; starts replay the log meanwhile` };
    }
    const t0 = performance.now();
    const main = cutMain(views, seq, source?.saveState?.());
    const runs = runsByShard(views, shards.shards, (c) => shards.shardOf(c), main.pools, main.tokens, (t) => ingest.registry.tokens[t] !== undefined);
    const mainMs = performance.now() - t0;
    const parts = ingest
        .afterHandOver(() => shards.capture(runs))
        .then(async (captures) => {
        // The store writes of the batches up to the cut are on disk before the snapshot says so.
        await shards.durable();
        return captures.map((capture, i) => ({ runs: runs[i], capture }));
    });
    return { seq, mainMs, written: snapshots.take(main, parts) };
}
/** A cut may take at most this share of the memory available (its copies live until the file is written). */
const CUT_MEMORY_SHARE = 0.5;
const gib = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
/** Bytes a cut copies: every kept column to the rows in use, and the ring blocks in use. */
export function cutBytes(views) {
    let n = 0;
    for (const c of keptColumns(views.columnTable))
        n += usedRows(c, views.poolCount, views.tokenCount, views.capacity.chains) * rowBytes(c);
    const hot = blockStats(views).used;
    for (const c of blockColumns(views.columnTable))
        n += hot * rowBytes(c);
    return n;
}
/** What the kernel says could be allocated without swapping (MemAvailable), or free memory elsewhere. */
function availableMemoryBytes() {
    try {
        const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
        if (m)
            return Number(m[1]) * 1024;
    }
    catch {
        // not Linux
    }
    return freemem();
}
/**
 * Fills fresh views at a start: the newest usable snapshot (its pending candles merged into the
 * store), then the registry (pools and tokens made after it: static columns, id bounds), then the
 * log after it. Throws when the log was pruned past what any usable snapshot covers. A snapshot whose
 * held candles cannot be stored (a full disk) is given up for the whole log.
 */
export async function loadState(store, ingest, snapshots, shards, log) {
    let snapshot = snapshots?.loadNewest(ingest.head, log) ?? null;
    const prunedThrough = logPrunedThrough(store);
    if (snapshot) {
        try {
            await restorePending(store, snapshot, shards);
        }
        catch (err) {
            // The held candles cannot be stored (a full disk): without them the snapshot is not whole, so
            // the views start empty again and the whole log is replayed, when there is one.
            if (prunedThrough > 0)
                throw err;
            log(`snapshot ${snapshot.path} not used, its held candles could not be stored (${err instanceof Error ? err.message : String(err)}): the whole log is replayed`);
            for (const c of ingest.sharedViews.columnTable)
                c.array.fill(0);
            snapshot = null;
        }
    }
    if (prunedThrough > (snapshot?.seq ?? 0)) {
        throw new Error(`${store.path}: the log is pruned through batch ${prunedThrough} and no usable snapshot of this version reaches it; start on an empty data directory to rebuild`);
    }
    ingest.registry.load(store);
    const replayedBatches = await ingest.replay(snapshot?.seq ?? 0);
    return { snapshot, replayedBatches };
}
//# sourceMappingURL=take.js.map