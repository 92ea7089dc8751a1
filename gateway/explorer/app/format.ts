/**
 * Numbers for people: prices with significant digits (tiny ones as 0.0₆1234), USD with thousands
 * separators (compact in summaries: $92.7M), percentages with their sign, relative times.
 */

const SUBSCRIPT = '₀₁₂₃₄₅₆₇₈₉';
const grouped = new Map<number, Intl.NumberFormat>();
function groupedFormat(fractionDigits: number): Intl.NumberFormat {
  let f = grouped.get(fractionDigits);
  if (f === undefined) {
    f = new Intl.NumberFormat('en-US', { minimumFractionDigits: fractionDigits, maximumFractionDigits: fractionDigits });
    grouped.set(fractionDigits, f);
  }
  return f;
}
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });

/** A number as given by the service (JSON number or decimal text). */
export function toNumber(x: number | string | null | undefined): number {
  if (x === null || x === undefined || x === '') return NaN;
  return typeof x === 'number' ? x : Number(x);
}

/** `x` with `digits` significant digits, trailing zeros dropped, thousands grouped. */
function significant(x: number, digits: number): string {
  const a = Math.abs(x);
  const magnitude = Math.floor(Math.log10(a));
  const decimals = Math.max(0, Math.min(20, digits - 1 - magnitude));
  return groupedFormat(decimals).format(x).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

/** A price: 3,302.91, 1.0181, 0.0003028, 0.0₆1234 (six zeros after the point, then the digits). */
export function price(value: number | string | null | undefined): string {
  const x = toNumber(value);
  if (!Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  if (a === 0) return '0';
  if (a >= 1e15) return x.toExponential(3);
  if (a >= 1000) return groupedFormat(2).format(x);
  if (a >= 1e-4) return significant(x, a >= 1 ? 5 : 4);
  const exponent = Math.floor(Math.log10(a));
  const zeros = -exponent - 1;
  const digits = (a / 10 ** exponent).toFixed(3).replace('.', '').replace(/0+$/, '');
  const sub = String(zeros)
    .split('')
    .map((d) => SUBSCRIPT[Number(d)])
    .join('');
  return `${x < 0 ? '-' : ''}0.0${sub}${digits}`;
}

/** A USD price: $3,302.91. */
export function usdPrice(value: number | string | null | undefined): string {
  const p = price(value);
  return p === '—' ? p : p.startsWith('-') ? `-$${p.slice(1)}` : `$${p}`;
}

/** A USD amount with separators: $92,749,663 (cents below $1,000), or compact: $92.75M. */
export function usd(value: number | string | null | undefined, short = false): string {
  const x = toNumber(value);
  if (!Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  const sign = x < 0 ? '-' : '';
  if (short && a >= 10_000) return `${sign}$${compact.format(a)}`;
  if (a > 0 && a < 0.01) return `${sign}<$0.01`;
  return `${sign}$${groupedFormat(a >= 1000 ? 0 : 2).format(a)}`;
}

/** A count with separators: 14,289. */
export function count(value: number | string | null | undefined): string {
  const x = toNumber(value);
  return Number.isFinite(x) ? groupedFormat(0).format(x) : '—';
}

/** A token amount: up to 6 significant digits below a million, grouped whole units above. */
export function amount(value: number | string | null | undefined): string {
  const x = toNumber(value);
  if (!Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  if (a === 0) return '0';
  if (a >= 1e6) return groupedFormat(0).format(x);
  if (a < 1e-6) return price(x);
  return significant(x, 6);
}

/** A change in percent with its sign: +1.23 %, −0.45 %. */
export function percent(value: number | string | null | undefined): string {
  const x = toNumber(value);
  if (!Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  const text = a >= 1000 ? groupedFormat(0).format(a) : a >= 10 ? a.toFixed(1) : a.toFixed(2);
  return `${x > 0 ? '+' : x < 0 ? '−' : ''}${text} %`;
}

/** 'up', 'down' or 'flat': the class a change is shown with (the sign is always written too). */
export function trend(value: number | string | null | undefined): string {
  const x = toNumber(value);
  return !Number.isFinite(x) || x === 0 ? 'flat' : x > 0 ? 'up' : 'down';
}

/** Unix seconds of an RFC 3339 time or Unix seconds. */
export function seconds(time: string | number): number {
  return typeof time === 'number' ? time : Date.parse(time) / 1000;
}

/** How long ago: 5 s ago, 3 min ago, 2 h ago, 4 d ago, 1.2 y ago. */
export function ago(time: string | number, nowSeconds = Date.now() / 1000): string {
  const s = Math.max(0, nowSeconds - seconds(time));
  if (s < 60) return `${Math.floor(s)} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 365 * 86_400) return `${Math.floor(s / 86_400)} d ago`;
  return `${(s / (365 * 86_400)).toFixed(1)} y ago`;
}

/** A time as the reader's clock shows it: 2026-11-27 09:43:00. */
export function dateTime(time: string | number): string {
  const d = new Date(seconds(time) * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** 0x1234…abcd. */
export function shortAddress(address: string): string {
  return address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** A raw integer amount (number, or text beyond 2^53) with `decimals` applied, as a number. */
export function rawToNumber(raw: number | string, decimals: number): number {
  const text = String(raw);
  const negative = text.startsWith('-');
  const digits = negative ? text.slice(1) : text;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals);
  const n = Number(`${whole}.${fraction || '0'}`);
  return negative ? -n : n;
}
