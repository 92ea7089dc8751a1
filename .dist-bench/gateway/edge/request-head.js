/**
 * The request head as the HTTP front reads it (RFC 9112 sections 2 to 7): the request line, the
 * header fields and the body framing, checked before anything reaches uWS. uWS v20.30 stays silent
 * on what it cannot parse (HTTP/1.0, a missing Host, more than 48 header lines, heads it receives
 * in pieces over 4 KB); the front answers those with a status or passes them on in a form uWS takes.
 */
import { ApiError } from '../errors.js';
/** Longest request head accepted (request line, header fields and the blank line). */
export const MAX_HEAD_BYTES = 16 * 1024; // 16 KiB
/** Most header lines uWS reads in one request (its table holds the request line, 48 fields and an end mark). */
export const MAX_HEADER_LINES = 48;
/** Methods uWS routes; any other token is answered 501. */
export const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const badRequest = (message) => new ApiError('bad_request', `malformed HTTP request: ${message}`);
/** RFC 9110 token characters (method and field names). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A request target in origin form (or `*` for OPTIONS): visible ASCII only. */
const TARGET = /^(?:\/[\x21-\x7e]*|\*)$/;
const VERSION = /^HTTP\/(\d)\.(\d)$/;
/** Field values: visible characters, spaces, tabs and obs-text; never CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const DIGITS = /^\d{1,15}$/;
/**
 * Checks what has arrived of a head that is not complete yet, so garbage is answered at once
 * rather than after a timeout. Throws the answer; returns when more bytes may still make it valid.
 */
export function checkPartialHead(partial) {
    if (partial.length >= MAX_HEAD_BYTES)
        throw new ApiError('header_fields_too_large', `request head over ${MAX_HEAD_BYTES} bytes`);
    // The method: token characters up to the first space.
    const n = Math.min(partial.length, 32);
    for (let i = 0; i < n; i++) {
        const c = partial[i];
        if (c === 0x20) {
            if (i === 0)
                throw badRequest('the request line must begin with a method');
            break;
        }
        if (c === 0x0d || c === 0x0a)
            throw badRequest(i === 0 ? 'empty request line' : 'the request line has no target');
        if (!isTokenByte(c))
            throw badRequest('the method is not a token');
        if (i === 31)
            throw new ApiError('not_implemented', 'method not implemented');
    }
    const lf = partial.indexOf(0x0a);
    if (lf >= 0 && (lf === 0 || partial[lf - 1] !== 0x0d))
        throw badRequest('lines must end with CRLF');
}
function isTokenByte(c) {
    return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c));
}
/**
 * Parses a complete head (`head` ends with the blank line's CRLF CRLF). Throws an ApiError with
 * the status to answer: 400 malformed, 431 too many or too large fields, 501 unknown method or
 * transfer coding, 505 a major version other than 1. `hostName` is put in a Host field an HTTP/1.0
 * request lacks.
 */
export function parseRequestHead(head, hostName) {
    if (head.length > MAX_HEAD_BYTES)
        throw new ApiError('header_fields_too_large', `request head over ${MAX_HEAD_BYTES} bytes`);
    const text = head.toString('latin1', 0, head.length - 4);
    const lines = text.split('\r\n');
    if (lines.some((l) => l.includes('\n') || l.includes('\r')))
        throw badRequest('lines must end with CRLF');
    const requestLine = lines[0];
    const parts = requestLine.split(' ');
    if (parts.length !== 3)
        throw badRequest('the request line must be "METHOD target HTTP/1.1", single spaces');
    const [method, target, version] = parts;
    if (!TOKEN.test(method))
        throw badRequest('the method is not a token');
    if (!KNOWN_METHODS.has(method))
        throw new ApiError('not_implemented', `method ${method.slice(0, 32)} not implemented`);
    const v = VERSION.exec(version);
    if (v === null)
        throw badRequest('the request line must end with the HTTP version');
    if (v[1] !== '1')
        throw new ApiError('http_version_not_supported', `HTTP/${v[1]}.${v[2]} not supported: use HTTP/1.1`);
    if (!TARGET.test(target) || (target === '*' && method !== 'OPTIONS'))
        throw badRequest('the request target must be a path beginning with /');
    const ancient = v[2] === '0';
    const fields = lines.length - 1;
    if (fields > MAX_HEADER_LINES)
        throw new ApiError('header_fields_too_large', `more than ${MAX_HEADER_LINES} header fields`);
    let hosts = 0;
    let contentLength = null;
    let transferEncoding = null;
    let close = ancient;
    for (let i = 1; i < lines.length; i++) {
        const line = lines[i];
        if (line.length === 0 || line[0] === ' ' || line[0] === '\t')
            throw badRequest('folded or empty header line');
        const colon = line.indexOf(':');
        if (colon <= 0)
            throw badRequest('a header line has no field name');
        const name = line.slice(0, colon);
        if (!TOKEN.test(name))
            throw badRequest('a header field name is not a token (no space before the colon)');
        const value = line.slice(colon + 1).trim();
        if (!FIELD_VALUE.test(value))
            throw badRequest('a header field value holds a control character');
        switch (name.toLowerCase()) {
            case 'host':
                hosts++;
                break;
            case 'content-length':
                for (const item of value.split(',')) {
                    const it = item.trim();
                    if (!DIGITS.test(it))
                        throw badRequest('Content-Length must be a decimal number');
                    if (contentLength !== null && contentLength !== it)
                        throw badRequest('conflicting Content-Length values');
                    contentLength = it;
                }
                break;
            case 'transfer-encoding':
                transferEncoding = transferEncoding === null ? value : `${transferEncoding}, ${value}`;
                break;
            case 'connection': {
                const tokens = value.toLowerCase().split(',').map((t) => t.trim());
                if (tokens.includes('close'))
                    close = true;
                else if (ancient && tokens.includes('keep-alive'))
                    close = ancient;
                break;
            }
        }
    }
    if (!ancient && hosts !== 1)
        throw badRequest(hosts === 0 ? 'HTTP/1.1 requests need a Host header' : 'more than one Host header');
    if (ancient && hosts > 1)
        throw badRequest('more than one Host header');
    let chunked = false;
    if (transferEncoding !== null) {
        if (ancient)
            throw badRequest('Transfer-Encoding needs HTTP/1.1');
        if (contentLength !== null)
            throw badRequest('both Transfer-Encoding and Content-Length');
        const codings = transferEncoding.toLowerCase().split(',').map((t) => t.trim());
        if (codings.length !== 1 || codings[0] !== 'chunked') {
            if (codings[codings.length - 1] !== 'chunked')
                throw badRequest('chunked must be the final transfer coding');
            throw new ApiError('not_implemented', 'transfer codings other than chunked are not implemented');
        }
        chunked = true;
    }
    let forward = head;
    if (ancient) {
        // uWS reads HTTP/1.1 only: the same request as HTTP/1.1 with a Host; the front closes after the answer.
        const rest = lines.slice(1);
        if (hosts === 0)
            rest.push(`Host: ${hostName}`);
        forward = Buffer.from(`${method} ${target} HTTP/1.1\r\n${rest.map((l) => `${l}\r\n`).join('')}\r\n`, 'latin1');
    }
    return { method, ancient, close, contentLength: contentLength === null ? 0 : Number(contentLength), chunked, forward };
}
//# sourceMappingURL=request-head.js.map