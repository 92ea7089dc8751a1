/**
 * The stream hub: one subscription index from asset to subscribers, so an event costs work only for
 * the streams that asked for it.
 *
 *  - Prices, reserves and 1 s candles: a tick every TICK_MS looks at the version words (seqlocks) of
 *    the subscribed tokens and pools only, so its cost follows the subscriptions, not the market.
 *    Whatever changed is read consistently, rendered once and handed to each subscriber's queue.
 *  - Swaps: the shard threads copy out the swaps of pools and tokens whose watch flag the hub set
 *    (EngineViews.watchPool / watchToken, one byte each, 1 while subscribed), and the hub renders
 *    each once when the apply task settles.
 *  - A swap or 1 s candle stream (one subscription) reads from the channel of its asset and
 *    request_id (channel.ts): an event is appended there once for all of them. Other streams get
 *    each event in their own queue (a price or reserve stream keeps only the latest waiting).
 *
 * Each tick then writes every stream that has events waiting, one chunk per stream, and sends the
 * pings that are due. Every rendered event also enters the replay window (replay.ts).
 *
 * Reorganisations: the engine rolls a chain back by zeroing its pools and tokens and applying the
 * chain's trimmed log again, then bumps the chain's reorg counter (EngineViews.chainReorgs). While it
 * rebuilds, a watched asset of the chain is seen going back in time (an older price time, block or
 * fewer 1 s candles): from then on nothing of that chain is streamed (the states on the way are
 * history, not news) until the counter moves. Then every stream subscribed to an asset of the chain
 * gets a `warning` naming the block rolled back to, queued after what was waiting for it, followed by
 * the corrected values: each price and reserve state of the chain sent again even when equal to what
 * was streamed, 1 s candles from the first one not streamed yet in the rebuilt ring (so candles
 * already streamed are not sent again as new), and swaps as the new blocks bring them.
 */
import { createPoolReserves, createSecondCandle, createTokenPriceState, type EngineReader, errorText, fallbackLog, type FeedSwap, type Log, type PoolReserves, PriceTexts, type SecondCandle, TOKEN_SECOND_SLOTS, u128BigInt } from '../../engine/read/index.js';
import { streamKindOf, type StreamCounters } from '../metrics/counters.js';
import { Channel } from './channel.js';
import { MAX_QUEUED_BYTES, StreamClient, type ClientHost, type ClientOptions, type ClientSubscription } from './client.js';
import {
  ohlcvPayload,
  poolReservesPayload,
  reserveSide,
  swapPayload,
  tokenPricePayloads,
  tokenReservesPayload,
} from './render.js';
import { REPLAY_WINDOW_MS, ReplayRing, type EventIds, type RenderedEvent } from './replay.js';
import type { StreamMethod, Subscription } from './request.js';

export const TICK_MS = 20;
export const PING_INTERVAL_MS = 15_000; // 15 s
/** Streams written between two looks at the event loop. */
const WRITES_PER_SLICE = 500;
/** Watches past their linger time are looked for this often. */
const LINGER_SWEEP_MS = 1_000;
/** Pings are looked for this often. */
const PING_SWEEP_MS = 200;
/** A 1 s candle is sealed once a later one opened, or this long after its second ended. */
export const CANDLE_SEAL_DELAY_S = 2;
/**
 * A chain seen going back in time is held at most this long waiting for its reorg counter to move
 * (a rollback rebuilds the chain's views from its log, seconds for a large one); past it, streaming
 * resumes (so a stray regression can never silence a chain for good).
 */
export const REORG_HOLD_MAX_MS = 120_000; // 2 min

/** The warning a stream of an asset of `chain` gets after a reorganisation rolled it back to `block`. */
export function reorgMessage(chain: string, block: number): string {
  return (
    `chain reorganisation on ${chain}: the chain was rolled back to block ${block} and the blocks after it were replaced; ` +
    `prices, reserves, swaps and candles streamed from blocks after ${block} are void, the events that follow carry the corrected values`
  );
}

/** A reorganisation seen by a hub, kept for the replay window: a stream resumed from before it is warned too. */
interface ReorgMark {
  /** Events with this id or later were rendered after it. */
  readonly id: number;
  readonly chain: number;
  readonly message: string;
  readonly atMs: number;
}

/** Subscription key: kind * 2^32 + asset id. */
const KIND: Readonly<Record<StreamMethod, number>> = { token_price: 1, pool_reserves: 2, token_reserves: 3, pool: 4, token: 5, ohlcv: 6 };
export function keyOf(method: StreamMethod, asset: number): number {
  return KIND[method] * 4_294_967_296 + asset;
}

/**
 * Every watch keeps rendering events into the replay window for REPLAY_WINDOW_MS after its last
 * subscriber left (`lingerUntil`), so a client that reconnects within it finds what it missed.
 */
interface Watch {
  /** Subscriptions queued event by event. */
  readonly subs: Set<ClientSubscription>;
  /** Swaps and candles: the streams that share the events through a channel, by request_id (null for other kinds). */
  readonly channels: Map<number, Channel<StreamClient>> | null;
  /** While subs is empty: until when (ms) the watch is kept; -1 while it has subscribers. */
  lingerUntil: number;
}

