/**
 * Request and credit counters per subject (an account, or the IP of a keyless caller), in shared
 * memory so other threads can read them, flushed to LMDB (`usage` db) every FLUSH_INTERVAL_MS and on
 * close, and read back the first time a subject is seen after a start: a restart keeps them.
 *
 * Shared layout, one slot per subject (slot numbers are handed out by this module on the gateway
 * thread, which is the only writer; every write goes through Atomics so readers never see torn words):
 *   minutes  Int32Array, 2 words per slot: [minute index (Unix s / 60), requests admitted in that minute]
 *   credits  Int32Array, CREDIT_WORDS per slot:
 *              [0] credits used in the current window (rolling: sum of the buckets)
 *              [1] window stamp: rolling = last hour index the buckets were advanced to;
 *                  billing = index of the billing period the count belongs to
 *              [2 + h % 720] rolling only: credits charged during hour h (Unix s / 3600)
 *   periodStart  Float64Array, 1 per slot: start of the billing period counted (Unix s); written before the stamp
 */
import type { Database } from 'lmdb';
import { errorText, fallbackLog, type Log, PLAN_NAMES, type PlanLimits, type Store } from '../../engine/read/index.js';
import { ApiError } from '../errors.js';
import { rfc3339 } from '../http/time.js';
import { billingPeriod, HOUR_S, ROLLING_HOURS } from './period.js';

export const FLUSH_INTERVAL_MS = 1_000; // 1 s
export const MINUTE_S = 60; // 1 min
/** Subjects held in memory at once; beyond it the least recently seen one is written out and its slot reused. */
export const DEFAULT_METER_SLOTS = 4_096; // about 12 MB of counters
const CREDIT_WORDS = 2 + ROLLING_HOURS;

/** What the meter needs to know about a caller. */
export interface MeterSubject {
  /** `a:<account id>` or `ip:<address>`. */
  readonly key: string;
  readonly plan: string;
  readonly limits: PlanLimits;
  /** Billing anchor (Unix s): the account's creation. */
  readonly anchor: number;
  /** Extra credits valid now. */
  readonly extraCredits: number;
}

