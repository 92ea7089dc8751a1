import { str, timeOrNull } from '../http/json.js';
export class PoolStatics {
    registry;
    byPool = [];
    constructor(registry) {
        this.registry = registry;
    }
    get(p) {
        return this.byPool[p] ?? (this.byPool[p] = this.render(p));
    }
    render(p) {
        const reg = this.registry;
        const pool = reg.pools[p];
        const dex = reg.dexes[pool.dex];
        const chain = str(reg.networks[pool.chain].id);
        const t0 = reg.tokens[pool.token0];
        const t1 = reg.tokens[pool.token1];
        const full = (t) => `{"id":${str(t.address)},"name":${str(t.name)},"symbol":${str(t.symbol)},"chain":${chain},"decimals":${t.decimals},"added_at":${timeOrNull(t.addedAt)}}`;
        const short = (t) => `{"id":${str(t.address)},"name":${str(t.name)},"symbol":${str(t.symbol)},"chain":${chain}}`;
        const created = `"created_at":${timeOrNull(pool.createdAt)},"created_at_block_number":${pool.createdBlock},"fee":${pool.feePpm}`;
        const head = `{"id":${str(pool.address)},"chain":${chain},"dex_id":${str(dex.id)},"dex_name":${str(dex.name)},"factory_id":${str(dex.factory)},${created},"tokens":`;
        return {
            detailsHead: [`${head}[${full(t0)},${full(t1)}],`, `${head}[${full(t1)},${full(t0)}],`],
            tokenIds: [str(t0.address), str(t1.address)],
            rowHead: `{"id":${str(pool.address)},"dex_id":${str(dex.id)},"dex_name":${str(dex.name)},"chain":${chain},`,
            rowTail: `${created},"tokens":[${short(t0)},${short(t1)}]}`,
            fullRowTail: `${created},"tokens":[${full(t0)},${full(t1)}]}`,
        };
    }
}
//# sourceMappingURL=pool-static.js.map