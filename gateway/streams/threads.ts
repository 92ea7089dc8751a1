/**
 * The stream hosts on several uWS threads sharing each stream port (thread.ts is one thread's side):
 * this main-thread side answers their admission questions (StreamAdmission: the meter, the keys and
 * the slots' bookkeeping live here), charges the credits they report, forwards the change feed's
 * swaps to the threads that watch any (the threads read the catalog's shared buffers), and keeps their
 * clock in step with the gateway's.
 */
import { createServer } from 'node:net';
import { ListenError, listeningInodes } from '../http/listen.js';
import { errorText, fallbackLog, type FeedSwap, type LogOptions, readerBuffers, type ReaderBuffers, threadLogOptions } from '../../engine/read/index.js';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Caller } from '../auth/access.js';
import type { ServeContext } from '../context.js';
import type { Facts, StreamAdmission, StreamRole } from './host.js';
import type { HubStats } from './hub.js';
import { sharedEventIds } from './replay.js';
import { POOL_METHODS, type Endpoint, type StreamMethod } from './request.js';

export interface StreamThreadData {
  readonly index: number;
  readonly host: string;
  /** Port of each stream host role served. */
  readonly ports: Readonly<Partial<Record<StreamRole, number>>>;
  /** The engine's and the catalog's shared buffers, and the networks: the thread attaches its own reader. */
  readonly reader: ReaderBuffers;
  /** StreamSlots' counts. */
  readonly slots: SharedArrayBuffer;
  /** sharedEventIds' counter. */
  readonly ids: SharedArrayBuffer;
  /** Float64 [0]: the gateway clock minus the wall clock, seconds. */
  readonly clock: SharedArrayBuffer;
  /** Int32 per thread: swap watches its hub holds (the feed goes out while any thread holds one). */
  readonly swapWatches: SharedArrayBuffer;
  /** The log each thread makes, alike the main thread's. */
  readonly log: Pick<LogOptions, 'level' | 'format'>;
  readonly counters?: SharedArrayBuffer;
  readonly trustedProxies: readonly string[];
  readonly hub: { readonly tickMs?: number; readonly pingIntervalMs?: number };
}

export type ToThread =
  | {
      readonly t: 'admitted';
      readonly id: number;
      readonly ok: true;
      readonly slot: number;
      readonly subscriptions: readonly (readonly [StreamMethod, number, number])[];
      readonly post: boolean;
      readonly limit: number | null;
      readonly lastEventId: number | null;
      /** `remaining`: credits left, null when unmetered. */
      readonly owner: { readonly key: string; readonly plan: string; readonly remaining: number | null; readonly message: string };
    }
  | { readonly t: 'admitted'; readonly id: number; readonly ok: false; readonly status: number; readonly body: Uint8Array; readonly plan: string; readonly retryAfterSeconds: number }
  | { readonly t: 'swaps'; readonly swaps: readonly FeedSwap[]; readonly firstId: number }
  /** Per caller: [key, credits left, credits of the report answered, exhausted message or ''] */
  | { readonly t: 'budget'; readonly items: readonly (readonly [string, number, number, string])[] }
  | { readonly t: 'stats'; readonly id: number; readonly percentiles: readonly number[]; readonly reset: boolean }
  /** The meter subjects whose streams end with an `error` event carrying `message` (their key stopped working). */
  | { readonly t: 'fail'; readonly subjects: readonly string[]; readonly message: string }
  /** A `warning` to every stream of the thread. */
  | { readonly t: 'warn'; readonly message: string }
  | { readonly t: 'close' };

export type FromThread =
  /** The port bound per role (thread 0 binds first; the others join its ports). */
  | { readonly t: 'listening'; readonly ports: Readonly<Partial<Record<StreamRole, number>>> }
  | { readonly t: 'failed'; readonly message: string }
  | { readonly t: 'admit'; readonly id: number; readonly role: StreamRole; readonly endpoint: Endpoint; readonly facts: Facts; readonly body: Uint8Array | null }
  | { readonly t: 'spent'; readonly items: readonly (readonly [string, number])[] }
  | { readonly t: 'stats'; readonly id: number; readonly stats: HubStats; readonly writeDelay: number[] }
  | { readonly t: 'closed'; readonly items: readonly (readonly [string, number])[] };

