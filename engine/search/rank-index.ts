/**
 * Ranked pool search inside the shard thread that writes the pools: for each figure a sorted
 * base (every pool of the shard, best first) plus an overlay of the pools changed since the base
 * was built, so a search walks pools in rank order and stops as soon as its page is full instead
 * of scanning every pool. It runs between the shard's apply tasks, on the thread that writes the
 * columns, so every figure it reads is settled.
 *
 * Rankings are frozen: a search answers from an immutable ranking (base + overlay as they stood)
 * and names it; the next page asks for the same ranking, so however the figures move in between,
 * paging never repeats or skips a pool. Rankings are kept RANKING_TTL_MS after their last use, at
 * most MAX_RANKINGS of them over at most MAX_OLD_EPOCHS superseded bases; a page whose ranking is
 * gone resumes by value in a fresh one.
 *
 * Order: by value, descending or ascending, then by pool id ascending. Values are rankValue().
 */
import { randomBytes } from 'node:crypto';
import type { EngineViews } from '../state/views.js';
import { FigureValues, POOL_FIGURES, rankValue } from './figures.js';
import { TopK } from './top-k.js';

export interface RankQuery {
  /** Index into POOL_FIGURES of the figure ranked by. */
  readonly figure: number;
  readonly descending: boolean;
  /** Entries wanted: a page plus one, to tell whether a next page exists. */
  readonly take: number;
  /**
   * Chain indexes searched (those this shard owns are used), each with the DEX index its pools
   * must belong to and the token id they must hold (-1: any).
   */
  readonly chains: readonly number[];
  readonly dexes: readonly number[];
  readonly tokens: readonly number[];
  /** Range filters: a figure index each, with inclusive bounds (-Infinity / Infinity when open). */
  readonly filterFigures: readonly number[];
  readonly lo: readonly number[];
  readonly hi: readonly number[];
  /** Resume strictly after this entry, in the ranking named `ranking` while it is kept. */
  readonly after: { readonly value: number; readonly id: number; readonly ranking: string } | null;
}

export interface RankResult {
  /** The ranking the entries come from, to pass back with the next page. */
  readonly ranking: string;
  readonly count: number;
  /** Pool ids in rank order, with the value each was ranked by. */
  readonly ids: Int32Array;
  readonly values: Float64Array;
}

/** Idle rankings are dropped after this long. */
export const RANKING_TTL_MS = 10 * 60_000; // 10 min
const MAX_RANKINGS = 512;
/** Superseded bases kept alive by rankings; beyond this the oldest one's rankings are dropped. */
const MAX_OLD_EPOCHS = 4;
/** Changes logged before the bases are rebuilt: at least this many, or 1/32 of the shard's pools. */
const MIN_REBUILD_CHANGES = 8192;

/** Pools sorted by (value desc, id asc): the frozen order of one figure. */
interface Sorted {
  readonly ids: Int32Array;
  readonly values: Float64Array;
  /** Position of each pool id in `ids` (-1: absent), built when first needed. */
  rankOf?: Int32Array;
}

/**
 * The bases built from one state of the shard, and the pools changed since.
 * firstSince[p]: one plus the position in the change log of pool p's first change in this epoch, 0
 * when none, so a new epoch's array is left as allocated (zeroed pages that are never written cost
 * no memory) (written by markDirty on the shard thread; read by rankings of this epoch, which
 * exclude p from the base walk when its position is below their log position).
 */
interface Epoch {
  readonly serial: number;
  readonly firstSince: Int32Array;
  readonly bases: (Sorted | undefined)[];
  refs: number;
}

interface Ranking {
  readonly name: string;
  readonly figure: number;
  readonly epoch: Epoch;
  readonly base: Sorted;
  /** Pools changed in the epoch before the freeze, with their values then, sorted. */
  readonly overlay: Sorted;
  /** Change-log length at the freeze. */
  readonly logPos: number;
  lastUsedMs: number;
  /** Overlay values by pool id, built when first needed. */
  overlayValue?: Map<number, number>;
}

