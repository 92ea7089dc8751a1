/**
 * Address keys: an EVM address is its 20 bytes; a Uniswap v4 pool id (`0x` and 64 hex digits, a
 * 32-byte keccak-256) is kept as its lower-case text, so any case of it names the same key.
 */
import { describe, expect, it } from 'vitest';
import { AddressKey, EVM_ADDRESS_BYTES, KeyKind } from './address.js';

const ID = '0x21c67e77068de97969ba93d4aab21826d33ca12bb9f565d8496e8fda8a82ca27';

describe('AddressKey', () => {
  it('keeps a 32-byte pool id as its lower-case text, the same key in any case', () => {
    const a = new AddressKey().set(ID);
    expect(a.kind).toBe(KeyKind.Text);
    expect(new TextDecoder().decode(a.bytes.subarray(0, a.length))).toBe(ID);
    const b = new AddressKey().set(`0x${ID.slice(2).toUpperCase()}`);
    expect([b.kind, b.length, b.hash]).toEqual([a.kind, a.length, a.hash]);
    expect(b.bytes.subarray(0, b.length)).toEqual(a.bytes.subarray(0, a.length));
  });

  it('an EVM address stays 20 bytes, a different key from any id', () => {
    const a = new AddressKey().set('0x0000000000000000000000000000000000000000');
    expect([a.kind, a.length]).toEqual([KeyKind.Evm, EVM_ADDRESS_BYTES]);
    expect(a.hash).not.toBe(new AddressKey().set(ID).hash);
  });
});
