/** The explorer's number formatting (gateway/explorer/app/format.ts): what a reader sees for the figures the service sends. */
import { describe, expect, it } from 'vitest';
import * as fmt from '../gateway/explorer/app/format.js';

describe('explorer number formatting', () => {
  it('writes prices with significant digits, tiny ones with a subscript count of zeros', () => {
    expect(fmt.price(3302.907442479763)).toBe('3,302.91');
    expect(fmt.price(188.80091956366778)).toBe('188.8');
    expect(fmt.price(1.0181)).toBe('1.0181');
    expect(fmt.price(0.00030276355526608946)).toBe('0.0003028');
    expect(fmt.price(0.0000012345)).toBe('0.0₅1235');
    expect(fmt.price('0.000000000123')).toBe('0.0₉123');
    expect(fmt.price(0)).toBe('0');
    expect(fmt.price(null)).toBe('—');
    expect(fmt.usdPrice(93650.39)).toBe('$93,650.39');
    expect(fmt.usdPrice(-2.5)).toBe('-$2.5');
  });

  it('writes USD with separators, compact on request, and counts and amounts', () => {
    expect(fmt.usd(92749663.06706399)).toBe('$92,749,663');
    expect(fmt.usd(92749663.06706399, true)).toBe('$92.75M');
    expect(fmt.usd(47.4609)).toBe('$47.46');
    expect(fmt.usd(0.004)).toBe('<$0.01');
    expect(fmt.usd(-5543.04)).toBe('-$5,543');
    expect(fmt.count(14289)).toBe('14,289');
    expect(fmt.amount(0.0139174123)).toBe('0.0139174');
    expect(fmt.amount(48656668.2)).toBe('48,656,668');
    expect(fmt.amount(12345.678)).toBe('12,345.7');
  });

  it('writes changes with their sign and relative times', () => {
    expect(fmt.percent(0.6737269006280133)).toBe('+0.67 %');
    expect(fmt.percent(-12.345)).toBe('−12.3 %');
    expect(fmt.percent(0)).toBe('0.00 %');
    expect(fmt.trend(-1)).toBe('down');
    expect(fmt.ago('2026-11-27T09:43:00Z', Date.parse('2026-11-27T09:43:05Z') / 1000)).toBe('5 s ago');
    expect(fmt.ago(0, 7200)).toBe('2 h ago');
    expect(fmt.ago(0, 3 * 86_400)).toBe('3 d ago');
  });

  it('applies decimals to raw stream amounts, beyond 2^53 too', () => {
    expect(fmt.rawToNumber('-241212641549780736', 18)).toBeCloseTo(-0.241212641549780736, 15);
    expect(fmt.rawToNumber(796925862, 6)).toBe(796.925862);
    expect(fmt.rawToNumber('5', 18)).toBe(5e-18);
    expect(fmt.rawToNumber(12, 0)).toBe(12);
  });
});