const EMPTY: Sorted = { ids: new Int32Array(0), values: new Float64Array(0) };

/** Answers kept between two changes of the shard's figures, at most (a page is at most 12 KiB). */
const MAX_ANSWERS = 1024;

/** Every field of a query, as text: equal keys ask for the same page. */
function answerKey(q: RankQuery): string {
  const a = q.after;
  return `${q.figure}|${q.descending ? 1 : 0}|${q.take}|${q.chains.join(',')}|${q.dexes.join(',')}|${q.tokens.join(',')}|${q.filterFigures.join(',')}|${q.lo.join(',')}|${q.hi.join(',')}|${a === null ? '' : `${a.value},${a.id},${a.ranking}`}`;
}

/** True when (va, ia) ranks before (vb, ib). */
function ahead(desc: boolean, va: number, ia: number, vb: number, ib: number): boolean {
  if (va !== vb) return desc ? va > vb : va < vb;
  return ia < ib;
}

/**
 * Walks a Sorted sequence in rank order for one direction. Descending is the stored order;
 * ascending visits runs of equal values from the last to the first, each run by id ascending.
 */
class Walk {
  private s: Sorted = EMPTY;
  private n = 0;
  private desc = true;
  private pos = 0;
  private runStart = 0;
  private runEnd = -1;

