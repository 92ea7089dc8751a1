/**
 * Entry of an engine shard thread (one Piscina pool with a single thread per shard). The thread is
 * the only writer of the pools and tokens of the chains assigned to it.
 */
import { workerData } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { errorText, fallbackLog } from '../log.js';
import { EngineViews } from '../state/views.js';
import { metaKeys, openStore } from '../store/store.js';
import { PoolRankIndex } from '../search/rank-index.js';
import { ShardWriter } from './apply.js';
import { LmdbSink } from './lmdb-sink.js';
import { pruneTransactions } from './prune.js';
import { resetState } from './reset.js';
import { restoreRows } from '../snapshot/load.js';
import { captureShardRows } from '../snapshot/capture.js';
import { captureShardBlocks } from '../snapshot/blocks.js';
import { sweepChains } from './sweep.js';
import { LmdbCandles } from './stored-candles.js';
import { ShardTiers } from './tiers.js';
const TX_RETENTION_SECONDS = 7 * 86_400; // 7 days
const PRUNE_INTERVAL_MS = 10 * 60_000; // 10 min
const data = workerData;
const views = EngineViews.attach(data.buffers);
const store = data.storePath ? openStore(data.storePath) : null;
const stopping = new Int32Array(data.stopping);
store?.writer.abandonWhen(() => Atomics.load(stopping, 0) === 1);
const sink = store ? new LmdbSink(store) : null;
const writer = new ShardWriter(views, sink, store ? new LmdbCandles(store) : null);
const ownsChain = (c) => c % data.shards === data.shard;
const owned = Array.from({ length: views.capacity.chains }, (_, c) => c).filter(ownsChain);
const tiers = new ShardTiers(views, writer, sink, store, ownsChain, data.tiers);
const index = new PoolRankIndex(views, owned);
writer.index = index;
/**
 * Batches up to this one had all their effects stored before this process started. Read at the
 * first apply, not at thread start: loading a snapshot raises it first (snapshot/pending.ts).
 */
let storedThrough = null;
let lastPersisted = 0;
export function apply(task) {
    index.beginTask();
    writer.transactionsSince = task.now - TX_RETENTION_SECONDS;
    const total = { events: 0, swaps: 0, skipped: 0 };
    let persisted = 0;
    storedThrough ??= store ? (store.meta.get(metaKeys.shardWatermark(data.shard)) ?? 0) : 0;
    for (const { seq, bytes } of task.items) {
        // Batches at or below the stored watermark were persisted before a restart: rebuild state only.
        const persist = sink !== null && seq > storedThrough && task.persist !== false;
        if (persist)
            sink.beginBatch(seq);
        const stats = writer.applyBatch(bytes, persist);
        if (persist)
            persisted = seq;
        total.events += stats.events;
        total.swaps += stats.swaps;
        total.skipped += stats.skipped;
    }
    // While catching up the chain clocks run hours ahead per second: pools that went quiet meanwhile
    // hand their candles over with this task's commit rather than wait for the next sweep.
    const handedOver = persisted > 0 && tiers.due() ? tiers.sweep() : 0;
    // One commit for the whole task.
    if (sink !== null && persisted > 0) {
        sink.commit(data.shard, persisted, task.live || handedOver > 0);
        lastPersisted = persisted;
        if (handedOver > 0)
            tiers.written(sink.flushed());
    }
    const feed = writer.takeFeed();
    if (feed !== null && task.persist !== false)
        total.feed = feed;
    return total;
}
/** Zeroes pools and tokens of a chain being rolled back (its log is applied again next). */
export function reset(task) {
    index.beginTask();
    tiers.forget(task.pools);
    resetState(views, task.pools, task.tokens);
    for (const p of task.pools)
        index.markDirty(p);
}
/** Copies the rows of a chain being rolled back from a snapshot taken before the rewritten batches. */
export function restore(task) {
    index.beginTask();
    restoreRows(task.path, views, task.pools, task.tokens);
    for (const p of task.pools)
        index.markDirty(p);
}
/** A snapshot cut reached this shard: its rows and pending candles, copied (it applies nothing meanwhile). */
export function capture(runs) {
    const t0 = performance.now();
    const columns = captureShardRows(views, runs);
    const blocks = captureShardBlocks(views, ownsChain);
    const pending = sink?.pendingChunks() ?? [];
    const result = { columns, pending, blocks, heldMs: performance.now() - t0 };
    // The copies move to the main thread rather than being copied again.
    return Piscina.move({
        [Piscina.transferableSymbol]: [...columns, ...blocks.columns, blocks.pools].map((c) => c.buffer),
        [Piscina.valueSymbol]: result,
    });
}
/** Resolves once every store write this shard issued so far is on disk. */
export async function durable() {
    await sink?.flushed();
}
let lastPruneMs = 0;
/** Ages rolling windows to the chain clocks and, every PRUNE_INTERVAL_MS, drops transactions past retention. */
export async function sweep(task) {
    index.beginTask();
    const changed = sweepChains(writer, views, task.chains);
    tiers.sweepSeconds();
    // Pools that went quiet hand their candles to the store, written now, with the watermark already true.
    const through = lastPersisted > 0 ? lastPersisted : (storedThrough ?? 0);
    if (sink !== null && through > 0 && tiers.sweep() > 0) {
        sink.commit(data.shard, through, true);
        tiers.written(sink.flushed());
    }
    if (store && performance.now() - lastPruneMs >= PRUNE_INTERVAL_MS) {
        lastPruneMs = performance.now();
        await pruneTransactions(store, views, task.chains, task.now - TX_RETENTION_SECONDS);
    }
    return changed;
}
export function tierStats() {
    return { ...tiers.stats, reloaded: writer.reloads, missing: writer.reloadMisses };
}
/** One page of a ranked pool search over this shard's chains (between apply tasks). */
export function search(q) {
    return index.query(q);
}
/** Writes every pending candle and waits until all is on disk. */
export async function flush() {
    if (sink !== null && lastPersisted > 0)
        sink.commit(data.shard, lastPersisted, true);
    await sink?.flushed();
}
export async function close() {
    // On a full disk what is not written yet is given up (replay from the watermark re-creates it).
    store?.writer.abandon();
    await flush().catch((err) => fallbackLog().error(`shard ${data.shard}: candles not written at shutdown: ${errorText(err)}`));
    await store?.close();
}
//# sourceMappingURL=worker.js.map