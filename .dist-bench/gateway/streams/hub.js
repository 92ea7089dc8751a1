import { errorText, fallbackLog } from '../../engine/log.js';
import { streamKindOf } from '../metrics/counters.js';
import { TOKEN_SECOND_SLOTS } from '../../engine/state/layout.js';
import { createTokenPriceState, readStable, readTokenPrice } from '../../engine/state/read.js';
import { Channel } from './channel.js';
import { MAX_QUEUED_BYTES, StreamClient } from './client.js';
import { PriceTexts } from '../../engine/state/exact-price.js';
import { ohlcvPayload, poolReservesPayload, reserveSide, swapPayload, tokenPricePayloads, tokenReservesPayload, u128BigInt, } from './render.js';
import { REPLAY_WINDOW_MS, ReplayRing } from './replay.js';
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
export function reorgMessage(chain, block) {
    return (`chain reorganisation on ${chain}: the chain was rolled back to block ${block} and the blocks after it were replaced; ` +
        `prices, reserves, swaps and candles streamed from blocks after ${block} are void, the events that follow carry the corrected values`);
}
/** Subscription key: kind * 2^32 + asset id. */
const KIND = { token_price: 1, pool_reserves: 2, token_reserves: 3, pool: 4, token: 5, ohlcv: 6 };
export function keyOf(method, asset) {
    return KIND[method] * 4_294_967_296 + asset;
}
const UNMETERED = { spend: (_, n) => n, exhaustedMessage: () => 'credits exhausted', released: () => undefined };
const NO_FRAME = Buffer.alloc(0);
/** The streams hold the frames they were given; the replay window keeps only the payload. */
function fannedOut(e) {
    e.frame = NO_FRAME;
    e.frameMethod = '';
}
function join(w, sub) {
    w.subs.add(sub);
    w.lingerUntil = -1;
}
function hasReaders(w) {
    return w.subs.size > 0 || (w.channels !== null && w.channels.size > 0);
}
/** Hands event e to every stream of watch w. */
function deliver(w, e) {
    for (const sub of w.subs)
        sub.client.push(sub, e);
    if (w.channels !== null)
        for (const ch of w.channels.values())
            ch.append(e);
}
function copyPoolReserves(v, p, o) {
    for (let k = 0; k < 8; k++)
        o.raw[k] = v.reserveRaw[p * 8 + k];
    o.block = v.reserveBlock[p];
    o.time = v.reserveTime[p];
    o.price0 = v.priceUsd0[p];
    o.price1 = v.priceUsd1[p];
}
function copySecondCandle(v, t, r) {
    const b = v.tokenSecondBlock[t] - 1;
    const n = v.secOpened[t];
    if (b < 0) {
        r.kept = false;
        return;
    }
    const slot = b * TOKEN_SECOND_SLOTS + (r.k % TOKEN_SECOND_SLOTS);
    const c = r.c;
    c.time = v.secTime[slot];
    c.open = v.secOpen[slot];
    c.high = v.secHigh[slot];
    c.low = v.secLow[slot];
    c.close = v.secClose[slot];
    c.priceSum = v.secPriceSum[slot];
    c.volumeUsd = v.secVolumeUsd[slot];
    c.txns = v.secTxns[slot];
    r.kept = r.k >= v.secBase[b] && r.k < n && n - r.k <= TOKEN_SECOND_SLOTS;
}
export class StreamHub {
    ctx;
    nowMs;
    pingIntervalMs;
    billing;
    counters;
    log;
    replay;
    swapWatches;
    sharedReplay;
    clients = new Set();
    dirty = new Set();
    dirtyChannels = new Set();
    channelWake = (ch) => {
        if (!this.closed)
            this.dirtyChannels.add(ch);
    };
    prices = new Map();
    pools = new Map();
    tokenReserves = new Map();
    candles = new Map();
    poolSwaps = new Map();
    tokenSwaps = new Map();
    lastLingerSweep = 0;
    timer;
    unsubscribeFeed;
    lastPingSweep = 0;
    priceState = createTokenPriceState();
    priceTexts;
    poolScratch = { raw: new Uint32Array(8), block: 0, time: 0, price0: 0, price1: 0 };
    candleRead = { k: 0, kept: false, c: { time: 0, open: 0, high: 0, low: 0, close: 0, priceSum: 0, volumeUsd: 0, txns: 0 } };
    candle = { time: 0, open: 0, high: 0, low: 0, close: 0, priceSum: 0, volumeUsd: 0, txns: 0 };
    closed = false;
    /** Per chain: the reorg counter as last handled. */
    reorgsSeen;
    /** Chains being rebuilt after a rollback (seen going back in time): since when (ms). */
    held = new Map();
    reorgMarks = [];
    constructor(options) {
        this.ctx = options.ctx;
        this.priceTexts = new PriceTexts(options.ctx.views);
        this.reorgsSeen = Int32Array.from(options.ctx.views.chainReorgs, (_, c) => Atomics.load(options.ctx.views.chainReorgs, c));
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
        this.unsubscribeFeed = options.ctx.swaps?.subscribe((swaps) => this.onSwaps(swaps)) ?? (() => undefined);
    }
    /** Opens a stream for `subscriptions` on a response, inside its uWS request callback. */
    open(subscriptions, lastEventId, options, watchAbort) {
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
        client.open(watchAbort, nowMs);
        const unheld = lastEventId !== null && this.sharedReplay && subscriptions.some((s) => !this.watching(s.method, s.asset));
        // A stream of one swap or candle subscription shares its events with the others through a channel.
        const shared = subscriptions.length === 1;
        for (const s of subscriptions)
            this.watch(client.subscribe(s.method, s.requestId, keyOf(s.method, s.asset)), s, shared);
        if (this.counters !== null && subscriptions.length > 0)
            this.counters.opened(streamKindOf(subscriptions[0].method));
        if (lastEventId !== null)
            this.resume(client, lastEventId, nowMs, unheld);
        return client;
    }
    // ---- ClientHost ----
    wake(client) {
        if (!this.closed)
            this.dirty.add(client);
    }
    ended(client) {
        this.release(client);
        this.billing.released(client.owner);
    }
    spend(client, n) {
        const charged = this.billing.spend(client.owner, n);
        const first = client.subscriptions[0];
        if (this.counters !== null && first !== undefined)
            this.counters.delivered(streamKindOf(first.method), charged);
        return charged;
    }
    exhaustedMessage(client) {
        return this.billing.exhaustedMessage(client.owner);
    }
    /** Writes by how long their oldest event waited in the hub, in ms buckets (the last one: that long or more). */
    writeDelays = new Float64Array(1001);
    wrote(delayMs) {
        this.writeDelays[Math.max(0, Math.min(1000, Math.floor(delayMs)))]++;
    }
    /** Percentiles (0..1) of how long events waited in the hub before their write, since the last reset (ms). */
    writeDelay(percentiles, reset = false) {
        let total = 0;
        for (const c of this.writeDelays)
            total += c;
        const out = percentiles.map((p) => {
            const target = p * total;
            let seen = 0;
            for (let ms = 0; ms < this.writeDelays.length; ms++) {
                seen += this.writeDelays[ms];
                if (seen >= target && seen > 0)
                    return ms;
            }
            return NaN;
        });
        if (reset)
            this.writeDelays.fill(0);
        return out;
    }
    stats() {
        let maxBacklogBytes = 0;
        for (const c of this.clients)
            maxBacklogBytes = Math.max(maxBacklogBytes, c.backlog.bytes);
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
    warnAll(message) {
        const nowMs = this.nowMs();
        for (const c of this.clients)
            c.warn(message, nowMs);
    }
    /** Ends the streams whose owner `fails` picks with an `error` event. */
    failOwners(fails, message) {
        for (const c of [...this.clients])
            if (fails(c.owner))
                c.fail(message);
    }
    /** Ends every stream with an `error` event and stops. */
    close() {
        if (this.closed)
            return;
        for (const c of [...this.clients])
            c.fail('the server is shutting down; reconnect with backoff');
        this.closed = true;
        clearInterval(this.timer);
        this.unsubscribeFeed();
        const v = this.ctx.views;
        for (const id of this.poolSwaps.keys())
            Atomics.sub(v.watchPool, id, 1);
        for (const id of this.tokenSwaps.keys())
            Atomics.sub(v.watchToken, id, 1);
        this.swapWatches(-(this.poolSwaps.size + this.tokenSwaps.size));
        this.poolSwaps.clear();
        this.tokenSwaps.clear();
    }
    // ---- the index ----
    watch(sub, s, shared) {
        const v = this.ctx.views;
        switch (s.method) {
            case 'token_price': {
                let w = this.prices.get(s.asset);
                if (w === undefined) {
                    w = { token: s.asset, subs: new Set(), channels: null, lingerUntil: -1, seq: Atomics.load(v.tokenSeq, s.asset), price: v.tokenPriceUsd[s.asset], time: v.tokenPriceTime[s.asset] };
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
                this.joinShared(this.swapWatch(this.poolSwaps, v.watchPool, s.asset), sub, shared);
                return;
            case 'token':
                this.joinShared(this.swapWatch(this.tokenSwaps, v.watchToken, s.asset), sub, shared);
                return;
            case 'ohlcv': {
                let w = this.candles.get(s.asset);
                if (w === undefined) {
                    // The candle open now is streamed when it seals; earlier ones are not.
                    const n = v.secOpened[s.asset];
                    const b = v.tokenSecondBlock[s.asset] - 1;
                    const last = b * TOKEN_SECOND_SLOTS + ((n - 1) % TOKEN_SECOND_SLOTS);
                    const openNow = b >= 0 && n > v.secBase[b] && v.secTime[last] + 1 + CANDLE_SEAL_DELAY_S > this.ctx.now();
                    w = { token: s.asset, subs: new Set(), channels: new Map(), lingerUntil: -1, next: openNow ? n - 1 : n, lastTime: -1 };
                    this.candles.set(s.asset, w);
                }
                this.joinShared(w, sub, shared);
            }
        }
    }
    /** Joins sub to watch w: through the channel of its request_id when its stream has no other subscription. */
    joinShared(w, sub, shared) {
        if (!shared) {
            join(w, sub);
            return;
        }
        w.lingerUntil = -1;
        let ch = w.channels.get(sub.requestId);
        if (ch === undefined) {
            ch = new Channel(sub.method, sub.requestId, MAX_QUEUED_BYTES, this.channelWake);
            w.channels.set(sub.requestId, ch);
        }
        sub.client.attach(ch);
    }
    /**
     * The watch of a pool's or token's swaps. The watch byte the shard writer reads counts the hubs
     * (stream threads) watching: each adds 1 when its watch begins and takes it back when it ends.
     */
    swapWatch(map, flags, id) {
        let w = map.get(id);
        if (w === undefined) {
            map.set(id, (w = { subs: new Set(), channels: new Map(), lingerUntil: -1 }));
            Atomics.add(flags, id, 1);
            this.swapWatches(1);
        }
        return w;
    }
    poolWatch(p) {
        let w = this.pools.get(p);
        if (w === undefined) {
            const seq = this.readPoolReserves(p);
            w = { pool: p, subs: new Set(), channels: null, lingerUntil: -1, refs: 0, seq, raw: Uint32Array.from(this.poolScratch.raw), block: this.poolScratch.block, prevBlock: 0 };
            this.pools.set(p, w);
        }
        return w;
    }
    /** Watches the token's pools not yet watched (new pools appear over time). */
    coverPools(w) {
        const list = this.ctx.registry.tokenPools[w.token] ?? [];
        for (; w.pools < list.length; w.pools++) {
            const p = list[w.pools];
            this.poolWatch(p).refs++;
            w.covered.push(p);
        }
    }
    /** The watch no longer counts for the pools it covered (a pool watch left with nothing lingers no more). */
    uncoverPools(w, nowMs) {
        for (const p of w.covered) {
            const pw = this.pools.get(p);
            if (pw === undefined)
                continue;
            pw.refs--;
            if (pw.refs === 0 && !hasReaders(pw) && pw.lingerUntil < 0)
                pw.lingerUntil = nowMs;
        }
        w.covered.length = 0;
        w.pools = 0;
    }
    /** A stream ended: its subscriptions leave their watches, which linger for the replay window once empty. */
    release(client) {
        const held = this.clients.delete(client);
        const first = client.subscriptions[0];
        if (held && this.counters !== null && first !== undefined)
            this.counters.closed(streamKindOf(first.method));
        this.dirty.delete(client);
        const until = this.nowMs() + REPLAY_WINDOW_MS;
        for (const sub of client.subscriptions) {
            const id = sub.key % 4_294_967_296;
            const map = {
                token_price: this.prices,
                pool_reserves: this.pools,
                token_reserves: this.tokenReserves,
                pool: this.poolSwaps,
                token: this.tokenSwaps,
                ohlcv: this.candles,
            }[sub.method];
            const w = map.get(id);
            if (w === undefined)
                continue;
            let left = w.subs.delete(sub);
            const ch = w.channels?.get(sub.requestId);
            if (ch !== undefined && ch.readers.has(client)) {
                ch.leave(client);
                if (ch.readers.size === 0)
                    w.channels.delete(sub.requestId);
                left = true;
            }
            if (left && !hasReaders(w))
                w.lingerUntil = until;
        }
    }
    /** Drops the watches whose linger time is over (and with them the shard's watch flags). */
    sweepLingering(nowMs) {
        const v = this.ctx.views;
        const expired = (w) => !hasReaders(w) && w.lingerUntil >= 0 && nowMs >= w.lingerUntil;
        for (const [id, w] of this.prices)
            if (expired(w))
                this.prices.delete(id);
        for (const [id, w] of this.candles)
            if (expired(w))
                this.candles.delete(id);
        for (const [id, w] of this.poolSwaps) {
            if (!expired(w))
                continue;
            this.poolSwaps.delete(id);
            Atomics.sub(v.watchPool, id, 1);
            this.swapWatches(-1);
        }
        for (const [id, w] of this.tokenSwaps) {
            if (!expired(w))
                continue;
            this.tokenSwaps.delete(id);
            Atomics.sub(v.watchToken, id, 1);
            this.swapWatches(-1);
        }
        for (const [id, w] of this.tokenReserves) {
            if (!expired(w))
                continue;
            this.tokenReserves.delete(id);
            this.uncoverPools(w, nowMs);
        }
        for (const [id, w] of this.pools)
            if (w.refs === 0 && expired(w))
                this.pools.delete(id);
    }
    /** Whether events of this subscription are being rendered here (swaps: always, with a shared replay). */
    watching(method, asset) {
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
    resume(client, lastEventId, nowMs, unheld = false) {
        const byKey = new Map();
        for (const s of client.subscriptions) {
            const list = byKey.get(s.key);
            if (list === undefined)
                byKey.set(s.key, [s]);
            else
                list.push(s);
        }
        const { events, complete } = this.replay.since(lastEventId, new Set(byKey.keys()));
        if (!complete || unheld)
            client.warn(`events after id ${lastEventId} are partly outside the replay window; the stream resumes with what is held`, nowMs);
        // Reorganisations of a subscribed chain since lastEventId: their warning in place among the missed events.
        const chains = new Set(client.subscriptions.map((sub) => this.chainOf(sub.method, sub.key % 4_294_967_296)));
        const marks = this.reorgMarks.filter((m) => m.id > lastEventId && chains.has(m.chain));
        let mark = 0;
        for (const e of events) {
            for (; mark < marks.length && marks[mark].id <= e.id; mark++)
                client.warnInOrder(marks[mark].message, nowMs);
            for (const k of e.keys) {
                const subs = byKey.get(k);
                if (subs === undefined)
                    continue;
                for (const s of subs)
                    client.push(s, e, true);
            }
            fannedOut(e);
        }
        for (; mark < marks.length; mark++)
            client.warnInOrder(marks[mark].message, nowMs);
    }
    /** Chain index of a subscription's asset. */
    chainOf(method, asset) {
        const v = this.ctx.views;
        return method === 'pool_reserves' || method === 'pool' ? v.poolChain[asset] : v.tokenChain[asset];
    }
    // ---- reorganisations ----
    /** Chain c was seen going back in time: a rollback is rebuilding it. */
    hold(c, nowMs) {
        if (!this.held.has(c))
            this.held.set(c, nowMs);
    }
    isHeld(c, nowMs) {
        if (this.held.size === 0)
            return false;
        const since = this.held.get(c);
        if (since === undefined)
            return false;
        if (nowMs - since <= REORG_HOLD_MAX_MS)
            return true;
        this.log.warn(`streams: chain ${this.ctx.registry.networks[c]?.id ?? c} went back in time without a reorganisation being reported; streaming resumes`);
        this.held.delete(c);
        return false;
    }
    /** Handles the chains whose reorg counter moved since the last look. */
    checkReorgs(nowMs, now) {
        const v = this.ctx.views;
        for (let c = 0; c < this.reorgsSeen.length; c++) {
            const r = Atomics.load(v.chainReorgs, c);
            if (r === this.reorgsSeen[c])
                continue;
            this.reorgsSeen[c] = r;
            this.onReorg(c, v.chainReorgBlock[c], nowMs, now);
        }
        while (this.reorgMarks.length > 0 && nowMs - this.reorgMarks[0].atMs > REPLAY_WINDOW_MS)
            this.reorgMarks.shift();
    }
    /** Chain c was rolled back to `block` and its views rebuilt: warn its streams, then send the corrected values. */
    onReorg(c, block, nowMs, now) {
        this.held.delete(c);
        const v = this.ctx.views;
        const message = reorgMessage(this.ctx.registry.networks[c]?.id ?? String(c), block);
        this.reorgMarks.push({ id: this.replay.next, chain: c, message, atMs: nowMs });
        const warned = new Set();
        const warnClient = (client) => {
            if (warned.has(client))
                return;
            warned.add(client);
            client.warnInOrder(message, nowMs);
        };
        const warn = (w) => {
            for (const sub of w.subs)
                warnClient(sub.client);
            if (w.channels !== null)
                for (const ch of w.channels.values())
                    for (const client of ch.readers)
                        warnClient(client);
        };
        for (const w of this.prices.values())
            if (v.tokenChain[w.token] === c)
                warn(w);
        for (const w of this.pools.values())
            if (v.poolChain[w.pool] === c)
                warn(w);
        for (const w of this.tokenReserves.values())
            if (v.tokenChain[w.token] === c)
                warn(w);
        for (const w of this.candles.values())
            if (v.tokenChain[w.token] === c)
                warn(w);
        for (const [id, w] of this.poolSwaps)
            if (v.poolChain[id] === c)
                warn(w);
        for (const [id, w] of this.tokenSwaps)
            if (v.tokenChain[id] === c)
                warn(w);
        // Prices: the current one, even if equal to one streamed before.
        const st = this.priceState;
        for (const w of this.prices.values()) {
            if (v.tokenChain[w.token] !== c || !readTokenPrice(v, w.token, st))
                continue;
            w.seq = st.seq;
            w.price = st.priceUsd;
            w.time = st.priceTime;
            if (st.priceUsd > 0)
                this.emitPrice(w, nowMs, now);
        }
        // Token reserves: the token's pools as they are now (pools of orphaned blocks are gone).
        for (const w of this.tokenReserves.values()) {
            if (v.tokenChain[w.token] !== c)
                continue;
            this.uncoverPools(w, nowMs);
            this.coverPools(w);
        }
        // Reserves: every pool of the chain still there, as it is now.
        for (const w of this.pools.values()) {
            if (v.poolChain[w.pool] !== c || v.poolExists[w.pool] === 0)
                continue;
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
            if (v.tokenChain[w.token] !== c)
                continue;
            const n = v.secOpened[w.token];
            let k = Math.max(0, n - (TOKEN_SECOND_SLOTS - 1));
            for (; k < n; k++) {
                if (!this.readCandle(w.token, k, this.candle))
                    continue;
                if (this.candle.time > w.lastTime)
                    break;
            }
            w.next = k;
        }
    }
    // ---- change detection ----
    /**
     * Copies pool p's raw reserves, block, time and USD prices into poolScratch; returns the version
     * read (-1 when the writer kept the pool busy: the next tick looks again).
     */
    readPoolReserves(p) {
        const v = this.ctx.views;
        return readStable(v.poolSeq, v, p, this.poolScratch, copyPoolReserves);
    }
    /** One pass: what changed for the subscribed assets, then the writes and the pings due. */
    tick() {
        if (this.closed)
            return;
        try {
            const nowMs = this.nowMs();
            const now = this.ctx.now();
            this.checkReorgs(nowMs, now);
            if (this.prices.size > 0)
                this.tickPrices(nowMs, now);
            if (this.tokenReserves.size > 0)
                for (const w of this.tokenReserves.values())
                    this.coverPools(w);
            if (this.pools.size > 0)
                this.tickPools(nowMs, now);
            if (this.candles.size > 0)
                this.tickCandles(nowMs, now);
            this.flush();
            if (nowMs - this.lastPingSweep >= PING_SWEEP_MS || nowMs < this.lastPingSweep) {
                this.lastPingSweep = nowMs;
                for (const c of this.clients)
                    if (nowMs >= c.nextPingMs)
                        c.ping(nowMs, now);
            }
            if (nowMs - this.lastLingerSweep >= LINGER_SWEEP_MS || nowMs < this.lastLingerSweep) {
                this.lastLingerSweep = nowMs;
                this.sweepLingering(nowMs);
            }
            this.replay.trim(nowMs);
        }
        catch (err) {
            this.log.error(`streams: tick failed: ${errorText(err)}`);
        }
    }
    /**
     * Writes the streams with events waiting, WRITES_PER_SLICE at a time with the event loop let
     * through between slices (ingest and new requests are not held behind thousands of writes), until
     * none waits. A stream waiting for its turn gathers more events, so under load each write carries
     * more of them (a write costs a system call, more than the events in it).
     */
    flush() {
        if (this.flushing || (this.dirty.size === 0 && this.dirtyChannels.size === 0))
            return;
        this.flushing = true;
        this.flushSlice();
    }
    flushing = false;
    /** The streams of the pass being written (those woken, and the readers of the channels appended to), from passAt on. */
    pass = [];
    passAt = 0;
    flushSlice = () => {
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
                    for (const c of this.dirty)
                        pass.push(c);
                    this.dirty.clear();
                    for (const ch of this.dirtyChannels)
                        for (const c of ch.readers)
                            pass.push(c);
                    this.dirtyChannels.clear();
                    if (pass.length === 0)
                        break;
                }
                pass[this.passAt++].flush(nowMs);
            }
        }
        catch (err) {
            this.log.error(`streams: flush failed: ${errorText(err)}`);
        }
        if (this.passAt < this.pass.length || this.dirty.size > 0 || this.dirtyChannels.size > 0)
            setImmediate(this.flushSlice);
        else {
            this.pass.length = 0;
            this.passAt = 0;
            this.flushing = false;
        }
    };
    tickPrices(nowMs, now) {
        const v = this.ctx.views;
        const st = this.priceState;
        for (const w of this.prices.values()) {
            const s = Atomics.load(v.tokenSeq, w.token);
            if (s === w.seq || (s & 1) !== 0)
                continue;
            const c = v.tokenChain[w.token];
            if (this.isHeld(c, nowMs))
                continue;
            if (!readTokenPrice(v, w.token, st))
                continue;
            if (st.priceTime < w.time || (!(st.priceUsd > 0) && w.price > 0)) {
                this.hold(c, nowMs);
                continue;
            }
            w.seq = st.seq;
            if (st.priceUsd === w.price && st.priceTime === w.time)
                continue;
            w.price = st.priceUsd;
            w.time = st.priceTime;
            if (!(st.priceUsd > 0))
                continue;
            this.emitPrice(w, nowMs, now);
        }
    }
    /** Renders watch w's token price as it stands (w.time: its time) and hands it to the subscribers. */
    emitPrice(w, nowMs, now) {
        const reg = this.ctx.registry;
        const token = reg.tokens[w.token];
        const p = tokenPricePayloads(token.address, reg.networks[token.chain].id, this.priceTexts.text(w.token), now, w.time);
        const e = this.replay.add([keyOf('token_price', w.token)], p.post, p.get, -1, nowMs);
        for (const sub of w.subs)
            sub.client.push(sub, e);
        fannedOut(e);
    }
    tickPools(nowMs, now) {
        const v = this.ctx.views;
        const o = this.poolScratch;
        for (const w of this.pools.values()) {
            const s = Atomics.load(v.poolSeq, w.pool);
            if (s === w.seq || (s & 1) !== 0)
                continue;
            const c = v.poolChain[w.pool];
            if (this.isHeld(c, nowMs))
                continue;
            const seq = this.readPoolReserves(w.pool);
            if (seq < 0)
                continue;
            if (o.block < w.block) {
                this.hold(c, nowMs);
                continue;
            }
            w.seq = seq;
            let same = true;
            for (let k = 0; k < 8; k++)
                if (o.raw[k] !== w.raw[k])
                    same = false;
            if (same)
                continue;
            this.emitPool(w, nowMs, now);
        }
    }
    /** Streams pool w's reserves as read into poolScratch (deltas against what was streamed before), to its own and its tokens' subscribers. */
    emitPool(w, nowMs, now) {
        const reg = this.ctx.registry;
        const o = this.poolScratch;
        const pool = reg.pools[w.pool];
        const t0 = reg.tokens[pool.token0];
        const t1 = reg.tokens[pool.token1];
        const chain = reg.networks[pool.chain].id;
        const side0 = reserveSide(t0.address, u128BigInt(o.raw, 0), u128BigInt(w.raw, 0), t0.decimals, o.price0);
        const side1 = reserveSide(t1.address, u128BigInt(o.raw, 4), u128BigInt(w.raw, 4), t1.decimals, o.price1);
        if (o.block !== w.block) {
            w.prevBlock = w.block;
            w.block = o.block;
        }
        w.raw.set(o.raw);
        if (w.subs.size > 0 || nowMs < w.lingerUntil) {
            const data = poolReservesPayload(chain, pool.address, o.block, w.prevBlock, [side0, side1], now, o.time);
            const e = this.replay.add([keyOf('pool_reserves', w.pool)], data, null, -1, nowMs);
            for (const sub of w.subs)
                sub.client.push(sub, e);
            fannedOut(e);
        }
        if (w.refs > 0) {
            for (const [tk, side] of [
                [pool.token0, side0],
                [pool.token1, side1],
            ]) {
                const tw = this.tokenReserves.get(tk);
                if (tw === undefined)
                    continue;
                const data = tokenReservesPayload(chain, pool.address, o.block, side, now, o.time);
                const e = this.replay.add([keyOf('token_reserves', tk)], data, null, w.pool, nowMs);
                for (const sub of tw.subs)
                    sub.client.push(sub, e);
                fannedOut(e);
            }
        }
    }
    tickCandles(nowMs, now) {
        const v = this.ctx.views;
        const reg = this.ctx.registry;
        const c = this.candle;
        for (const w of this.candles.values()) {
            const t = w.token;
            if (v.secOpened[t] === w.next && w.next > 0)
                continue;
            const ch = v.tokenChain[t];
            if (this.isHeld(ch, nowMs))
                continue;
            if (v.secOpened[t] < w.next) {
                this.hold(ch, nowMs);
                continue;
            }
            for (;;) {
                const n = v.secOpened[t];
                if (w.next >= n)
                    break;
                // A candle older than the ring holds is gone: skip to the oldest one still held.
                if (n - w.next > TOKEN_SECOND_SLOTS - 1)
                    w.next = n - (TOKEN_SECOND_SLOTS - 1);
                if (!this.readCandle(t, w.next, c))
                    break;
                const sealed = w.next < v.secOpened[t] - 1 || now >= c.time + 1 + CANDLE_SEAL_DELAY_S;
                if (!sealed)
                    break;
                w.next++;
                w.lastTime = c.time;
                const token = reg.tokens[t];
                const data = ohlcvPayload(reg.networks[token.chain].id, token.address, c);
                const e = this.replay.add([keyOf('ohlcv', t)], data, null, -1, nowMs);
                deliver(w, e);
                fannedOut(e);
            }
        }
    }
    /** Copies token t's k-th 1 s candle consistently; false when the slot no longer holds it. */
    readCandle(t, k, out) {
        const v = this.ctx.views;
        const r = this.candleRead;
        r.k = k;
        r.c = out;
        return readStable(v.tokenSeq, v, t, r, copySecondCandle) >= 0 && r.kept;
    }
    /**
     * Swaps of watched pools and tokens, as the shards applied them. `firstId`: the id of the first
     * (the others follow), when the ids were given out for every stream thread at once; else the
     * hub numbers them.
     */
    onSwaps(swaps, firstId = -1) {
        if (this.closed)
            return;
        const v = this.ctx.views;
        const nowMs = this.nowMs();
        for (let i = 0; i < swaps.length; i++) {
            const s = swaps[i];
            const bySwap = this.poolSwaps.get(s.pool);
            const t0 = v.poolToken0[s.pool];
            const t1 = v.poolToken1[s.pool];
            const by0 = this.tokenSwaps.get(t0);
            const by1 = this.tokenSwaps.get(t1);
            if (bySwap === undefined && by0 === undefined && by1 === undefined && !this.sharedReplay)
                continue;
            const data = swapPayload(this.ctx.registry, s);
            const e = this.replay.add([keyOf('pool', s.pool), keyOf('token', t0), keyOf('token', t1)], data, null, -1, nowMs, firstId < 0 ? -1 : firstId + i);
            if (bySwap !== undefined)
                deliver(bySwap, e);
            if (by0 !== undefined)
                deliver(by0, e);
            if (by1 !== undefined)
                deliver(by1, e);
            fannedOut(e);
        }
    }
}
//# sourceMappingURL=hub.js.map