interface PriceWatch extends Watch {
  readonly token: number;
  seq: number;
  price: number;
  time: number;
}

/** A pool whose reserves are streamed: to pool_reserves subscribers, or for a token_reserves subscription of one of its tokens. */
interface PoolWatch extends Watch {
  readonly pool: number;
  /** token_reserves watches of its tokens that include it. */
  refs: number;
  seq: number;
  /** Raw reserves as last streamed (or as they stood when the watch began). */
  readonly raw: Uint32Array;
  block: number;
  prevBlock: number;
}

interface TokenReservesWatch extends Watch {
  readonly token: number;
  /** How many entries of the token's pool list (the catalog's order) were looked at. */
  pools: number;
  /** The pools watched for it (their PoolWatch counts it in refs). */
  readonly covered: number[];
}

interface CandleWatch extends Watch {
  readonly token: number;
  /** Index of the next candle to stream (secOpened numbering). */
  next: number;
  /** Start (Unix s) of the last candle streamed, -1 before the first. */
  lastTime: number;
}

/** Charges and releases for the streams' owners (host.ts: the meter and the concurrent-stream counts). */
export interface StreamBilling {
  spend(owner: unknown, n: number): number;
  exhaustedMessage(owner: unknown): string;
  /** A stream of `owner` ended. */
  released(owner: unknown): void;
}

const UNMETERED: StreamBilling = { spend: (_, n) => n, exhaustedMessage: () => 'credits exhausted', released: () => undefined };

/** What a hub reads: the engine (the main thread's reader, or a stream thread's over the same buffers) and the clock. */
export interface StreamContext {
  readonly read: EngineReader;
  /** Unix seconds. */
  now(): number;
  readonly log?: Log | undefined;
}

export interface HubOptions {
  readonly ctx: StreamContext;
  /** Event ids (shared by the stream threads of a gateway, so an id means one event whichever thread a client reconnects to). */
  readonly ids?: EventIds;
  /** Called with +1 / -1 as this hub starts and stops watching a pool's or token's swaps. */
  readonly swapWatches?: (delta: number) => void;
  /**
   * One of several stream threads: every swap fed enters the replay window (a stream resumed here
   * may have been opened on another thread), and a price, reserve or candle stream resumed here
   * for an asset this hub was not watching is warned that what it missed is not held here.
   */
  readonly sharedReplay?: boolean;
  readonly billing?: StreamBilling;
  readonly tickMs?: number;
  readonly pingIntervalMs?: number;
  /** Milliseconds for pings and ticks; ctx.now() * 1000 by default (so tests move both with one clock). */
  readonly nowMs?: () => number;
  /** Streams opened and closed and events delivered, by stream kind (/metrics). */
  readonly counters?: StreamCounters;
}

export interface HubStats {
  readonly streams: number;
  readonly watchedPrices: number;
  readonly watchedPools: number;
  readonly watchedCandles: number;
  readonly watchedSwapPools: number;
  readonly watchedSwapTokens: number;
  readonly replayEvents: number;
  /** Largest backlog any stream holds. */
  readonly maxBacklogBytes: number;
}

export type OpenOptions = Omit<ClientOptions, 'nowMs'>;

const NO_FRAME = Buffer.alloc(0);

/** The streams hold the frames they were given; the replay window keeps only the payload. */
function fannedOut(e: RenderedEvent): void {
  e.frame = NO_FRAME;
  e.frameMethod = '';
}

function join(w: Watch, sub: ClientSubscription): void {
  w.subs.add(sub);
  w.lingerUntil = -1;
}

function hasReaders(w: Watch): boolean {
  return w.subs.size > 0 || (w.channels !== null && w.channels.size > 0);
}

/** Hands event e to every stream of watch w. */
function deliver(w: Watch, e: RenderedEvent): void {
  for (const sub of w.subs) sub.client.push(sub, e);
  if (w.channels !== null) for (const ch of w.channels.values()) ch.append(e);
}


export class StreamHub implements ClientHost {
  private readonly ctx: StreamContext;
  private readonly read: EngineReader;
  private readonly nowMs: () => number;
  readonly pingIntervalMs: number;
  private readonly billing: StreamBilling;
  private readonly counters: StreamCounters | null;
  private readonly log: Log;
  readonly replay: ReplayRing;
  private readonly swapWatches: (delta: number) => void;
  private readonly sharedReplay: boolean;
  private readonly clients = new Set<StreamClient>();
  private readonly dirty = new Set<StreamClient>();
  private readonly dirtyChannels = new Set<Channel<StreamClient>>();
  private readonly channelWake = (ch: Channel<StreamClient>): void => {
    if (!this.closed) this.dirtyChannels.add(ch);
  };
  private readonly prices = new Map<number, PriceWatch>();
  private readonly pools = new Map<number, PoolWatch>();
  private readonly tokenReserves = new Map<number, TokenReservesWatch>();
  private readonly candles = new Map<number, CandleWatch>();
  private readonly poolSwaps = new Map<number, Watch>();
  private readonly tokenSwaps = new Map<number, Watch>();
  private lastLingerSweep = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribeFeed: () => void;
  private lastPingSweep = 0;
  private readonly priceState = createTokenPriceState();
  private readonly priceTexts: PriceTexts;
  private readonly poolScratch: PoolReserves = createPoolReserves();
  private readonly candle: SecondCandle = createSecondCandle();
  private closed = false;
  /** Per chain: the reorg counter as last handled. */
  private readonly reorgsSeen: Int32Array;
  /** Chains being rebuilt after a rollback (seen going back in time): since when (ms). */
  private readonly held = new Map<number, number>();
  private readonly reorgMarks: ReorgMark[] = [];

