import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { checkPartialHead, MAX_HEADER_LINES, parseRequestHead } from './request-head.js';

const head = (text: string) => Buffer.from(text, 'latin1');

function refusal(fn: () => unknown): { status: number; code: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, code: err.code };
    throw err;
  }
  throw new Error('not refused');
}

describe('parseRequestHead', () => {
  it('passes an HTTP/1.1 head on unchanged, with its body framing', () => {
    const h = head('POST /json-rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n');
    const r = parseRequestHead(h, 'h:1');
    expect(r).toMatchObject({ method: 'POST', ancient: false, close: false, contentLength: 12, chunked: false });
    expect(r.forward).toBe(h);
  });

  it('forwards HTTP/1.0 as HTTP/1.1 with a Host, closing after the answer', () => {
    const r = parseRequestHead(head('GET /health HTTP/1.0\r\nAccept: */*\r\n\r\n'), '127.0.0.1:8080');
    expect(r).toMatchObject({ ancient: true, close: true });
    expect(r.forward.toString('latin1')).toBe('GET /health HTTP/1.1\r\nAccept: */*\r\nHost: 127.0.0.1:8080\r\n\r\n');
  });

  it('keeps an HTTP/1.0 Host and reads Connection: close on HTTP/1.1', () => {
    expect(parseRequestHead(head('GET / HTTP/1.0\r\nHost: a\r\n\r\n'), 'b').forward.toString()).toBe('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    expect(parseRequestHead(head('GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, close\r\n\r\n'), 'b').close).toBe(true);
  });

  it('accepts repeated equal Content-Length values and chunked alone', () => {
    expect(parseRequestHead(head('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\n'), 'b').contentLength).toBe(5);
    expect(parseRequestHead(head('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n'), 'b').chunked).toBe(true);
  });

  it.each([
    ['GET / HTTP/1.1\r\n\r\n', 400, 'bad_request'],
    ['GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400, 'bad_request'],
    ['GET  / HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'bad_request'],
    ['GET / HTTP/1.1 \r\nHost: a\r\n\r\n', 400, 'bad_request'],
    ['GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'bad_request'],
    ['GET * HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'bad_request'],
    ['GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  2\r\n\r\n', 400, 'bad_request'],
    ['GET / HTTP/1.1\r\nHost: a\r\nX\r\n\r\n', 400, 'bad_request'],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 400, 'bad_request'],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n', 400, 'bad_request'],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n', 400, 'bad_request'],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n', 400, 'bad_request'],
    ['POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n', 400, 'bad_request'],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501, 'not_implemented'],
    ['MKCOL / HTTP/1.1\r\nHost: a\r\n\r\n', 501, 'not_implemented'],
    ['GET / HTTP/2.0\r\nHost: a\r\n\r\n', 505, 'http_version_not_supported'],
    [`GET / HTTP/1.1\r\nHost: a\r\n${'X: 1\r\n'.repeat(MAX_HEADER_LINES)}\r\n`, 431, 'header_fields_too_large'],
  ])('refuses %j', (text, status, code) => {
    expect(refusal(() => parseRequestHead(head(text), 'b'))).toEqual({ status, code });
  });

  it(`accepts ${MAX_HEADER_LINES} header lines`, () => {
    expect(parseRequestHead(head(`GET / HTTP/1.1\r\nHost: a\r\n${'X: 1\r\n'.repeat(MAX_HEADER_LINES - 1)}\r\n`), 'b').method).toBe('GET');
  });
});

describe('checkPartialHead', () => {
  it('lets a valid beginning wait for more', () => {
    expect(() => checkPartialHead(head('GET /health HTTP/1.1\r\nHo'))).not.toThrow();
    expect(() => checkPartialHead(head('PO'))).not.toThrow();
  });

  it('refuses what no more bytes can make valid', () => {
    expect(refusal(() => checkPartialHead(head('\u0016\u0003\u0001')))).toEqual({ status: 400, code: 'bad_request' });
    expect(refusal(() => checkPartialHead(head('GET / HTTP/1.1\nHost')))).toEqual({ status: 400, code: 'bad_request' });
    expect(refusal(() => checkPartialHead(head(' GET')))).toEqual({ status: 400, code: 'bad_request' });
    expect(refusal(() => checkPartialHead(Buffer.alloc(16 * 1024, 0x41)))).toEqual({ status: 431, code: 'header_fields_too_large' });
  });
});
