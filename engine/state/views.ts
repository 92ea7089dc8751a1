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
import { INTERVALS, INTERVAL_SECONDS, RING_SLOTS, TOKEN_SECOND_SLOTS, WINDOWS, WINDOW_BASES } from './layout.js';

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
}

/** What crosses to a worker: capacities and the buffers, keyed by column name. */
export interface EngineBuffers {
  readonly capacity: EngineCapacity;
  readonly columns: Readonly<Record<string, SharedArrayBuffer>>;
}

class ColumnSource {
  readonly columns: Record<string, SharedArrayBuffer>;
  constructor(existing?: Readonly<Record<string, SharedArrayBuffer>>) {
    this.columns = existing ? { ...existing } : {};
  }
  col<C extends ColumnCtor>(name: string, ctor: C, length: number): InstanceType<C> {
    let sab = this.columns[name];
    if (!sab) {
      sab = new SharedArrayBuffer(length * ctor.BYTES_PER_ELEMENT);
      this.columns[name] = sab;
    }
    return new (ctor as unknown as new (b: SharedArrayBuffer) => InstanceType<C>)(sab);
  }
}

/** Columns of one candle interval: slot `p * slots + (k % slots)` holds pool p's k-th candle. */
export interface CandleRing {
  readonly seconds: number;
  readonly slots: number;
  /** Number of candles ever opened per pool; the newest is at index opened - 1. */
  readonly opened: Uint32Array;
  readonly time: Uint32Array;
  readonly open0: Float64Array;
  readonly high0: Float64Array;
  readonly low0: Float64Array;
  readonly close0: Float64Array;
  readonly open1: Float64Array;
  readonly high1: Float64Array;
  readonly low1: Float64Array;
  readonly close1: Float64Array;
  readonly volumeUsd: Float64Array;
  readonly buyVolumeUsd: Float64Array;
  readonly txns: Uint32Array;
  readonly buys: Uint32Array;
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
  /** 0 constant product, 1 concentrated. */
  readonly poolProtocol: Uint8Array;
  readonly poolFeePpm: Uint32Array;
  readonly poolCreatedAt: Float64Array;
  readonly poolCreatedBlock: Float64Array;

  // ---- dynamic pool columns (writer: owning shard; guarded by poolSeq) ----
  readonly poolSeq: Int32Array;
  readonly lastEventTime: Float64Array;
  readonly lastSwapTime: Float64Array;
  /** Token 0 priced in token 1, decimals applied. */
  readonly ratio: Float64Array;
  readonly priceUsd0: Float64Array;
  readonly priceUsd1: Float64Array;
  readonly reserve0: Float64Array;
  readonly reserve1: Float64Array;
  /** Raw reserves, 8 words per pool: reserve0 w0..w3 then reserve1 w0..w3 (little-endian u32). */
  readonly reserveRaw: Uint32Array;
  /** Raw reserves as they stood at the end of the block before `reserveBlock`. */
  readonly prevReserveRaw: Uint32Array;
  readonly reserveBlock: Float64Array;
  readonly reserveTime: Float64Array;
  /** Last `sync` seen: block and tx index, so the swap of the same tx does not move reserves twice. */
  readonly syncBlock: Float64Array;
  readonly syncTx: Uint32Array;
  readonly liquidityUsd: Float64Array;
  readonly txnsTotal: Float64Array;
  /** Per window (layout WINDOWS order): sums and price changes of pool p at index p. */
  readonly winVolumeUsd: readonly Float64Array[];
  readonly winBuyVolumeUsd: readonly Float64Array[];
  readonly winTxns: readonly Float64Array[];
  readonly winBuys: readonly Float64Array[];
  readonly winPriceChange: readonly Float64Array[];
  /** Reference USD price of token 0 for each window (see layout.ts). */
  readonly winRefPrice: readonly Float64Array[];
  /** Per window base (WINDOW_BASES order): open time of the base candle the sums are as of. */
  readonly winAsOf: readonly Float64Array[];

  // ---- candle rings per interval (writer: owning shard; guarded by poolSeq) ----
  readonly rings: readonly CandleRing[];

  // ---- static token columns (writer: ingest) ----
  readonly tokenChain: Uint16Array;
  readonly tokenDecimals: Uint8Array;
  /** TokenRole: 0 primary stablecoin, 1 stablecoin, 2 wrapped native, 3 other. */
  readonly tokenRole: Uint8Array;

  // ---- dynamic token columns (writer: shard owning the token's chain; guarded by tokenSeq) ----
  readonly tokenSeq: Int32Array;
  readonly tokenPriceUsd: Float64Array;
  /** USD liquidity of the route the price comes from (2 x the priced side's reserve). */
  readonly tokenRouteLiquidityUsd: Float64Array;
  /** Pool id + 1 of the route (0: none); class of that route (lower is closer to a stablecoin). */
  readonly tokenRoutePool: Int32Array;
  readonly tokenRouteClass: Uint8Array;
  /** Time (Unix s) of the swap that set the price. */
  readonly tokenPriceTime: Float64Array;
  /** 1 s candles, slot `t * TOKEN_SECOND_SLOTS + (k % TOKEN_SECOND_SLOTS)` holds token t's k-th second. */
  readonly secOpened: Uint32Array;
  readonly secTime: Uint32Array;
  readonly secOpen: Float64Array;
  readonly secHigh: Float64Array;
  readonly secLow: Float64Array;
  readonly secClose: Float64Array;
  readonly secPriceSum: Float64Array;
  readonly secVolumeUsd: Float64Array;
  readonly secTxns: Uint32Array;

