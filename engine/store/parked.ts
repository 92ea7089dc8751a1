/**
 * Open candles of pools that gave their ring block back before their day was over (shards/tiers.ts).
 *
 * A pool that goes quiet hands every candle its rings hold to the candle store, the ones still open
 * too (at most its 6 h, 12 h and 24 h candles after an hour without a swap). Should it trade again
 * that day, it takes a block back and goes on from those open candles, and hands them over again,
 * changed, when it next goes quiet. A start that replays the log after a snapshot therefore meets
 * stored open candles that already hold swaps it has yet to apply (a run that went further wrote
 * them). So each hand-over also keeps, here, the open candles as they were at that moment, keyed by
 * the pool's swap count then: a pool taking its block back at that swap count overlays that version
 * on what the candle store gives (state/windows.ts reloadNewest), and a rollback puts the version of
 * its restored state back into the candle store (ingest/rollback.ts). A count with no version is
 * one whose hand-over found every candle closed: the store's are then final. The same count always
 * means the same candles (only swaps move it), whichever run wrote the version.
 *
 *   key   [pool id, swaps]  the pool's swap count (txnsTotal) when it handed its candles over
 *   value [batch, closes at, then per open candle: interval index, open time, the CandleRecord fields]
 *         batch: the log batch applied when it handed them over; closes at: when the last of them closes (Unix s)
 *
 * Versions are pruned after snapshot cuts (pruneParked): of a pool's versions written at or before
 * the oldest snapshot kept, only the newest can be needed (a start from any kept snapshot finds the
 * pool at or after it), and that one too once its candles closed PARKED_KEPT_SECONDS before the
 * chain's clock (no rollback reaches behind it, and the candle store holds them as they closed).
 */
import { CANDLE_FIELDS } from './candles.js';
import type { Store } from './store.js';

export type ParkedKey = [pool: number, swaps: number];

/** Numbers before the candles of a version. */
export const PARKED_HEAD = 2;
/** Numbers per candle of a version: interval index, then a stored candle (open time and record). */
export const PARKED_STRIDE = 1 + CANDLE_FIELDS;
const P_BATCH = 0;
const P_CLOSES_AT = 1;

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
