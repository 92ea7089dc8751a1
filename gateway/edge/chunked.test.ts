import { describe, expect, it } from 'vitest';
import { ChunkedBody } from './chunked.js';

const b = (s: string) => Buffer.from(s, 'latin1');

describe('ChunkedBody', () => {
  it('finds the end of a body and what follows it', () => {
    const body = new ChunkedBody();
    const bytes = b('4\r\nabcd\r\n2;ext=1\r\nef\r\n0\r\nTrailer: x\r\n\r\nGET /next');
    expect(body.scan(bytes, 0)).toBe(bytes.indexOf('GET'));
    expect(body.done).toBe(true);
  });

  it('reads a body split anywhere, one byte at a time', () => {
    const text = 'a\r\n0123456789\r\n0\r\n\r\n';
    const body = new ChunkedBody();
    const ends = [...text].map((c) => body.scan(b(c), 0));
    expect(ends.slice(0, -1).every((e) => e === -1)).toBe(true);
    expect(ends[ends.length - 1]).toBe(1);
  });

  it('hands out the chunk data without the framing', () => {
    const out: string[] = [];
    const body = new ChunkedBody((buf, s, e) => out.push(buf.toString('latin1', s, e)));
    body.scan(b('3\r\nabc\r\n'), 0);
    body.scan(b('2\r\nde\r\n0\r\n\r\n'), 0);
    expect(out.join('')).toBe('abcde');
  });

  it.each(['zz\r\n', '-1\r\n', '1 1\r\n', '1\r\nabX', '3\nabc', 'fffffffffffff\r\n'])('refuses %j', (text) => {
    expect(() => new ChunkedBody().scan(b(text), 0)).toThrow();
  });
});
