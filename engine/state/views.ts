/**
 * The engine's shared-memory views: typed-array columns over SharedArrayBuffers, created once by
 * the main thread and attached by every worker, so any thread reads pool state without messages.
 *
 * Ownership (single writer per cell):
 *  - static pool and token columns, chain clocks and counts: the ingest stage on the main thread,
 *    written before the first event that needs them is dispatched to a shard;
 *  - everything dynamic of a pool or token: the engine shard that owns the pool's chain.
 * Readers use the seqlocks: `poolSeq[p]` guards all dynamic columns and candle rings of pool p,
 * `tokenSeq[t]` the price and 1 s candles of token t. A version word is odd while its writer is
 * inside an update; a reader retries when it saw an odd value or the word changed under it.
 */
import { ROW_WINDOWS, ROW_WINDOW_FIGURES, type RowWindowFigure } from '../search/figures.js';
import type { StoredCandles } from './windows.js';
import { CANDLE_WORDS, SECOND_WORDS, wordsOf as candleWords, type CandleRecords } from './candle-record.js';
import { INTERVALS, INTERVAL_SECONDS, RING_SLOTS, TOKEN_SECOND_SLOTS, WINDOWS, WINDOW_BASES, WINDOW_COUNT } from './layout.js';

type ColumnCtor =
  | Float64ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | Uint16ArrayConstructor
  | Uint8ArrayConstructor;

export interface EngineCapacity {
  readonly pools: number;
  readonly tokens: number;
  readonly chains: number;
  /** Ring blocks: pools that may hold candle rings at once (default: one per pool id). */
  readonly blocks?: number;
  /** Second blocks: tokens that may hold 1 s candles at once (default: one per token id). */
  readonly secondBlocks?: number;
  /** Window slots: pools that may hold rolling-window state at once (default: one per pool id). */
  readonly windowSlots?: number;
}

/** What crosses to a worker: capacities and the buffers, keyed by column name. */
export interface EngineBuffers {
  readonly capacity: EngineCapacity;
  readonly columns: Readonly<Record<string, SharedArrayBuffer>>;
}

/**
 * What one element of a column belongs to: a pool, a token, a chain, a ring block (the candle rings
 * of one active pool, ring-blocks.ts), a window slot (the rolling-window figures of a pool that
 * traded within the longest window), or the whole engine (fixed length).
 */
export type ColumnScope = 'pool' | 'token' | 'chain' | 'block' | 'secondBlock' | 'windowSlot' | 'fixed';
/**
 * Who writes a column: ingest (main thread), the shard owning the row's chain, or the gateway.
 * `transient` columns (seqlock versions, rollback counters, stream watch flags) mean nothing after
 * a restart: snapshots skip them and a start leaves them zero.
 */
export type ColumnWriter = 'ingest' | 'shard' | 'gateway';

/** One entry of the column table, recorded as each column is declared (the snapshot format derives from it). */
export interface ColumnSpec {
  readonly name: string;
  readonly type: 'f64' | 'u32' | 'i32' | 'u16' | 'u8';
  readonly scope: ColumnScope;
  /** Elements per row (a pool's ring slots, 8 raw reserve words, ...); the length for `fixed`. */
  readonly stride: number;
  readonly writer: ColumnWriter;
  readonly transient: boolean;
  readonly array: Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;
  /** What a value an older snapshot kept in another element type becomes here (absent: the same value). */
  readonly fromOlder?: (value: number) => number;
  /**
   * A block column of candles: a pool's row is written only where it swaps, takes a ring block
   * (its candles reloaded) or has its block moved or reset (shards/apply.ts applySwap, tiers.ts
   * compactBlocks, a rollback), never as its windows move: DirtyRows.candles marks those writes,
   * and a delta cut takes the rows of the pools not marked from the previous file (snapshot/blocks.ts).
   */
  readonly candles: boolean;
}

const TYPE_OF = new Map<ColumnCtor, ColumnSpec['type']>([
  [Float64Array, 'f64'],
  [Uint32Array, 'u32'],
  [Int32Array, 'i32'],
  [Uint16Array, 'u16'],
  [Uint8Array, 'u8'],
]);