  constructor(options: HubOptions) {
    this.ctx = options.ctx;
    this.read = options.ctx.read;
    this.priceTexts = this.read.priceTexts();
    this.reorgsSeen = Int32Array.from({ length: this.read.chainCapacity }, (_, c) => this.read.chainReorgs(c));
    this.nowMs = options.nowMs ?? (() => options.ctx.now() * 1000);
    this.pingIntervalMs = options.pingIntervalMs ?? PING_INTERVAL_MS;
    this.billing = options.billing ?? UNMETERED;
    this.counters = options.counters ?? null;
    this.log = options.ctx.log ?? fallbackLog();
    this.replay = new ReplayRing(options.ids);
    this.swapWatches = options.swapWatches ?? (() => undefined);
    this.sharedReplay = options.sharedReplay ?? false;
    this.timer = setInterval(() => this.tick(), options.tickMs ?? TICK_MS);
    this.timer.unref();
    this.unsubscribeFeed = this.read.swaps?.subscribe((swaps) => this.onSwaps(swaps)) ?? (() => undefined);
  }

  /** Opens a stream for `subscriptions` on a response, inside its uWS request callback. */
  open(subscriptions: readonly Pick<Subscription, 'method' | 'asset' | 'requestId'>[], lastEventId: number | null, options: OpenOptions, watchAbort: boolean): StreamClient {
    const nowMs = this.nowMs();
    const client = new StreamClient(this, {
      res: options.res,
      post: options.post,
      limit: options.limit,
      plan: options.plan,
      owner: options.owner,
      nowMs,
      ...(options.connectionClose === true ? { connectionClose: true } : {}),
    });
    this.clients.add(client);
    client.open(watchAbort, nowMs, options.cors === true);
    const unheld = lastEventId !== null && this.sharedReplay && subscriptions.some((s) => !this.watching(s.method, s.asset));
    // A stream of one swap or candle subscription shares its events with the others through a channel.
    const shared = subscriptions.length === 1;
    for (const s of subscriptions) this.watch(client.subscribe(s.method, s.requestId, keyOf(s.method, s.asset)), s, shared);
    if (this.counters !== null && subscriptions.length > 0) this.counters.opened(streamKindOf(subscriptions[0]!.method));
    if (lastEventId !== null) this.resume(client, lastEventId, nowMs, unheld);
    return client;
  }

  // ---- ClientHost ----

  wake(client: StreamClient): void {
    if (!this.closed) this.dirty.add(client);
  }

  ended(client: StreamClient): void {
    this.release(client);
    this.billing.released(client.owner);
  }

  spend(client: StreamClient, n: number): number {
    const charged = this.billing.spend(client.owner, n);
    const first = client.subscriptions[0];
    if (this.counters !== null && first !== undefined) this.counters.delivered(streamKindOf(first.method), charged);
    return charged;
  }

  exhaustedMessage(client: StreamClient): string {
    return this.billing.exhaustedMessage(client.owner);
  }

  /** Writes by how long their oldest event waited in the hub, in ms buckets (the last one: that long or more). */
  private readonly writeDelays = new Float64Array(1001);

  wrote(delayMs: number): void {
    this.writeDelays[Math.max(0, Math.min(1000, Math.floor(delayMs)))]!++;
  }

  /** Percentiles (0..1) of how long events waited in the hub before their write, since the last reset (ms). */
  writeDelay(percentiles: readonly number[], reset = false): number[] {
    let total = 0;
    for (const c of this.writeDelays) total += c;
    const out = percentiles.map((p) => {
      const target = p * total;
      let seen = 0;
      for (let ms = 0; ms < this.writeDelays.length; ms++) {
        seen += this.writeDelays[ms]!;
        if (seen >= target && seen > 0) return ms;
      }
      return NaN;
    });
    if (reset) this.writeDelays.fill(0);
    return out;
  }

  stats(): HubStats {
    let maxBacklogBytes = 0;
    for (const c of this.clients) maxBacklogBytes = Math.max(maxBacklogBytes, c.backlog.bytes);
    return {
      streams: this.clients.size,
      watchedPrices: this.prices.size,
      watchedPools: this.pools.size,
      watchedCandles: this.candles.size,
      watchedSwapPools: this.poolSwaps.size,
      watchedSwapTokens: this.tokenSwaps.size,
      replayEvents: this.replay.size,
      maxBacklogBytes,
    };
  }

