import { pack, unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { CANDLE_FIELDS, REFERENCE_TXNS } from './candles.js';
import { decodeCandles, decodeTx, encodeCandles, encodeTx } from './records.js';
import type { TxRecord } from './store.js';

/** Field by field, float64 bits included (-0 is not 0): `expected` is what the msgpack form reads back. */
function expectSame(actual: readonly unknown[], written: readonly unknown[]): void {
  const expected = unpack(pack(written)) as unknown[];
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) throw new Error(`field ${i}: ${String(actual[i])} instead of ${String(expected[i])}`);
  }
}

const EVM_HASH = '0xb2eae55674df0ed6271c36d1b8b5615cf2a1784ca84ab699d29f0776b0d5e53a';
const EVM_SENDER = '0xbfae78c8ff93f078aebffca92022c3030adf9ab0';
const EVM_RECIPIENT = '0x86ed1e04a51fa95a9772a74991f21da5ec5d188f';
const SOL_SIGNATURE = '3vZ67CGoRYtXwQkVJ2hTdnbbhA2qwYCdxDEb9nzCsnqLcB5hsxQL2MmjPGaVpyBN3Ha5oGYz2T9KxJoUdZ9DNNwA';
const SOL_ADDRESS = 'So11111111111111111111111111111111111111112';

describe('transaction records', () => {
  const cases: [string, TxRecord][] = [
    ['an EVM swap', [0, EVM_HASH, EVM_SENDER, EVM_RECIPIENT, '-320733050723670965', '559308455751235968', 3319.709621731068, 1907.4571018012894, 1064.7405944945292, 1.740384944225551, 1795352112]],
    ['sender as recipient, a mint', [1, EVM_HASH, EVM_SENDER, EVM_SENDER, '1', '0', 0, -0, Number.MIN_VALUE, Number.MAX_VALUE, 0]],
    ['a Solana burn', [2, SOL_SIGNATURE, SOL_ADDRESS, SOL_ADDRESS, '-340282366920938463463374607431768211455', '-18446744073709551616', 1e-300, 1e300, NaN, Infinity, 4_294_967_295]],
    ['checksummed and empty text', [0, '0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc', '', 'router.eth', '281474976710655', '-281474976710656', 1, 2, 3, 4, 5]],
    ['odd-length hex and "0x" alone', [0, '0xabc', '0x', '0x00', '9007199254740993', '-9007199254740993', 1, 2, 3, 4, 5]],
  ];
  for (const [name, record] of cases) {
    it(`reads back ${name} as msgpack did`, () => {
      const bytes = encodeTx(record);
      expect(bytes[0]).toBe(0xc1);
      expectSame(decodeTx(bytes), record);
    });
  }

  it('holds an EVM swap in 133 bytes (msgpack: 234), a Solana one in under 60 % of its msgpack', () => {
    // header 3, hash 1 + 32, sender and recipient 1 + 20 each, amounts 1 + 8 each, 4 float64, time 5
    expect(encodeTx(cases[0]![1]).length).toBe(133);
    expect(encodeTx(cases[0]![1]).length).toBeLessThan(0.6 * pack(cases[0]![1]).length);
    expect(encodeTx(cases[2]![1]).length).toBeLessThan(0.6 * pack(cases[2]![1]).length);
  });

  it('writes -0 as msgpack does (0)', () => {
    const r = decodeTx(encodeTx(cases[1]![1]));
    expect(Object.is(r[7], 0)).toBe(true);
  });

  it('keeps msgpack for what the binary form cannot hold exactly, and reads it back', () => {
    for (const record of [
      [0, EVM_HASH, EVM_SENDER, EVM_RECIPIENT, '007', '1', 1, 2, 3, 4, 5],
      [0, EVM_HASH, EVM_SENDER, EVM_RECIPIENT, '1', '2', 1, 2, 3, 4, 1.5],
      [3, EVM_HASH, EVM_SENDER, EVM_RECIPIENT, '1', '2', 1, 2, 3, 4, 5],
    ] as TxRecord[]) {
      const bytes = encodeTx(record);
      expect(bytes.equals(pack(record))).toBe(true);
      expectSame(decodeTx(bytes), record);
    }
  });

  it('reads a record written as msgpack (an older store)', () => {
    const record = cases[0]![1];
    expectSame(decodeTx(pack(record)), record);
  });
});