interface ColumnOptions {
  readonly stride?: number;
  readonly writer: ColumnWriter;
  readonly transient?: boolean;
  readonly fromOlder?: (value: number) => number;
  readonly candles?: boolean;
}

/** Rows a column of `scope` has at `capacity`. */
export function rowsOf(capacity: EngineCapacity, scope: ColumnScope): number {
  switch (scope) {
    case 'pool':
      return capacity.pools;
    case 'token':
      return capacity.tokens;
    case 'chain':
      return capacity.chains;
    case 'block':
      return capacity.blocks ?? capacity.pools;
    case 'secondBlock':
      return capacity.secondBlocks ?? capacity.tokens;
    case 'windowSlot':
      return capacity.windowSlots ?? capacity.pools;
    default:
      return 1;
  }
}

class ColumnSource {
  readonly columns: Record<string, SharedArrayBuffer>;
  readonly table: ColumnSpec[] = [];
  private readonly capacity: EngineCapacity;
  constructor(capacity: EngineCapacity, existing?: Readonly<Record<string, SharedArrayBuffer>>) {
    this.capacity = capacity;
    this.columns = existing ? { ...existing } : {};
  }
  col<C extends ColumnCtor>(name: string, ctor: C, scope: ColumnScope, options: ColumnOptions): InstanceType<C> {
    const stride = options.stride ?? 1;
    const rows = rowsOf(this.capacity, scope);
    const length = rows * stride;
    let sab = this.columns[name];
    if (!sab) {
      sab = new SharedArrayBuffer(length * ctor.BYTES_PER_ELEMENT);
      this.columns[name] = sab;
    }
    const array = new (ctor as unknown as new (b: SharedArrayBuffer) => InstanceType<C>)(sab);
    this.table.push({ name, type: TYPE_OF.get(ctor)!, scope, stride, writer: options.writer, transient: options.transient ?? false, candles: options.candles ?? false, array, ...(options.fromOlder ? { fromOlder: options.fromOlder } : {}) });
    return array;
  }
}

/** Slots of the weighted pools' side table (a power of two, 2.5 MiB with their weights): probes stay short up to about 98,000 weighted pools (3/4 full), several times the weighted pools of every network together. */
export const WEIGHTED_POOL_SLOTS = 131_072;

/**
 * u32 words per ring block in `ringOpened`: the counters of every interval side by side, one 64-byte
 * cache line per block (INTERVALS.length of them used, the rest zero).
 */
export const RING_OPENED_STRIDE = 16;
/** The block column of the counters (older snapshots kept them as the pool columns `ring.<iv>.opened`: snapshot/format.ts). */
export const RING_OPENED_COLUMN = 'ring.opened';
if (INTERVALS.length > RING_OPENED_STRIDE) throw new Error(`${INTERVALS.length} intervals do not fit a ring block's ${RING_OPENED_STRIDE} counters`);

/** Where ring block b's counter of `interval` sits in `ringOpened`. */
export function ringOpenedAt(b: number, interval: number): number {
  return b * RING_OPENED_STRIDE + interval;
}



/**
 * Columns of one candle interval. The candles sit in pool p's ring block b = poolBlock[p] - 1, one
 * record per candle with its fields side by side (candle-record.ts), as candles k of a count n
 * (`ringOpened`, block scope): record `b * slots + (k % slots)` holds candle k, for k in
 * [n - min(n, slots), n), the newest at n - 1. A pool without a block (quiet) has every candle in LMDB.
 */
export interface CandleRing extends CandleRecords {
  readonly seconds: number;
  readonly slots: number;
}

export class EngineViews {
  readonly capacity: EngineCapacity;
  readonly buffers: EngineBuffers;

