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
 *  - the catalog (addresses, names, pools of each token) is read from its shared buffers;
 *  - event ids come from one shared counter; the clock is the main thread's (an offset to the wall clock).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createTrustedProxies } from '../http/forwarded.js';
import { attachEngineReader, createLog, errorText, type FeedSwap } from '../../engine/read/index.js';
import { StreamCounters } from '../metrics/counters.js';
import uWS from 'uWebSockets.js';
import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { listenPort } from '../http/listen.js';
import { sendJson } from '../http/respond.js';
import { NO_TARGET, registerStreamRoutes, sendRefusal, type AbortTarget, type Facts, type StreamRole } from './host.js';
import { StreamHub } from './hub.js';
import { sharedEventIds } from './replay.js';
import type { Endpoint } from './request.js';
import { StreamSlots } from './slots.js';
import type { FromThread, StreamThreadData, ToThread } from './threads.js';

/** Credits delivered are reported to the main thread this often. */
const REPORT_MS = 20;

const data = workerData as StreamThreadData;
const port = parentPort!;
const post = (m: FromThread): void => port.postMessage(m);

const slots = new StreamSlots(data.slots);
const clockOffset = new Float64Array(data.clock);
const swapWatchCount = new Int32Array(data.swapWatches);

/** This thread's reader of the engine (the main thread's ingest and the shards write it). */
const read = attachEngineReader(data.reader);

/** Who pays for this thread's streams of one caller, and what they may still spend. */
interface Owner {
  readonly key: string;
  readonly plan: string;
  /** The caller's concurrent-stream slot (StreamSlots). */
  readonly slot: number;
  /** Credits this thread may still deliver without asking (Infinity: unmetered). */
  budget: number;
  /** Delivered, not yet reported. */
  pending: number;
  /** Reported, not yet answered. */
  inflight: number;
  /** Error message once the allowance is gone. */
  message: string;
  streams: number;
}

const owners = new Map<string, Owner>();
const unreported = new Set<Owner>();

function forget(o: Owner): void {
  if (o.streams === 0 && o.pending === 0 && o.inflight === 0 && owners.get(o.key) === o) owners.delete(o.key);
}

/** This thread's log: its lines go to the same stdout as the main thread's, at the same level and format. */
const log = createLog(data.log).child({ component: 'gateway', thread: data.index });
const proxies = createTrustedProxies(data.trustedProxies);

const hub = new StreamHub({
  ctx: { read, now: () => Date.now() / 1000 + clockOffset[0]!, log },
  ...(data.counters !== undefined ? { counters: StreamCounters.forThread(data.counters, data.index + 1) } : {}),
  ids: sharedEventIds(data.ids),
  swapWatches: (delta) => Atomics.add(swapWatchCount, data.index, delta),
  sharedReplay: true,
  ...data.hub,
  billing: {
    spend(owner, n) {
      const o = owner as Owner;
      if (o.budget === Infinity) return n;
      const k = Math.max(0, Math.min(n, o.budget));
      o.budget -= k;
      if (k > 0) {
        o.pending += k;
        unreported.add(o);
      }
      return k;
    },
    exhaustedMessage: (owner) => (owner as Owner).message,
    released(owner) {
      const o = owner as Owner;
      slots.releaseSlot(o.slot);
      o.streams--;
      forget(o);
    },
  },
});

const report = setInterval(() => {
  if (unreported.size === 0) return;
  const items: [string, number][] = [];
  for (const o of unreported) {
    items.push([o.key, o.pending]);
    o.inflight += o.pending;
    o.pending = 0;
  }
  unreported.clear();
  post({ t: 'spent', items });
}, REPORT_MS);

// ---- opening streams ----

interface Asking {
  readonly res: HttpResponse;
  readonly target: AbortTarget;
  readonly connectionClose: boolean;
  /** The request came from a web page: answers carry the CORS headers. */
  readonly cors: boolean;
}
const asking = new Map<number, Asking>();
let nextAsk = 1;

