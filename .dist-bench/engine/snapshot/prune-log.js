/**
 * Dropping the log a snapshot makes unnecessary: batches up to the oldest snapshot kept. A start
 * loads a snapshot and replays only the batches after it, and a rollback rebuilds a chain from a
 * snapshot taken before the rewritten batches, so neither reads what is removed here.
 */
import { metaKeys } from '../store/store.js';
/** Batches removed per LMDB transaction (each holds up to 4,096 events). */
const PRUNE_GROUP = 256;
/** How far the log was pruned (0: not at all). */
export function logPrunedThrough(store) {
    return store.meta.get(metaKeys.logPrunedThrough) ?? 0;
}
/** Removes log batches up to `through`; resolves with the number removed. */
export async function pruneLog(store, through) {
    const from = logPrunedThrough(store);
    if (through <= from)
        return 0;
    let removed = 0;
    for (;;) {
        // Keys are listed before they are removed: nothing is deleted under an open cursor.
        const keys = [...store.log.getKeys({ start: from + 1, end: through + 1, limit: PRUNE_GROUP })];
        const last = keys.length < PRUNE_GROUP;
        await store.root.transaction(() => {
            for (const k of keys)
                store.log.remove(k);
            if (last)
                store.meta.put(metaKeys.logPrunedThrough, through);
        });
        removed += keys.length;
        if (last)
            return removed;
    }
}
//# sourceMappingURL=prune-log.js.map