  // ---- counts and chain clocks (writer: ingest) ----
  /** [0] pool id bound, [1] token id bound (ids below may be gaps: see poolExists). */
  readonly counts: Int32Array;
  /** Per chain index: the chain's "now" in Unix seconds (latest block time, or wall time when live). */
  readonly chainClock: Float64Array;
  /**
   * Per chain index: rollbacks after reorganisations (writer: ingest). Invariant: chainReorgBlock[c] is
   * written, and the rolled-back state is visible in every view, before Atomics.add bumps chainReorgs[c];
   * a reader that sees the counter change reads the block rolled back to after it.
   */
  readonly chainReorgs: Int32Array;
  readonly chainReorgBlock: Float64Array;

  // ---- static pool columns (writer: ingest, once per pool) ----
  /** 1 once id p is a registered pool (ids come in per-chain blocks, with gaps). */
  readonly poolExists: Uint8Array;
  readonly poolChain: Uint16Array;
  readonly poolDex: Uint16Array;
  readonly poolToken0: Int32Array;
  readonly poolToken1: Int32Array;
  readonly poolDecimals0: Uint8Array;
  readonly poolDecimals1: Uint8Array;
  /** 0 constant product, 1 concentrated, 2 Solidly stable curve (events/model.ts PoolProtocol). */
  readonly poolProtocol: Uint8Array;
  readonly poolFeePpm: Uint32Array;
  readonly poolCreatedAt: Uint32Array;
  readonly poolCreatedBlock: Float64Array;

  // ---- weighted pools' side table (writer: ingest; reserve-price.ts) ----
  /**
   * Only weighted pools (PoolProtocol.Weighted) have weights, so they are kept in a small open-addressing
   * table instead of every pool's row: slot s holds pool `weightedPool[s] - 1` (0: empty), found by linear
   * probing from a hash of the pool id. Invariant: a slot's weights are written before its key is stored
   * (Atomics), and a key never changes once set (pool ids are not handed out twice), so a reader on any
   * thread that finds the key reads complete weights.
   */
  readonly weightedPool: Int32Array;
  /** Per slot of weightedPool: normalised weights of token 0 and token 1 (1e18 = 100 %) as u64, 4 words: w0 low, w0 high, w1 low, w1 high. */
  readonly weightedWeights: Uint32Array;

  // ---- dynamic pool columns (writer: owning shard; guarded by poolSeq) ----
  readonly poolSeq: Int32Array;
  /** Unix seconds of the last event and the last swap: whole (events carry u32 times, which last to 2106), as reserveTime. */
  readonly lastEventTime: Uint32Array;
  readonly lastSwapTime: Uint32Array;
  /**
   * Unix s no stored transaction of pool p is older than (0: not known yet), for the transaction
   * prunes (shards/prune.ts): written and read only by the shard owning p. A column rather than an
   * array of each shard's own: pools of both shards share every page of a per-shard array.
   */
  readonly txKeptFrom: Uint32Array;
  /** Token 0 priced in token 1, decimals applied. */
  readonly ratio: Float64Array;
  readonly priceUsd0: Float64Array;
  readonly priceUsd1: Float64Array;
  /**
   * Raw reserves, 8 words per pool: reserve0 w0..w3 then reserve1 w0..w3 (little-endian u32). The
   * reserves with decimals applied are derived from them when read (reserve-price.ts poolReserve).
   */
  readonly reserveRaw: Uint32Array;
  /** Block and time of the last reserve change. */
  readonly reserveBlock: Float64Array;
  readonly reserveTime: Uint32Array;
  /**
   * Last `sync` seen: its block (syncMark: only ever compared with the block of an event of the same
   * pool) and tx index, so the swap or liquidity change of the same tx does not move reserves twice;
   * 0: none. Kept by every pool: a quiet pool's liquidity changes come with syncs too.
   */
  readonly syncBlock: Uint32Array;
  readonly syncTx: Uint32Array;
  readonly liquidityUsd: Float64Array;
  /** Swaps ever applied to the pool: a whole count (2^32 is beyond any pool's history). */
  readonly txnsTotal: Uint32Array;
  /**
   * Token 0's USD price at the pool's last swap: the close of its newest candle of every interval,
   * so the reference price of every window once none holds a candle (0: never swapped). A pool
   * without a window slot reads its row price changes against it (window-slots.ts).
   */
  readonly lastSwapPrice0: Float64Array;

