/**
 * EngineReader: everything the gateway reads from the engine, on any thread, through one object.
 * It hides where a figure lives (a pool row column, a ring block, the token tables, LMDB): callers
 * ask by pool, token or chain id and get numbers or copy-out structs they own and reuse.
 *
 * Invariants:
 *  - Reads never write shared memory, except the swap watch counts (watchPoolSwaps / watchTokenSwaps),
 *    which the shard writer only reads.
 *  - Copy-out reads (readPool, readPoolRow, readTokenPrice, readRing, readPoolReserves,
 *    readSecondCandle) are seqlock-consistent and allocate nothing per call: the caller owns `out`.
 *  - Single-figure accessors (volumeUsd, liquidityUsd, ...) read one word without the seqlock, as a
 *    scan over every pool does: a figure may be one update old, never torn.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { SwapFeed } from '../feed/swaps.js';
import type { RankQuery, RankResult } from '../search/rank-index.js';
import type { PoolRanker } from '../search/ranker.js';
import { poolPricesUsd, priceVersion, PriceTexts, routedPriceTime, routedPriceUsd } from '../state/exact-price.js';
import { TOKEN_SECOND_SLOTS, type Win } from '../state/layout.js';
import { SECOND_U32_WORDS, SECOND_WORDS, SecondF64, SecondU32 } from '../state/candle-record.js';
import {
  readPool,
  readPoolRow,
  readRing,
  readStable,
  readTokenPrice,
  type PoolFigures,
  type PoolState,
  type RingCandles,
  type TokenPriceState,
} from '../state/read.js';
import type { EngineBuffers, EngineViews } from '../state/views.js';
import { rowWindowValue } from '../state/window-slots.js';
import { storedCandles, type StoredCandle } from '../store/candles.js';
import type { Store, TxKey, TxRecord } from '../store/store.js';

/** The engine's parts a reader is built over (the process wires them; a stream thread attaches its own). */
export interface EngineParts {
  readonly views: EngineViews;
  /** The catalog: networks, DEXes, pool and token ids, addresses and names. */
  readonly registry: Catalog;
  /** The LMDB store (sealed candles of quiet pools, transactions); absent on a stream thread. */
  readonly store?: Store;
  /** Runs ranked pool searches on the shard threads; absent on a stream thread. */
  readonly ranker?: PoolRanker;
  /** Swaps of watched pools and tokens as the shards apply them. */
  readonly swaps?: SwapFeed;
}

/** A pool's reserves as the reserve streams need them (readPoolReserves fills it). */
export interface PoolReserves {
  /** Raw reserves: reserve0 words 0..3 then reserve1 words 0..3 (little-endian u32). */
  readonly raw: Uint32Array;
  block: number;
  time: number;
  price0: number;
  price1: number;
}

export function createPoolReserves(): PoolReserves {
  return { raw: new Uint32Array(8), block: 0, time: 0, price0: 0, price1: 0 };
}

/** One 1 s candle of a token (its USD price; priceSum: the sum of the swap prices, for a mean). */
export interface SecondCandle {
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  priceSum: number;
  volumeUsd: number;
  txns: number;
}

export function createSecondCandle(): SecondCandle {
  return { time: 0, open: 0, high: 0, low: 0, close: 0, priceSum: 0, volumeUsd: 0, txns: 0 };
}

/** The k-th 1 s candle of a token, into c; kept is false once the ring has moved past it (or it is not open yet). */
interface SecondCandleRead {
  k: number;
  kept: boolean;
  c: SecondCandle;
}

/** This thread's pool USD prices (poolPricesUsd). */
const usdScratch = new Float64Array(3);

function copyPoolReserves(v: EngineViews, p: number, o: PoolReserves): void {
  for (let k = 0; k < 8; k++) o.raw[k] = v.reserveRaw[p * 8 + k]!;
  o.block = v.reserveBlock[p]!;
  o.time = v.reserveTime[p]!;
  poolPricesUsd(v, p, usdScratch);
  o.price0 = usdScratch[0]!;
  o.price1 = usdScratch[1]!;
}

function copyPoolLiquidity(v: EngineViews, p: number, out: Float64Array): void {
  poolPricesUsd(v, p, out);
}

function copySecondCandle(v: EngineViews, t: number, r: SecondCandleRead): void {
  const b = v.tokenSecondBlock[t]! - 1;
  const n = v.secOpened[t]!;
  if (b < 0) {
    r.kept = false;
    return;
  }
  const slot = b * TOKEN_SECOND_SLOTS + (r.k % TOKEN_SECOND_SLOTS);
  const f = slot * SECOND_WORDS;
  const w = slot * SECOND_U32_WORDS;
  const c = r.c;
  c.time = v.secWords[w + SecondU32.time]!;
  c.open = v.secCells[f + SecondF64.open]!;
  c.high = v.secCells[f + SecondF64.high]!;
  c.low = v.secCells[f + SecondF64.low]!;
  c.close = v.secCells[f + SecondF64.close]!;
  c.priceSum = v.secCells[f + SecondF64.priceSum]!;
  c.volumeUsd = v.secCells[f + SecondF64.volumeUsd]!;
  c.txns = v.secWords[w + SecondU32.txns]!;
  r.kept = r.k >= v.secBase[b]! && r.k < n && n - r.k <= TOKEN_SECOND_SLOTS;
}