function opener(role: StreamRole) {
  return (res: HttpResponse, endpoint: Endpoint, f: Facts, body: Buffer | null, target: AbortTarget): void => {
    if (target.aborted) return;
    let t = target;
    if (t === NO_TARGET) {
      const own: AbortTarget = { client: null, aborted: false };
      res.onAborted(() => {
        own.aborted = true;
        own.client?.gone();
      });
      t = own;
    }
    const id = nextAsk++;
    asking.set(id, { res, target: t, connectionClose: f.connectionClose, cors: f.cors });
    post({ t: 'admit', id, role, endpoint, facts: f, body: body === null ? null : new Uint8Array(body.buffer, body.byteOffset, body.byteLength) });
  };
}

function admitted(m: Extract<ToThread, { t: 'admitted' }>): void {
  const a = asking.get(m.id);
  if (a === undefined) return;
  asking.delete(m.id);
  if (m.ok === false) {
    if (!a.target.aborted) a.res.cork(() => sendRefusal(a.res, { status: m.status, body: m.body, plan: m.plan, retryAfterSeconds: m.retryAfterSeconds }, a.cors));
    return;
  }
  if (a.target.aborted) {
    slots.releaseSlot(m.slot);
    return;
  }
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
      a.target.client = hub.open(subs, m.lastEventId, { res: a.res, post: m.post, limit: m.limit, plan: owner.plan, owner, connectionClose: a.connectionClose, cors: a.cors }, false);
    } catch (err) {
      log.error(`streams: stream not opened: ${errorText(err)}`);
      owner.streams--;
      slots.releaseSlot(m.slot);
      forget(owner);
      sendJson(a.res, 500, Buffer.from('{"error":"internal_error","message":"internal error"}'));
    }
  });
}

function budget(items: readonly (readonly [string, number, number, string])[]): void {
  for (const [key, remaining, n, message] of items) {
    const o = owners.get(key);
    if (o === undefined) continue;
    o.inflight -= n;
    if (o.budget !== Infinity) o.budget = remaining - o.pending - o.inflight;
    if (message !== '') o.message = message;
    forget(o);
  }
}

// ---- listening ----

const listening: { app: TemplatedApp; socket: us_listen_socket | null }[] = [];

/** Listens for `role` at port `at` (0: the kernel picks one no socket holds); resolves with the port bound. */
function listen(role: StreamRole, at: number): Promise<readonly [StreamRole, number]> {
  const app = uWS.App();
  registerStreamRoutes(app, opener(role), log, proxies);
  return new Promise((resolve, reject) => {
    app.listen(data.host, at, (token: us_listen_socket | false) => {
      if (token === false) reject(new Error(`streams: thread ${data.index} cannot listen on ${data.host}:${at}`));
      else {
        listening.push({ app, socket: token });
        resolve([role, listenPort(token)]);
      }
    });
  });
}

function close(): void {
  hub.close();
  clearInterval(report);
  for (const l of listening) {
    if (l.socket !== null) uWS.us_listen_socket_close(l.socket);
    l.socket = null;
    (l.app as unknown as { close?: () => void }).close?.();
  }
  // What the last streams delivered.
  const items: [string, number][] = [];
  for (const o of unreported) items.push([o.key, o.pending]);
  post({ t: 'closed', items });
  port.close();
}

port.on('message', (m: ToThread) => {
  try {
    switch (m.t) {
      case 'admitted':
        admitted(m);
        return;
      case 'swaps':
        hub.onSwaps(m.swaps as FeedSwap[], m.firstId);
        return;
      case 'budget':
        budget(m.items);
        return;
      case 'warn':
        hub.warnAll(m.message);
        return;
      case 'fail': {
        const subjects = new Set(m.subjects);
        hub.failOwners((owner) => subjects.has((owner as Owner).key), m.message);
        return;
      }
      case 'stats':
        post({ t: 'stats', id: m.id, stats: hub.stats(), writeDelay: hub.writeDelay(m.percentiles, m.reset) });
        return;
      case 'close':
        close();
    }
  } catch (err) {
    log.error(`streams: thread ${data.index}: ${errorText(err)}`);
  }
});

if (typeof uWS.getParts !== 'function') throw new Error('uWebSockets.js native binary is not loaded (the slow fallback is refused)');
Promise.all((Object.entries(data.ports) as [StreamRole, number][]).map(([role, at]) => listen(role, at)))
  .then((bound) => post({ t: 'listening', ports: Object.fromEntries(bound) }))
  .catch((err: unknown) => {
    post({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
    close();
  });
