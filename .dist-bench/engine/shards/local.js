import { PoolRankIndex } from '../search/rank-index.js';
import { ShardWriter } from './apply.js';
import { LmdbSink } from './lmdb-sink.js';
import { resetState } from './reset.js';
import { restoreRows } from '../snapshot/load.js';
import { captureShardRows } from '../snapshot/capture.js';
import { captureShardBlocks } from '../snapshot/blocks.js';
import { sweepChains } from './sweep.js';
import { LmdbCandles } from './stored-candles.js';
import { ShardTiers } from './tiers.js';
import { SwapFeed } from '../feed/swaps.js';
/**
 * All chains applied on the calling thread, persisting like a shard thread does when given a
 * store: for tests and tools that need no worker threads.
 */
export class LocalShards {
    shards = 1;
    writer;
    index;
    sink;
    /** Watched swaps, published after each apply. */
    swapFeed = new SwapFeed();
    views;
    lastSeq = 0;
    tiers;
    constructor(views, store = null, tiers = null) {
        this.views = views;
        this.sink = store ? new LmdbSink(store) : null;
        this.writer = new ShardWriter(views, this.sink, store ? new LmdbCandles(store) : null);
        this.tiers = new ShardTiers(views, this.writer, this.sink, store, () => true, tiers);
        this.index = new PoolRankIndex(views, Array.from({ length: views.capacity.chains }, (_, c) => c));
        this.writer.index = this.index;
    }
    shardOf() {
        return 0;
    }
    rank(_shard, q) {
        return Promise.resolve(this.index.query(q));
    }
    apply(batches, options) {
        const total = { events: 0, swaps: 0, skipped: 0 };
        const persist = options?.persist !== false;
        this.index.beginTask();
        for (const { seq, bytes } of batches) {
            if (persist) {
                this.lastSeq = seq;
                this.sink?.beginBatch(seq);
            }
            const stats = this.writer.applyBatch(bytes, persist);
            if (persist)
                this.sink?.commit(0, seq);
            total.events += stats.events;
            total.swaps += stats.swaps;
            total.skipped += stats.skipped;
        }
        const feed = this.writer.takeFeed();
        if (feed !== null && persist)
            this.swapFeed.publish(feed);
        return Promise.resolve(total);
    }
    /** Zeroes pools and tokens of a chain being rolled back. */
    reset(_chain, pools, tokens) {
        this.index.beginTask();
        this.tiers.forget(pools);
        resetState(this.views, pools, tokens);
        for (const p of pools)
            this.index.markDirty(p);
        return Promise.resolve();
    }
    /** Copies snapshot rows of pools and tokens of a chain being rolled back. */
    restore(_chain, path, pools, tokens) {
        this.index.beginTask();
        restoreRows(path, this.views, pools, tokens);
        for (const p of pools)
            this.index.markDirty(p);
        return Promise.resolve();
    }
    sweep(chainCount) {
        this.index.beginTask();
        const changed = sweepChains(this.writer, this.views, Array.from({ length: chainCount }, (_, c) => c));
        this.tiers.sweepSeconds();
        if (this.sink !== null && this.lastSeq > 0 && this.tiers.sweep() > 0) {
            this.sink.commit(0, this.lastSeq, true);
            this.tiers.written(this.sink.flushed());
        }
        return changed;
    }
    /** A snapshot cut: this thread's rows (all of them: one shard) and pending candles. */
    capture(runs) {
        const t0 = performance.now();
        const columns = captureShardRows(this.views, runs[0]);
        const blocks = captureShardBlocks(this.views, () => true);
        return Promise.resolve([{ columns, pending: this.sink?.pendingChunks() ?? [], blocks, heldMs: performance.now() - t0 }]);
    }
    async durable() {
        await this.sink?.flushed();
    }
    /** Writes every pending candle (the store holds all evicted candles afterwards). */
    async flush() {
        if (this.sink !== null) {
            this.sink.commit(0, this.lastSeq, true);
            await this.sink.flushed();
        }
    }
}
//# sourceMappingURL=local.js.map