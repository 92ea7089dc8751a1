import type { EngineViews } from '../state/views.js';
import type { Store } from '../store/store.js';

/**
 * Deletes the stored transactions of `chains`' pools older than `cutoff` (Unix s). A pool's
 * transactions are keyed in block order, so each scan stops at the first one inside the window.
 * Returns the number deleted.
 *
 * With `keptFrom` (one entry per pool, kept by the caller from prune to prune) a pool is looked at
 * only when it may hold a transaction older than `cutoff`: keptFrom[p] is a time no stored
 * transaction of p is older than (0: unknown, then the pool's creation time), set here to the first
 * one kept, or, when none is kept, to the chain clock (later transactions come in block order, so
 * they are at least that recent). Most pools of a large universe are quiet: a prune then opens no
 * cursor for them, and a thread's first prune none for the pools created inside the window.
 */
export async function pruneTransactions(store: Store, views: EngineViews, chains: readonly number[], cutoff: number, keptFrom?: Uint32Array): Promise<number> {
  const owned = new Uint8Array(views.capacity.chains);
  for (const c of chains) owned[c] = 1;
  const n = views.poolCount;
  let removed = 0;
  await store.root.transaction(() => {
    for (let p = 0; p < n; p++) {
      if (views.poolExists[p] !== 1) continue;
      const chain = views.poolChain[p]!;
      if (owned[chain] !== 1) continue;
      if (keptFrom !== undefined) {
        // Not known yet (a thread's first prune): no transaction of a pool is older than its creation
        // event, which comes before its other events in the chain's order.
        if (keptFrom[p] === 0) keptFrom[p] = Math.floor(views.poolCreatedAt[p]!);
        if (keptFrom[p]! >= cutoff) continue;
      }
      // The chain clock before the scan: a transaction stored after it is at least this recent.
      const clock = views.chainClock[chain]!;
      let first = -1;
      for (const { key, value } of store.txs.getRange({ start: [p], end: [p + 1] })) {
        const t = value[10] as number;
        if (t >= cutoff) {
          first = t;
          break;
        }
        store.txs.remove(key);
        removed++;
      }
      if (keptFrom !== undefined) keptFrom[p] = Math.max(0, Math.floor(first < 0 ? clock : Math.min(first, clock)));
    }
  });
  return removed;
}
