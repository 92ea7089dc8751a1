/**
 * The chunked transfer coding (RFC 9112 section 7.1), read incrementally to find where a body ends:
 * chunk sizes and their CRLFs are checked, chunk data is skipped without being looked at. Used by
 * the HTTP front for request bodies (to find the next request, and to refuse bad framing) and for
 * uWS's answers (to know when one ends).
 */
/** A chunk-size line longer than this is refused (hex digits, extensions and CRLF). */
const MAX_SIZE_LINE_BYTES = 1024;
/** Hex digits of a chunk size at most: 2^48 bytes, far beyond any body the service takes. */
const MAX_SIZE_DIGITS = 12;
/** Trailer section after the last chunk, at most. */
const MAX_TRAILER_BYTES = 8 * 1024; // 8 KiB
export class ChunkedBody {
    onData;
    state = 0 /* State.Size */;
    /** Bytes of the current size line or trailer section seen so far (without its data). */
    line = '';
    remaining = 0;
    trailerBytes = 0;
    /** `onData` is given each run of chunk data as it passes (to remove the framing); none by default. */
    constructor(onData) {
        this.onData = onData;
    }
    get done() {
        return this.state === 4 /* State.Done */;
    }
    /**
     * Reads `buf` from `start`; returns the offset just past the body's end, or -1 when the whole
     * rest belongs to the body and more is expected. Throws an Error naming the framing fault.
     */
    scan(buf, start) {
        let i = start;
        while (i < buf.length) {
            switch (this.state) {
                case 0 /* State.Size */: {
                    const lf = buf.indexOf(0x0a, i);
                    const end = lf < 0 ? buf.length : lf + 1;
                    this.line += buf.toString('latin1', i, end);
                    i = end;
                    if (this.line.length > MAX_SIZE_LINE_BYTES)
                        throw new Error('chunk size line too long');
                    if (lf < 0)
                        break;
                    if (!this.line.endsWith('\r\n'))
                        throw new Error('chunk size line must end with CRLF');
                    const size = /^([0-9a-fA-F]+)(?:[ \t]*;[^\r\n]*)?\r\n$/.exec(this.line);
                    if (size === null || size[1].length > MAX_SIZE_DIGITS)
                        throw new Error('invalid chunk size');
                    this.line = '';
                    this.remaining = parseInt(size[1], 16);
                    this.state = this.remaining === 0 ? 3 /* State.Trailer */ : 1 /* State.Data */;
                    break;
                }
                case 1 /* State.Data */: {
                    const take = Math.min(this.remaining, buf.length - i);
                    this.onData?.(buf, i, i + take);
                    i += take;
                    this.remaining -= take;
                    if (this.remaining === 0)
                        this.state = 2 /* State.DataEnd */;
                    break;
                }
                case 2 /* State.DataEnd */: {
                    // CR then LF after the data, possibly split between reads.
                    const c = buf[i];
                    i++;
                    this.line += String.fromCharCode(c);
                    if (this.line === '\r')
                        break;
                    if (this.line !== '\r\n')
                        throw new Error('chunk data must be followed by CRLF');
                    this.line = '';
                    this.state = 0 /* State.Size */;
                    break;
                }
                case 3 /* State.Trailer */: {
                    const lf = buf.indexOf(0x0a, i);
                    const end = lf < 0 ? buf.length : lf + 1;
                    this.line += buf.toString('latin1', i, end);
                    this.trailerBytes += end - i;
                    i = end;
                    if (this.trailerBytes > MAX_TRAILER_BYTES)
                        throw new Error('trailer section too large');
                    if (lf < 0)
                        break;
                    if (!this.line.endsWith('\r\n'))
                        throw new Error('trailer lines must end with CRLF');
                    const empty = this.line === '\r\n';
                    this.line = '';
                    if (empty) {
                        this.state = 4 /* State.Done */;
                        return i;
                    }
                    break;
                }
                case 4 /* State.Done */:
                    return i;
            }
        }
        return -1;
    }
}
//# sourceMappingURL=chunked.js.map