/**
 * Entry of a stream thread: a uWS app per stream host role, listening on the same ports as the
 * gateway's other stream threads (uWS sets SO_REUSEPORT on Linux, so the kernel spreads new
 * connections over the threads), with a hub of its own over the engine's shared views.
 *
 * What is shared, and how (threads.ts is the main-thread side):
 *  - every check before a stream opens (key, host, plan, parameters, showcase, per-minute limit,
 *    credits, concurrent-stream cap) runs on the main thread, which owns the meter and the slots'
 *    bookkeeping: the thread asks it and opens the stream when the answer comes;
 *  - a stream gives its concurrent-stream count back itself, from this thread (StreamSlots.releaseSlot);
 *  - credits: each thread spends from a budget per caller (what the main thread last said was left,
 *    less what was delivered since) and reports what it delivered every REPORT_MS; the main thread
 *    charges it and answers with what is left;
 *  - swap watch bytes are counts (one per hub watching), and the main thread forwards the change
 *    feed's swaps, ids given, to the threads that watch any;
 *  - the registry's records arrive with the answers and the swaps that need them;
 *  - event ids come from one shared counter; the clock is the main thread's (an offset to the wall clock).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createTrustedProxies } from '../http/forwarded.js';
import { createLog, errorText } from '../../engine/log.js';
import { StreamCounters } from '../metrics/counters.js';
import uWS from 'uWebSockets.js';
import { EngineViews } from '../../engine/state/views.js';
import { sendJson } from '../http/respond.js';
import { NO_TARGET, registerStreamRoutes, sendRefusal } from './host.js';
import { StreamHub } from './hub.js';
import { sharedEventIds } from './replay.js';
import { StreamSlots } from './slots.js';
/** Credits delivered are reported to the main thread this often. */
const REPORT_MS = 20;
const data = workerData;
const port = parentPort;
const post = (m) => port.postMessage(m);
const views = EngineViews.attach(data.buffers);
const slots = new StreamSlots(data.slots);
const clockOffset = new Float64Array(data.clock);
const swapWatchCount = new Int32Array(data.swapWatches);
/** The side tables this thread was sent (append-only, like the registry). */
const registry = {
    networks: data.networks.map((id) => ({ id })),
    pools: [],
    tokens: [],
    tokenPools: [],
};
function learn(r) {
    if (r === undefined)
        return;
    for (const t of r.tokens) {
        if (registry.tokens[t.id] !== undefined)
            continue;
        registry.tokens[t.id] = t;
        registry.tokenPools[t.id] ??= [];
    }
    for (const p of r.pools) {
        if (registry.pools[p.id] !== undefined)
            continue;
        registry.pools[p.id] = p;
        (registry.tokenPools[p.token0] ??= []).push(p.id);
        (registry.tokenPools[p.token1] ??= []).push(p.id);
    }
}
const owners = new Map();
const unreported = new Set();
function forget(o) {
    if (o.streams === 0 && o.pending === 0 && o.inflight === 0 && owners.get(o.key) === o)
        owners.delete(o.key);
}
/** This thread's log: its lines go to the same stdout as the main thread's, at the same level and format. */
const log = createLog(data.log).child({ component: 'gateway', thread: data.index });
const proxies = createTrustedProxies(data.trustedProxies);
const hub = new StreamHub({
    ctx: { views, registry, now: () => Date.now() / 1000 + clockOffset[0], log },
    ...(data.counters !== undefined ? { counters: StreamCounters.forThread(data.counters, data.index + 1) } : {}),
    ids: sharedEventIds(data.ids),
    swapWatches: (delta) => Atomics.add(swapWatchCount, data.index, delta),
    sharedReplay: true,
    ...data.hub,
    billing: {
        spend(owner, n) {
            const o = owner;
            if (o.budget === Infinity)
                return n;
            const k = Math.max(0, Math.min(n, o.budget));
            o.budget -= k;
            if (k > 0) {
                o.pending += k;
                unreported.add(o);
            }
            return k;
        },
        exhaustedMessage: (owner) => owner.message,
        released(owner) {
            const o = owner;
            slots.releaseSlot(o.slot);
            o.streams--;
            forget(o);
        },
    },
});
const report = setInterval(() => {
    if (unreported.size === 0)
        return;
    const items = [];
    for (const o of unreported) {
        items.push([o.key, o.pending]);
        o.inflight += o.pending;
        o.pending = 0;
    }
    unreported.clear();
    post({ t: 'spent', items });
}, REPORT_MS);
const asking = new Map();
let nextAsk = 1;
function opener(role) {
    return (res, endpoint, f, body, target) => {
        if (target.aborted)
            return;
        let t = target;
        if (t === NO_TARGET) {
            const own = { client: null, aborted: false };
            res.onAborted(() => {
                own.aborted = true;
                own.client?.gone();
            });
            t = own;
        }
        const id = nextAsk++;
        asking.set(id, { res, target: t, connectionClose: f.connectionClose });
        post({ t: 'admit', id, role, endpoint, facts: f, body: body === null ? null : new Uint8Array(body.buffer, body.byteOffset, body.byteLength) });
    };
}
function admitted(m) {
    const a = asking.get(m.id);
    if (a === undefined)
        return;
    asking.delete(m.id);
    if (m.ok === false) {
        if (!a.target.aborted)
            a.res.cork(() => sendRefusal(a.res, { status: m.status, body: m.body, plan: m.plan, retryAfterSeconds: m.retryAfterSeconds }));
        return;
    }
    if (a.target.aborted) {
        slots.releaseSlot(m.slot);
        return;
    }
    learn(m.records);
    let o = owners.get(m.owner.key);
    if (o === undefined || o.slot !== m.slot) {
        o = { key: m.owner.key, plan: m.owner.plan, slot: m.slot, budget: 0, pending: 0, inflight: 0, message: '', streams: 0 };
        owners.set(o.key, o);
    }
    o.budget = m.owner.remaining === null ? Infinity : m.owner.remaining - o.pending - o.inflight;
    o.message = m.owner.message;
    o.streams++;
    const owner = o;
    const subs = m.subscriptions.map(([method, asset, requestId]) => ({ method, asset, requestId }));
    a.res.cork(() => {
        try {
            a.target.client = hub.open(subs, m.lastEventId, { res: a.res, post: m.post, limit: m.limit, plan: owner.plan, owner, connectionClose: a.connectionClose }, false);
        }
        catch (err) {
            log.error(`streams: stream not opened: ${errorText(err)}`);
            owner.streams--;
            slots.releaseSlot(m.slot);
            forget(owner);
            sendJson(a.res, 500, Buffer.from('{"error":"internal_error","message":"internal error"}'));
        }
    });
}
function budget(items) {
    for (const [key, remaining, n, message] of items) {
        const o = owners.get(key);
        if (o === undefined)
            continue;
        o.inflight -= n;
        if (o.budget !== Infinity)
            o.budget = remaining - o.pending - o.inflight;
        if (message !== '')
            o.message = message;
        forget(o);
    }
}
// ---- listening ----
const listening = [];
function listen(role, at) {
    const app = uWS.App();
    registerStreamRoutes(app, opener(role), log, proxies);
    return new Promise((resolve, reject) => {
        app.listen(data.host, at, (token) => {
            if (token === false)
                reject(new Error(`stream thread ${data.index} cannot listen on ${data.host}:${at}`));
            else {
                listening.push({ app, socket: token });
                resolve();
            }
        });
    });
}
function close() {
    hub.close();
    clearInterval(report);
    for (const l of listening) {
        if (l.socket !== null)
            uWS.us_listen_socket_close(l.socket);
        l.socket = null;
        l.app.close?.();
    }
    // What the last streams delivered.
    const items = [];
    for (const o of unreported)
        items.push([o.key, o.pending]);
    post({ t: 'closed', items });
    port.close();
}
port.on('message', (m) => {
    try {
        switch (m.t) {
            case 'admitted':
                admitted(m);
                return;
            case 'swaps':
                learn(m.records);
                hub.onSwaps(m.swaps, m.firstId);
                return;
            case 'records':
                learn(m.records);
                return;
            case 'budget':
                budget(m.items);
                return;
            case 'warn':
                hub.warnAll(m.message);
                return;
            case 'fail': {
                const subjects = new Set(m.subjects);
                hub.failOwners((owner) => subjects.has(owner.key), m.message);
                return;
            }
            case 'stats':
                post({ t: 'stats', id: m.id, stats: hub.stats(), writeDelay: hub.writeDelay(m.percentiles, m.reset) });
                return;
            case 'close':
                close();
        }
    }
    catch (err) {
        log.error(`streams: thread ${data.index}: ${errorText(err)}`);
    }
});
if (typeof uWS.getParts !== 'function')
    throw new Error('uWebSockets.js native binary is not loaded (the slow fallback is refused)');
Promise.all(Object.entries(data.ports).map(([role, at]) => listen(role, at)))
    .then(() => post({ t: 'listening' }))
    .catch((err) => {
    post({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
    close();
});
//# sourceMappingURL=thread.js.map