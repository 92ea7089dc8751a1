/**
 * A response body assembled as bytes in one reused buffer: fixed fragments copied in, numbers
 * written as ASCII, so a large body costs neither string concatenation nor a UTF-8 pass at the
 * end. `take()` copies the body out; the writer is then reused.
 */
export class BodyWriter {
    buf;
    len = 0;
    constructor(initialBytes = 64 * 1024) {
        this.buf = Buffer.allocUnsafe(initialBytes);
    }
    reset() {
        this.len = 0;
        return this;
    }
    /** Text known to be ASCII (numbers, keys, punctuation). */
    ascii(s) {
        this.room(s.length);
        this.len += this.buf.write(s, this.len, 'latin1');
        return this;
    }
    /** Any text, UTF-8 encoded. */
    text(s) {
        this.room(s.length * 3);
        this.len += this.buf.write(s, this.len, 'utf8');
        return this;
    }
    bytes(b) {
        this.room(b.length);
        this.buf.set(b, this.len);
        this.len += b.length;
        return this;
    }
    /** A copy of the body written since reset(). */
    take() {
        const out = Buffer.allocUnsafe(this.len);
        this.buf.copy(out, 0, 0, this.len);
        return out;
    }
    room(n) {
        if (this.len + n <= this.buf.length)
            return;
        const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
        this.buf.copy(grown, 0, 0, this.len);
        this.buf = grown;
    }
}
//# sourceMappingURL=body-writer.js.map