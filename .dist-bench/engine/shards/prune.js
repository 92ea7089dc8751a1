/**
 * Deletes the stored transactions of `chains`' pools older than `cutoff` (Unix s). A pool's
 * transactions are keyed in block order, so each scan stops at the first one inside the window.
 * Returns the number deleted.
 */
export async function pruneTransactions(store, views, chains, cutoff) {
    const owned = new Uint8Array(views.capacity.chains);
    for (const c of chains)
        owned[c] = 1;
    const n = views.poolCount;
    let removed = 0;
    await store.root.transaction(() => {
        for (let p = 0; p < n; p++) {
            if (views.poolExists[p] !== 1 || owned[views.poolChain[p]] !== 1)
                continue;
            for (const { key, value } of store.txs.getRange({ start: [p], end: [p + 1] })) {
                if (value[10] >= cutoff)
                    break;
                store.txs.remove(key);
                removed++;
            }
        }
    });
    return removed;
}
//# sourceMappingURL=prune.js.map