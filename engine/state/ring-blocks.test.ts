import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { give, releaseFreeTail, take, type BlockPool } from './ring-blocks.js';

/** A pool of `count` blocks with one data column of `bytesEach` bytes per block, all in shared memory as the views hold them. */
function pool(count: number, bytesEach: number): { pool: BlockPool; data: Float64Array } {
  const p: BlockPool = {
    header: new Int32Array(new SharedArrayBuffer(8 * 4)),
    free: new Int32Array(new SharedArrayBuffer(count * 4)),
    owner: new Int32Array(new SharedArrayBuffer(count * 4)),
    count,
  };
  return { pool: p, data: new Float64Array(new SharedArrayBuffer(count * bytesEach)) };
}

/** This process's resident anonymous memory, in bytes (Linux). */
function rssAnon(): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m === null ? NaN : Number(m[1]) * 1024;
}

describe('ring block allocator', () => {
  it('hands out the lowest free block, then the next above every block handed out', () => {
    const { pool: p } = pool(100, 8);
    for (let i = 0; i < 70; i++) expect(take(p, 1000 + i)).toBe(i);
    for (const b of [64, 3, 40, 35, 33]) give(p, b);
    expect([take(p, 1), take(p, 2), take(p, 3), take(p, 4), take(p, 5), take(p, 6)]).toEqual([3, 33, 35, 40, 64, 70]);
    expect(p.owner[33]).toBe(3);
    // Every block taken: none is left.
    for (let i = 71; i < 100; i++) expect(take(p, i)).toBe(i);
    expect(take(p, 0)).toBe(-1);
    give(p, 99);
    give(p, 0);
    expect(take(p, 7)).toBe(0);
    expect(take(p, 8)).toBe(99);
  });

  it('gives the memory of the free blocks above the highest in use back, and hands them out again zeroed', () => {
    // 4,096 blocks of 16 KiB: a 64 MiB column, on huge-page bounds.
    const count = 4096;
    const each = 16 * 1024;
    const words = each / 8;
    const { pool: p, data } = pool(count, each);
    for (let b = 0; b < count; b++) {
      expect(take(p, b)).toBe(b);
      data.fill(b + 1, b * words, (b + 1) * words);
    }
    const before = rssAnon();
    // Blocks 1,000 and up go back but for 2,000; then 2,000 too.
    for (let b = 1000; b < count; b++) if (b !== 2000) give(p, b);
    expect(releaseFreeTail(p, [data], 256)).toBe(count - 2001);
    give(p, 2000);
    // A tail shorter than asked for is left alone.
    expect(releaseFreeTail(p, [data], 1002)).toBe(0);
    expect(releaseFreeTail(p, [data], 256)).toBe(1001);
    // The blocks in use keep what they hold.
    for (const b of [0, 500, 999]) expect(data[b * words + words - 1]).toBe(b + 1);
    if (process.platform === 'linux' && Number.isFinite(before)) {
      // 3,096 blocks of 16 KiB (48 MiB) given back, less at most a huge page at the start of the range.
      expect(before - rssAnon()).toBeGreaterThan(40 * 1024 * 1024);
      // What is above the mark reads zero now (in the whole huge pages there: block 1,024 to the last
      // page boundary, at most 128 blocks from the end), so a block handed out there again comes as a fresh one does.
      for (const b of [1100, 2000, 3000, 3900]) expect(data[b * words]).toBe(0);
    } else console.log('RssAnon not measured: /proc/self/status is Linux only');
    // Handed out from the lowest free block again: the mark, then up.
    expect(take(p, 1)).toBe(1000);
    expect(take(p, 2)).toBe(1001);
    give(p, 500);
    expect(take(p, 3)).toBe(500);
  });

  it('releases nothing while the highest block is in use', () => {
    const { pool: p, data } = pool(512, 4096);
    for (let b = 0; b < 512; b++) take(p, b);
    for (let b = 0; b < 511; b++) give(p, b);
    expect(releaseFreeTail(p, [data])).toBe(0);
    give(p, 511);
    expect(releaseFreeTail(p, [data])).toBe(512);
    expect(take(p, 9)).toBe(0);
  });
});
