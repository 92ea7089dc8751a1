/**
 * Which shard thread writes each chain: its pools, its tokens, their ring blocks, window slots and
 * 1 s token candles. A chain is the unit (USD routing reads other pools and tokens of the same
 * chain, so one writer per chain keeps prices exact). The main thread places every chain once per
 * run, before the first task that needs it, to balance the expected load of the threads; the
 * threads only read it. Nothing stored depends on it: a snapshot or a store written with one
 * placement (or thread count) loads under another.
 */
import { EventBatch } from '../events/fb/dex/events/event-batch.js';
import { EventBody } from '../events/fb/dex/events/event-body.js';
import { Event } from '../events/fb/dex/events/event.js';
import { FastByteBuffer } from '../events/fast-byte-buffer.js';
import type { CommittedBatch } from '../pipeline.js';
import type { EngineViews } from '../state/views.js';
import { metaKeys, type Store } from '../store/store.js';

export class ChainAssignment {
  /** Shared words, one per chain: 0 until placed, then shard + 1 for the rest of the run (written once, by the main thread, before any task of the chain is posted). */
  private readonly words: Int32Array;

  constructor(
    readonly buffer: SharedArrayBuffer,
    readonly shards: number,
  ) {
    this.words = new Int32Array(buffer);
  }

  static create(chains: number, shards: number): ChainAssignment {
    return new ChainAssignment(new SharedArrayBuffer(4 * chains), shards);
  }

  get chains(): number {
    return this.words.length;
  }

  /** Whether the chains are placed (they all are at once). */
  get placed(): boolean {
    return this.words.length === 0 || this.words[0] !== 0;
  }

  /** The shard writing chain c; -1 before the placement. */
  shardOf(chain: number): number {
    return this.words[chain]! - 1;
  }

  /** Places every chain by `weights` (expected load per chain; see balance). Once per run. */
  place(weights: ArrayLike<number>): void {
    if (this.placed) throw new Error('the chains are placed once per run');
    const shardOf = balance(Array.from({ length: this.words.length }, (_, c) => weights[c] ?? 0), this.shards);
    for (let c = 0; c < shardOf.length; c++) this.words[c] = shardOf[c]! + 1;
  }
}

/**
 * Shard per chain, minimising the heaviest shard's total weight: chains with weight, heaviest first,
 * each to the lightest shard (ties: the lower chain, the lower shard), then single chains moved or
 * swapped between the heaviest and the lightest shard while that lowers the heaviest; chains
 * without weight go round the shards in chain order. Deterministic for given weights.
 */
export function balance(weights: readonly number[], shards: number): number[] {
  const shardOf = new Array<number>(weights.length).fill(-1);
  const load = new Array<number>(shards).fill(0);
  const order = weights.map((_, c) => c).filter((c) => weights[c]! > 0);
  order.sort((a, b) => weights[b]! - weights[a]! || a - b);
  const lightest = () => load.indexOf(Math.min(...load));
  for (const c of order) {
    const s = lightest();
    shardOf[c] = s;
    load[s] += weights[c]!;
  }
  // Local improvement: each step strictly lowers the heavier of the two shards it touches (bounded).
  for (let step = 0; step < 4 * weights.length; step++) {
    const hi = load.indexOf(Math.max(...load));
    const lo = lightest();
    // Chain a moved from hi to lo, or swapped with chain b of lo, shifting d: the heavier of the two becomes max(hi - d, lo + d).
    let best = load[hi]!;
    let moveA = -1;
    let moveB = -1;
    for (const a of order) {
      if (shardOf[a] !== hi) continue;
      for (const b of [-1, ...order]) {
        if (b >= 0 && shardOf[b] !== lo) continue;
        const d = weights[a]! - (b >= 0 ? weights[b]! : 0);
        const after = Math.max(load[hi]! - d, load[lo]! + d);
        if (d > 0 && after < best) (best = after), (moveA = a), (moveB = b);
      }
    }
    if (moveA < 0) break;
    shardOf[moveA] = lo;
    load[hi] -= weights[moveA]!;
    load[lo] += weights[moveA]!;
    if (moveB >= 0) {
      shardOf[moveB] = hi;
      load[lo] -= weights[moveB]!;
      load[hi] += weights[moveB]!;
    }
  }
  let next = 0;
  for (let c = 0; c < weights.length; c++) if (shardOf[c] === -1) shardOf[c] = next++ % shards;
  return shardOf;
}

/**
 * Expected load per chain: its pools' transactions so far (a loaded snapshot's history) plus the
 * swaps in the batches about to be applied (a first start's first step; its pool creations and
 * first liquidity follow the pool count, not the trading), read once per run.
 */
export function chainWeights(views: EngineViews, batches: readonly CommittedBatch[] = []): Float64Array {
  const w = new Float64Array(views.capacity.chains);
  const { poolExists, poolChain, txnsTotal } = views;
  for (let p = 0; p < views.poolCount; p++) if (poolExists[p] === 1) w[poolChain[p]!] += txnsTotal[p]!;
  const ev = new Event();
  for (const b of batches) {
    if (b.chain >= w.length) continue;
    const root = EventBatch.getRootAsEventBatch(new FastByteBuffer(b.bytes));
    const n = root.eventsLength();
    let swaps = 0;
    for (let i = 0; i < n; i++) if (root.events(i, ev)!.bodyType() === EventBody.Swap) swaps++;
    w[b.chain] += swaps;
  }
  return w;
}

/** The shard watermarks kept in the store (lmdb-sink.ts), by shard: this run's threads' and any earlier run's, whatever its thread count. */
export function shardWatermarks(store: Store): Map<number, number> {
  const first = metaKeys.shardWatermark(0);
  const prefix = first.slice(0, first.indexOf('0'));
  const out = new Map<number, number>();
  for (const { key, value } of store.meta.getRange({ start: prefix, end: `${prefix}\uffff` })) {
    const shard = typeof key === 'string' ? Number.parseInt(key.slice(prefix.length), 10) : NaN;
    if (Number.isInteger(shard) && metaKeys.shardWatermark(shard) === key && typeof value === 'number') out.set(shard, value);
  }
  return out;
}

/**
 * Log batches up to this one had all their effects stored, whichever shard applied them: the lowest
 * watermark kept. Sound only once the watermarks are settled for this run (settleWatermarks).
 */
export function storedByEveryShard(store: Store): number {
  let low = Infinity;
  for (const w of shardWatermarks(store).values()) low = Math.min(low, w);
  return low === Infinity ? 0 : low;
}

/**
 * At a start, before any batch is applied (inside a write transaction): every watermark of this
 * run's threads set to the batch through which every effect is stored, whichever thread of an
 * earlier run stored it (the lowest kept, or `atLeast` when higher: a loaded snapshot's batch), and
 * those of threads this run does not have dropped. The chains are placed anew each run, so a
 * thread's watermark from an earlier run does not speak for the chains it writes now: left as it
 * was, the lowest watermark could rise above a batch whose transactions nobody stored once another
 * thread commits (or, read by a thread after another's first commit, skip storing them).
 */
export function settleWatermarks(store: Store, shards: number, atLeast = 0): number {
  const kept = shardWatermarks(store);
  const settled = Math.max(storedByEveryShard(store), atLeast);
  for (const s of kept.keys()) if (s >= shards) store.meta.remove(metaKeys.shardWatermark(s));
  for (let s = 0; s < shards; s++) if (kept.get(s) !== settled) store.meta.put(metaKeys.shardWatermark(s), settled);
  return settled;
}
