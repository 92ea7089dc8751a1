/**
 * Persists what a shard hands over: candles leaving the rings and the last 7 days of transactions.
 *
 * Evicted candles gather in a pending chunk per pool and interval (store/candles.ts) and are written
 * when the chunk's time span is complete, when it has waited MAX_PENDING_BATCHES batches, or at once
 * when live (so a reader never misses a candle for long). The shard watermark (the last batch whose
 * effects are all stored) written with each commit is therefore held just below the oldest batch
 * that still has a pending candle: after a crash, replay from the watermark re-creates every
 * candle that was not yet written, and writes merge with what is stored.
 */
import { readU128 } from '../events/codec.js';
import { SwapFlags } from '../events/fb/dex/events/swap-flags.js';
import { U128 } from '../events/fb/dex/events/u128.js';
import { INTERVALS } from '../state/layout.js';
import { chunkStart, mergeChunk } from '../store/candles.js';
import { metaKeys } from '../store/store.js';
/** Longest a pending chunk waits while catching up, in log batches (bounds the replay after a crash). */
export const MAX_PENDING_BATCHES = 256;
/** Appends the candle in ring slot `s` to a chunk's data, as candles.ts stores it: open time, then the CandleRecord fields. */
export function appendCandle(data, r, s) {
    data.push(r.time[s], r.open0[s], r.high0[s], r.low0[s], r.close0[s], r.open1[s], r.high1[s], r.low1[s], r.close1[s], r.volumeUsd[s], r.buyVolumeUsd[s], r.txns[s], r.buys[s]);
}
export class LmdbSink {
    pending = new Map();
    ready = [];
    txs = [];
    u128 = new U128();
    store;
    lastWrite = Promise.resolve();
    /** Log batch being applied. */
    seq = 0;
    constructor(store) {
        this.store = store;
    }
    /** Called before a batch is applied with persistence. */
    beginBatch(seq) {
        this.seq = seq;
    }
    candleEvicted(pool, interval, r, s) {
        const time = r.time[s];
        const start = chunkStart(interval, time);
        const id = pool * INTERVALS.length + interval;
        let chunk = this.pending.get(id);
        if (chunk !== undefined && chunk.start !== start) {
            this.ready.push(chunk);
            chunk = undefined;
        }
        if (chunk === undefined) {
            chunk = { pool, interval, start, firstSeq: this.seq, data: [] };
            this.pending.set(id, chunk);
        }
        appendCandle(chunk.data, r, s);
    }
    transaction(kind, pool, ev, key, usd) {
        const a0 = readU128(ev.amount0(this.u128));
        const a1 = readU128(ev.amount1(this.u128));
        let s0;
        let s1;
        let sender;
        let recipient;
        if (kind === 0) {
            const s = ev;
            const flags = s.flags();
            s0 = flags & SwapFlags.Amount0Negative ? -a0 : a0;
            s1 = flags & SwapFlags.Amount1Negative ? -a1 : a1;
            sender = s.sender() ?? '';
            recipient = s.recipient() ?? '';
        }
        else {
            const m = ev;
            s0 = kind === 1 ? a0 : -a0;
            s1 = kind === 1 ? a1 : -a1;
            sender = m.owner() ?? '';
            recipient = sender;
        }
        this.txs.push([
            [pool, key.blockNumber(), key.txIndex(), key.logIndex()],
            [kind, ev.txHash() ?? '', sender, recipient, s0.toString(), s1.toString(), usd.price0Usd, usd.price1Usd, usd.volumeUsd, usd.ratio, ev.timestamp()],
        ]);
    }
    /**
     * Writes, in one transaction (not awaited), the transactions and completed chunks handed over up
     * to batch `seq`, plus pending chunks that waited too long (all of them when `flushAll`), and the
     * watermark those writes make true.
     */
    commit(shard, seq, flushAll = false) {
        let oldestPending = Infinity;
        for (const [id, chunk] of this.pending) {
            if (flushAll || chunk.firstSeq <= seq - MAX_PENDING_BATCHES) {
                this.ready.push(chunk);
                this.pending.delete(id);
            }
            else if (chunk.firstSeq < oldestPending)
                oldestPending = chunk.firstSeq;
        }
        const watermark = Math.min(seq, oldestPending - 1);
        const chunks = this.ready;
        const txs = this.txs;
        this.ready = [];
        this.txs = [];
        const { store } = this;
        // Waits out a full disk (durable.ts), in order with the sink's other commits.
        this.lastWrite = store.writer.write(() => {
            for (const c of chunks) {
                const key = [c.pool, c.interval, c.start];
                store.candles.put(key, mergeChunk(store.candles.get(key), c.data));
            }
            for (const [k, v] of txs)
                store.txs.put(k, v);
            store.meta.put(metaKeys.shardWatermark(shard), watermark);
        });
        // Rejects only when given up at shutdown (flushed() reports that to whoever waits).
        this.lastWrite.catch(() => undefined);
    }
    /** Copies of the candle chunks held for a later commit (a snapshot keeps them: its rings no longer do). */
    pendingChunks() {
        const out = [];
        for (const c of this.ready)
            out.push([c.pool, c.interval, c.start, c.data.slice()]);
        for (const c of this.pending.values())
            out.push([c.pool, c.interval, c.start, c.data.slice()]);
        return out;
    }
    /** Resolves when everything committed so far is on disk. */
    flushed() {
        return this.lastWrite;
    }
}
//# sourceMappingURL=lmdb-sink.js.map