import { describe, expect, it } from 'vitest';
import { decodeBatch, encodeBatch } from './codec.js';
import type { ChainEvent } from './model.js';

describe('event codec', () => {
  it('a reserve_delta keeps its signed amounts (beyond 64 bits too) through encode and decode', () => {
    const key = { blockNumber: 123_456, txIndex: 3, logIndex: 9 };
    const events: ChainEvent[] = [
      { kind: 'reserve_delta', key, timestamp: 1_767_225_600, pool: '0xpool', amount0: -(10n ** 30n) - 7n, amount1: 5n },
      { kind: 'reserve_delta', key: { ...key, logIndex: 10 }, timestamp: 1_767_225_600, pool: '0xpool', amount0: 0n, amount1: -1n },
    ];
    const bytes = encodeBatch('ethereum', events, { poolId: () => 42, tokenId: () => 0 });
    const decoded = decodeBatch(bytes);
    expect(decoded.chain).toBe('ethereum');
    expect(decoded.events).toEqual(events.map((e) => ({ ...e, pool: '#42', poolId: 42 })));
  });
});