  /** Positions the walk on the first entry ranked strictly after (value, id), or the first entry. */
  start(s: Sorted, desc: boolean, after: { readonly value: number; readonly id: number } | null): void {
    this.s = s;
    this.n = s.ids.length;
    this.desc = desc;
    const { values, ids } = s;
    if (desc) {
      if (after === null) this.pos = 0;
      else {
        // First index whose entry comes after the cursor: smaller value, or same value and larger id.
        let lo = 0;
        let hi = this.n;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          const v = values[mid]!;
          if (v < after.value || (v === after.value && ids[mid]! > after.id)) hi = mid;
          else lo = mid + 1;
        }
        this.pos = lo;
      }
      return;
    }
    if (after === null) {
      this.runAt(this.n - 1);
      return;
    }
    const a = this.firstAtMost(after.value, this.n); // first index with value <= cursor value
    const b = this.firstBelow(after.value); // first index with value < cursor value
    if (a < b) {
      // The cursor's run: continue with larger ids in it.
      let lo = a;
      let hi = b;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ids[mid]! > after.id) hi = mid;
        else lo = mid + 1;
      }
      this.runStart = a;
      this.runEnd = b - 1;
      this.pos = lo;
      if (lo < b) return;
    }
    this.runAt(a - 1);
  }

  /** Index of the next entry, or -1 at the end. */
  next(): number {
    if (this.desc) return this.pos < this.n ? this.pos++ : -1;
    if (this.pos > this.runEnd) {
      if (this.runStart <= 0) return -1;
      this.runAt(this.runStart - 1);
    }
    return this.pos++;
  }

  /** Starts the ascending walk on the run of equal values ending at index `end`. */
  private runAt(end: number): void {
    if (end < 0) {
      this.runStart = 0;
      this.runEnd = -1;
      this.pos = 0;
      return;
    }
    this.runEnd = end;
    this.runStart = this.firstAtMost(this.s.values[end]!, end);
    this.pos = this.runStart;
  }

  /** First index in [0, limit) whose value is <= v (values descending), or limit. */
  private firstAtMost(v: number, limit: number): number {
    const values = this.s.values;
    let lo = 0;
    let hi = limit;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (values[mid]! <= v) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private firstBelow(v: number): number {
    const values = this.s.values;
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (values[mid]! < v) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** A ranking's entries in rank order: its base without the pools in its overlay, merged with the overlay. */
class RankWalk {
  private readonly base = new Walk();
  private readonly over = new Walk();
  private r: Ranking | null = null;
  private desc = true;
  private bi = -1;
  private oi = -1;
  /** The entry `next()` moved to. */
  p = -1;
  value = 0;

  start(r: Ranking, desc: boolean, after: { readonly value: number; readonly id: number } | null): void {
    this.r = r;
    this.desc = desc;
    this.base.start(r.base, desc, after);
    this.over.start(r.overlay, desc, after);
    this.bi = this.base.next();
    this.oi = this.over.next();
  }

  next(): boolean {
    const r = this.r!;
    const first = r.epoch.firstSince;
    const logPos = r.logPos;
    const baseIds = r.base.ids;
    // Base entries of pools in the overlay are stale: the overlay ranks them.
    while (this.bi >= 0) {
      const f = first[baseIds[this.bi]!]!;
      if (f === 0 || f > logPos) break;
      this.bi = this.base.next();
    }
    const bi = this.bi;
    const oi = this.oi;
    if (bi < 0 && oi < 0) return false;
    const o = r.overlay;
    if (oi < 0 || (bi >= 0 && ahead(this.desc, r.base.values[bi]!, baseIds[bi]!, o.values[oi]!, o.ids[oi]!))) {
      this.p = baseIds[bi]!;
      this.value = r.base.values[bi]!;
      this.bi = this.base.next();
    } else {
      this.p = o.ids[oi]!;
      this.value = o.values[oi]!;
      this.oi = this.over.next();
    }
    return true;
  }
}

/** Entries of r (base and overlay, stale base entries included) from `from` up to the bound `far`, in direction `desc`. */
function countRange(r: Ranking, desc: boolean, from: { readonly value: number; readonly id: number } | null, far: number): number {
  let n = 0;
  for (const s of [r.base, r.overlay]) {
    const { values, ids } = s;
    // Stored order is descending: positions of the start and of the far end.
    const at = (v: number, id: number): number => {
      let lo = 0;
      let hi = values.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const x = values[mid]!;
        if (x < v || (x === v && ids[mid]! > id)) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
    if (desc) {
      const a = from === null ? 0 : at(from.value, from.id);
      const b = far === -Infinity ? values.length : at(far, 0x7fffffff);
      n += Math.max(0, b - a);
    } else {
      const b = from === null ? values.length : at(from.value, -1);
      const a = far === Infinity ? 0 : at(far, -1);
      n += Math.max(0, b - a);
    }
  }
  return n;
}

export class PoolRankIndex {
  private readonly views: EngineViews;
  /** Every figure of a pool, where it is kept (a pool column or the pool's window slot). */
  private readonly figures: FigureValues;
  /** Whether this index ranks chain c (the shard's chains: placed by the main thread before any search or task reaches the shard). */
  private readonly owns: (chain: number) => boolean;
  /** Names rankings of this process apart from those of an earlier one. */
  private readonly instance = randomBytes(4).toString('hex');
  private serial = 0;
  private epoch: Epoch;
  private readonly superseded: Epoch[] = [];
  /** Pools changed this epoch, in order (a pool appears once per task that changed it). */
  private log = new Int32Array(1024);
  private logLen = 0;
  /** Task in which each pool was last logged; `task` is the current one. */
  private readonly loggedIn: Uint32Array;
  private task = 1;
  /** Off until the first search: nothing is logged for a shard nobody searches. */
  private tracking = false;
  /** Pools of the shard when the bases were last built. */
  private poolTotal = 0;
  private readonly latest: (Ranking | undefined)[] = POOL_FIGURES.map(() => undefined);
  /** Kept rankings by name, least recently used first. */
  private readonly rankings = new Map<string, Ranking>();
  // Scratch, reused by every call.
  private readonly mark: Uint32Array;
  private markGen = 0;
  private readonly chainOk: Uint8Array;
  private readonly dexFor: Int32Array;
  private readonly tokenFor: Int32Array;
  private readonly walk = new RankWalk();
  private readonly scan = new RankWalk();
  private readonly top = new TopK(1024);

  constructor(views: EngineViews, ownedChains: readonly number[] | ((chain: number) => boolean)) {
    this.views = views;
    this.figures = new FigureValues(views);
    if (typeof ownedChains === 'function') this.owns = ownedChains;
    else {
      const owned = new Set(ownedChains);
      this.owns = (c) => owned.has(c);
    }
    this.loggedIn = new Uint32Array(views.capacity.pools);
    this.mark = new Uint32Array(views.capacity.pools);
    this.chainOk = new Uint8Array(views.capacity.chains);
    this.dexFor = new Int32Array(views.capacity.chains);
    this.tokenFor = new Int32Array(views.capacity.chains);
    this.epoch = this.newEpoch();
  }

  /** Called by the writer before each task (batch apply or sweep). */
  beginTask(): void {
    this.task = (this.task + 1) >>> 0 || 1;
    if (this.logLen > Math.max(MIN_REBUILD_CHANGES, this.poolTotal >> 5)) this.rebuild();
  }

  /** Called by the writer after it changed any figure of pool p (or created it). */
  markDirty(p: number): void {
    if (!this.tracking || this.loggedIn[p] === this.task) return;
    this.loggedIn[p] = this.task;
    const first = this.epoch.firstSince;
    if (first[p] === 0) first[p] = this.logLen + 1;
    if (this.logLen === this.log.length) {
      const grown = new Int32Array(this.log.length * 2);
      grown.set(this.log);
      this.log = grown;
    }
    this.log[this.logLen++] = p;
  }

  /** The entries of one page of a search over this shard's pools. */
  query(q: RankQuery): RankResult {
    if (!this.tracking) {
      this.tracking = true;
      this.epoch = this.newEpoch();
    }
    const nowMs = performance.now();
    // No figure changed since the answers were kept (every change is logged): a search asked again
    // gets the same page from the same ranking, which is used again as the search would use it.
    if (this.answersEpoch !== this.epoch.serial || this.answersLogLen !== this.logLen || this.answers.size >= MAX_ANSWERS) {
      this.answers.clear();
      this.answersEpoch = this.epoch.serial;
      this.answersLogLen = this.logLen;
    }
    const key = answerKey(q);
    const kept = this.answers.get(key);
    const keptRanking = kept === undefined ? undefined : this.rankings.get(kept.ranking);
    let r: Ranking | undefined = keptRanking;
    if (r === undefined && q.after !== null) {
      r = this.rankings.get(q.after.ranking);
      if (r !== undefined && r.figure !== q.figure) r = undefined;
    }
    r ??= this.freeze(q.figure);
    r.lastUsedMs = nowMs;
    if (!this.rankings.delete(r.name)) r.epoch.refs++;
    this.rankings.set(r.name, r);
    this.evict(nowMs);
    if (keptRanking !== undefined) {
      this.reused++;
      return kept!;
    }
    const answer = this.rank(q, r);
    this.answers.set(key, answer);
    return answer;
  }

  /** One page of `q` from ranking `r`. */
  private rank(q: RankQuery, r: Ranking): RankResult {

    const { chainOk, dexFor, tokenFor } = this;
    if (q.take > 1024) throw new RangeError('take must be at most 1024');
    for (let i = 0; i < q.chains.length; i++) {
      const c = q.chains[i]!;
      if (c < 0 || c >= chainOk.length || !this.owns(c)) continue;
      chainOk[c] = 1;
      dexFor[c] = q.dexes[i] ?? -1;
      tokenFor[c] = q.tokens[i] ?? -1;
    }
    const take = q.take;
    const ids = new Int32Array(take);
    const values = new Float64Array(take);
    let count = 0;
    try {
      const desc = q.descending;
      const ff = q.filterFigures;
      // Bounds on the ranked figure itself bound the walk: start at the near one, stop past the far one.
      let near = desc ? Infinity : -Infinity;
      let far = desc ? -Infinity : Infinity;
      for (let k = 0; k < ff.length; k++) {
        if (ff[k] !== q.figure) continue;
        if (desc) {
          near = Math.min(near, q.hi[k]!);
          far = Math.max(far, q.lo[k]!);
        } else {
          near = Math.max(near, q.lo[k]!);
          far = Math.min(far, q.hi[k]!);
        }
      }
      // Entries ranked after (near, id -1) are those on the near side's bound or beyond it.
      let from = q.after;
      if (near !== Infinity && near !== -Infinity && (from === null || ahead(desc, from.value, from.id, near, -1))) from = { value: near, id: -1, ranking: '' };

      const narrow = this.narrowestFilter(q, r, from, far);
      if (narrow >= 0) {
        // Few pools pass filter `narrow`: rank those rather than walk the order past the rest.
        this.filterScans++;
        const top = this.top;
        top.reset(take, desc);
        const g = ff[narrow]!;
        const scan = this.scan;
        scan.start(this.freeze(g), true, { value: q.hi[narrow]!, id: -1 });
        const lo = q.lo[narrow]!;
        while (scan.next() && scan.value >= lo) {
          const p = scan.p;
          if (!this.passes(q, p)) continue;
          const value = this.frozenValue(r, p);
          if (Number.isNaN(value) || (desc ? value < far : value > far)) continue;
          if (from !== null && !ahead(desc, from.value, from.id, value, p)) continue;
          top.offer(value, p);
        }
        count = top.drain(values, ids);
      } else {
        this.walks++;
        const walk = this.walk;
        walk.start(r, desc, from);
        while (count < take && walk.next()) {
          const value = walk.value;
          if (desc ? value < far : value > far) break;
          const p = walk.p;
          if (!this.passes(q, p)) continue;
          ids[count] = p;
          values[count] = value;
          count++;
        }
      }
    } finally {
      for (const c of q.chains) if (c >= 0 && c < chainOk.length) chainOk[c] = 0;
    }
    return { ranking: r.name, count, ids: ids.subarray(0, count), values: values.subarray(0, count) };
  }

  /** Chain, DEX, token and every range filter, on the current figures of pool p. */
  private passes(q: RankQuery, p: number): boolean {
    const v = this.views;
    const chain = v.poolChain[p]!;
    if (this.chainOk[chain] !== 1) return false;
    const dex = this.dexFor[chain]!;
    if (dex >= 0 && v.poolDex[p] !== dex) return false;
    const token = this.tokenFor[chain]!;
    if (token >= 0 && v.poolToken0[p] !== token && v.poolToken1[p] !== token) return false;
    const ff = q.filterFigures;
    for (let k = 0; k < ff.length; k++) {
      const x = rankValue(this.figures.value(ff[k]!, p));
      if (!(x >= q.lo[k]! && x <= q.hi[k]!)) return false;
    }
    return true;
  }

  /**
   * The filter to rank from instead of walking the order, or -1. Walking visits about
   * take / (share of pools passing every filter) entries; ranking from filter g visits the pools
   * within g's bounds (counted by binary search in g's ranking) and picks the best of them.
   */
  private narrowestFilter(q: RankQuery, r: Ranking, from: RankQuery['after'], far: number): number {
    const ff = q.filterFigures;
    if (ff.length === 0) return -1;
    const total = r.base.ids.length + r.overlay.ids.length;
    if (total === 0) return -1;
    // Entries of the order the walk may visit: from its start to the far bound.
    const span = Math.max(1, countRange(r, q.descending, from, far));
    // Share of walked entries expected to pass, taking the filters as independent.
    let share = 1;
    let best = -1;
    let bestCount = Infinity;
    for (let k = 0; k < ff.length; k++) {
      const g = ff[k]!;
      if (g === q.figure) continue;
      // An estimate: the last ranking of g will do, without folding in changes made since.
      const n = countRange(this.latest[g] ?? this.freeze(g), true, { value: q.hi[k]!, id: -1 }, q.lo[k]!);
      share *= n / total;
      if (n < bestCount) {
        bestCount = n;
        best = k;
      }
    }
    if (best < 0) return -1;
    const expectedWalk = Math.min(span, q.take / Math.max(share, 1 / total));
    return bestCount * 4 < expectedWalk ? best : -1;
  }

  /** The value pool p ranks by in ranking r, or NaN when r does not hold it. */
  private frozenValue(r: Ranking, p: number): number {
    if (r.epoch === this.epoch && r.logPos === this.logLen) return rankValue(this.figures.value(r.figure, p));
    const f = r.epoch.firstSince[p]!;
    if (f !== 0 && f <= r.logPos) {
      r.overlayValue ??= new Map(Array.from(r.overlay.ids, (id, i) => [id, r.overlay.values[i]!]));
      return r.overlayValue.get(p) ?? Number.NaN;
    }
    const base = r.base;
    if (base.rankOf === undefined) {
      base.rankOf = new Int32Array(this.views.capacity.pools).fill(-1);
      for (let i = 0; i < base.ids.length; i++) base.rankOf[base.ids[i]!] = i;
    }
    const i = base.rankOf[p]!;
    return i < 0 ? Number.NaN : base.values[i]!;
  }

  /** Searches answered by walking the order, by ranking the pools within one filter's bounds, and again from a kept answer. */
  walks = 0;
  filterScans = 0;
  reused = 0;
  /** Answers given since the log last grew, by answerKey; valid while the epoch serial and log length are as recorded. */
  private readonly answers = new Map<string, RankResult>();
  private answersEpoch = -1;
  private answersLogLen = -1;

  /** Rankings kept, for tests and metrics. */
  get rankingCount(): number {
    return this.rankings.size;
  }

  private newEpoch(): Epoch {
    const firstSince = new Int32Array(this.views.capacity.pools);
    return { serial: this.serial++, firstSince, bases: POOL_FIGURES.map(() => undefined), refs: 0 };
  }

  /** The current ranking of `figure`: the last one while nothing changed since, else a new one. */
  private freeze(figure: number): Ranking {
    const epoch = this.epoch;
    const prev = this.latest[figure];
    if (prev !== undefined && prev.epoch === epoch && prev.logPos === this.logLen) return prev;
    const base = epoch.bases[figure] ?? (epoch.bases[figure] = this.buildBase(figure));
    // Pools changed since the previous freeze (all changed this epoch when there is none) take
    // their current values; the rest of the previous overlay is unchanged.
    const from = prev !== undefined && prev.epoch === epoch ? prev.logPos : 0;
    // A pool a rollback removed (its creation orphaned) leaves the ranking: its base entry is stale (it
    // is logged) and it has no overlay entry.
    const exists = this.views.poolExists;
    const changed = this.uniqueLogged(from).filter((p) => exists[p] === 1);
    const sorted = this.sortByValue(changed, figure);
    const overlay = prev !== undefined && prev.epoch === epoch ? this.mergeExcluding(prev.overlay, sorted) : sorted;
    const r: Ranking = { name: `${this.instance}.${this.serial++}`, figure, epoch, base, overlay, logPos: this.logLen, lastUsedMs: 0 };
    this.latest[figure] = r;
    return r;
  }

  /** Every owned pool, sorted by the current value of `figure`. */
  private buildBase(figure: number): Sorted {
    const v = this.views;
    const n = v.poolCount;
    const all = new Int32Array(n);
    let count = 0;
    const owns = this.owns;
    for (let p = 0; p < n; p++) if (v.poolExists[p] === 1 && owns(v.poolChain[p]!)) all[count++] = p;
    this.poolTotal = count;
    return this.sortByValue(all.subarray(0, count), figure);
  }

  /** Sorts pool ids by (current value desc, id asc); ids must be ascending on entry. */
  private sortByValue(pools: Int32Array, figure: number): Sorted {
    const n = pools.length;
    // Each pool's value read once (a window figure sits behind the pool's window slot), by position in `pools`.
    const keys = new Float64Array(n);
    this.figures.readAll(figure, pools, keys);
    // Most pools of a large universe sit at 0 on most figures: keep those in id order, sort the rest.
    // Positions are sorted, not ids: `pools` is ascending, so a lower position is a lower id.
    const order = new Int32Array(n);
    let pos = 0;
    let neg = n;
    let zeros = 0;
    for (let i = 0; i < n; i++) {
      const x = keys[i]!;
      if (x > 0) order[pos++] = i;
      else if (x < 0) order[--neg] = i;
    }
    const zeroStart = pos;
    for (let i = 0; i < n; i++) if (keys[i] === 0) order[zeroStart + zeros++] = i;
    const cmp = (a: number, b: number): number => {
      const va = keys[a]!;
      const vb = keys[b]!;
      return va > vb ? -1 : va < vb ? 1 : a - b;
    };
    order.subarray(0, pos).sort(cmp);
    order.subarray(neg, n).sort(cmp);
    const ids = new Int32Array(n);
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const k = order[i]!;
      ids[i] = pools[k]!;
      values[i] = keys[k]!;
    }
    return { ids, values };
  }

  /** Distinct pools in the change log from position `from`, ascending. */
  private uniqueLogged(from: number): Int32Array {
    const gen = this.nextMark();
    const out: number[] = [];
    for (let i = from; i < this.logLen; i++) {
      const p = this.log[i]!;
      if (this.mark[p] === gen) continue;
      this.mark[p] = gen;
      out.push(p);
    }
    out.sort((a, b) => a - b);
    return Int32Array.from(out);
  }

  /** `older` without the pools of `newer` (and those removed since), merged with `newer` (both sorted). */
  private mergeExcluding(older: Sorted, newer: Sorted): Sorted {
    const gen = this.nextMark();
    for (let i = 0; i < newer.ids.length; i++) this.mark[newer.ids[i]!] = gen;
    let kept = 0;
    const exists = this.views.poolExists;
    for (let i = 0; i < older.ids.length; i++) if (this.mark[older.ids[i]!] !== gen && exists[older.ids[i]!] === 1) kept++;
    const n = kept + newer.ids.length;
    const ids = new Int32Array(n);
    const values = new Float64Array(n);
    let i = 0;
    let j = 0;
    for (let k = 0; k < n; k++) {
      while (i < older.ids.length && (this.mark[older.ids[i]!] === gen || exists[older.ids[i]!] !== 1)) i++;
      const takeOlder =
        j >= newer.ids.length || (i < older.ids.length && ahead(true, older.values[i]!, older.ids[i]!, newer.values[j]!, newer.ids[j]!));
      if (takeOlder) {
        ids[k] = older.ids[i]!;
        values[k] = older.values[i]!;
        i++;
      } else {
        ids[k] = newer.ids[j]!;
        values[k] = newer.values[j]!;
        j++;
      }
    }
    return { ids, values };
  }

  /** Folds every change of the epoch into new bases and starts a new epoch with an empty log. */
  private rebuild(): void {
    const old = this.epoch;
    const changed = this.uniqueLogged(0);
    const next = this.newEpoch();
    for (let f = 0; f < POOL_FIGURES.length; f++) {
      const base = old.bases[f];
      if (base !== undefined) next.bases[f] = this.mergeExcluding(base, this.sortByValue(changed, f));
    }
    this.poolTotal = next.bases.find((b) => b !== undefined)?.ids.length ?? this.poolTotal;
    this.epoch = next;
    this.logLen = 0;
    this.task = (this.task + 1) >>> 0 || 1;
    this.latest.fill(undefined);
    if (old.refs > 0) {
      this.superseded.push(old);
      while (this.superseded.length > MAX_OLD_EPOCHS) this.dropEpoch(this.superseded.shift()!);
    }
  }

  private dropEpoch(epoch: Epoch): void {
    for (const [name, r] of this.rankings) if (r.epoch === epoch) this.rankings.delete(name);
    epoch.refs = 0;
  }

  private evict(nowMs: number): void {
    for (const [name, r] of this.rankings) {
      if (this.rankings.size <= MAX_RANKINGS && nowMs - r.lastUsedMs < RANKING_TTL_MS) break;
      this.rankings.delete(name);
      if (this.latest[r.figure] === r) this.latest[r.figure] = undefined;
      if (--r.epoch.refs === 0) {
        const i = this.superseded.indexOf(r.epoch);
        if (i >= 0) this.superseded.splice(i, 1);
      }
    }
  }

  private nextMark(): number {
    this.markGen = (this.markGen + 1) >>> 0;
    if (this.markGen === 0) {
      this.mark.fill(0);
      this.markGen = 1;
    }
    return this.markGen;
  }
}
