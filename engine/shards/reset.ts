import { give, giveBlock, secondBlocks } from '../state/ring-blocks.js';
import type { EngineViews } from '../state/views.js';
import { windowSlots } from '../state/window-slots.js';

/**
 * Zeroes the dynamic state of pools and tokens (every column the shard writes: reserves, prices,
 * windows, candle rings, routes, 1 s candles) under their seqlocks, and gives their ring blocks and window slots back,
 * as a rollback does before the chain's log is applied again. Runs on the shard thread that owns the chain (the only writer of
 * these cells). The columns come from the views' column table.
 */
export function resetState(v: EngineViews, pools: readonly number[], tokens: readonly number[]): void {
  const shardColumns = v.columnTable.filter((c) => c.writer === 'shard' && !c.transient);
  const poolColumns = shardColumns.filter((c) => c.scope === 'pool');
  const tokenColumns = shardColumns.filter((c) => c.scope === 'token');
  for (const p of pools) {
    Atomics.add(v.poolSeq, p, 1);
    for (const c of poolColumns) c.array.fill(0, p * c.stride, (p + 1) * c.stride);
    const held = v.poolBlock[p]!;
    v.poolBlock[p] = 0;
    const slot = v.poolWindowSlot[p]!;
    v.poolWindowSlot[p] = 0;
    Atomics.add(v.poolSeq, p, 1);
    if (held !== 0) giveBlock(v, held - 1);
    if (slot !== 0) give(windowSlots(v), slot - 1);
  }
  for (const t of tokens) {
    Atomics.add(v.tokenSeq, t, 1);
    for (const c of tokenColumns) c.array.fill(0, t * c.stride, (t + 1) * c.stride);
    const held = v.tokenSecondBlock[t]!;
    v.tokenSecondBlock[t] = 0;
    Atomics.add(v.tokenSeq, t, 1);
    if (held !== 0) give(secondBlocks(v), held - 1);
  }
}