  /** A `warning` to every open stream (the stream goes on). */
  warnAll(message: string): void {
    const nowMs = this.nowMs();
    for (const c of this.clients) c.warn(message, nowMs);
  }

  /** Ends the streams whose owner `fails` picks with an `error` event. */
  failOwners(fails: (owner: unknown) => boolean, message: string): void {
    for (const c of [...this.clients]) if (fails(c.owner)) c.fail(message);
  }

  /** Ends every stream with an `error` event and stops. */
  close(): void {
    if (this.closed) return;
    for (const c of [...this.clients]) c.fail('the server is shutting down; reconnect with backoff');
    this.closed = true;
    clearInterval(this.timer);
    this.unsubscribeFeed();
    for (const id of this.poolSwaps.keys()) this.read.watchPoolSwaps(id, -1);
    for (const id of this.tokenSwaps.keys()) this.read.watchTokenSwaps(id, -1);
    this.swapWatches(-(this.poolSwaps.size + this.tokenSwaps.size));
    this.poolSwaps.clear();
    this.tokenSwaps.clear();
  }

  // ---- the index ----

  private watch(sub: ClientSubscription, s: Pick<Subscription, 'method' | 'asset'>, shared: boolean): void {
    const read = this.read;
    switch (s.method) {
      case 'token_price': {
        let w = this.prices.get(s.asset);
        if (w === undefined) {
          w = { token: s.asset, subs: new Set(), channels: null, lingerUntil: -1, seq: read.priceVersion(s.asset), price: read.tokenPriceUsd(s.asset), time: read.tokenPriceTime(s.asset) };
          this.prices.set(s.asset, w);
        }
        join(w, sub);
        return;
      }
      case 'pool_reserves':
        join(this.poolWatch(s.asset), sub);
        return;
      case 'token_reserves': {
        let w = this.tokenReserves.get(s.asset);
        if (w === undefined) {
          w = { token: s.asset, subs: new Set(), channels: null, lingerUntil: -1, pools: 0, covered: [] };
          this.tokenReserves.set(s.asset, w);
          this.coverPools(w);
        }
        join(w, sub);
        return;
      }
      case 'pool':
        this.joinShared(this.swapWatch(this.poolSwaps, 'pool', s.asset), sub, shared);
        return;
      case 'token':
        this.joinShared(this.swapWatch(this.tokenSwaps, 'token', s.asset), sub, shared);
        return;
      case 'ohlcv': {
        let w = this.candles.get(s.asset);
        if (w === undefined) {
          // The candle open now is streamed when it seals; earlier ones are not.
          const n = read.secondCandlesOpened(s.asset);
          const newest = read.newestSecondCandleTime(s.asset);
          const openNow = newest >= 0 && newest + 1 + CANDLE_SEAL_DELAY_S > this.ctx.now();
          w = { token: s.asset, subs: new Set(), channels: new Map(), lingerUntil: -1, next: openNow ? n - 1 : n, lastTime: -1 };
          this.candles.set(s.asset, w);
        }
        this.joinShared(w, sub, shared);
      }
    }
  }

  /** Joins sub to watch w: through the channel of its request_id when its stream has no other subscription. */
  private joinShared(w: Watch, sub: ClientSubscription, shared: boolean): void {
    if (!shared) {
      join(w, sub);
      return;
    }
    w.lingerUntil = -1;
    let ch = w.channels!.get(sub.requestId);
    if (ch === undefined) {
      ch = new Channel<StreamClient>(sub.method, sub.requestId, MAX_QUEUED_BYTES, this.channelWake);
      w.channels!.set(sub.requestId, ch);
    }
    sub.client.attach(ch);
  }

  /**
   * The watch of a pool's or token's swaps. The watch byte the shard writer reads counts the hubs
   * (stream threads) watching: each adds 1 when its watch begins and takes it back when it ends.
   */
  private swapWatch(map: Map<number, Watch>, of: 'pool' | 'token', id: number): Watch {
    let w = map.get(id);
    if (w === undefined) {
      map.set(id, (w = { subs: new Set(), channels: new Map(), lingerUntil: -1 }));
      if (of === 'pool') this.read.watchPoolSwaps(id, 1);
      else this.read.watchTokenSwaps(id, 1);
      this.swapWatches(1);
    }
    return w;
  }

  private poolWatch(p: number): PoolWatch {
    let w = this.pools.get(p);
    if (w === undefined) {
      const seq = this.readPoolReserves(p);
      w = { pool: p, subs: new Set(), channels: null, lingerUntil: -1, refs: 0, seq, raw: Uint32Array.from(this.poolScratch.raw), block: this.poolScratch.block, prevBlock: 0 };
      this.pools.set(p, w);
    }
    return w;
  }

