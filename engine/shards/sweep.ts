import { WINDOW_BASES } from '../state/layout.js';
import type { EngineViews } from '../state/views.js';
import { windowsEmptyFrom } from '../state/windows.js';
import type { ShardWriter } from './apply.js';

/**
 * The pools a window sweep visits: those whose rolling windows may still move, i.e. some window base
 * is not yet as of the minute its windows empty (windowsEmptyFrom). A pool enters when it swaps and
 * leaves once every base has emptied, so a sweep costs the pools that traded within the longest
 * window, not every pool of the shard (most pools of a real network are quiet for months). The set
 * A pool leaving the set gives its window slot back (state/window-slots.ts). The set
 * is rebuilt from every pool's row when `rescan` is set: at a thread's first sweep (its rows come
 * from a snapshot or a replay) and after a rollback rewrote rows.
 */
export class SweepSet {
  private ids = new Int32Array(1024);
  private size = 0;
  /** Bit p: pool p is in `ids`. */
  private readonly member: Uint8Array;
  rescan = true;

  constructor(poolCapacity: number) {
    this.member = new Uint8Array((poolCapacity + 7) >>> 3);
  }

  /** Pools in the set now. */
  get count(): number {
    return this.size;
  }

  has(p: number): boolean {
    return (this.member[p >>> 3]! & (1 << (p & 7))) !== 0;
  }

  add(p: number): void {
    const bit = 1 << (p & 7);
    const at = p >>> 3;
    if ((this.member[at]! & bit) !== 0) return;
    this.member[at] = this.member[at]! | bit;
    if (this.size === this.ids.length) {
      const grown = new Int32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.size++] = p;
  }

  /**
   * Calls `visit` for each pool in the set; a pool for which it answers false leaves the set. Pools
   * added during the walk are kept and visited by the next one.
   */
  walk(visit: (p: number) => boolean): void {
    const ids = this.ids;
    const n = this.size;
    let w = 0;
    for (let i = 0; i < n; i++) {
      const p = ids[i]!;
      if (visit(p)) ids[w++] = p;
      else this.member[p >>> 3] = this.member[p >>> 3]! & ~(1 << (p & 7));
    }
    for (let i = n; i < this.size; i++) ids[w++] = ids[i]!;
    this.size = w;
  }
}

/** Whether pool p's windows may still move: some base has windows (asOf not 0) not yet as of the minute they empty. */
export function windowsMayMove(views: EngineViews, p: number): boolean {
  // Without a window slot its windows are empty or never summed (window-slots.ts quietAsOf): they cannot move.
  const slot = views.poolWindowSlot[p]! - 1;
  if (slot < 0) return false;
  const last = views.lastSwapTime[p]!;
  for (let b = 0; b < WINDOW_BASES.length; b++) {
    const asOf = views.winAsOf[b]![slot]!;
    if (asOf !== 0 && asOf !== windowsEmptyFrom(b, last)) return true;
  }
  return false;
}

/** Brings the rolling windows of every pool of `chains` up to its chain clock; returns pools changed. */
export function sweepChains(writer: ShardWriter, views: EngineViews, chains: readonly number[]): number {
  const owned = new Uint8Array(views.capacity.chains);
  for (const c of chains) owned[c] = 1;
  const set = writer.sweepSet;
  if (set.rescan) {
    set.rescan = false;
    const n = views.poolCount;
    for (let p = 0; p < n; p++) {
      if (owned[views.poolChain[p]!] !== 1 || views.poolExists[p] !== 1) continue;
      if (windowsMayMove(views, p)) set.add(p);
      // Rows from a snapshot cut before the sweep saw their windows empty: their slots go back now.
      else if (views.poolWindowSlot[p] !== 0) writer.releaseWindowSlot(p);
    }
  }
  let changed = 0;
  set.walk((p) => {
    const chain = views.poolChain[p]!;
    if (owned[chain] !== 1 || views.poolExists[p] !== 1) return false;
    if (writer.refreshWindows(p, views.chainClock[chain]!)) changed++;
    if (windowsMayMove(views, p)) return true;
    // Every window empty and unable to change until it swaps: its window slot goes back (unless it
    // still holds a ring block: then when it gives that back, tiers.ts).
    writer.releaseWindowSlot(p);
    return false;
  });
  return changed;
}
