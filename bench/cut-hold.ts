/**
 * What a snapshot cut holds a shard for, in one thread, both ways side by side on the same views:
 * the whole copy made when the cut reaches the shard (its changed rows, every ring block and window
 * slot in use, as cuts were made before shard-cut.ts), and the cut of this build (noted at the cut,
 * copied after it in slices of about 2 ms). Ring blocks are half full of candles.
 *
 *   node dist/bench/cut-hold.js [--sizes POOL_IDS,RING_BLOCKS,WINDOW_SLOTS,CHANGED_POOL_ROWS] [--cuts N]
 *
 * Prints the medians over N delta cuts (the first, full cut of each way is left out).
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { EngineViews } from '../engine/state/views.js';
import { takeBlock } from '../engine/state/ring-blocks.js';
import { windowSlotOf } from '../engine/state/window-slots.js';
import { setCandleValue } from '../engine/state/candle-record.js';
import { CaptureArena, captureShardRows, runsByShard } from '../engine/snapshot/capture.js';
import { captureShardBlocks, WINDOW_SLOTS } from '../engine/snapshot/blocks.js';
import { DirtyRows } from '../engine/snapshot/dirty.js';
import { CutMarks, ShardCut } from '../engine/snapshot/shard-cut.js';
import { median } from './median.js';

/** The figures' lines (see above); `sizes` as --sizes. */
export function benchCutHold(sizes: readonly [ids: number, hot: number, slots: number, changed: number], cuts: number): string[] {
  const [ids, hot, slots, changed] = sizes;
  const chains = 16;

  const v = EngineViews.create({ pools: ids, tokens: ids, chains, blocks: hot + 8, windowSlots: slots + 8 });
  for (let p = 0; p < ids; p++) {
    v.poolExists[p] = 1;
    v.poolChain[p] = (p >> 10) % chains;
    v.tokenChain[p] = (p >> 10) % chains;
  }
  v.counts[0] = ids;
  v.counts[1] = ids;
  const ring = v.rings[0]!;
  for (let i = 0; i < hot; i++) {
    const p = i * Math.floor(ids / hot);
    const b = takeBlock(v, p);
    v.poolBlock[p] = b + 1;
    for (let s = b * ring.slots; s < b * ring.slots + ring.slots / 2; s++) setCandleValue(ring, s, 'open0', p + 0.25);
  }
  for (let i = 0; i < slots; i++) windowSlotOf(v, i * Math.floor(ids / slots));
  const runs = runsByShard(v, 1, () => 0, ids, ids, () => true)[0]!;
  /** The same rows changed before each cut: `changed` pools and a third as many tokens, spread over the ids. */
  const mark = (dirty: DirtyRows) => {
    for (let i = 0; i < changed; i++) dirty.pools.mark((i * 7919) % ids);
    for (let i = 0; i < changed / 3; i++) dirty.tokens.mark((i * 104729) % ids);
  };

  const before = { arena: new CaptureArena(), dirty: new DirtyRows(ids, ids), held: [] as number[] };
  const now = { arena: new CaptureArena(), dirty: new DirtyRows(ids, ids), marks: new CutMarks(ids, ids), held: [] as number[], slice: [] as number[], copy: [] as number[] };
  for (let r = 0; r <= cuts; r++) {
    mark(before.dirty);
    mark(now.dirty);
    let t0 = performance.now();
    captureShardRows(v, runs, before.dirty, r > 0, before.arena);
    captureShardBlocks(v, () => true, before.arena);
    captureShardBlocks(v, () => true, before.arena, WINDOW_SLOTS);
    const heldBefore = performance.now() - t0;
    t0 = performance.now();
    const cut = new ShardCut(v, runs, now.dirty, r > 0, now.arena, () => true, now.marks, []);
    const held = performance.now() - t0;
    let longest = 0;
    let all = 0;
    for (let done = false; !done; ) {
      const s = performance.now();
      done = cut.step(2);
      const d = performance.now() - s;
      longest = Math.max(longest, d);
      all += d;
    }
    if (r === 0) continue;
    before.held.push(heldBefore);
    now.held.push(held);
    now.slice.push(longest);
    now.copy.push(all);
  }
  const ms = (xs: number[]) => `${median(xs).toFixed(1)} ms`;
  return [
    `# a shard held by a snapshot cut: ${ids} pool and token ids, ${hot} ring blocks (half full), ${slots} window slots, ${changed} pool and ${Math.round(changed / 3)} token rows changed; medians of ${cuts} delta cuts`,
    `whole copy at the cut (before shard-cut.ts): held ${ms(before.held)}`,
    `this build: held ${ms(now.held)} at the cut, then slices of at most ${ms(now.slice)}, ${ms(now.copy)} in all`,
    `ratio of the holds: ${(median(before.held) / Math.max(median(now.held), median(now.slice))).toFixed(0)} times shorter`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { sizes: { type: 'string' }, cuts: { type: 'string' } } });
  const sizes = (values.sizes ?? '2000000,93000,213000,200000').split(',').map(Number) as [number, number, number, number];
  for (const line of benchCutHold(sizes, Number(values.cuts ?? 8))) console.log(line);
}