  /** Watches the token's pools not yet watched (new pools appear over time). */
  private coverPools(w: TokenReservesWatch): void {
    const reg = this.read.catalog;
    const t = w.token;
    const count = reg.tokenPoolCount(t);
    if (w.pools >= count) return;
    let k = 0;
    for (let p = reg.firstPoolOfToken(t); p >= 0 && w.pools < count; p = reg.nextPoolOfToken(t, p), k++) {
      if (k < w.pools) continue;
      this.poolWatch(p).refs++;
      w.covered.push(p);
      w.pools++;
    }
  }

  /** The watch no longer counts for the pools it covered (a pool watch left with nothing lingers no more). */
  private uncoverPools(w: TokenReservesWatch, nowMs: number): void {
    for (const p of w.covered) {
      const pw = this.pools.get(p);
      if (pw === undefined) continue;
      pw.refs--;
      if (pw.refs === 0 && !hasReaders(pw) && pw.lingerUntil < 0) pw.lingerUntil = nowMs;
    }
    w.covered.length = 0;
    w.pools = 0;
  }

  /** A stream ended: its subscriptions leave their watches, which linger for the replay window once empty. */
  private release(client: StreamClient): void {
    const held = this.clients.delete(client);
    const first = client.subscriptions[0];
    if (held && this.counters !== null && first !== undefined) this.counters.closed(streamKindOf(first.method));
    this.dirty.delete(client);
    const until = this.nowMs() + REPLAY_WINDOW_MS;
    for (const sub of client.subscriptions) {
      const id = sub.key % 4_294_967_296;
      const map: Map<number, Watch> = {
        token_price: this.prices,
        pool_reserves: this.pools,
        token_reserves: this.tokenReserves,
        pool: this.poolSwaps,
        token: this.tokenSwaps,
        ohlcv: this.candles,
      }[sub.method];
      const w = map.get(id);
      if (w === undefined) continue;
      let left = w.subs.delete(sub);
      const ch = w.channels?.get(sub.requestId);
      if (ch !== undefined && ch.readers.has(client)) {
        ch.leave(client);
        if (ch.readers.size === 0) w.channels!.delete(sub.requestId);
        left = true;
      }
      if (left && !hasReaders(w)) w.lingerUntil = until;
    }
  }

  /** Drops the watches whose linger time is over (and with them the shard's watch flags). */
  private sweepLingering(nowMs: number): void {
    const expired = (w: Watch) => !hasReaders(w) && w.lingerUntil >= 0 && nowMs >= w.lingerUntil;
    for (const [id, w] of this.prices) if (expired(w)) this.prices.delete(id);
    for (const [id, w] of this.candles) if (expired(w)) this.candles.delete(id);
    for (const [id, w] of this.poolSwaps) {
      if (!expired(w)) continue;
      this.poolSwaps.delete(id);
      this.read.watchPoolSwaps(id, -1);
      this.swapWatches(-1);
    }
    for (const [id, w] of this.tokenSwaps) {
      if (!expired(w)) continue;
      this.tokenSwaps.delete(id);
      this.read.watchTokenSwaps(id, -1);
      this.swapWatches(-1);
    }
    for (const [id, w] of this.tokenReserves) {
      if (!expired(w)) continue;
      this.tokenReserves.delete(id);
      this.uncoverPools(w, nowMs);
    }
    for (const [id, w] of this.pools) if (w.refs === 0 && expired(w)) this.pools.delete(id);
  }

  /** Whether events of this subscription are being rendered here (swaps: always, with a shared replay). */
  private watching(method: StreamMethod, asset: number): boolean {
    switch (method) {
      case 'token_price':
        return this.prices.has(asset);
      case 'pool_reserves':
        return this.pools.has(asset);
      case 'token_reserves':
        return this.tokenReserves.has(asset);
      case 'ohlcv':
        return this.candles.has(asset);
      default:
        return true;
    }
  }

  private resume(client: StreamClient, lastEventId: number, nowMs: number, unheld = false): void {
    const byKey = new Map<number, ClientSubscription[]>();
    for (const s of client.subscriptions) {
      const list = byKey.get(s.key);
      if (list === undefined) byKey.set(s.key, [s]);
      else list.push(s);
    }
    const { events, complete } = this.replay.since(lastEventId, new Set(byKey.keys()));
    if (!complete || unheld) client.warn(`events after id ${lastEventId} are partly outside the replay window; the stream resumes with what is held`, nowMs);
    // Reorganisations of a subscribed chain since lastEventId: their warning in place among the missed events.
    const chains = new Set(client.subscriptions.map((sub) => this.chainOf(sub.method, sub.key % 4_294_967_296)));
    const marks = this.reorgMarks.filter((m) => m.id > lastEventId && chains.has(m.chain));
    let mark = 0;
    for (const e of events) {
      for (; mark < marks.length && marks[mark]!.id <= e.id; mark++) client.warnInOrder(marks[mark]!.message, nowMs);
      for (const k of e.keys) {
        const subs = byKey.get(k);
        if (subs === undefined) continue;
        for (const s of subs) client.push(s, e, true);
      }
      fannedOut(e);
    }
    for (; mark < marks.length; mark++) client.warnInOrder(marks[mark]!.message, nowMs);
  }

