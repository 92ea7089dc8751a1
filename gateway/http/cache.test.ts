import { describe, expect, it } from 'vitest';
import { ResponseCache } from './cache.js';

const body = (bytes: number) => Buffer.alloc(bytes, 0x61);

describe('ResponseCache', () => {
  it('serves an entry only for the version it was rendered from', () => {
    const cache = new ResponseCache(1 << 20);
    cache.set('k', 4, body(10));
    expect(cache.get('k', 4)?.body.length).toBe(10);
    expect(cache.get('k', 6)).toBeUndefined();
    expect(cache.get('k', 4)).toBeUndefined();
  });

  it('drops an entry after its expiry time', () => {
    const cache = new ResponseCache(1 << 20);
    cache.set('k', 2, body(10), performance.now() - 1);
    expect(cache.get('k', 2)).toBeUndefined();
  });

  it('stays within its byte budget, evicting the least recently used first', () => {
    const cache = new ResponseCache(4000);
    for (const k of ['a', 'b', 'c']) cache.set(k, 0, body(1000));
    expect(cache.get('a', 0)).toBeDefined(); // b is now the least recently used
    cache.set('d', 0, body(1000));
    expect(cache.usedBytes).toBeLessThanOrEqual(4000);
    expect(cache.get('b', 0)).toBeUndefined();
    for (const k of ['a', 'c', 'd']) expect(cache.get(k, 0), k).toBeDefined();
    cache.set('huge', 0, body(5000));
    expect(cache.get('huge', 0)).toBeUndefined();
    expect(cache.size).toBe(3);
  });
});