/** A transaction row of the store: its key (pool, block, tx, log) and its record. */
export interface StoredTransaction {
  readonly key: TxKey;
  readonly value: TxRecord;
}

export class EngineReader {
  /** Lookups: networks, DEXes, pool and token ids, addresses, names, the pools of a chain or token. */
  readonly catalog: Catalog;
  /** Swaps of watched pools and tokens as the shards apply them; none without a feed. */
  readonly swaps: SwapFeed | undefined;
  private readonly v: EngineViews;
  private readonly store: Store | undefined;
  private readonly ranker: PoolRanker | undefined;
  private readonly secondRead: SecondCandleRead = { k: 0, kept: false, c: createSecondCandle() };

  constructor(parts: EngineParts) {
    this.v = parts.views;
    this.catalog = parts.registry;
    this.store = parts.store;
    this.ranker = parts.ranker;
    this.swaps = parts.swaps;
  }

  /** The shared buffers another thread attaches its own reader to (with the catalog's). */
  get buffers(): EngineBuffers {
    return this.v.buffers;
  }

  /** The LMDB store this reader's sealed candles and transactions come from; throws on a reader without one. */
  private get history(): Store {
    if (this.store === undefined) throw new Error('this engine reader has no store');
    return this.store;
  }

  // ---- pools ----

  /** Pool ids below this were ever handed out. */
  get poolCount(): number {
    return this.v.poolCount;
  }

  /** Pool p's version word: even and unchanged while nothing of the pool changed. */
  poolVersion(p: number): number {
    return Atomics.load(this.v.poolSeq, p);
  }

  /**
   * A version of what readPool and readPoolRow give for pool p, USD figures included: its own version
   * word plus its tokens' price versions (which move with anything down their routes); -1 while a
   * writer is inside an update. Unchanged, the answers are unchanged.
   */
  poolFiguresVersion(p: number): number {
    const v = this.v;
    const s = Atomics.load(v.poolSeq, p);
    if ((s & 1) !== 0) return -1;
    const a = priceVersion(v, v.poolToken0[p]!);
    const b = priceVersion(v, v.poolToken1[p]!);
    return a < 0 || b < 0 ? -1 : s + a + b;
  }

  /**
   * Copies pool p's dynamic state into `out` (token 1's price changes too with token1Changes); false
   * when it did not settle. `figures` says which window figures a quiet pool needs summed from its
   * stored candles (the others are NaN).
   */
  readPool(p: number, out: PoolState, token1Changes = false, figures: PoolFigures = 'all'): boolean {
    return readPool(this.v, p, out, token1Changes, figures);
  }

  /** The figures of pool p's search row (ROW order) into `out`; their version, -1 when they did not settle. */
  readPoolRow(p: number, out: Float64Array): number {
    return readPoolRow(this.v, p, out);
  }

  /** Copies pool p's reserves, their block and time and its USD prices into `out`; the version read, -1 when it did not settle. */
  readPoolReserves(p: number, out: PoolReserves): number {
    return readStable(this.v.poolSeq, this.v, p, out, copyPoolReserves);
  }

  /**
   * Copies the candles of pool p and interval index `interval` opening in [from, to] that the
   * shared ring holds into `out` (none for a quiet pool), with where the ring starts: older candles
   * are in the store (PoolCandles joins both). False when no consistent copy was obtained.
   */
  readRing(p: number, interval: number, from: number, to: number, out: RingCandles): boolean {
    return readRing(this.v, p, interval, from, to, out);
  }

  poolExists(p: number): boolean {
    return this.v.poolExists[p] !== 0;
  }

  poolChain(p: number): number {
    return this.v.poolChain[p]!;
  }

  poolDex(p: number): number {
    return this.v.poolDex[p]!;
  }

  poolToken0(p: number): number {
    return this.v.poolToken0[p]!;
  }

  poolToken1(p: number): number {
    return this.v.poolToken1[p]!;
  }

  /** Unix seconds. */
  poolCreatedAt(p: number): number {
    return this.v.poolCreatedAt[p]!;
  }

  // ---- windows (single figures, for scans) ----

  volumeUsd(p: number, w: Win): number {
    return rowWindowValue(this.v, 'volumeUsd', w, p);
  }

  txns(p: number, w: Win): number {
    return rowWindowValue(this.v, 'txns', w, p);
  }

  /** Token 0's USD price change over window w, in percent. */
  priceChange(p: number, w: Win): number {
    return rowWindowValue(this.v, 'priceChange', w, p);
  }

  /** Pool p's USD liquidity as its tokens' prices stand now (its raw reserve words read under the pool's seqlock). */
  liquidityUsd(p: number): number {
    readStable(this.v.poolSeq, this.v, p, usdScratch, copyPoolLiquidity);
    return usdScratch[2]!;
  }