  /** Chain index of a subscription's asset. */
  private chainOf(method: StreamMethod, asset: number): number {
    return method === 'pool_reserves' || method === 'pool' ? this.read.poolChain(asset) : this.read.tokenChain(asset);
  }

  // ---- reorganisations ----

  /** Chain c was seen going back in time: a rollback is rebuilding it. */
  private hold(c: number, nowMs: number): void {
    if (!this.held.has(c)) this.held.set(c, nowMs);
  }

  private isHeld(c: number, nowMs: number): boolean {
    if (this.held.size === 0) return false;
    const since = this.held.get(c);
    if (since === undefined) return false;
    if (nowMs - since <= REORG_HOLD_MAX_MS) return true;
    this.log.warn(`streams: chain ${this.read.catalog.networks[c]?.id ?? c} went back in time without a reorganisation being reported; streaming resumes`);
    this.held.delete(c);
    return false;
  }

  /** Handles the chains whose reorg counter moved since the last look. */
  private checkReorgs(nowMs: number, now: number): void {
    for (let c = 0; c < this.reorgsSeen.length; c++) {
      const r = this.read.chainReorgs(c);
      if (r === this.reorgsSeen[c]) continue;
      this.reorgsSeen[c] = r;
      this.onReorg(c, this.read.chainReorgBlock(c), nowMs, now);
    }
    while (this.reorgMarks.length > 0 && nowMs - this.reorgMarks[0]!.atMs > REPLAY_WINDOW_MS) this.reorgMarks.shift();
  }

  /** Chain c was rolled back to `block` and its views rebuilt: warn its streams, then send the corrected values. */
  private onReorg(c: number, block: number, nowMs: number, now: number): void {
    this.held.delete(c);
    const read = this.read;
    const message = reorgMessage(read.catalog.networks[c]?.id ?? String(c), block);
    this.reorgMarks.push({ id: this.replay.next, chain: c, message, atMs: nowMs });
    const warned = new Set<StreamClient>();
    const warnClient = (client: StreamClient): void => {
      if (warned.has(client)) return;
      warned.add(client);
      client.warnInOrder(message, nowMs);
    };
    const warn = (w: Watch): void => {
      for (const sub of w.subs) warnClient(sub.client);
      if (w.channels !== null) for (const ch of w.channels.values()) for (const client of ch.readers) warnClient(client);
    };
    for (const w of this.prices.values()) if (read.tokenChain(w.token) === c) warn(w);
    for (const w of this.pools.values()) if (read.poolChain(w.pool) === c) warn(w);
    for (const w of this.tokenReserves.values()) if (read.tokenChain(w.token) === c) warn(w);
    for (const w of this.candles.values()) if (read.tokenChain(w.token) === c) warn(w);
    for (const [id, w] of this.poolSwaps) if (read.poolChain(id) === c) warn(w);
    for (const [id, w] of this.tokenSwaps) if (read.tokenChain(id) === c) warn(w);

    // Prices: the current one, even if equal to one streamed before.
    const st = this.priceState;
    for (const w of this.prices.values()) {
      if (read.tokenChain(w.token) !== c || !read.readTokenPrice(w.token, st)) continue;
      w.seq = st.seq;
      w.price = st.priceUsd;
      w.time = st.priceTime;
      if (st.priceUsd > 0) this.emitPrice(w, nowMs, now);
    }
    // Token reserves: the token's pools as they are now (pools of orphaned blocks are gone).
    for (const w of this.tokenReserves.values()) {
      if (read.tokenChain(w.token) !== c) continue;
      this.uncoverPools(w, nowMs);
      this.coverPools(w);
    }
    // Reserves: every pool of the chain still there, as it is now.
    for (const w of this.pools.values()) {
      if (read.poolChain(w.pool) !== c || !read.poolExists(w.pool)) continue;
      const seq = this.readPoolReserves(w.pool);
      if (seq < 0) {
        w.seq = -1; // read again next tick (as a change)
        continue;
      }
      w.seq = seq;
      this.emitPool(w, nowMs, now);
    }
    // Candles: from the first one of the rebuilt ring not streamed yet.
    for (const w of this.candles.values()) {
      if (read.tokenChain(w.token) !== c) continue;
      const n = read.secondCandlesOpened(w.token);
      let k = Math.max(0, n - (TOKEN_SECOND_SLOTS - 1));
      for (; k < n; k++) {
        if (!this.readCandle(w.token, k, this.candle)) continue;
        if (this.candle.time > w.lastTime) break;
      }
      w.next = k;
    }
  }

  // ---- change detection ----

  /**
   * Copies pool p's raw reserves, block, time and USD prices into poolScratch; returns the version
   * read (-1 when the writer kept the pool busy: the next tick looks again).
   */
  private readPoolReserves(p: number): number {
    return this.read.readPoolReserves(p, this.poolScratch);
  }