  // ---- window slots (window-slots.ts): rolling-window figures of pools that traded within the longest window ----
  /**
   * Pool p's window slot + 1, 0 while it has none (writer: owning shard; guarded by poolSeq). Invariant:
   * a pool holding a ring block holds a slot; a pool without a slot has every window empty and unable
   * to change until it swaps (volumes and transactions 0, price changes against lastSwapPrice0).
   */
  readonly poolWindowSlot: Int32Array;
  /**
   * Per window (layout WINDOWS order), the figures search ranks and filters by (search/figures.ts
   * ROW_WINDOWS), the figures of the pool holding slot s at index s; undefined for the windows no
   * figure names. Kept as of winAsOf: a pool with a ring block writes them beside its block's
   * (blockWin*, equal), a pool without one as its stored candles sum (state/windows.ts), its price
   * changes following its price. Read them through window-slots.ts (a pool may hold no slot).
   */
  readonly winVolumeUsd: readonly (Float64Array | undefined)[];
  readonly winTxns: readonly (Float64Array | undefined)[];
  /** Token 0's USD price change in percent. */
  readonly winPriceChange: readonly (Float64Array | undefined)[];
  /** The three row window figures by name (figures.ts), slot-indexed. */
  readonly rowWindow: Readonly<Record<RowWindowFigure, readonly (Float64Array | undefined)[]>>;
  /**
   * Per window base, for the pool holding slot s without a ring block: the minute at which a
   * one-minute candle next leaves one of its windows (or a window's anchor moves past a candle:
   * windows.ts) (windows.ts NEVER_CHANGES when none holds one; 0 not known, after a start). Until
   * then its window figures cannot change but for its price. Meaningless while the pool holds a
   * block: set when it gives the block back.
   */
  readonly winNextChange: readonly Uint32Array[];
  /**
   * Per window base (WINDOW_BASES order), for the pool holding slot s: the minute (open time) its
   * window figures are as of. A pool without a slot has every window empty as of the minute they
   * became so, or never summed: read it through window-slots.ts windowAsOf (0 before its first swap,
   * windowsEmptyFrom after).
   */
  readonly winAsOf: readonly Uint32Array[];
  /** Slot s's pool + 1, 0 while free (writer: the shard that takes or gives it back). */
  readonly windowSlotPool: Int32Array;
  /** The slots' allocator words, as blockHeader's (ring-blocks.ts). */
  readonly windowSlotHeader: Int32Array;
  /** Free stack of slots, as blockFree. */
  readonly windowSlotFree: Int32Array;

  // ---- window state of pools holding a ring block (block scope, WINDOW_COUNT per block: [b * WINDOW_COUNT + w]) ----
  /**
   * Everything a trading pool keeps its windows current with, in its ring block b: the sums, token 0's
   * and token 1's reference prices and token 0's price changes. Written by the owning shard only while
   * the pool holds the block: set by re-summing its rings when it takes the block, added to per swap,
   * and taken from as one-minute candles leave the windows (blockLeave*; state/windows.ts).
   * A pool without a block has none: its window figures beyond the row's are summed from its stored
   * candles when read (read.ts).
   */
  readonly blockWinVolumeUsd: Float64Array;
  readonly blockWinBuyVolumeUsd: Float64Array;
  readonly blockWinTxns: Float64Array;
  readonly blockWinBuys: Float64Array;
  readonly blockWinPriceChange: Float64Array;
  readonly blockWinRefPrice: Float64Array;
  readonly blockWinRefPrice1: Float64Array;
  /**
   * Per window of a pool holding a block: the next one-minute candle to leave it (its open time,
   * Infinity when none will before the window's anchor moves; windows.ts), with what leaving
   * subtracts and its closes. Found when the previous one left (or the anchor moved), from the ring,
   * the candles waiting to be stored or the store, so each stored candle is read once per window.
   */
  readonly blockLeaveTime: Float64Array;
  readonly blockLeaveVolumeUsd: Float64Array;
  readonly blockLeaveBuyVolumeUsd: Float64Array;
  readonly blockLeaveTxns: Float64Array;
  readonly blockLeaveBuys: Float64Array;
  readonly blockLeaveClose0: Float64Array;
  readonly blockLeaveClose1: Float64Array;