export interface StreamThreadsOptions {
  readonly ctx: ServeContext;
  readonly admission: StreamAdmission;
  /** Threads (at least 1). */
  readonly threads: number;
  readonly host: string;
  /** Port per stream role; 0 = a free one (the same for every thread). A port another socket holds is refused. */
  readonly ports: Readonly<Partial<Record<StreamRole, number>>>;
  readonly hub?: { readonly tickMs?: number; readonly pingIntervalMs?: number };
  /** StreamCounters' buffer (/metrics): thread i writes row i + 1. */
  readonly counters?: SharedArrayBuffer;
  readonly trustedProxies?: readonly string[];
}

export interface ThreadStats {
  readonly perThread: readonly HubStats[];
  readonly streams: number;
  /** Percentiles of how long events waited in the hubs before their write (the largest over the threads), ms. */
  readonly writeDelay: readonly number[];
}

export interface StreamThreads {
  readonly ports: Readonly<Partial<Record<StreamRole, number>>>;
  readonly threads: number;
  stats(percentiles?: readonly number[], reset?: boolean): Promise<ThreadStats>;
  /** A `warning` to every stream on every thread. */
  warnAll(message: string): void;
  /** Ends the streams of the callers `fails` picks, on every thread, with an `error` event. */
  failCallers(fails: (caller: Caller) => boolean, message: string): void;
  /** Ends every stream (with an `error` event) and stops the threads. */
  close(): Promise<void>;
}

/** The gateway clock is copied to the threads this often. */
const CLOCK_MS = 5;
/** Stream slots are swept and idle callers forgotten this often. */
const HOUSEKEEPING_MS = 250;
/** Callers whose streams all ended are forgotten after this long (a late credit report still finds them). */
const CALLER_LINGER_MS = 60_000;

/** The compiled thread entry (vitest runs the sources; the threads run the build). */
function threadEntry(): URL {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? new URL('../../dist/gateway/streams/thread.js', import.meta.url) : new URL('./thread.js', import.meta.url);
}

/** A port free now on `host` (the kernel's pick), for the stream threads to share. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * Rejects when a socket already holds `port` on `host`. node:net listens without SO_REUSEPORT, so
 * its bind fails on any holder, including another process's uWS.
 */
function ensurePortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', (err: NodeJS.ErrnoException) => reject(new PortTaken(host, port, err.code === 'EADDRINUSE' ? 'the port is in use' : err.message)));
    s.listen({ port, host, exclusive: true }, () => s.close(() => resolve()));
  });
}

class PortTaken extends ListenError {
  constructor(host: string, port: number, why: string) {
    super(`streams: cannot listen on ${host}:${port}: ${why}`);
  }
}

/** Tries at picking free ports for the stream threads before giving up (another process may take a pick first). */
const PORT_PICKS = 5;

interface Thread {
  readonly worker: Worker;
  readonly index: number;
  exited: Promise<void>;
}

