/**
 * Files written before the window slots held the minutes their figures are as of keep those minutes
 * in the pool row (`winAsOf.<base>`, a u32 per pool: format.ts asOfInRowColumns). On load, each pool
 * holding a window slot gets its row's minutes in its slot. A pool without a slot kept in its row the
 * minute its windows became empty (or 0 before its first swap), which is what it reads now without
 * one (state/window-slots.ts quietAsOf); one whose row says otherwise (its windows could still move)
 * takes a slot, filled as a swap fills one, with its row's minutes: the window sweep then brings it on
 * as it brought on the row.
 */
import { WINDOW_BASES } from '../state/layout.js';
import type { EngineViews } from '../state/views.js';
import { quietAsOf, windowSlotOf, windowSlots } from '../state/window-slots.js';

/**
 * Puts the file's row minutes `rows[b][i]` (window base b, WINDOW_BASES order) of pool `pools[i]`
 * into the pool's window slot, after the file's slots were handed out and its rows read (lastSwapTime
 * among them). Returns the pools that took a slot for them.
 */
export function rowAsOfIntoSlots(v: EngineViews, rows: readonly Uint32Array[], pools: ArrayLike<number>): number {
  if (rows.length !== WINDOW_BASES.length) throw new RangeError(`${rows.length} as-of columns in the file, ${WINDOW_BASES.length} window bases`);
  const allocator = windowSlots(v);
  let taken = 0;
  for (let i = 0; i < pools.length; i++) {
    const p = pools[i]!;
    let s = v.poolWindowSlot[p]! - 1;
    if (s < 0) {
      let quiet = true;
      for (let b = 0; b < rows.length && quiet; b++) quiet = rows[b]![i] === quietAsOf(v, b, p);
      if (quiet) continue;
      s = windowSlotOf(v, p, allocator);
      // Not known after a start (views.ts winNextChange): the sweep re-sums.
      for (let b = 0; b < rows.length; b++) v.winNextChange[b]![s] = 0;
      taken++;
    }
    for (let b = 0; b < rows.length; b++) v.winAsOf[b]![s] = rows[b]![i]!;
  }
  return taken;
}
