/**
 * Persists what a shard hands over: candles leaving the rings, the open candles of pools that go
 * quiet (store/parked.ts) and the last 7 days of transactions.
 *
 * Evicted candles gather in a pending chunk per pool and interval (store/candles.ts) and are written
 * when the chunk's time span is complete, when it has waited MAX_PENDING_BATCHES batches, or at once
 * when live (so a reader never misses a candle for long). The shard watermark (the last batch whose
 * effects are all stored) written with each commit is therefore held just below the oldest batch
 * that still has a pending candle: after a crash, replay from the watermark re-creates every
 * candle that was not yet written, and writes merge with what is stored.
 */
import * as flatbuffers from 'flatbuffers';
import { readU128 } from '../events/codec.js';
import type { Burn } from '../events/fb/dex/events/burn.js';
import type { EventKey } from '../events/fb/dex/events/event-key.js';
import type { Mint } from '../events/fb/dex/events/mint.js';
import type { Swap } from '../events/fb/dex/events/swap.js';
import { SwapFlags } from '../events/fb/dex/events/swap-flags.js';
import { U128 } from '../events/fb/dex/events/u128.js';
import { INTERVALS } from '../state/layout.js';
import type { CandleRing } from '../state/views.js';
import { CANDLE_U32_WORDS, CandleU32, candleValue, RING_FIELDS } from '../state/candle-record.js';
import { CANDLE_FIELDS, chunkStart, leavingCandleAt, putChunks } from '../store/candles.js';
import { TxRecordBytes } from '../store/records.js';
import { metaKeys, type Store, type TxKey, type TxRecord } from '../store/store.js';
import type { ParkedKey } from '../store/parked.js';
import type { PendingChunkData } from '../snapshot/capture.js';
import type { ShardSink, TxUsd } from './apply.js';
import type { LeavingCandle } from '../state/windows.js';

/** Longest a pending chunk waits while catching up, in log batches (bounds the replay after a crash). */
export const MAX_PENDING_BATCHES = 256;

interface PendingChunk {
  readonly pool: number;
  readonly interval: number;
  readonly start: number;
  /** First log batch that added a candle to it. */
  readonly firstSeq: number;
  readonly data: number[];
}

if (RING_FIELDS.length !== CANDLE_FIELDS) throw new Error(`a stored candle has ${CANDLE_FIELDS} numbers, a ring candle ${RING_FIELDS.length} fields`);

/** Appends the candle in ring slot `s` to a chunk's data, as candles.ts stores it: open time, then the CandleRecord fields (candle-record.ts RING_FIELDS order). */
export function appendCandle(data: number[], r: CandleRing, s: number): void {
  for (let k = 0; k < RING_FIELDS.length; k++) data.push(candleValue(r, s, RING_FIELDS[k]!));
}

export class LmdbSink implements ShardSink {
  private readonly pending = new Map<number, PendingChunk>();
  private ready: PendingChunk[] = [];
  /**
   * Chunks handed over but not yet on disk (ready, or in a write that has not finished), by pool and
   * interval: the shard reads candles that left its rings through them (unstoredCandles) until the
   * store has them, so what it reads never depends on when a write finished.
   */
  private readonly unstored = new Map<number, PendingChunk[]>();
  /** Transactions since the last commit: their keys, and their records in `txBytes` (each ending at `txEnds[i]`). */
  private txKeys: TxKey[] = [];
  private txEnds: number[] = [];
  private readonly txBytes = new TxRecordBytes();
  /** Versions of open candles handed over since the last commit (store/parked.ts). */
  private parked: { readonly key: ParkedKey; readonly value: number[] }[] = [];
  private readonly u128 = new U128();
  private readonly u128b = new U128();
  private readonly store: Store;
  private lastWrite: Promise<unknown> = Promise.resolve();
  /** Log batch being applied. */
  private seq = 0;

  constructor(store: Store) {
    this.store = store;
  }

  /** The log batch being applied, persisted or not (applying). */
  private applied = 0;

  /** Called before every batch is applied, persisted or replayed only. */
  applying(seq: number): void {
    this.applied = seq;
  }

  /** The log batch being applied: the one a version of open candles is written at. */
  get batch(): number {
    return this.applied;
  }

  /** Called before a batch is applied with persistence. */
  beginBatch(seq: number): void {
    this.seq = seq;
  }