export async function startStreamThreads(o: StreamThreadsOptions): Promise<StreamThreads> {
  if (!Number.isInteger(o.threads) || o.threads < 1) throw new TypeError('options.threads must be a positive integer');
  const { ctx, admission } = o;
  const log = ctx.log ?? fallbackLog();
  /** What the threads listen on (thread 0 binds them, the others join). */
  const ports: Partial<Record<StreamRole, number>> = {};
  const ids = sharedEventIds();
  const clock = new SharedArrayBuffer(8);
  const offset = new Float64Array(clock);
  const syncClock = (): void => {
    offset[0] = ctx.now() - Date.now() / 1000;
  };
  syncClock();
  const clockTimer = setInterval(syncClock, CLOCK_MS);
  clockTimer.unref();
  const swapWatches = new SharedArrayBuffer(4 * o.threads);
  const watching = new Int32Array(swapWatches);
  /** Callers with streams on the threads, for the credit reports. */
  const callers = new Map<string, { caller: Caller; seenMs: number }>();
  const entry = threadEntry();

  function admit(t: Thread, m: Extract<FromThread, { t: 'admit' }>): void {
    let plan = 'keyless';
    try {
      const body = m.body === null ? null : Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength);
      const a = admission.admit(m.role, m.endpoint, m.facts, body);
      const caller = a.caller;
      plan = caller.plan;
      callers.set(caller.key, { caller, seenMs: performance.now() });
      const metered = caller.plan !== 'enterprise';
      const remaining = metered ? admission.remaining(caller) : null;
      t.worker.postMessage({
        t: 'admitted',
        id: m.id,
        ok: true,
        slot: a.slot,
        subscriptions: a.request.subscriptions.map((s) => [s.method, s.asset, s.requestId] as const),
        post: a.request.post,
        limit: a.request.limit,
        lastEventId: a.request.lastEventId,
        owner: { key: caller.key, plan: caller.plan, remaining, message: metered ? admission.exhaustedMessage(caller) : '' },
      } satisfies ToThread);
    } catch (err) {
      const r = admission.refusal(err, plan, `/sse/${m.endpoint}`);
      t.worker.postMessage({ t: 'admitted', id: m.id, ok: false, status: r.status, body: r.body, plan: r.plan, retryAfterSeconds: r.retryAfterSeconds } satisfies ToThread);
    }
  }

  function charge(items: readonly (readonly [string, number])[]): (readonly [string, number, number, string])[] {
    const out: (readonly [string, number, number, string])[] = [];
    for (const [key, n] of items) {
      const known = callers.get(key);
      if (known === undefined) continue;
      known.seenMs = performance.now();
      const charged = admission.spend(known.caller, n);
      const remaining = admission.remaining(known.caller);
      out.push([key, remaining, n, remaining <= 0 || charged < n ? admission.exhaustedMessage(known.caller) : '']);
    }
    return out;
  }

  const statsWaiting = new Map<number, { left: number; got: { stats: HubStats; writeDelay: number[] }[]; done: (s: ThreadStats) => void }>();
  let nextStats = 1;

  function spawn(index: number): Promise<Thread> {
    const data: StreamThreadData = {
      index,
      host: o.host,
      ports,
      reader: readerBuffers(ctx.read),
      slots: admission.slots.buffer,
      ids: ids.buffer,
      clock,
      swapWatches,
      log: threadLogOptions(log),
      trustedProxies: o.trustedProxies ?? [],
      ...(o.counters !== undefined ? { counters: o.counters } : {}),
      hub: o.hub ?? {},
    };
    const worker = new Worker(entry, { workerData: data });
    const t: Thread = { worker, index, exited: Promise.resolve() };
    t.exited = new Promise((r) => worker.once('exit', () => r()));
    return new Promise((resolve, reject) => {
      worker.on('error', (err) => {
        log.error(`streams: thread ${index} failed: ${errorText(err)}`);
        reject(err);
      });
      worker.on('message', (m: FromThread) => {
        try {
          switch (m.t) {
            case 'listening':
              resolve(t);
              return;
            case 'failed':
              reject(new ListenError(m.message));
              return;
            case 'admit':
              admit(t, m);
              return;
            case 'spent':
              worker.postMessage({ t: 'budget', items: charge(m.items) } satisfies ToThread);
              return;
            case 'closed':
              charge(m.items);
              return;
            case 'stats': {
              const w = statsWaiting.get(m.id);
              if (w === undefined) return;
              w.got.push({ stats: m.stats, writeDelay: m.writeDelay });
              if (--w.left > 0) return;
              statsWaiting.delete(m.id);
              w.done({
                perThread: w.got.map((g) => g.stats),
                streams: w.got.reduce((n, g) => n + g.stats.streams, 0),
                writeDelay: w.got[0]!.writeDelay.map((_, k) => Math.max(...w.got.map((g) => g.writeDelay[k] ?? 0))),
              });
            }
          }
        } catch (err) {
          log.error(`streams: message from thread ${index}: ${errorText(err)}`);
        }
      });
    });
  }

  /**
   * Thread 0 listens first. uWS listens with SO_REUSEPORT so that the threads share each port, and
   * the kernel grants that to any process of the same user: a port asked for must be free before
   * (else a second service on it would silently take half of the connections), and a port picked
   * here is picked again when another socket listens on it too (a process that took it between the
   * pick and the bind).
   */
  async function spawnFirst(): Promise<Thread> {
    for (let pick = 1; ; pick++) {
      for (const [role, at] of Object.entries(o.ports) as [StreamRole, number][]) {
        if (at !== 0) await ensurePortFree(o.host, at);
        ports[role] = at === 0 ? await freePort(o.host) : at;
      }
      let first: Thread | null = null;
      let failure: unknown = null;
      try {
        first = await spawn(0);
      } catch (err) {
        failure = err;
      }
      const shared = first === null ? [] : (Object.entries(ports) as [StreamRole, number][]).filter(([, at]) => (listeningInodes(at)?.size ?? 1) > 1);
      if (first !== null && shared.length === 0) return first;
      if (first !== null) await stop(first);
      const asked = (Object.keys(ports) as StreamRole[]).some((r) => o.ports[r] !== 0);
      if (asked || pick === PORT_PICKS) {
        if (failure !== null) throw failure;
        throw new PortTaken(o.host, shared[0]![1], 'another socket listens on the port');
      }
      log.warn(`streams: port ${shared.length > 0 ? shared[0]![1] : Object.values(ports).join(', ')} was taken by another process before the stream threads listened; picking again`);
    }
  }

  const threads: Thread[] = [];
  try {
    threads.push(await spawnFirst());
    for (let i = 1; i < o.threads; i++) threads.push(await spawn(i));
  } catch (err) {
    await Promise.all(threads.map((t) => stop(t)));
    clearInterval(clockTimer);
    throw err;
  }

  // The feed's swaps, ids given once for every thread, to every thread while any watches swaps (each
  // keeps them in its replay window: a swap stream may resume on another thread than it ran on).
  const unsubscribe =
    ctx.read.swaps?.subscribe((swaps) => {
      let any = false;
      for (const t of threads) if (Atomics.load(watching, t.index) > 0) any = true;
      if (!any) return;
      const firstId = ids.take(swaps.length);
      for (const t of threads) {
        t.worker.postMessage({ t: 'swaps', swaps, firstId } satisfies ToThread);
      }
    }) ?? (() => undefined);

  const housekeeping = setInterval(() => {
    admission.slots.sweep();
    const old = performance.now() - CALLER_LINGER_MS;
    for (const [key, c] of callers) if (c.seenMs < old && admission.slots.open(key) === 0) callers.delete(key);
  }, HOUSEKEEPING_MS);
  housekeeping.unref();

  function stop(t: Thread): Promise<void> {
    t.worker.postMessage({ t: 'close' } satisfies ToThread);
    return t.exited;
  }

  let closing: Promise<void> | null = null;
  return {
    ports,
    threads: o.threads,
    stats(percentiles = [0.5, 0.99], reset = false) {
      return new Promise((done) => {
        const id = nextStats++;
        statsWaiting.set(id, { left: threads.length, got: [], done });
        for (const t of threads) t.worker.postMessage({ t: 'stats', id, percentiles, reset } satisfies ToThread);
      });
    },
    warnAll(message) {
      if (closing !== null) return;
      for (const t of threads) t.worker.postMessage({ t: 'warn', message } satisfies ToThread);
    },
    failCallers(fails, message) {
      if (closing !== null) return;
      const subjects: string[] = [];
      for (const [key, c] of callers) if (fails(c.caller)) subjects.push(key);
      if (subjects.length === 0) return;
      for (const t of threads) t.worker.postMessage({ t: 'fail', subjects, message } satisfies ToThread);
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