  /** One pass: what changed for the subscribed assets, then the writes and the pings due. */
  tick(): void {
    if (this.closed) return;
    try {
      const nowMs = this.nowMs();
      const now = this.ctx.now();
      this.checkReorgs(nowMs, now);
      if (this.prices.size > 0) this.tickPrices(nowMs, now);
      if (this.tokenReserves.size > 0) for (const w of this.tokenReserves.values()) this.coverPools(w);
      if (this.pools.size > 0) this.tickPools(nowMs, now);
      if (this.candles.size > 0) this.tickCandles(nowMs, now);
      this.flush();
      if (nowMs - this.lastPingSweep >= PING_SWEEP_MS || nowMs < this.lastPingSweep) {
        this.lastPingSweep = nowMs;
        for (const c of this.clients) if (nowMs >= c.nextPingMs) c.ping(nowMs, now);
      }
      if (nowMs - this.lastLingerSweep >= LINGER_SWEEP_MS || nowMs < this.lastLingerSweep) {
        this.lastLingerSweep = nowMs;
        this.sweepLingering(nowMs);
      }
      this.replay.trim(nowMs);
    } catch (err) {
      this.log.error(`streams: tick failed: ${errorText(err)}`);
    }
  }

  /**
   * Writes the streams with events waiting, WRITES_PER_SLICE at a time with the event loop let
   * through between slices (ingest and new requests are not held behind thousands of writes), until
   * none waits. A stream waiting for its turn gathers more events, so under load each write carries
   * more of them (a write costs a system call, more than the events in it).
   */
  flush(): void {
    if (this.flushing || (this.dirty.size === 0 && this.dirtyChannels.size === 0)) return;
    this.flushing = true;
    this.flushSlice();
  }

  private flushing = false;
  /** The streams of the pass being written (those woken, and the readers of the channels appended to), from passAt on. */
  private readonly pass: StreamClient[] = [];
  private passAt = 0;

  private readonly flushSlice = (): void => {
    if (this.closed) {
      this.flushing = false;
      return;
    }
    try {
      const nowMs = this.nowMs();
      const pass = this.pass;
      for (let budget = WRITES_PER_SLICE; budget > 0; budget--) {
        if (this.passAt === pass.length) {
          pass.length = 0;
          this.passAt = 0;
          for (const c of this.dirty) pass.push(c);
          this.dirty.clear();
          for (const ch of this.dirtyChannels) for (const c of ch.readers) pass.push(c);
          this.dirtyChannels.clear();
          if (pass.length === 0) break;
        }
        pass[this.passAt++]!.flush(nowMs);
      }
    } catch (err) {
      this.log.error(`streams: flush failed: ${errorText(err)}`);
    }
    if (this.passAt < this.pass.length || this.dirty.size > 0 || this.dirtyChannels.size > 0) setImmediate(this.flushSlice);
    else {
      this.pass.length = 0;
      this.passAt = 0;
      this.flushing = false;
    }
  };

  private tickPrices(nowMs: number, now: number): void {
    const read = this.read;
    const st = this.priceState;
    for (const w of this.prices.values()) {
      // The price's version moves with anything down its route: a token is streamed when a price it
      // is routed through moves, not only when its own pools trade.
      const s = read.priceVersion(w.token);
      if (s === w.seq || s < 0) continue;
      const c = read.tokenChain(w.token);
      if (this.isHeld(c, nowMs)) continue;
      if (!read.readTokenPrice(w.token, st)) continue;
      if (st.priceTime < w.time || (!(st.priceUsd > 0) && w.price > 0)) {
        this.hold(c, nowMs);
        continue;
      }
      w.seq = st.seq;
      if (st.priceUsd === w.price && st.priceTime === w.time) continue;
      w.price = st.priceUsd;
      w.time = st.priceTime;
      if (!(st.priceUsd > 0)) continue;
      this.emitPrice(w, nowMs, now);
    }
  }

  /** Renders watch w's token price as it stands (w.time: its time) and hands it to the subscribers. */
  private emitPrice(w: PriceWatch, nowMs: number, now: number): void {
    const reg = this.read.catalog;
    const p = tokenPricePayloads(reg.tokenAddress(w.token), reg.networks[reg.tokenChain(w.token)]!.id, this.priceTexts.text(w.token), now, w.time);
    const e = this.replay.add([keyOf('token_price', w.token)], p.post, p.get, -1, nowMs);
    for (const sub of w.subs) sub.client.push(sub, e);
    fannedOut(e);
  }

  private tickPools(nowMs: number, now: number): void {
    const read = this.read;
    const o = this.poolScratch;
    for (const w of this.pools.values()) {
      const s = read.poolVersion(w.pool);
      if (s === w.seq || (s & 1) !== 0) continue;
      const c = read.poolChain(w.pool);
      if (this.isHeld(c, nowMs)) continue;
      const seq = this.readPoolReserves(w.pool);
      if (seq < 0) continue;
      if (o.block < w.block) {
        this.hold(c, nowMs);
        continue;
      }
      w.seq = seq;
      let same = true;
      for (let k = 0; k < 8; k++) if (o.raw[k] !== w.raw[k]) same = false;
      if (same) continue;
      this.emitPool(w, nowMs, now);
    }
  }

