import { describe, expect, it } from 'vitest';
import { TopK } from './top-k.js';

describe('TopK', () => {
  it('keeps the k best by value then id, as a full sort would', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const rows = Array.from({ length: 5000 }, (_, id) => ({ id, v: Math.floor(rand() * 50) }));
    const top = new TopK(101);
    const values = new Float64Array(101);
    const ids = new Int32Array(101);
    for (const desc of [true, false]) {
      for (const k of [1, 7, 101]) {
        top.reset(k, desc);
        for (const r of [...rows].reverse()) top.offer(r.v, r.id);
        const n = top.drain(values, ids);
        const expected = [...rows].sort((a, b) => (desc ? b.v - a.v : a.v - b.v) || a.id - b.id).slice(0, k);
        expect(n).toBe(k);
        expect(Array.from(ids.subarray(0, n))).toEqual(expected.map((r) => r.id));
      }
    }
  });
});
