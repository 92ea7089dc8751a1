/**
 * Request ids for log lines: a per-process prefix and a sequence number, `k3x9q2-1f`. Counting is a
 * number increment per request; the text is made only when a line is written.
 */
import { randomBytes } from 'node:crypto';
const PREFIX = `${randomBytes(4).readUInt32BE(0).toString(36)}-`;
let seq = 0;
/** The next request's sequence number (this thread). */
export function nextRequestSeq() {
    return ++seq;
}
export function requestId(n) {
    return `${PREFIX}${n.toString(36)}`;
}
//# sourceMappingURL=request-id.js.map