/** A candle as stored: open time then the 12 CandleRecord fields. */
function candle(time: number, p0: [number, number, number, number], p1: [number, number, number, number], volume: number, buyVolume: number, txns: number, buys: number): number[] {
  return [time, ...p0, ...p1, volume, buyVolume, txns, buys];
}

describe('candle chunks', () => {
  const chunk = [
    // one trade: every price the open, all of it bought
    ...candle(1_795_352_100, [3319.709621731068, 3319.709621731068, 3319.709621731068, 3319.709621731068], [1907.4571018012894, 1907.4571018012894, 1907.4571018012894, 1907.4571018012894], 1064.7405944945292, 1064.7405944945292, 1, 1),
    // opens at the previous close, closes at the low; nothing bought
    ...candle(1_795_352_160, [3319.709621731068, 3320.1183, 3318.2402, 3318.2402], [1907.4571018012894, 1908.0211, 1906.9377, 1906.9377], 2000.25113, 0, 3, 0),
    // closes at the high, a part bought, a gap of hours before it
    ...candle(1_795_370_160, [3300.117, 3350.0432, 3290.5, 3350.0432], [1900.3, 1910.8, 1890.4, 1910.8], 500.5123, 200.2561, 4, 2),
    // nothing shared, -0 and 0 told apart
    ...candle(1_795_370_220, [1, 2, 0.5, 1.5], [-0, 0, -0, 0], -0, 0, 0, 0),
    // NaN, infinities, counts past 32 bits
    ...candle(1_795_370_280, [NaN, Infinity, -Infinity, NaN], [5e-324, 1e308, 7, 8], 9, 9, 2 ** 40, 2 ** 33),
  ];

  it('reads back every field as msgpack did', () => {
    const bytes = encodeCandles(chunk);
    expect(bytes[0]).toBe(0xc1);
    expectSame(decodeCandles(bytes), chunk);
  });

  it('holds the usual candles in under 60 % of their msgpack, a one-trade candle in 33 bytes', () => {
    const usual = chunk.slice(0, 3 * CANDLE_FIELDS);
    expect(encodeCandles(usual).length).toBeLessThan(0.6 * pack(usual).length);
    // header 2, count 1, then time 5, flags 2, txns and buys 1 each, open 0 and open 1, volume
    expect(encodeCandles(chunk.slice(0, CANDLE_FIELDS)).length).toBe(3 + 33);
  });

  it('reads back an empty chunk', () => {
    expectSame(decodeCandles(encodeCandles([])), []);
  });

  it('keeps msgpack for times out of order or fractional counts, and reads it back', () => {
    for (const c of [
      [...chunk.slice(CANDLE_FIELDS, 2 * CANDLE_FIELDS), ...chunk.slice(0, CANDLE_FIELDS)],
      candle(60, [1, 1, 1, 1], [1, 1, 1, 1], 1, 1, 1.5, 1),
      [1, 2, 3],
    ]) {
      const bytes = encodeCandles(c);
      expect(bytes.equals(pack(c))).toBe(true);
      expectSame(decodeCandles(bytes), c);
    }
  });

  it('reads a chunk written as msgpack (an older store)', () => {
    expectSame(decodeCandles(pack(chunk)), chunk);
  });

  it('holds a reference candle in its time, flags and offset, and reads it back as written', () => {
    // A 15m candle standing for the 10m candle 5 minutes into it, then a literal one opening at the reference's (0) close.
    const reference = [1_795_370_100, 1_795_370_400, 2, 0, 0, 0, 0, 0, 0, 0, 0, REFERENCE_TXNS, 0];
    const c = [...reference, ...candle(1_795_371_000, [0, 1, 0, 1], [2, 2, 2, 2], 3, 0, 1, 0)];
    const bytes = encodeCandles(c);
    expect(bytes[0]).toBe(0xc1);
    expectSame(decodeCandles(bytes), c);
    // header 2, count 1, then time 5, flags 2 and an offset of 5 minutes (1)
    expect(encodeCandles(reference).length).toBe(3 + 8);
  });
});

