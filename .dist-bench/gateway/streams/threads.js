/**
 * The stream hosts on several uWS threads sharing each stream port (thread.ts is one thread's side):
 * this main-thread side answers their admission questions (StreamAdmission: the meter, the keys and
 * the slots' bookkeeping live here), charges the credits they report, forwards the change feed's
 * swaps to the threads that watch any, sends them the registry records they need, and keeps their
 * clock in step with the gateway's.
 */
import { createServer } from 'node:net';
import { errorText, fallbackLog, threadLogOptions } from '../../engine/log.js';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sharedEventIds } from './replay.js';
import { POOL_METHODS } from './request.js';
/** The gateway clock is copied to the threads this often. */
const CLOCK_MS = 5;
/** New pools of the tokens a thread streams token reserves or swaps of are sent this often. */
const RECORDS_MS = 250;
/** Callers whose streams all ended are forgotten after this long (a late credit report still finds them). */
const CALLER_LINGER_MS = 60_000;
/** The compiled thread entry (vitest runs the sources; the threads run the build). */
function threadEntry() {
    const here = fileURLToPath(import.meta.url);
    return here.endsWith('.ts') ? new URL('../../dist/gateway/streams/thread.js', import.meta.url) : new URL('./thread.js', import.meta.url);
}
function freePort(host) {
    return new Promise((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(0, host, () => {
            const a = s.address();
            s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no free port'))));
        });
    });
}
export async function startStreamThreads(o) {
    if (!Number.isInteger(o.threads) || o.threads < 1)
        throw new TypeError('options.threads must be a positive integer');
    const { ctx, admission } = o;
    const log = ctx.log ?? fallbackLog();
    const reg = ctx.registry;
    const ports = {};
    for (const [role, at] of Object.entries(o.ports))
        ports[role] = at === 0 ? await freePort(o.host) : at;
    const ids = sharedEventIds();
    const clock = new SharedArrayBuffer(8);
    const offset = new Float64Array(clock);
    const syncClock = () => {
        offset[0] = ctx.now() - Date.now() / 1000;
    };
    syncClock();
    const clockTimer = setInterval(syncClock, CLOCK_MS);
    clockTimer.unref();
    const swapWatches = new SharedArrayBuffer(4 * o.threads);
    const watching = new Int32Array(swapWatches);
    /** Callers with streams on the threads, for the credit reports. */
    const callers = new Map();
    const entry = threadEntry();
    function records(t, pools, tokens) {
        const outPools = [];
        const outTokens = [];
        const token = (id) => {
            if (t.sentTokens.has(id))
                return;
            const r = reg.tokens[id];
            if (r === undefined)
                return;
            t.sentTokens.add(id);
            outTokens.push(r);
        };
        for (const id of tokens)
            token(id);
        for (const id of pools) {
            if (t.sentPools.has(id))
                continue;
            const r = reg.pools[id];
            if (r === undefined)
                continue;
            t.sentPools.add(id);
            token(r.token0);
            token(r.token1);
            outPools.push(r);
        }
        return { pools: outPools, tokens: outTokens };
    }
    function admit(t, m) {
        let plan = 'keyless';
        try {
            const body = m.body === null ? null : Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength);
            const a = admission.admit(m.role, m.endpoint, m.facts, body);
            const caller = a.caller;
            plan = caller.plan;
            callers.set(caller.key, { caller, seenMs: performance.now() });
            const pools = [];
            const tokens = [];
            for (const s of a.request.subscriptions) {
                if (POOL_METHODS.has(s.method))
                    pools.push(s.asset);
                else {
                    tokens.push(s.asset);
                    if (s.method === 'token_reserves' || s.method === 'token') {
                        const list = reg.tokenPools[s.asset] ?? [];
                        pools.push(...list);
                        t.poolsOf.set(s.asset, list.length);
                    }
                }
            }
            const metered = caller.plan !== 'enterprise';
            const remaining = metered ? admission.remaining(caller) : null;
            t.worker.postMessage({
                t: 'admitted',
                id: m.id,
                ok: true,
                slot: a.slot,
                subscriptions: a.request.subscriptions.map((s) => [s.method, s.asset, s.requestId]),
                post: a.request.post,
                limit: a.request.limit,
                lastEventId: a.request.lastEventId,
                owner: { key: caller.key, plan: caller.plan, remaining, message: metered ? admission.exhaustedMessage(caller) : '' },
                records: records(t, pools, tokens),
            });
        }
        catch (err) {
            const r = admission.refusal(err, plan, `/sse/${m.endpoint}`);
            t.worker.postMessage({ t: 'admitted', id: m.id, ok: false, status: r.status, body: r.body, plan: r.plan, retryAfterSeconds: r.retryAfterSeconds });
        }
    }
    function charge(items) {
        const out = [];
        for (const [key, n] of items) {
            const known = callers.get(key);
            if (known === undefined)
                continue;
            known.seenMs = performance.now();
            const charged = admission.spend(known.caller, n);
            const remaining = admission.remaining(known.caller);
            out.push([key, remaining, n, remaining <= 0 || charged < n ? admission.exhaustedMessage(known.caller) : '']);
        }
        return out;
    }
    const statsWaiting = new Map();
    let nextStats = 1;
    function spawn(index) {
        const data = {
            index,
            host: o.host,
            ports,
            buffers: ctx.views.buffers,
            slots: admission.slots.buffer,
            ids: ids.buffer,
            clock,
            swapWatches,
            networks: reg.networks.map((n) => n.id),
            log: threadLogOptions(log),
            trustedProxies: o.trustedProxies ?? [],
            ...(o.counters !== undefined ? { counters: o.counters } : {}),
            hub: o.hub ?? {},
        };
        const worker = new Worker(entry, { workerData: data });
        const t = { worker, index, sentPools: new Set(), sentTokens: new Set(), poolsOf: new Map(), exited: Promise.resolve() };
        t.exited = new Promise((r) => worker.once('exit', () => r()));
        return new Promise((resolve, reject) => {
            worker.on('error', (err) => {
                log.error(`streams: thread ${index} failed: ${errorText(err)}`);
                reject(err);
            });
            worker.on('message', (m) => {
                try {
                    switch (m.t) {
                        case 'listening':
                            resolve(t);
                            return;
                        case 'failed':
                            reject(new Error(m.message));
                            return;
                        case 'admit':
                            admit(t, m);
                            return;
                        case 'spent':
                            worker.postMessage({ t: 'budget', items: charge(m.items) });
                            return;
                        case 'closed':
                            charge(m.items);
                            return;
                        case 'stats': {
                            const w = statsWaiting.get(m.id);
                            if (w === undefined)
                                return;
                            w.got.push({ stats: m.stats, writeDelay: m.writeDelay });
                            if (--w.left > 0)
                                return;
                            statsWaiting.delete(m.id);
                            w.done({
                                perThread: w.got.map((g) => g.stats),
                                streams: w.got.reduce((n, g) => n + g.stats.streams, 0),
                                writeDelay: w.got[0].writeDelay.map((_, k) => Math.max(...w.got.map((g) => g.writeDelay[k] ?? 0))),
                            });
                        }
                    }
                }
                catch (err) {
                    log.error(`streams: message from thread ${index}: ${errorText(err)}`);
                }
            });
        });
    }
    const threads = [];
    try {
        for (let i = 0; i < o.threads; i++)
            threads.push(await spawn(i));
    }
    catch (err) {
        await Promise.all(threads.map((t) => stop(t)));
        clearInterval(clockTimer);
        throw err;
    }
    // The feed's swaps, ids given once for every thread, to every thread while any watches swaps (each
    // keeps them in its replay window: a swap stream may resume on another thread than it ran on).
    const unsubscribe = ctx.swaps?.subscribe((swaps) => {
        let any = false;
        for (const t of threads)
            if (Atomics.load(watching, t.index) > 0)
                any = true;
        if (!any)
            return;
        const firstId = ids.take(swaps.length);
        for (const t of threads) {
            const unknown = swaps.some((s) => !t.sentPools.has(s.pool));
            t.worker.postMessage({ t: 'swaps', swaps, firstId, ...(unknown ? { records: records(t, swaps.map((s) => s.pool), []) } : {}) });
        }
    }) ?? (() => undefined);
    const housekeeping = setInterval(() => {
        for (const t of threads) {
            const pools = [];
            for (const [token, sent] of t.poolsOf) {
                const list = reg.tokenPools[token] ?? [];
                if (list.length === sent)
                    continue;
                for (let k = sent; k < list.length; k++)
                    pools.push(list[k]);
                t.poolsOf.set(token, list.length);
            }
            if (pools.length > 0)
                t.worker.postMessage({ t: 'records', records: records(t, pools, []) });
        }
        admission.slots.sweep();
        const old = performance.now() - CALLER_LINGER_MS;
        for (const [key, c] of callers)
            if (c.seenMs < old && admission.slots.open(key) === 0)
                callers.delete(key);
    }, RECORDS_MS);
    housekeeping.unref();
    function stop(t) {
        t.worker.postMessage({ t: 'close' });
        return t.exited;
    }
    let closing = null;
    return {
        ports,
        threads: o.threads,
        stats(percentiles = [0.5, 0.99], reset = false) {
            return new Promise((done) => {
                const id = nextStats++;
                statsWaiting.set(id, { left: threads.length, got: [], done });
                for (const t of threads)
                    t.worker.postMessage({ t: 'stats', id, percentiles, reset });
            });
        },
        warnAll(message) {
            if (closing !== null)
                return;
            for (const t of threads)
                t.worker.postMessage({ t: 'warn', message });
        },
        failCallers(fails, message) {
            if (closing !== null)
                return;
            const subjects = [];
            for (const [key, c] of callers)
                if (fails(c.caller))
                    subjects.push(key);
            if (subjects.length === 0)
                return;
            for (const t of threads)
                t.worker.postMessage({ t: 'fail', subjects, message });
        },
        close() {
            closing ??= (async () => {
                unsubscribe();
                clearInterval(housekeeping);
                await Promise.all(threads.map((t) => stop(t)));
                clearInterval(clockTimer);
            })();
            return closing;
        },
    };
}
//# sourceMappingURL=threads.js.map