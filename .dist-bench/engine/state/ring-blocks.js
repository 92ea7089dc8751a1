/** The ring blocks of pools. */
export function ringBlocks(v) {
    return { header: v.blockHeader, free: v.blockFree, owner: v.blockPool, count: v.blockCount };
}
/** The second blocks of tokens. */
export function secondBlocks(v) {
    return { header: v.secondBlockHeader, free: v.secondBlockFree, owner: v.secondBlockToken, count: v.secondBlockCount };
}
const LOCK = 0;
const FREE_DEPTH = 1;
const HIGH_WATER = 2;
const IN_USE = 3;
function lock(h) {
    while (Atomics.compareExchange(h, LOCK, 0, 1) !== 0)
        Atomics.wait(h, LOCK, 1, 1);
}
function unlock(h) {
    Atomics.store(h, LOCK, 0);
    Atomics.notify(h, LOCK, 1);
}
/** Hands `row` a free block of `pool` and records its owner (not the row's own column: the caller sets that under its seqlock); -1 when none is left. */
export function take(pool, row) {
    const h = pool.header;
    lock(h);
    let b = -1;
    const depth = h[FREE_DEPTH];
    if (depth > 0) {
        b = pool.free[depth - 1];
        h[FREE_DEPTH] = depth - 1;
    }
    else if (h[HIGH_WATER] < pool.count) {
        b = h[HIGH_WATER];
        h[HIGH_WATER] = b + 1;
    }
    if (b >= 0) {
        h[IN_USE] = h[IN_USE] + 1;
        Atomics.store(pool.owner, b, row + 1);
    }
    unlock(h);
    return b;
}
/** Returns block b to the free stack of `pool` (the caller has cleared its row's column). */
export function give(pool, b) {
    const h = pool.header;
    lock(h);
    Atomics.store(pool.owner, b, 0);
    pool.free[h[FREE_DEPTH]] = b;
    h[FREE_DEPTH] = h[FREE_DEPTH] + 1;
    h[IN_USE] = h[IN_USE] - 1;
    unlock(h);
}
/** Hands pool p a free ring block (the caller sets poolBlock under p's seqlock); -1 when none is left. */
export function takeBlock(v, p) {
    return take(ringBlocks(v), p);
}
/** Returns ring block b (the caller has cleared poolBlock of its pool). */
export function giveBlock(v, b) {
    give(ringBlocks(v), b);
}
export function blockStats(v, pool = ringBlocks(v)) {
    const used = Atomics.load(pool.header, IN_USE);
    return { total: pool.count, used, free: pool.count - used, touched: Atomics.load(pool.header, HIGH_WATER) };
}
/** Bytes of shared memory one ring block (or second block) takes: every column's row of that scope. */
export function ringBlockBytes(v, scope = 'block') {
    let n = 0;
    for (const c of v.columnTable)
        if (c.scope === scope)
            n += c.stride * c.array.BYTES_PER_ELEMENT;
    return n;
}
/** Blocks ever handed out: every block in use is below it. */
export function blockHighWater(v, pool = ringBlocks(v)) {
    return Atomics.load(pool.header, HIGH_WATER);
}
/** Empties the allocator (before a snapshot's blocks are loaded, on the main thread with no shard running). */
export function resetBlocks(v) {
    v.blockHeader.fill(0);
    v.blockPool.fill(0, 0, v.blockCount);
    v.poolBlock.fill(0);
}
/**
 * Blocks 0..n-1 handed to `pools` in order (loading a snapshot: main thread, no shard running);
 * returns their ids, equal to their index in `pools`.
 */
export function assignBlocks(v, pools) {
    resetBlocks(v);
    if (pools.length > v.blockCount)
        throw new RangeError(`the snapshot holds ${pools.length} pools with candle rings; ${v.blockCount} ring blocks are configured`);
    for (let b = 0; b < pools.length; b++) {
        const p = pools[b];
        v.blockPool[b] = p + 1;
        v.poolBlock[p] = b + 1;
    }
    v.blockHeader[HIGH_WATER] = pools.length;
    v.blockHeader[IN_USE] = pools.length;
}
//# sourceMappingURL=ring-blocks.js.map