  // ---- tokens ----

  /** Copies token t's price and route into `out`; false when it did not settle. */
  readTokenPrice(t: number, out: TokenPriceState): boolean {
    return readTokenPrice(this.v, t, out);
  }

  /** Token t's USD price through its route as it stands (one word at a time: may be one update old). */
  tokenPriceUsd(t: number): number {
    return routedPriceUsd(this.v, t);
  }

  /** Unix seconds of the newest event that moved token t's price, down its route. */
  tokenPriceTime(t: number): number {
    return routedPriceTime(this.v, t);
  }

  /** A version of token t's price: even, and unchanged while nothing down its route changed (-1 while a writer is inside). */
  priceVersion(t: number): number {
    return priceVersion(this.v, t);
  }

  /** The pool token t's price is routed through, -1 when none. */
  tokenRoutePool(t: number): number {
    return this.v.tokenRoutePool[t]! - 1;
  }

  tokenChain(t: number): number {
    return this.v.tokenChain[t]!;
  }

  /** Token t's role (0 wrapped native, 1 stablecoin, 2 major, higher: the rest). */
  tokenRole(t: number): number {
    return this.v.tokenRole[t]!;
  }

  /** Token prices as shown (exact digits, cached per version); one per caller. */
  priceTexts(): PriceTexts {
    return new PriceTexts(this.v);
  }

  /** 1 s candles ever opened for token t (the ring keeps the newest TOKEN_SECOND_SLOTS). */
  secondCandlesOpened(t: number): number {
    return this.v.secOpened[t]!;
  }

  /** Open time of token t's newest 1 s candle still held, -1 when none is. */
  newestSecondCandleTime(t: number): number {
    const v = this.v;
    const n = v.secOpened[t]!;
    const b = v.tokenSecondBlock[t]! - 1;
    if (b < 0 || n <= v.secBase[b]!) return -1;
    return v.secWords[(b * TOKEN_SECOND_SLOTS + ((n - 1) % TOKEN_SECOND_SLOTS)) * SECOND_U32_WORDS + SecondU32.time]!;
  }

  /** Copies token t's k-th 1 s candle consistently into `out`; false when the ring no longer (or not yet) holds it. */
  readSecondCandle(t: number, k: number, out: SecondCandle): boolean {
    const r = this.secondRead;
    r.k = k;
    r.c = out;
    return readStable(this.v.tokenSeq, this.v, t, r, copySecondCandle) >= 0 && r.kept;
  }

  // ---- chains ----

  /** Chain slots (chain indexes are below this). */
  get chainCapacity(): number {
    return this.v.capacity.chains;
  }

  /** Unix seconds: the newest event time applied on chain c. */
  chainClock(c: number): number {
    return this.v.chainClock[c]!;
  }

  /** Chain c's reorganisation counter: it moves once a rollback has rebuilt the chain. */
  chainReorgs(c: number): number {
    return Atomics.load(this.v.chainReorgs, c);
  }

  /** The block chain c's newest reorganisation rolled back to. */
  chainReorgBlock(c: number): number {
    return this.v.chainReorgBlock[c]!;
  }

  // ---- swap feed watches ----

  /** Adds `delta` (+1 / -1) to the count of streams watching pool p's swaps (the shard copies them out while it is above 0). */
  watchPoolSwaps(p: number, delta: number): void {
    Atomics.add(this.v.watchPool, p, delta);
  }

  /** As watchPoolSwaps, for token t's swaps. */
  watchTokenSwaps(t: number, delta: number): void {
    Atomics.add(this.v.watchToken, t, delta);
  }

  /**
   * Pool p's sealed candles of interval index `interval` opening in [from, to] as the store holds
   * them, oldest first (newest first when `reverse`). PoolCandles joins them with the ring; read
   * candles through it.
   */
  sealedCandles(p: number, interval: number, from: number, to: number, reverse: boolean): Generator<StoredCandle> {
    return storedCandles(this.history, p, interval, from, to, reverse);
  }

  // ---- transactions ----

  /** Pool transactions from `start` down to the oldest of pool `pool`, newest first (the store's 7-day window). */
  transactionsBackward(start: TxKey | [number], pool: number): Iterable<StoredTransaction> {
    return this.history.txs.getRange({ start, end: [pool], reverse: true });
  }

  // ---- search ----

  /** Shard threads that run ranked searches (0 on a reader without them). */
  get searchShards(): number {
    return this.ranker?.shards ?? 0;
  }

  /** The shard that ranks chain c's pools. */
  searchShardOf(chain: number): number {
    return this.searcher().shardOf(chain);
  }

  /** One page of `q` over shard `shard`'s pools, in rank order. */
  rank(shard: number, q: RankQuery): Promise<RankResult> {
    return this.searcher().rank(shard, q);
  }

  private searcher(): PoolRanker {
    if (this.ranker === undefined) throw new Error('this engine reader has no search shards');
    return this.ranker;
  }
}


