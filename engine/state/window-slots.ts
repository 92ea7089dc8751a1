/**
 * Window slots: the rolling-window figures search ranks and filters by (views.ts winVolumeUsd,
 * winTxns, winPriceChange) and when they next change (winNextChange), held only by pools that traded
 * within the longest window (30 days), in a shared pool of slots allocated as ring blocks are
 * (ring-blocks.ts: a free stack under a lock word, a high-water mark above which memory was never
 * touched). Most pools of a real network have not traded for months: they hold no slot.
 *
 * A pool takes a slot when it swaps while it has none (the shard owning its chain, inside its seqlock),
 * and gives it back when the window sweep finds every window of it empty and unable to change until
 * it swaps again, while it holds no ring block (sweep.ts, tiers.ts). A pool without a slot reads what
 * its slot would hold: volumes and transaction counts 0, and every price change against the price of
 * its last swap (the close of its newest candle, each window's reference once none holds a candle:
 * state/windows.ts), following its price as it moves; its windows are as of the minute they became
 * empty (windowsEmptyFrom of its last swap), or never summed (0) before its first swap.
 */
import { ROW_WINDOW_FIGURES, ROW_WINDOWS } from '../search/figures.js';
import { WINDOW_BASES } from './layout.js';
import { give, take, type BlockPool } from './ring-blocks.js';
import type { EngineViews } from './views.js';
import { NEVER_CHANGES, priceChange, windowsEmptyFrom } from './windows.js';

/** The window slots of pools. */
export function windowSlots(v: EngineViews): BlockPool {
  return { header: v.windowSlotHeader, free: v.windowSlotFree, owner: v.windowSlotPool, count: v.windowSlotCount };
}

/** Token 0's price change of every window of pool p while it holds no slot (its windows are empty). */
export function quietPriceChange(v: EngineViews, p: number): number {
  return priceChange(v.priceUsd0[p]!, v.lastSwapPrice0[p]!);
}

/** The minute pool p's windows on base b are as of while it holds no slot: 0 before its first swap, else the minute they became empty. */
export function quietAsOf(v: EngineViews, b: number, p: number): number {
  const last = v.lastSwapTime[p]!;
  return last === 0 ? 0 : windowsEmptyFrom(b, last);
}

/** The minute pool p's window figures on base b are as of (0: never summed), wherever it is kept (its slot, or what a pool without one reads). */
export function windowAsOf(v: EngineViews, b: number, p: number): number {
  const s = v.poolWindowSlot[p]! - 1;
  return s >= 0 ? v.winAsOf[b]![s]! : quietAsOf(v, b, p);
}

/**
 * Pool p's window slot, taken now when it holds none, filled with what the pool read without one.
 * Call inside p's seqlock, on the shard owning p. Throws when every slot is in use (as ring blocks do).
 */
export function windowSlotOf(v: EngineViews, p: number, pool: BlockPool = windowSlots(v)): number {
  const held = v.poolWindowSlot[p]!;
  if (held !== 0) return held - 1;
  const s = take(pool, p);
  if (s < 0) throw new RangeError(`all ${pool.count} window slots are in use: raise the window slot capacity`);
  const change = quietPriceChange(v, p);
  for (const f of ROW_WINDOW_FIGURES) {
    const value = f === 'priceChange' ? change : 0;
    for (const w of ROW_WINDOWS[f]) v.rowWindow[f][w]![s] = value;
  }
  for (let b = 0; b < WINDOW_BASES.length; b++) {
    v.winAsOf[b]![s] = quietAsOf(v, b, p);
    v.winNextChange[b]![s] = NEVER_CHANGES;
  }
  v.poolWindowSlot[p] = s + 1;
  return s;
}

/**
 * True when slot s holds exactly what pool p reads without one: every volume and count +0, every
 * price change the quiet one, bit for bit, and every base as of the minute quietAsOf gives. Only
 * then may the pool give the slot back.
 */
export function slotIsQuiet(v: EngineViews, p: number, s: number): boolean {
  for (let b = 0; b < WINDOW_BASES.length; b++) if (v.winAsOf[b]![s] !== quietAsOf(v, b, p)) return false;
  const change = quietPriceChange(v, p);
  for (const f of ROW_WINDOW_FIGURES) {
    const value = f === 'priceChange' ? change : 0;
    for (const w of ROW_WINDOWS[f]) if (!Object.is(v.rowWindow[f][w]![s], value)) return false;
  }
  return true;
}

/**
 * Gives pool p's window slot back when it holds one, no ring block, and figures equal to those it
 * reads without one (the caller found every window of it empty and unable to change). Call inside
 * p's seqlock, on the shard owning p. Returns true when it gave the slot back.
 */
export function releaseWindowSlot(v: EngineViews, p: number, pool: BlockPool = windowSlots(v)): boolean {
  const held = v.poolWindowSlot[p]!;
  if (held === 0 || v.poolBlock[p] !== 0 || !slotIsQuiet(v, p, held - 1)) return false;
  v.poolWindowSlot[p] = 0;
  give(pool, held - 1);
  return true;
}

/** Row window figure `f` of window w of pool p, wherever it is kept (its slot, or what a pool without one reads). */
export function rowWindowValue(v: EngineViews, f: (typeof ROW_WINDOW_FIGURES)[number], w: number, p: number): number {
  const s = v.poolWindowSlot[p]! - 1;
  if (s >= 0) return v.rowWindow[f][w]![s]!;
  return f === 'priceChange' ? quietPriceChange(v, p) : 0;
}