  /** Streams pool w's reserves as read into poolScratch (deltas against what was streamed before), to its own and its tokens' subscribers. */
  private emitPool(w: PoolWatch, nowMs: number, now: number): void {
    const reg = this.read.catalog;
    const o = this.poolScratch;
    const p = w.pool;
    const [t0, t1] = [reg.poolToken0(p), reg.poolToken1(p)];
    const chain = reg.networks[reg.poolChain(p)]!.id;
    const side0 = reserveSide(reg.tokenAddress(t0), u128BigInt(o.raw, 0), u128BigInt(w.raw, 0), reg.tokenDecimals(t0), o.price0);
    const side1 = reserveSide(reg.tokenAddress(t1), u128BigInt(o.raw, 4), u128BigInt(w.raw, 4), reg.tokenDecimals(t1), o.price1);
    const address = reg.poolAddress(p);
    if (o.block !== w.block) {
      w.prevBlock = w.block;
      w.block = o.block;
    }
    w.raw.set(o.raw);
    if (w.subs.size > 0 || nowMs < w.lingerUntil) {
      const data = poolReservesPayload(chain, address, o.block, w.prevBlock, [side0, side1], now, o.time);
      const e = this.replay.add([keyOf('pool_reserves', w.pool)], data, null, -1, nowMs);
      for (const sub of w.subs) sub.client.push(sub, e);
      fannedOut(e);
    }
    if (w.refs > 0) {
      for (const [tk, side] of [
        [t0, side0],
        [t1, side1],
      ] as const) {
        const tw = this.tokenReserves.get(tk);
        if (tw === undefined) continue;
        const data = tokenReservesPayload(chain, address, o.block, side, now, o.time);
        const e = this.replay.add([keyOf('token_reserves', tk)], data, null, w.pool, nowMs);
        for (const sub of tw.subs) sub.client.push(sub, e);
        fannedOut(e);
      }
    }
  }

  private tickCandles(nowMs: number, now: number): void {
    const read = this.read;
    const reg = this.read.catalog;
    const c = this.candle;
    for (const w of this.candles.values()) {
      const t = w.token;
      if (read.secondCandlesOpened(t) === w.next && w.next > 0) continue;
      const ch = read.tokenChain(t);
      if (this.isHeld(ch, nowMs)) continue;
      if (read.secondCandlesOpened(t) < w.next) {
        this.hold(ch, nowMs);
        continue;
      }
      for (;;) {
        const n = read.secondCandlesOpened(t);
        if (w.next >= n) break;
        // A candle older than the ring holds is gone: skip to the oldest one still held.
        if (n - w.next > TOKEN_SECOND_SLOTS - 1) w.next = n - (TOKEN_SECOND_SLOTS - 1);
        if (!this.readCandle(t, w.next, c)) break;
        const sealed = w.next < read.secondCandlesOpened(t) - 1 || now >= c.time + 1 + CANDLE_SEAL_DELAY_S;
        if (!sealed) break;
        w.next++;
        w.lastTime = c.time;
        const data = ohlcvPayload(reg.networks[reg.tokenChain(t)]!.id, reg.tokenAddress(t), c);
        const e = this.replay.add([keyOf('ohlcv', t)], data, null, -1, nowMs);
        deliver(w, e);
        fannedOut(e);
      }
    }
  }

  /** Copies token t's k-th 1 s candle consistently; false when the slot no longer holds it. */
  private readCandle(t: number, k: number, out: SecondCandle): boolean {
    return this.read.readSecondCandle(t, k, out);
  }

  /**
   * Swaps of watched pools and tokens, as the shards applied them. `firstId`: the id of the first
   * (the others follow), when the ids were given out for every stream thread at once; else the
   * hub numbers them.
   */
  onSwaps(swaps: readonly FeedSwap[], firstId = -1): void {
    if (this.closed) return;
    const read = this.read;
    const nowMs = this.nowMs();
    for (let i = 0; i < swaps.length; i++) {
      const s = swaps[i]!;
      const bySwap = this.poolSwaps.get(s.pool);
      const t0 = read.poolToken0(s.pool);
      const t1 = read.poolToken1(s.pool);
      const by0 = this.tokenSwaps.get(t0);
      const by1 = this.tokenSwaps.get(t1);
      if (bySwap === undefined && by0 === undefined && by1 === undefined && !this.sharedReplay) continue;
      const data = swapPayload(this.read.catalog, s);
      const e = this.replay.add([keyOf('pool', s.pool), keyOf('token', t0), keyOf('token', t1)], data, null, -1, nowMs, firstId < 0 ? -1 : firstId + i);
      if (bySwap !== undefined) deliver(bySwap, e);
      if (by0 !== undefined) deliver(by0, e);
      if (by1 !== undefined) deliver(by1, e);
      fannedOut(e);
    }
  }
}