  // ---- candle rings per interval (writer: owning shard; guarded by poolSeq) ----
  readonly rings: readonly CandleRing[];
  /**
   * Per ring block, per interval (ringOpenedAt): the count n its candles are numbered by (CandleRing).
   * Invariant: the block holds candles k in [n - min(n, slots), n), and n <= slots means the store
   * holds no candle of the pool older than the ring's oldest. Candles opened while the pool held
   * this block count one each; a pool that takes a block again starts it at the number of stored
   * candles it reloaded (windows.ts reloadNewest: 2 x slots when they fill the ring, since older
   * ones may be stored).
   */
  readonly ringOpened: Uint32Array;

  // ---- ring blocks (ring-blocks.ts) ----
  /** Pool p's ring block + 1, 0 while it has none (writer: owning shard; guarded by poolSeq). */
  readonly poolBlock: Int32Array;
  /** Block b's pool + 1, 0 while free (writer: the shard that takes or gives it back). */
  readonly blockPool: Int32Array;
  /**
   * Allocator words (writer: any shard, under the lock word): [0] lock (1 held), [1] free-stack depth,
   * [2] high-water (blocks ever handed out; those above were never touched), [3] blocks in use,
   * [4] 1 while a start reads the rows of the blocks its snapshot handed out (readers wait), 2 if that failed.
   */
  readonly blockHeader: Int32Array;
  /** Free stack: entries [0, blockHeader[1]) are free block ids below the high-water mark. */
  readonly blockFree: Int32Array;

  // ---- static token columns (writer: ingest) ----
  readonly tokenChain: Uint16Array;
  readonly tokenDecimals: Uint8Array;
  /** TokenRole: 0 primary stablecoin, 1 stablecoin, 2 wrapped native, 3 other. */
  readonly tokenRole: Uint8Array;

  // ---- dynamic token columns (writer: shard owning the token's chain; guarded by tokenSeq) ----
  readonly tokenSeq: Int32Array;
  /** USD price as the token's route pool last set it (reads follow the route as it stands: state/exact-price.ts). */
  readonly tokenPriceUsd: Float64Array;
  /** USD liquidity on the weakest hop of the route (a hop: 2 x the counterpart's reserve in its pool). */
  readonly tokenRouteLiquidityUsd: Float64Array;
  /** Pool id + 1 of the route (0: none): the token is priced in the pool's other token. */
  readonly tokenRoutePool: Int32Array;
  /** Time (Unix s, whole: events carry u32 times) of the event of the route pool that last set the price. */
  readonly tokenPriceTime: Uint32Array;
  /**
   * 1 s candles: secOpened[t] counts token t's seconds ever opened (a token row); they sit in its
   * second block b = tokenSecondBlock[t] - 1, slot `b * TOKEN_SECOND_SLOTS + (k % TOKEN_SECOND_SLOTS)`
   * holding its k-th second for k in [max(secBase[b], opened - TOKEN_SECOND_SLOTS), opened). A token
   * quiet for a minute gives its block back (its seconds were streamed; they are not stored).
   */
  readonly secOpened: Uint32Array;
  /** Token t's second block + 1, 0 while it has none (writer: owning shard; guarded by tokenSeq). */
  readonly tokenSecondBlock: Int32Array;
  /** Per second block: secOpened of its token when it took the block (older seconds are not in it). */
  readonly secBase: Uint32Array;
  /** The second blocks' allocator (ring-blocks.ts): owner token + 1, header words, free stack. */
  readonly secondBlockToken: Int32Array;
  readonly secondBlockHeader: Int32Array;
  readonly secondBlockFree: Int32Array;
  /** The seconds, one record each (candle-record.ts SecondF64 / SecondU32): f64 view. */
  readonly secCells: Float64Array;
  /** u32 view of the same memory. */
  readonly secWords: Uint32Array;

