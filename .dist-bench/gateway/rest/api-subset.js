/**
 * The REST subset for agent platforms (api.md, "REST subset at {mcp_url}"; decisions §5), served on
 * the agent host only. Each of its 12 operations is a rewrite of the request to a main-interface
 * path and query, answered by the main router; nothing here reads data itself.
 *
 *   /api/networks                                        /networks, rows cut to {id, display_name}
 *   /api/networks/{n}/pools/search                       /networks/{n}/pools/search
 *   /api/networks/{n}/dexes                              /networks/{n}/dexes
 *   /api/networks/{n}/dexes/{dex}/pools                  /networks/{n}/pools/search?dex_name={dex}
 *   /api/networks/{n}/pools/{pool}                       /networks/{n}/pools/{pool}
 *   /api/networks/{n}/pools/{pool}/ohlcv                 /networks/{n}/pools/{pool}/ohlcv
 *   /api/networks/{n}/pools/{pool}/transactions          /networks/{n}/pools/{pool}/transactions
 *   /api/networks/{n}/tokens/{addr}                      /networks/{n}/tokens/{addr}
 *   /api/networks/{n}/tokens/search                      /networks/{n}/tokens/search
 *   /api/networks/{n}/multi/prices                       /networks/{n}/multi/prices
 *   /api/search                                          /search
 *   /api/stats                                           /stats
 *
 * Network synonyms (`eth`, `sol`, ...) are resolved here and only here, whatever their case; the
 * main interface keeps answering 404 for them.
 */
import { readQuery } from '../http/query.js';
/** Short names of popular networks accepted in the `{n}` segment of the subset (lower case). */
export const NETWORK_SYNONYMS = Object.freeze({
    eth: 'ethereum',
    sol: 'solana',
    bnb: 'bsc',
    arb: 'arbitrum',
    op: 'optimism',
    matic: 'polygon',
    poly: 'polygon',
    avax: 'avalanche',
});
/** Legacy short `order_by` names of the DEX pools operation, to the pool search names. */
export const LEGACY_ORDER_BY = Object.freeze({
    volume_usd: 'volume_usd_24h',
    liquidity: 'liquidity_usd',
    txns: 'txns_24h',
    price: 'price_usd',
});
/** Parameters the DEX pools operation reads (aliases included). */
const DEX_POOLS_PARAMS = new Set(['cursor', 'limit', 'order_by', 'sort_by', 'sort', 'sort_dir']);
/** Percent-decoded segment, or null when malformed. */
function decoded(raw) {
    if (raw.indexOf('%') < 0)
        return raw;
    try {
        return decodeURIComponent(raw);
    }
    catch {
        return null;
    }
}
/** The canonical network id a `{n}` segment of the subset names, still percent-encoded when it is no synonym. */
export function resolveNetworkSegment(raw) {
    const text = decoded(raw);
    if (text === null)
        return raw;
    const canonical = NETWORK_SYNONYMS[text.toLowerCase()];
    return canonical === undefined ? raw : encodeURIComponent(canonical);
}
/** `order_by` of the DEX pools operation with legacy short names made current. */
export function normalizeOrderBy(orderBy) {
    return LEGACY_ORDER_BY[orderBy] ?? orderBy;
}
/** The pool search query for `GET /api/networks/{n}/dexes/{dex}/pools` (`dex` already decoded). */
export function dexPoolsQuery(dex, query) {
    const q = readQuery(query, DEX_POOLS_PARAMS);
    const parts = [`dex_name=${encodeURIComponent(dex)}`];
    const add = (name, value) => {
        if (value !== undefined)
            parts.push(`${name}=${encodeURIComponent(value)}`);
    };
    add('cursor', q['cursor']);
    add('limit', q['limit']);
    const orderBy = q['order_by'] ?? q['sort_by'];
    add('order_by', orderBy === undefined ? undefined : normalizeOrderBy(orderBy));
    add('sort', q['sort'] ?? q['sort_dir']);
    return parts.join('&');
}
/** GET /networks rows cut to {id, display_name}; the last body seen is reused while it is unchanged. */
function networksProjection() {
    let from = null;
    let to = Buffer.alloc(0);
    return (body) => {
        if (body === from)
            return to;
        const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
        const rows = JSON.parse(text);
        to = Buffer.from(JSON.stringify(rows.map((r) => ({ id: r.id, display_name: r.display_name }))), 'utf8');
        from = body;
        return to;
    };
}
/** The subset's rewrite; null for any path that is not one of its 12 operations. */
export function createApiSubset() {
    const networks = networksProjection();
    return (path, query) => {
        if (!path.startsWith('/api/'))
            return null;
        const s = path.slice(4).split('/'); // ['', ...segments after /api]
        if (s.length === 2) {
            if (s[1] === 'networks')
                return { path: '/networks', query: '', project: networks };
            if (s[1] === 'search')
                return { path: '/search', query };
            if (s[1] === 'stats')
                return { path: '/stats', query };
            return null;
        }
        if (s[1] !== 'networks' || s.length < 4 || s.length > 6 || s[2] === '')
            return null;
        const n = resolveNetworkSegment(s[2]);
        const base = `/networks/${n}`;
        const a = s[3];
        const b = s[4];
        if (s.length === 4)
            return a === 'dexes' ? { path: `${base}/dexes`, query } : null;
        if (b === '')
            return null;
        if (s.length === 5) {
            if (a === 'pools' || a === 'tokens')
                return { path: `${base}/${a}/${b}`, query }; // details or search
            if (a === 'multi' && b === 'prices')
                return { path: `${base}/multi/prices`, query };
            return null;
        }
        const leaf = s[5];
        if (a === 'pools' && b !== 'search' && (leaf === 'ohlcv' || leaf === 'transactions'))
            return { path: `${base}/pools/${b}/${leaf}`, query };
        if (a === 'dexes' && leaf === 'pools') {
            const dex = decoded(b);
            if (dex === null)
                return null;
            return { path: `${base}/pools/search`, query: dexPoolsQuery(dex, query) };
        }
        return null;
    };
}
//# sourceMappingURL=api-subset.js.map