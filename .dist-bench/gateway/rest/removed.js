/**
 * Routes removed on 2026-06-30: they answer 410 `endpoint_removed` naming the replacement, whatever
 * the network, DEX or token segment holds (the whole route is gone, so nothing is looked up).
 */
import { ApiError, echoed } from '../errors.js';
const REMOVED = [
    { pattern: ['pools'], replacement: '/pools/search', hint: () => 'GET /pools/search' },
    { pattern: ['networks', '*', 'pools'], replacement: '/networks/{network}/pools/search', hint: (s) => `GET /networks/${s[1]}/pools/search` },
    { pattern: ['networks', '*', 'pools', 'filter'], replacement: '/networks/{network}/pools/search', hint: (s) => `GET /networks/${s[1]}/pools/search` },
    {
        pattern: ['networks', '*', 'dexes', '*', 'pools'],
        replacement: '/networks/{network}/pools/search',
        hint: (s) => `GET /networks/${s[1]}/pools/search?dex_name=${s[3]}`,
    },
    {
        pattern: ['networks', '*', 'tokens', '*', 'pools'],
        replacement: '/networks/{network}/pools/search',
        hint: (s) => `GET /networks/${s[1]}/pools/search?token_address=${s[3]}`,
    },
    { pattern: ['networks', '*', 'tokens', 'filter'], replacement: '/networks/{network}/tokens/search', hint: (s) => `GET /networks/${s[1]}/tokens/search` },
    { pattern: ['networks', '*', 'tokens', 'top'], replacement: '/networks/{network}/tokens/search', hint: (s) => `GET /networks/${s[1]}/tokens/search` },
];
/** `path` is the URL split on '/', so path[0] is the empty text before the leading slash. */
function matches(pattern, path) {
    if (pattern.length !== path.length - 1)
        return false;
    for (let i = 0; i < pattern.length; i++)
        if (pattern[i] !== '*' && pattern[i] !== path[i + 1])
            return false;
    return true;
}
/** The 410 answer for a removed route, or null when `path` (the URL split on '/') is not one. */
export function removedRoute(path) {
    for (const r of REMOVED) {
        if (!matches(r.pattern, path))
            continue;
        const echo = path.slice(1).map(echoed);
        return new ApiError('endpoint_removed', `this endpoint was removed on 2026-06-30; use ${r.hint(echo)}`, { code: 410, replacement: r.replacement });
    }
    return null;
}
//# sourceMappingURL=removed.js.map