import { QueryParser } from '../http/params.js';
import { networkOrNotFound } from './resolve.js';
import { dexListQuery } from './schemas.js';
/** Longest the network and DEX aggregates are reused. */
export const NETWORK_STATS_TTL_MS = 1000; // 1 s
const finite = (x) => (x - x === 0 ? x : 0);
class NetworkStats {
    ctx;
    atMs = -Infinity;
    chainVolumeUsd = new Float64Array(0);
    chainTxns = new Float64Array(0);
    chainPools = new Float64Array(0);
    dexVolumeUsd = new Float64Array(0);
    dexTxns = new Float64Array(0);
    dexPools = new Float64Array(0);
    /** GET /networks body as of the last refresh. */
    networksBody = Buffer.alloc(0);
    constructor(ctx) {
        this.ctx = ctx;
    }
    refresh() {
        const nowMs = performance.now();
        if (nowMs - this.atMs < NETWORK_STATS_TTL_MS)
            return;
        const { views, registry } = this.ctx;
        const chains = registry.networks.length;
        const dexes = registry.dexes.length;
        const cv = new Float64Array(chains);
        const ct = new Float64Array(chains);
        const cp = new Float64Array(chains);
        const dv = new Float64Array(dexes);
        const dt = new Float64Array(dexes);
        const dp = new Float64Array(dexes);
        const vol = views.winVolumeUsd[5 /* Win.H24 */];
        const txns = views.winTxns[5 /* Win.H24 */];
        const exists = views.poolExists;
        const n = views.poolCount;
        // Unlocked reads: an aggregate may mix a pool's state from either side of one update.
        for (let p = 0; p < n; p++) {
            if (exists[p] !== 1)
                continue;
            const c = views.poolChain[p];
            const d = views.poolDex[p];
            const v = finite(vol[p]);
            const t = finite(txns[p]);
            cv[c] = cv[c] + v;
            ct[c] = ct[c] + t;
            cp[c] = cp[c] + 1;
            dv[d] = dv[d] + v;
            dt[d] = dt[d] + t;
            dp[d] = dp[d] + 1;
        }
        this.chainVolumeUsd = cv;
        this.chainTxns = ct;
        this.chainPools = cp;
        this.dexVolumeUsd = dv;
        this.dexTxns = dt;
        this.dexPools = dp;
        const list = registry.networks.map((net) => ({
            id: net.id,
            display_name: net.displayName,
            volume_usd_24h: cv[net.index],
            txns_24h: ct[net.index],
            pools_count: cp[net.index],
        }));
        this.networksBody = Buffer.from(JSON.stringify(list), 'utf8');
        this.atMs = nowMs;
    }
}
export function createNetworkHandlers(ctx) {
    const stats = new NetworkStats(ctx);
    const dexQuery = new QueryParser(dexListQuery);
    return {
        networks() {
            stats.refresh();
            return stats.networksBody;
        },
        dexes(network, query) {
            const net = networkOrNotFound(ctx.registry, network);
            const { page, limit } = dexQuery.parse(query);
            stats.refresh();
            const vol = (i) => stats.dexVolumeUsd[i] ?? 0;
            const ranked = [...net.dexes].sort((a, b) => vol(b.index) - vol(a.index) || a.index - b.index);
            const total = ranked.length;
            const dexes = ranked.slice((page - 1) * limit, page * limit).map((d) => ({
                dex_id: d.id,
                dex_name: d.name,
                chain: net.id,
                protocol: d.protocol,
                volume_usd_24h: vol(d.index),
                txns_24h: stats.dexTxns[d.index] ?? 0,
                pools_count: stats.dexPools[d.index] ?? 0,
            }));
            const body = { dexes, page_info: { limit, page, total_items: total, total_pages: Math.ceil(total / limit) } };
            return Buffer.from(JSON.stringify(body), 'utf8');
        },
    };
}
//# sourceMappingURL=networks.js.map