  // ---- change-feed watch flags (writer: gateway thread; readers: shard writers, per swap) ----
  /** 1 while some stream wants the swaps of pool p / of every pool of token t; 0 otherwise. */
  readonly watchPool: Uint8Array;
  readonly watchToken: Uint8Array;

  private constructor(capacity: EngineCapacity, existing?: Readonly<Record<string, SharedArrayBuffer>>) {
    this.capacity = capacity;
    const src = new ColumnSource(existing);
    const P = capacity.pools;
    const T = capacity.tokens;
    const f64 = (name: string, n: number) => src.col(name, Float64Array, n);
    const u32 = (name: string, n: number) => src.col(name, Uint32Array, n);

    this.counts = src.col('counts', Int32Array, 8);
    this.chainClock = f64('chainClock', capacity.chains);
    this.chainReorgs = src.col('chainReorgs', Int32Array, capacity.chains);
    this.chainReorgBlock = f64('chainReorgBlock', capacity.chains);

    this.poolExists = src.col('poolExists', Uint8Array, P);
    this.poolChain = src.col('poolChain', Uint16Array, P);
    this.poolDex = src.col('poolDex', Uint16Array, P);
    this.poolToken0 = src.col('poolToken0', Int32Array, P);
    this.poolToken1 = src.col('poolToken1', Int32Array, P);
    this.poolDecimals0 = src.col('poolDecimals0', Uint8Array, P);
    this.poolDecimals1 = src.col('poolDecimals1', Uint8Array, P);
    this.poolProtocol = src.col('poolProtocol', Uint8Array, P);
    this.poolFeePpm = u32('poolFeePpm', P);
    this.poolCreatedAt = f64('poolCreatedAt', P);
    this.poolCreatedBlock = f64('poolCreatedBlock', P);

    this.poolSeq = src.col('poolSeq', Int32Array, P);
    this.lastEventTime = f64('lastEventTime', P);
    this.lastSwapTime = f64('lastSwapTime', P);
    this.ratio = f64('ratio', P);
    this.priceUsd0 = f64('priceUsd0', P);
    this.priceUsd1 = f64('priceUsd1', P);
    this.reserve0 = f64('reserve0', P);
    this.reserve1 = f64('reserve1', P);
    this.reserveRaw = u32('reserveRaw', P * 8);
    this.prevReserveRaw = u32('prevReserveRaw', P * 8);
    this.reserveBlock = f64('reserveBlock', P);
    this.reserveTime = f64('reserveTime', P);
    this.syncBlock = f64('syncBlock', P);
    this.syncTx = u32('syncTx', P);
    this.liquidityUsd = f64('liquidityUsd', P);
    this.txnsTotal = f64('txnsTotal', P);
    this.winVolumeUsd = WINDOWS.map((w) => f64(`winVolumeUsd.${w.name}`, P));
    this.winBuyVolumeUsd = WINDOWS.map((w) => f64(`winBuyVolumeUsd.${w.name}`, P));
    this.winTxns = WINDOWS.map((w) => f64(`winTxns.${w.name}`, P));
    this.winBuys = WINDOWS.map((w) => f64(`winBuys.${w.name}`, P));
    this.winPriceChange = WINDOWS.map((w) => f64(`winPriceChange.${w.name}`, P));
    this.winRefPrice = WINDOWS.map((w) => f64(`winRefPrice.${w.name}`, P));
    this.winAsOf = WINDOW_BASES.map((b) => f64(`winAsOf.${INTERVALS[b.base]}`, P));

    this.rings = INTERVALS.map((iv, i) => {
      const slots = RING_SLOTS[i]!;
      const n = P * slots;
      const c = (field: string) => f64(`ring.${iv}.${field}`, n);
      return {
        seconds: INTERVAL_SECONDS[i]!,
        slots,
        opened: u32(`ring.${iv}.opened`, P),
        time: u32(`ring.${iv}.time`, n),
        open0: c('open0'),
        high0: c('high0'),
        low0: c('low0'),
        close0: c('close0'),
        open1: c('open1'),
        high1: c('high1'),
        low1: c('low1'),
        close1: c('close1'),
        volumeUsd: c('volumeUsd'),
        buyVolumeUsd: c('buyVolumeUsd'),
        txns: u32(`ring.${iv}.txns`, n),
        buys: u32(`ring.${iv}.buys`, n),
      };
    });

    this.tokenChain = src.col('tokenChain', Uint16Array, T);
    this.tokenDecimals = src.col('tokenDecimals', Uint8Array, T);
    this.tokenRole = src.col('tokenRole', Uint8Array, T);
    this.tokenSeq = src.col('tokenSeq', Int32Array, T);
    this.tokenPriceUsd = f64('tokenPriceUsd', T);
    this.tokenRouteLiquidityUsd = f64('tokenRouteLiquidityUsd', T);
    this.tokenRoutePool = src.col('tokenRoutePool', Int32Array, T);
    this.tokenRouteClass = src.col('tokenRouteClass', Uint8Array, T);
    this.tokenPriceTime = f64('tokenPriceTime', T);
    const S = T * TOKEN_SECOND_SLOTS;
    this.secOpened = u32('sec.opened', T);
    this.secTime = u32('sec.time', S);
    this.secOpen = f64('sec.open', S);
    this.secHigh = f64('sec.high', S);
    this.secLow = f64('sec.low', S);
    this.secClose = f64('sec.close', S);
    this.secPriceSum = f64('sec.priceSum', S);
    this.secVolumeUsd = f64('sec.volumeUsd', S);
    this.secTxns = u32('sec.txns', S);
    this.watchPool = src.col('watchPool', Uint8Array, P);
    this.watchToken = src.col('watchToken', Uint8Array, T);

    this.buffers = { capacity, columns: src.columns };
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
}
