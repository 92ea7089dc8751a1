import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, looksLikeKey, sameHash } from './keys.js';

describe('api keys', () => {
  it('draw all 62 characters about evenly', () => {
    const counts = new Map<string, number>();
    const n = 2_000;
    for (let i = 0; i < n; i++) for (const ch of generateKey().slice(4)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (n * 32) / 62; // about 1032 per character
    for (const [ch, c] of counts) expect(Math.abs(c - expected), ch).toBeLessThan(expected * 0.25);
  });

  it('accept only the exact shape', () => {
    expect(looksLikeKey(generateKey())).toBe(true);
    expect(looksLikeKey(`Bearer ${generateKey()}`)).toBe(false);
    expect(looksLikeKey(`api_${'a'.repeat(31)}!`)).toBe(false);
    expect(looksLikeKey(`API_${'a'.repeat(32)}`)).toBe(false);
  });

  it('hash with the pepper, and compare hashes by value', () => {
    const key = generateKey();
    const a = hashKey(Buffer.alloc(32, 1), key);
    const b = hashKey(Buffer.alloc(32, 2), key);
    expect(a.equals(b)).toBe(false);
    expect(sameHash(a, a.toString('hex'))).toBe(true);
    expect(sameHash(a, b.toString('hex'))).toBe(false);
    expect(sameHash(a, 'abcd')).toBe(false);
  });
});
