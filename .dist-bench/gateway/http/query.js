/**
 * Raw query strings to the values a schema looks at. Only the names asked for are decoded; the
 * first occurrence of a name wins; an empty value counts as absent; unknown names are ignored.
 */
import { invalidParameter } from '../errors.js';
/** Longest accepted parameter value, in characters after decoding. */
export const MAX_PARAM_CHARS = 512;
function decode(text) {
    if (text.indexOf('%') < 0 && text.indexOf('+') < 0)
        return text;
    try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
    }
    catch {
        return null;
    }
}
export function readQuery(raw, names) {
    const found = {};
    const seen = new Set();
    let at = 0;
    while (at <= raw.length) {
        let end = raw.indexOf('&', at);
        if (end < 0)
            end = raw.length;
        const eq = raw.indexOf('=', at);
        const split = eq >= 0 && eq < end ? eq : end;
        const name = decode(raw.slice(at, split));
        at = end + 1;
        if (name === null || !names.has(name) || seen.has(name))
            continue;
        seen.add(name);
        const rawValue = split < end ? raw.slice(split + 1, end) : '';
        if (rawValue.length > MAX_PARAM_CHARS * 3)
            throw invalidParameter(name, `must be at most ${MAX_PARAM_CHARS} characters`);
        const value = decode(rawValue);
        if (value === null)
            throw invalidParameter(name, 'is not valid percent-encoding');
        if (value.length > MAX_PARAM_CHARS)
            throw invalidParameter(name, `must be at most ${MAX_PARAM_CHARS} characters`);
        if (value !== '')
            found[name] = value;
    }
    return found;
}
//# sourceMappingURL=query.js.map