  candleEvicted(pool: number, interval: number, r: CandleRing, s: number): void {
    const time = r.words[s * CANDLE_U32_WORDS + CandleU32.time]!;
    const start = chunkStart(interval, time);
    const id = pool * INTERVALS.length + interval;
    let chunk = this.pending.get(id);
    if (chunk !== undefined && chunk.start !== start) {
      this.handOff(id, chunk);
      chunk = undefined;
    }
    if (chunk === undefined) {
      chunk = { pool, interval, start, firstSeq: this.seq, data: [] };
      this.pending.set(id, chunk);
    }
    const data = chunk.data;
    // Candles come oldest first, but one handed over as it closed (apply.ts STORED_AT_CLOSE) may be
    // newer than one that leaves its ring after it, or be that one: each goes in its place, once.
    let at = data.length - CANDLE_FIELDS;
    if (at < 0 || data[at]! < time) {
      appendCandle(data, r, s);
      return;
    }
    while (at >= 0 && data[at]! > time) at -= CANDLE_FIELDS;
    const one: number[] = [];
    appendCandle(one, r, s);
    if (at >= 0 && data[at] === time) for (let k = 0; k < CANDLE_FIELDS; k++) data[at + k] = one[k]!;
    else data.splice(at + CANDLE_FIELDS, 0, ...one);
  }

  /** Pool p, at swap count `swaps`, hands over what it still has open (`version`: store/parked.ts): written with the next commit. */
  park(pool: number, swaps: number, version: number[]): void {
    this.parked.push({ key: [pool, swaps], value: version });
  }

  transaction(kind: 0 | 1 | 2, pool: number, ev: Swap | Mint | Burn, key: EventKey, usd: TxUsd): void {
    this.txKeys.push([pool, key.blockNumber(), key.txIndex(), key.logIndex()]);
    // The record straight from the batch's bytes (texts as their bytes, amounts as their words); one
    // whose texts are not hex goes through TxRecord and encodeTx.
    const a0 = ev.amount0(this.u128)!;
    const a1 = ev.amount1(this.u128b)!;
    const hash = ev.txHash(flatbuffers.Encoding.UTF8_BYTES) as Uint8Array | null;
    let negative0: boolean;
    let negative1: boolean;
    let sender: Uint8Array | null;
    let recipient: Uint8Array | null;
    if (kind === 0) {
      const s = ev as Swap;
      const flags = s.flags();
      negative0 = (flags & SwapFlags.Amount0Negative) !== 0;
      negative1 = (flags & SwapFlags.Amount1Negative) !== 0;
      sender = s.sender(flatbuffers.Encoding.UTF8_BYTES) as Uint8Array | null;
      recipient = s.recipient(flatbuffers.Encoding.UTF8_BYTES) as Uint8Array | null;
    } else {
      negative0 = negative1 = kind === 2;
      sender = recipient = (ev as Mint).owner(flatbuffers.Encoding.UTF8_BYTES) as Uint8Array | null;
    }
    if (hash === null || sender === null || recipient === null || !this.txBytes.swap(kind, hash, sender, recipient, a0, negative0, a1, negative1, usd.price0Usd, usd.price1Usd, usd.volumeUsd, usd.ratio, ev.timestamp())) {
      this.txBytes.record(this.txRecord(kind, ev, usd));
    }
    this.txEnds.push(this.txBytes.end);
  }

  /** A transaction as a TxRecord (for one whose texts are not hex). */
  private txRecord(kind: 0 | 1 | 2, ev: Swap | Mint | Burn, usd: TxUsd): TxRecord {
    const a0 = readU128(ev.amount0(this.u128)!);
    const a1 = readU128(ev.amount1(this.u128)!);
    let s0: bigint;
    let s1: bigint;
    let sender: string;
    let recipient: string;
    if (kind === 0) {
      const s = ev as Swap;
      const flags = s.flags();
      s0 = flags & SwapFlags.Amount0Negative ? -a0 : a0;
      s1 = flags & SwapFlags.Amount1Negative ? -a1 : a1;
      sender = s.sender() ?? '';
      recipient = s.recipient() ?? '';
    } else {
      const m = ev as Mint;
      s0 = kind === 1 ? a0 : -a0;
      s1 = kind === 1 ? a1 : -a1;
      sender = m.owner() ?? '';
      recipient = sender;
    }
    return [kind, ev.txHash() ?? '', sender, recipient, s0.toString(), s1.toString(), usd.price0Usd, usd.price1Usd, usd.volumeUsd, usd.ratio, ev.timestamp()];
  }