  // ---- change-feed watch flags (writer: gateway thread; readers: shard writers, per swap) ----
  /** 1 while some stream wants the swaps of pool p / of every pool of token t; 0 otherwise. */
  readonly watchPool: Uint8Array;
  readonly watchToken: Uint8Array;

  /** Every column, in declaration order: the one table snapshots and resets derive from. */
  readonly columnTable: readonly ColumnSpec[];

  /**
   * Where readers on this thread find the candles of pools without a ring block (read.ts
   * useStoredCandles; the store the shards write them to). Not shared: each thread's views set theirs.
   */
  storedCandles: StoredCandles | null = null;

  private constructor(capacity: EngineCapacity, existing?: Readonly<Record<string, SharedArrayBuffer>>) {
    this.capacity = capacity;
    const src = new ColumnSource(capacity, existing);
    const ingest = { writer: 'ingest' } as const;
    const shard = { writer: 'shard' } as const;
    const pool = <C extends ColumnCtor>(name: string, ctor: C, o: ColumnOptions) => src.col(name, ctor, 'pool', o);
    const token = <C extends ColumnCtor>(name: string, ctor: C, o: ColumnOptions) => src.col(name, ctor, 'token', o);
    const block = <C extends ColumnCtor>(name: string, ctor: C, o: ColumnOptions) => src.col(name, ctor, 'block', o);

    this.counts = src.col('counts', Int32Array, 'fixed', { stride: 8, ...ingest });
    this.chainClock = src.col('chainClock', Float64Array, 'chain', ingest);
    this.chainReorgs = src.col('chainReorgs', Int32Array, 'chain', { ...ingest, transient: true });
    this.chainReorgBlock = src.col('chainReorgBlock', Float64Array, 'chain', { ...ingest, transient: true });

    this.poolExists = pool('poolExists', Uint8Array, ingest);
    this.poolChain = pool('poolChain', Uint16Array, ingest);
    this.poolDex = pool('poolDex', Uint16Array, ingest);
    this.poolToken0 = pool('poolToken0', Int32Array, ingest);
    this.poolToken1 = pool('poolToken1', Int32Array, ingest);
    this.poolDecimals0 = pool('poolDecimals0', Uint8Array, ingest);
    this.poolDecimals1 = pool('poolDecimals1', Uint8Array, ingest);
    this.poolProtocol = pool('poolProtocol', Uint8Array, ingest);
    this.poolFeePpm = pool('poolFeePpm', Uint32Array, ingest);
    this.poolCreatedAt = pool('poolCreatedAt', Uint32Array, ingest);
    this.poolCreatedBlock = pool('poolCreatedBlock', Float64Array, ingest);
    // A fixed size, not derived from the capacity: the snapshot's column table (and its hash) stays the same whatever the capacity.
    this.weightedPool = src.col('weightedPool', Int32Array, 'fixed', { stride: WEIGHTED_POOL_SLOTS, ...ingest });
    this.weightedWeights = src.col('weightedWeights', Uint32Array, 'fixed', { stride: WEIGHTED_POOL_SLOTS * 4, ...ingest });

    this.poolSeq = pool('poolSeq', Int32Array, { ...shard, transient: true });
    this.lastEventTime = pool('lastEventTime', Uint32Array, shard);
    this.lastSwapTime = pool('lastSwapTime', Uint32Array, shard);
    this.txKeptFrom = pool('txKeptFrom', Uint32Array, { ...shard, transient: true });
    this.ratio = pool('ratio', Float64Array, shard);
    this.priceUsd0 = pool('priceUsd0', Float64Array, shard);
    this.priceUsd1 = pool('priceUsd1', Float64Array, shard);
    this.reserveRaw = pool('reserveRaw', Uint32Array, { stride: 8, ...shard });
    this.reserveBlock = pool('reserveBlock', Float64Array, shard);
    this.reserveTime = pool('reserveTime', Uint32Array, shard);
    // Older snapshots kept the block itself (f64, 0: none).
    this.syncBlock = pool('syncBlock', Uint32Array, { ...shard, fromOlder: (block) => (block === 0 ? 0 : syncMark(block)) });
    this.syncTx = pool('syncTx', Uint32Array, shard);
    this.liquidityUsd = pool('liquidityUsd', Float64Array, shard);
    this.txnsTotal = pool('txnsTotal', Uint32Array, shard);
    this.lastSwapPrice0 = pool('lastSwapPrice0', Float64Array, shard);
    const slot = <C extends ColumnCtor>(name: string, ctor: C, o: ColumnOptions) => src.col(name, ctor, 'windowSlot', o);
    // Declared where the pool row kept them (before the window slots): a file written then hashes as
    // this table with these columns in the row (snapshot/format.ts asOfInRowColumns).
    this.winAsOf = WINDOW_BASES.map((b) => slot(`winAsOf.${INTERVALS[b.base]}`, Uint32Array, shard));
    // Which pool holds which slot is rebuilt when a snapshot's slots are loaded (snapshot/blocks.ts).
    this.poolWindowSlot = pool('poolWindowSlot', Int32Array, { ...shard, transient: true });
    const rowWindow = Object.fromEntries(
      ROW_WINDOW_FIGURES.map((f) => {
        const name = `win${f[0]!.toUpperCase()}${f.slice(1)}`;
        return [f, WINDOWS.map((w, i) => (ROW_WINDOWS[f].includes(i) ? slot(`${name}.${w.name}`, Float64Array, shard) : undefined))];
      }),
    ) as Record<RowWindowFigure, (Float64Array | undefined)[]>;
    this.rowWindow = rowWindow;
    this.winVolumeUsd = rowWindow.volumeUsd;
    this.winTxns = rowWindow.txns;
    this.winPriceChange = rowWindow.priceChange;
    // Derived from the stored candles again after a start (0: re-sum at the next sweep).
    this.winNextChange = WINDOW_BASES.map((b) => slot(`winNextChange.${INTERVALS[b.base]}`, Uint32Array, { ...shard, transient: true }));
    this.windowSlotPool = slot('windowSlotPool', Int32Array, { ...shard, transient: true });
    this.windowSlotHeader = src.col('windowSlotHeader', Int32Array, 'fixed', { stride: 5, ...shard, transient: true });
    this.windowSlotFree = slot('windowSlotFree', Int32Array, { ...shard, transient: true });
    const perBlock = (name: string) => block(`win.${name}`, Float64Array, { stride: WINDOW_COUNT, ...shard });
    this.blockWinVolumeUsd = perBlock('volumeUsd');
    this.blockWinBuyVolumeUsd = perBlock('buyVolumeUsd');
    this.blockWinTxns = perBlock('txns');
    this.blockWinBuys = perBlock('buys');
    this.blockWinPriceChange = perBlock('priceChange');
    this.blockWinRefPrice = perBlock('refPrice');
    this.blockWinRefPrice1 = perBlock('refPrice1');
    this.blockLeaveTime = perBlock('leave.time');
    this.blockLeaveVolumeUsd = perBlock('leave.volumeUsd');
    this.blockLeaveBuyVolumeUsd = perBlock('leave.buyVolumeUsd');
    this.blockLeaveTxns = perBlock('leave.txns');
    this.blockLeaveBuys = perBlock('leave.buys');
    this.blockLeaveClose0 = perBlock('leave.close0');
    this.blockLeaveClose1 = perBlock('leave.close1');

    this.ringOpened = block(RING_OPENED_COLUMN, Uint32Array, { stride: RING_OPENED_STRIDE, ...shard, candles: true });
    this.rings = INTERVALS.map((iv, i) => {
      const slots = RING_SLOTS[i]!;
      // One column per ring: a block's row is its `slots` candle records (candle-record.ts).
      const cells = block(`ring.${iv}.candles`, Float64Array, { stride: slots * CANDLE_WORDS, ...shard, candles: true });
      return {
        seconds: INTERVAL_SECONDS[i]!,
        slots,
        cells,
        words: candleWords(cells),
      };
    });
    // Which pool holds which block is rebuilt when a snapshot's blocks are loaded (snapshot/blocks.ts).
    this.poolBlock = pool('poolBlock', Int32Array, { ...shard, transient: true });
    this.blockPool = block('blockPool', Int32Array, { ...shard, transient: true });
    this.blockHeader = src.col('blockHeader', Int32Array, 'fixed', { stride: 5, ...shard, transient: true });
    this.blockFree = block('blockFree', Int32Array, { ...shard, transient: true });

    this.tokenChain = token('tokenChain', Uint16Array, ingest);
    this.tokenDecimals = token('tokenDecimals', Uint8Array, ingest);
    this.tokenRole = token('tokenRole', Uint8Array, ingest);
    this.tokenSeq = token('tokenSeq', Int32Array, { ...shard, transient: true });
    this.tokenPriceUsd = token('tokenPriceUsd', Float64Array, shard);
    this.tokenRouteLiquidityUsd = token('tokenRouteLiquidityUsd', Float64Array, shard);
    this.tokenRoutePool = token('tokenRoutePool', Int32Array, shard);
    this.tokenPriceTime = token('tokenPriceTime', Uint32Array, shard);
    // 1 s candles are live data: a snapshot keeps how many each token opened, not the seconds.
    const sec = { stride: TOKEN_SECOND_SLOTS, ...shard, transient: true };
    const second = <C extends ColumnCtor>(name: string, ctor: C, o: ColumnOptions) => src.col(name, ctor, 'secondBlock', o);
    this.secOpened = token('sec.opened', Uint32Array, shard);
    this.secCells = second('sec.seconds', Float64Array, { ...sec, stride: TOKEN_SECOND_SLOTS * SECOND_WORDS });
    this.secWords = candleWords(this.secCells);
    this.tokenSecondBlock = token('tokenSecondBlock', Int32Array, { ...shard, transient: true });
    this.secBase = second('secBase', Uint32Array, { ...shard, transient: true });
    this.secondBlockToken = second('secondBlockToken', Int32Array, { ...shard, transient: true });
    this.secondBlockHeader = src.col('secondBlockHeader', Int32Array, 'fixed', { stride: 4, ...shard, transient: true });
    this.secondBlockFree = second('secondBlockFree', Int32Array, { ...shard, transient: true });
    this.watchPool = pool('watchPool', Uint8Array, { writer: 'gateway', transient: true });
    this.watchToken = token('watchToken', Uint8Array, { writer: 'gateway', transient: true });

    this.buffers = { capacity, columns: src.columns };
    this.columnTable = src.table;
  }