/** Per-minute limit reached: 429 with Retry-After. */
export class RateLimited extends ApiError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, limit: number) {
    super('rate_limited', `rate limit of ${limit} requests per minute exceeded; retry after ${retryAfterSeconds} s`, { retry_after: retryAfterSeconds });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface Usage {
  readonly plan: string;
  readonly limit: number;
  readonly used: number;
  /** Unix seconds. */
  readonly periodStart: number;
  readonly resetsAt: number;
}

interface UsageRecord {
  minute: number;
  requests: number;
  used: number;
  stamp: number;
  periodStart: number;
  /** Rolling windows: the 720 hourly buckets, Int32 little-endian. */
  buckets?: Uint8Array;
}

export interface Meter {
  /** Counts one request against the per-minute limit and checks `cost` credits are left; returns the slot. Throws 429 / 402. */
  admit(subject: MeterSubject, cost: number, now: number): number;
  /** Charges credits to a slot admit returned. */
  charge(slot: number, cost: number, now: number): void;
  /**
   * Charges up to `cost` credits for work already admitted (stream events), as far as the allowance
   * goes, without counting a request; returns the credits charged (less than `cost` once exhausted).
   */
  spend(subject: MeterSubject, cost: number, now: number): number;
  usage(subject: MeterSubject, now: number): Usage;
  /** Credits charged since start, by plan (PLAN_NAMES order). */
  creditsSpent(): readonly number[];
  /** The shared counters, for readers on other threads. */
  readonly buffers: { readonly minutes: SharedArrayBuffer; readonly credits: SharedArrayBuffer; readonly periodStart: SharedArrayBuffer };
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Index of a plan in PLAN_NAMES (0, keyless, for a name it does not hold). */
function planIndex(plan: string): number {
  const i = (PLAN_NAMES as readonly string[]).indexOf(plan);
  return i < 0 ? 0 : i;
}

export function createMeter(store: Store, slots = DEFAULT_METER_SLOTS, log: Log = fallbackLog()): Meter {
  const db: Database<UsageRecord, string> = store.root.openDB<UsageRecord, string>({ name: 'usage' });
  const minutesBuf = new SharedArrayBuffer(slots * 2 * 4);
  const creditsBuf = new SharedArrayBuffer(slots * CREDIT_WORDS * 4);
  const periodBuf = new SharedArrayBuffer(slots * 8);
  const minutes = new Int32Array(minutesBuf);
  const credits = new Int32Array(creditsBuf);
  const periodStart = new Float64Array(periodBuf);
  /** Credits charged since start by plan index (/metrics), and the plan index of each slot's last admit. */
  const spentByPlan = new Float64Array(PLAN_NAMES.length);
  const slotPlan = new Uint8Array(slots);
  // Gateway-thread bookkeeping: who owns each slot, when it was last used, what changed since the last flush.
  const slotOf = new Map<string, number>();
  const owner: (string | undefined)[] = new Array(slots);
  const lastSeen = new Float64Array(slots);
  const dirty = new Uint8Array(slots);
  let used = 0;

  function record(s: number): UsageRecord {
    const c = s * CREDIT_WORDS;
    const rec: UsageRecord = {
      minute: Atomics.load(minutes, s * 2),
      requests: Atomics.load(minutes, s * 2 + 1),
      used: Atomics.load(credits, c),
      stamp: Atomics.load(credits, c + 1),
      periodStart: periodStart[s]!,
    };
    if (rec.used > 0) rec.buckets = new Uint8Array(credits.slice(c + 2, c + CREDIT_WORDS).buffer);
    return rec;
  }

  function slotFor(key: string, now: number): number {
    let s = slotOf.get(key);
    if (s === undefined) {
      if (used < slots) s = used++;
      else {
        // Full: write out the least recently seen subject and take its slot.
        s = 0;
        for (let i = 1; i < slots; i++) if (lastSeen[i]! < lastSeen[s]!) s = i;
        db.putSync(owner[s]!, record(s));
        slotOf.delete(owner[s]!);
      }
      owner[s] = key;
      slotOf.set(key, s);
      dirty[s] = 0;
      const c = s * CREDIT_WORDS;
      const saved = db.get(key);
      Atomics.store(minutes, s * 2, saved?.minute ?? 0);
      Atomics.store(minutes, s * 2 + 1, saved?.requests ?? 0);
      periodStart[s] = saved?.periodStart ?? 0;
      Atomics.store(credits, c, saved?.used ?? 0);
      Atomics.store(credits, c + 1, saved?.stamp ?? 0);
      const b = saved?.buckets;
      const words = b !== undefined && b.byteLength === ROLLING_HOURS * 4 ? new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)) : null;
      for (let h = 0; h < ROLLING_HOURS; h++) Atomics.store(credits, c + 2 + h, words?.[h] ?? 0);
    }
    lastSeen[s] = now;
    return s;
  }

  /** Brings the slot's window up to `now`: drops hours older than 30 days, or starts a new billing period. */
  function advance(s: number, subject: MeterSubject, now: number): void {
    const c = s * CREDIT_WORDS;
    if (subject.limits.windowKind === 'rolling') {
      const hour = Math.floor(now / HOUR_S);
      const last = Atomics.load(credits, c + 1);
      if (hour <= last) return;
      for (let h = Math.max(last + 1, hour - ROLLING_HOURS + 1); h <= hour; h++) {
        const at = c + 2 + (h % ROLLING_HOURS);
        const spent = Atomics.exchange(credits, at, 0);
        if (spent !== 0) Atomics.sub(credits, c, spent);
      }
      periodStart[s] = (hour - ROLLING_HOURS + 1) * HOUR_S;
      Atomics.store(credits, c + 1, hour);
    } else {
      const p = billingPeriod(subject.anchor, now);
      if (Atomics.load(credits, c + 1) === p.index && periodStart[s] === p.start) return;
      periodStart[s] = p.start;
      Atomics.store(credits, c, 0);
      for (let h = 0; h < ROLLING_HOURS; h++) Atomics.store(credits, c + 2 + h, 0);
      Atomics.store(credits, c + 1, p.index);
    }
    dirty[s] = 1;
  }

  /** When credits next come back: rolling = 30 days after the oldest hour still charged; billing = the period's end. */
  function resetsAt(s: number, subject: MeterSubject, now: number): number {
    if (subject.limits.windowKind === 'billing') return billingPeriod(subject.anchor, now).end;
    const c = s * CREDIT_WORDS;
    const hour = Math.floor(now / HOUR_S);
    for (let h = hour - ROLLING_HOURS + 1; h <= hour; h++) {
      if (Atomics.load(credits, c + 2 + (h % ROLLING_HOURS)) !== 0) return (h + ROLLING_HOURS) * HOUR_S;
    }
    return (hour + 1) * HOUR_S;
  }