  /**
   * Writes, in one transaction (not awaited), the transactions and completed chunks handed over up
   * to batch `seq`, plus pending chunks that waited too long (all of them when `flushAll`), and the
   * watermark those writes make true.
   */
  commit(shard: number, seq: number, flushAll = false): void {
    let oldestPending = Infinity;
    for (const [id, chunk] of this.pending) {
      if (flushAll || chunk.firstSeq <= seq - MAX_PENDING_BATCHES) {
        this.handOff(id, chunk);
        this.pending.delete(id);
      } else if (chunk.firstSeq < oldestPending) oldestPending = chunk.firstSeq;
    }
    const watermark = Math.min(seq, oldestPending - 1);
    const chunks = this.ready;
    const txKeys = this.txKeys;
    const txEnds = this.txEnds;
    const txBytes = txKeys.length > 0 ? this.txBytes.take() : null;
    const parked = this.parked;
    this.parked = [];
    this.ready = [];
    this.txKeys = [];
    this.txEnds = [];
    const { store } = this;
    // Waits out a full disk (durable.ts), in order with the sink's other commits.
    this.lastWrite = store.writer.write(() => {
      putChunks(store, chunks);
      for (const { key, value } of parked) store.parked.put(key, value);
      // Each record as its slice of the buffer: the store's encoder passes bytes through.
      let start = 0;
      for (let i = 0; i < txKeys.length; i++) {
        store.txs.put(txKeys[i]!, txBytes!.subarray(start, txEnds[i]!) as unknown as TxRecord);
        start = txEnds[i]!;
      }
      store.meta.put(metaKeys.shardWatermark(shard), watermark);
    });
    // Rejects only when given up at shutdown (flushed() reports that to whoever waits).
    this.lastWrite.then(
      () => this.stored(chunks),
      () => undefined,
    );
  }

  private handOff(id: number, chunk: PendingChunk): void {
    this.ready.push(chunk);
    const list = this.unstored.get(id);
    if (list === undefined) this.unstored.set(id, [chunk]);
    else list.push(chunk);
  }

  firstUnstoredMinute(pool: number, from: number, to: number, out: LeavingCandle): number {
    const id = pool * INTERVALS.length;
    let best = Infinity;
    let bestData: readonly number[] | null = null;
    let bestAt = 0;
    const scan = (d: readonly number[]) => {
      // Candles in a chunk are in time order: skip one wholly before `from` or after what was found.
      if (d.length === 0 || d[d.length - CANDLE_FIELDS]! < from || d[0]! >= to || d[0]! >= best) return;
      for (let at = 0; at < d.length; at += CANDLE_FIELDS) {
        const time = d[at]!;
        if (time >= to || time >= best) break;
        if (time >= from) {
          best = time;
          bestData = d;
          bestAt = at;
          break;
        }
      }
    };
    const list = this.unstored.get(id);
    if (list !== undefined) for (let i = list.length - 1; i >= 0; i--) scan(list[i]!.data);
    const open = this.pending.get(id);
    if (open !== undefined) scan(open.data);
    if (bestData !== null) {
      leavingCandleAt(bestData, bestAt, out);
    }
    return best;
  }

  private readonly writtenListeners: ((pool: number, interval: number, start: number) => void)[] = [];

  onWritten(fn: (pool: number, interval: number, start: number) => void): void {
    this.writtenListeners.push(fn);
  }

  /** The chunk of pool p, `interval` and `start` was written to the store outside the sink (tiers.ts freeNow). */
  writtenNow(pool: number, interval: number, start: number): void {
    for (const fn of this.writtenListeners) fn(pool, interval, start);
  }

  /** `chunks` are on disk: the store answers for them from now on. */
  private stored(chunks: readonly PendingChunk[]): void {
    for (const c of chunks) {
      this.writtenNow(c.pool, c.interval, c.start);
      const id = c.pool * INTERVALS.length + c.interval;
      const list = this.unstored.get(id);
      if (list === undefined) continue;
      const at = list.indexOf(c);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0) this.unstored.delete(id);
    }
  }

  /**
   * Candles of pool p and `interval` that left its rings and are not on disk yet, opened in
   * [from, to): flat as candles.ts stores them (open time, then the record), in no particular order.
   */
  unstoredCandles(pool: number, interval: number, from: number, to: number, out: number[]): void {
    const id = pool * INTERVALS.length + interval;
    const add = (c: PendingChunk) => {
      const d = c.data;
      for (let at = 0; at < d.length; at += CANDLE_FIELDS) {
        const time = d[at]!;
        if (time >= from && time < to) for (let f = 0; f < CANDLE_FIELDS; f++) out.push(d[at + f]!);
      }
    };
    const list = this.unstored.get(id);
    if (list !== undefined) for (const c of list) add(c);
    const open = this.pending.get(id);
    if (open !== undefined) add(open);
  }

  /** Copies of the candle chunks held for a later commit (a snapshot keeps them: its rings no longer do). */
  pendingChunks(): PendingChunkData[] {
    const out: PendingChunkData[] = [];
    for (const c of this.ready) out.push([c.pool, c.interval, c.start, c.data.slice()]);
    for (const c of this.pending.values()) out.push([c.pool, c.interval, c.start, c.data.slice()]);
    return out;
  }

  /** Resolves when everything committed so far is on disk. */
  flushed(): Promise<unknown> {
    return this.lastWrite;
  }
}
