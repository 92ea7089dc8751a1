/**
 * Dropping the log a snapshot makes unnecessary: batches up to the oldest snapshot kept. A start
 * loads a snapshot and replays only the batches after it, and a rollback rebuilds a chain from a
 * snapshot taken before the rewritten batches, so neither reads what is removed here.
 */
import { metaKeys, type Store } from '../store/store.js';

/**
 * Batches removed per LMDB transaction (each holds up to 4,096 events). A snapshot's prune is
 * usually one transaction: each one waits for a turn of the main thread's event loop, which a
 * catch-up step or a 10 M-pool creation step holds for seconds (256 a transaction took 7 to 13 s
 * for about 600 batches there).
 */
const PRUNE_GROUP = 4096;

/** How far the log was pruned (0: not at all). */
export function logPrunedThrough(store: Store): number {
  return (store.meta.get(metaKeys.logPrunedThrough) as number | undefined) ?? 0;
}

/** Removes log batches up to `through`; resolves with the number removed. */
export async function pruneLog(store: Store, through: number): Promise<number> {
  const from = logPrunedThrough(store);
  if (through <= from) return 0;
  let removed = 0;
  for (;;) {
    // Keys are listed before they are removed: nothing is deleted under an open cursor.
    const keys = [...store.log.getKeys({ start: from + 1, end: through + 1, limit: PRUNE_GROUP })];
    const last = keys.length < PRUNE_GROUP;
    await store.root.transaction(() => {
      for (const k of keys) store.log.remove(k);
      if (last) store.meta.put(metaKeys.logPrunedThrough, through);
    });
    removed += keys.length;
    if (last) return removed;
  }
}
