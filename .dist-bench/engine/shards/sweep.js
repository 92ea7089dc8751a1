/** Brings the rolling windows of every pool of `chains` up to its chain clock; returns pools changed. */
export function sweepChains(writer, views, chains) {
    const owned = new Uint8Array(views.capacity.chains);
    for (const c of chains)
        owned[c] = 1;
    const n = views.poolCount;
    let changed = 0;
    for (let p = 0; p < n; p++) {
        const chain = views.poolChain[p];
        if (owned[chain] === 1 && views.poolExists[p] === 1 && writer.refreshWindows(p, views.chainClock[chain]))
            changed++;
    }
    return changed;
}
//# sourceMappingURL=sweep.js.map