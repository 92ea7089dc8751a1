/**
 * What a pool that gave its ring block back before its day was over still had open (shards/tiers.ts).
 *
 * A pool that goes quiet hands every candle its rings hold to the candle store, the ones still open
 * too (at most its 6 h, 12 h and 24 h candles after an hour without a swap). Should it trade again
 * that day, it takes a block back and goes on from those open candles, and hands them over again,
 * changed, when it next goes quiet. A start that replays the log after a snapshot therefore meets
 * stored open candles that already hold swaps it has yet to apply (a run that went further wrote
 * them). So each hand-over also keeps, here, the open candles as they were at that moment, keyed by
 * the pool's swap count then: a pool taking its block back at that swap count overlays that version
 * on what the candle store gives (state/windows.ts reloadNewest), and a rollback puts the version of
 * its restored state back into the candle store (ingest/rollback.ts).
 *
 * The version also keeps the figures of the windows whose base candle is still open (its 7 and 30
 * day windows, summed from 6 h and day candles), as the swaps added them up since their last
 * re-sum: a sum of its candles would round otherwise. Until the window's anchor next moves (the
 * next re-sum), the pool's figures there are those, less the one-minute candles that leave the
 * window since, taken out one by one in the same order as a pool holding its block takes them out
 * (state/windows.ts parkedWindows). So a pool can go quiet any time, and read exactly as one that
 * kept its block.
 *
 * A count with no version is one whose hand-over found every candle closed and every window
 * re-summed: the store's candles are then final. The same count always means the same candles (only
 * swaps move it), whichever run wrote the version.
 *
 *   key   [pool id, swaps]  the pool's swap count (txnsTotal) when it handed its candles over
 *   value [batch, closes at, candle count,
 *          per open candle: interval index, open time, the CandleRecord fields,
 *          per window base not re-summed: base index (WINDOW_BASES), the minute its figures are as of,
 *            per window on it: volume, buy volume, transactions, buys, reference prices of token 0 and 1]
 *         batch: the log batch applied when it handed them over; closes at: when the last of them
 *         closes or is re-summed (Unix s)
 *
 * Versions are pruned after snapshot cuts (pruneParked): of a pool's versions written at or before
 * the oldest snapshot kept, only the newest can be needed (a start from any kept snapshot finds the
 * pool at or after it), and that one too once it closed PARKED_KEPT_SECONDS before the chain's
 * clock (no rollback reaches behind it, and the candle store holds its candles as they closed).
 */
import { CANDLE_FIELDS } from './candles.js';
import { WINDOW_BASES } from '../state/layout.js';
import type { Store } from './store.js';

export type ParkedKey = [pool: number, swaps: number];

/** Numbers before the candles of a version. */
export const PARKED_HEAD = 3;
/** Numbers per candle of a version: interval index, then a stored candle (open time and record). */
export const PARKED_STRIDE = 1 + CANDLE_FIELDS;
const P_BATCH = 0;
const P_CLOSES_AT = 1;
const P_CANDLES = 2;
/** Figures kept per window of a base not re-summed, in this order (the fields of state/windows.ts WindowSums). */
export const PARKED_WINDOW_FIGURES = ['volumeUsd', 'buyVolumeUsd', 'txns', 'buys', 'refPrice', 'refPrice1'] as const;

/** A version's value: its head, then `candles` (PARKED_STRIDE numbers each) and `windows` (base entries) as they are. */
export function parkedValue(batch: number, closesAt: number, candles: readonly number[], windows: readonly number[]): number[] {
  return [batch, closesAt, candles.length / PARKED_STRIDE, ...candles, ...windows];
}

/** Where a version's candles end (its window entries begin). */
export function parkedCandlesEnd(version: readonly number[]): number {
  return PARKED_HEAD + version[P_CANDLES]! * PARKED_STRIDE;
}

/** Offset of the entry of window base b in a version (its base index; the as-of minute, then the figures, follow), or -1. */
export function parkedWindowsAt(version: readonly number[], b: number): number {
  for (let at = parkedCandlesEnd(version); at < version.length; at += 2 + WINDOW_BASES[version[at]!]!.windows.length * PARKED_WINDOW_FIGURES.length) {
    if (version[at] === b) return at;
  }
  return -1;
}

/** A pool's newest version older than this behind its chain's clock (its candles closed) is dropped. */
export const PARKED_KEPT_SECONDS = 7 * 86_400;
/** Versions read per turn of the event loop, and removed per write transaction. */
const PRUNE_GROUP = 4096;

/** Pool p's version of open candles for swap count `swaps` (undefined: none; its stored candles are then as they were). */
export function parkedAt(store: Store, p: number, swaps: number): readonly number[] | undefined {
  return store.parked.get([p, swaps]);
}

/** The log batch a version was written at. */
export function parkedBatch(version: readonly number[]): number {
  return version[P_BATCH]!;
}

/**
 * Drops the versions no start or rollback can need: a pool's older versions written at or before
 * batch `oldestKept` (the oldest snapshot kept), and its newest of those too once its candles closed
 * PARKED_KEPT_SECONDS before `clockOf(pool)`. Returns how many were dropped.
 */
export async function pruneParked(store: Store, oldestKept: number, clockOf: (pool: number) => number): Promise<number> {
  // Keys are listed first, a page at a time with a turn of the event loop between pages, then removed:
  // nothing is deleted under an open cursor.
  const drop: ParkedKey[] = [];
  let newest: ParkedKey | null = null;
  let newestClosesAt = 0;
  const closePool = () => {
    if (newest !== null && newestClosesAt + PARKED_KEPT_SECONDS <= clockOf(newest[0])) drop.push(newest);
    newest = null;
  };
  let after: ParkedKey | null = null;
  for (;;) {
    let read = 0;
    for (const { key, value } of store.parked.getRange({ start: after ?? undefined, limit: PRUNE_GROUP + 1 })) {
      if (after !== null && key[0] === after[0] && key[1] === after[1]) continue;
      if (read === PRUNE_GROUP) break;
      read++;
      after = key;
      if (newest !== null && key[0] !== newest[0]) closePool();
      // A pool's versions are in swap-count order, so in batch order: the rest of its are newer than the oldest snapshot.
      if (value[P_BATCH]! > oldestKept) continue;
      if (newest !== null) drop.push(newest);
      newest = key;
      newestClosesAt = value[P_CLOSES_AT]!;
    }
    if (read < PRUNE_GROUP) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  closePool();
  for (let i = 0; i < drop.length; i += PRUNE_GROUP) {
    const group = drop.slice(i, i + PRUNE_GROUP);
    await store.root.transaction(() => {
      for (const k of group) store.parked.remove(k);
    });
  }
  return drop.length;
}
