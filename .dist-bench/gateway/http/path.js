import { notFound } from '../errors.js';
/** A percent-decoded path segment; a malformed escape names no record of its kind (404). */
export function segment(raw, kind) {
    if (raw.indexOf('%') < 0)
        return raw;
    try {
        return decodeURIComponent(raw);
    }
    catch {
        throw notFound(kind, raw);
    }
}
//# sourceMappingURL=path.js.map