  let flushing: Promise<void> = Promise.resolve();
  function flush(): Promise<void> {
    const writes: Promise<boolean>[] = [];
    const slots: number[] = [];
    for (let s = 0; s < used; s++) {
      if (dirty[s] === 0) continue;
      dirty[s] = 0;
      slots.push(s);
      writes.push(db.put(owner[s]!, record(s)));
    }
    // A failed write (a full disk) leaves its counters dirty: the next flush writes them again.
    flushing = Promise.all(writes).then(
      () => undefined,
      (err: unknown) => {
        for (const s of slots) dirty[s] = 1;
        throw err;
      },
    );
    return flushing;
  }
  // While flushes fail (a full disk), the first failure is logged and the counters are written again each interval.
  let failing = false;
  const timer = setInterval(() => {
    flush().then(
      () => {
        if (failing) log.info('meter: usage flush written again');
        failing = false;
      },
      (err: unknown) => {
        if (!failing) log.error(`meter: usage flush failed, retried every ${FLUSH_INTERVAL_MS / 1000} s: ${errorText(err)}`);
        failing = true;
      },
    );
  }, FLUSH_INTERVAL_MS);
  timer.unref();

  return {
    buffers: { minutes: minutesBuf, credits: creditsBuf, periodStart: periodBuf },
    admit(subject, cost, now) {
      const s = slotFor(subject.key, now);
      const minute = Math.floor(now / MINUTE_S);
      if (Atomics.load(minutes, s * 2) !== minute) {
        Atomics.store(minutes, s * 2 + 1, 0);
        Atomics.store(minutes, s * 2, minute);
      }
      const limitPerMinute = subject.limits.requestsPerMinute;
      if (Atomics.load(minutes, s * 2 + 1) >= limitPerMinute) {
        throw new RateLimited(Math.max(1, Math.ceil((minute + 1) * MINUTE_S - now)), limitPerMinute);
      }
      Atomics.add(minutes, s * 2 + 1, 1);
      dirty[s] = 1;
      slotPlan[s] = planIndex(subject.plan);
      advance(s, subject, now);
      const limit = subject.limits.credits + subject.extraCredits;
      if (cost > 0 && Atomics.load(credits, s * CREDIT_WORDS) + cost > limit) {
        throw new ApiError('credits_exhausted', `credit allowance of ${limit} exhausted for this period`, {
          plan: subject.plan,
          resets_at: rfc3339(resetsAt(s, subject, now)),
        });
      }
      return s;
    },
    charge(s, cost, now) {
      if (cost <= 0) return;
      const c = s * CREDIT_WORDS;
      Atomics.add(credits, c, cost);
      // Billing windows keep only the total; the buckets serve the rolling window.
      Atomics.add(credits, c + 2 + (Math.floor(now / HOUR_S) % ROLLING_HOURS), cost);
      dirty[s] = 1;
      spentByPlan[slotPlan[s]!]! += cost;
    },
    spend(subject, cost, now) {
      if (cost <= 0) return 0;
      const s = slotFor(subject.key, now);
      advance(s, subject, now);
      const c = s * CREDIT_WORDS;
      const left = subject.limits.credits + subject.extraCredits - Atomics.load(credits, c);
      const n = Math.max(0, Math.min(cost, left));
      if (n > 0) {
        Atomics.add(credits, c, n);
        Atomics.add(credits, c + 2 + (Math.floor(now / HOUR_S) % ROLLING_HOURS), n);
        dirty[s] = 1;
        spentByPlan[planIndex(subject.plan)]! += n;
      }
      return n;
    },
    creditsSpent: () => Array.from(spentByPlan),
    usage(subject, now) {
      const s = slotFor(subject.key, now);
      advance(s, subject, now);
      return {
        plan: subject.plan,
        limit: subject.limits.credits + subject.extraCredits,
        used: Atomics.load(credits, s * CREDIT_WORDS),
        periodStart: periodStart[s]!,
        resetsAt: resetsAt(s, subject, now),
      };
    },
    flush: () => flush(),
    async close() {
      clearInterval(timer);
      await flushing.catch(() => undefined);
      await flush().catch((err: unknown) => log.error(`meter: usage counters not written at shutdown: ${errorText(err)}`));
    },
  };
}
