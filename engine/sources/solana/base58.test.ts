import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { base58Bytes, u64le } from './base58.js';

describe('base58Bytes', () => {
  it('reads back what @solana/kit writes, leading zero bytes and long event data included', () => {
    const kit = getBase58Decoder();
    for (let n = 0; n < 3_000; n++) {
      const b = randomBytes(n % 400);
      if (n % 5 === 0 && b.length > 2) b[0] = b[1] = 0;
      expect(Buffer.from(base58Bytes(kit.decode(b))!).equals(b), `${b.length} bytes`).toBe(true);
    }
  });

  it('refuses characters outside the alphabet (0, O, I, l)', () => {
    for (const s of ['0abc', 'abOc', 'I', 'l1']) expect(base58Bytes(s)).toBeNull();
  });

  it('reads an SPL Token Transfer (tag 3, u64 amount)', () => {
    const b = base58Bytes('3mhKMQ42eeBH')!;
    expect(b[0]).toBe(3);
    expect(u64le(b, 1)).toBe(592_443_959_000_000n);
  });
});