  /** Allocates fresh zeroed buffers (main thread, once). */
  static create(capacity: EngineCapacity): EngineViews {
    return new EngineViews(capacity);
  }

  /** Attaches to buffers created elsewhere (any thread). */
  static attach(buffers: EngineBuffers): EngineViews {
    return new EngineViews(buffers.capacity, buffers.columns);
  }

  /** One past the highest pool id in use; ids below it may be gaps (poolExists). */
  get poolCount(): number {
    return Atomics.load(this.counts, 0);
  }

  get tokenCount(): number {
    return Atomics.load(this.counts, 1);
  }

  /** Ring blocks there are. */
  get blockCount(): number {
    return this.capacity.blocks ?? this.capacity.pools;
  }

  /** Second blocks there are. */
  get secondBlockCount(): number {
    return this.capacity.secondBlocks ?? this.capacity.tokens;
  }

  /** Window slots there are. */
  get windowSlotCount(): number {
    return rowsOf(this.capacity, 'windowSlot');
  }
}

/**
 * What syncBlock keeps of block `block`: 1 to 2^32 - 1, never 0 (no sync), equal for two blocks only
 * 2^32 - 1 blocks apart, which no two events of one pool compared with each other are.
 */
export function syncMark(block: number): number {
  return (block % 4294967295) + 1;
}
