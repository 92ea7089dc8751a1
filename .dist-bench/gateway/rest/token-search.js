import { createPoolState, readPool } from '../../engine/state/read.js';
import { num, str, timeOrNull } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { RangeFilters, cursorOf, cursorSearch, envelopeEnd, timeBound } from './search.js';
import { SEARCH_LIMIT_MAX } from './schemas.js';
import { TOKEN_ORDER_BY, globalTokenSearchQuery, tokenSearchQuery } from './schemas-search.js';
import { randomBytes } from 'node:crypto';
import { RANKING_TTL_MS } from '../../engine/search/rank-index.js';
import { TopK } from '../../engine/search/top-k.js';
/** Memory for frozen token rankings (8 bytes per token each). */
const TOKEN_RANKINGS_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB
const FIGURE_COUNT = 9;
const finite = (x) => (x - x === 0 ? x : 0);
/** Computes one token's figures into `out`, reusing its buffers. */
export class TokenFigures {
    out = new Float64Array(FIGURE_COUNT);
    ctx;
    state = createPoolState();
    /** total_supply / 10^decimals per token id, computed on first use (records never change). */
    supply = [];
    constructor(ctx) {
        this.ctx = ctx;
    }
    /** Fills `out` for token t; the price change (a ring scan when the token is its route pool's token 1) only with `change`. */
    compute(token, change) {
        const { views, registry } = this.ctx;
        const t = token.id;
        const out = this.out;
        const pools = registry.tokenPools[t] ?? [];
        const v24 = views.winVolumeUsd[5 /* Win.H24 */];
        const v7 = views.winVolumeUsd[7 /* Win.D7 */];
        const v30 = views.winVolumeUsd[8 /* Win.D30 */];
        const tx = views.winTxns[5 /* Win.H24 */];
        const liq = views.liquidityUsd;
        let a = 0;
        let b = 0;
        let c = 0;
        let d = 0;
        let e = 0;
        for (let i = 0; i < pools.length; i++) {
            const p = pools[i];
            a += finite(v24[p]);
            b += finite(v7[p]);
            c += finite(v30[p]);
            d += finite(liq[p]);
            e += finite(tx[p]);
        }
        const price = finite(views.tokenPriceUsd[t]);
        let scale = this.supply[t];
        if (scale === undefined)
            scale = this.supply[t] = Number(BigInt(token.totalSupply)) / 10 ** token.decimals;
        out[0 /* TokenFigure.VolumeUsd24h */] = a;
        out[1 /* TokenFigure.VolumeUsd7d */] = b;
        out[2 /* TokenFigure.VolumeUsd30d */] = c;
        out[3 /* TokenFigure.LiquidityUsd */] = d;
        out[4 /* TokenFigure.Txns24h */] = e;
        out[6 /* TokenFigure.CreatedAt */] = token.addedAt;
        out[7 /* TokenFigure.FdvUsd */] = finite(price * scale);
        out[8 /* TokenFigure.PriceUsd */] = price;
        out[5 /* TokenFigure.PriceChange24h */] = change ? this.change24h(t) : 0;
        return out;
    }
    change24h(t) {
        const views = this.ctx.views;
        const route = views.tokenRoutePool[t] - 1;
        if (route < 0)
            return 0;
        if (views.poolToken0[route] === t)
            return finite(views.winPriceChange[5 /* Win.H24 */][route]);
        if (!readPool(views, route, this.state, true))
            throw new Error(`pool ${route} state did not settle`);
        return finite(this.state.winPriceChange1[5 /* Win.H24 */]);
    }
}
export function createTokenSearch(ctx) {
    const parser = new QueryParser(tokenSearchQuery);
    const globalParser = new QueryParser(globalTokenSearchQuery);
    const top = new TopK(SEARCH_LIMIT_MAX + 1);
    const values = new Float64Array(SEARCH_LIMIT_MAX + 1);
    const ids = new Int32Array(SEARCH_LIMIT_MAX + 1);
    const figures = new TokenFigures(ctx);
    const onChain = new Uint8Array(ctx.views.capacity.chains);
    /** `{"id":…,"address":…,"chain":…,"name":…,"symbol":…,"decimals":…,` per token id, rendered on first use. */
    const heads = [];
    const figure = (which) => figures.out[which];
    /** Frozen rankings by name, least recently used first. */
    const rankings = new Map();
    let rankingBytes = 0;
    const instance = randomBytes(4).toString('hex');
    let serial = 0;
    /** This request's ranked figure per token id (NaN: not searched), kept when a next page exists. */
    let current = new Float64Array(0);
    /** The last ranking kept, reused while a first page finds every value as it was. */
    let lastKept = null;
    function sameAsKept(order, n) {
        if (lastKept === null || lastKept.order !== order || lastKept.values.length !== n || !rankings.has(lastKept.name))
            return false;
        const kept = lastKept.values;
        for (let t = 0; t < n; t++)
            if (!Object.is(kept[t], current[t]))
                return false;
        return true;
    }
    function keep(order, n, nowMs) {
        if (sameAsKept(order, n))
            return lastKept.name;
        const values = current.slice(0, n);
        const name = `${instance}.${serial++}`;
        lastKept = { order, name, values };
        rankings.set(name, { values, lastUsedMs: nowMs });
        rankingBytes += values.byteLength;
        for (const [k, r] of rankings) {
            if (rankingBytes <= TOKEN_RANKINGS_MAX_BYTES && nowMs - r.lastUsedMs < RANKING_TTL_MS)
                break;
            rankings.delete(k);
            rankingBytes -= r.values.byteLength;
        }
        return name;
    }
    function headOf(token) {
        let h = heads[token.id];
        if (h === undefined) {
            const address = str(token.address);
            const chain = str(ctx.registry.networks[token.chain].id);
            h = heads[token.id] = `{"id":${address},"address":${address},"chain":${chain},"name":${str(token.name)},"symbol":${str(token.symbol)},"decimals":${token.decimals},`;
        }
        return h;
    }
    function filtersOf(q) {
        const f = new RangeFilters();
        f.add(0 /* TokenFigure.VolumeUsd24h */, 'volume_usd_24h_min', q.volume_usd_24h_min, 'volume_usd_24h_max', q.volume_usd_24h_max);
        f.add(1 /* TokenFigure.VolumeUsd7d */, 'volume_usd_7d_min', q.volume_usd_7d_min, 'volume_usd_7d_max', q.volume_usd_7d_max);
        f.add(2 /* TokenFigure.VolumeUsd30d */, 'volume_usd_30d_min', q.volume_usd_30d_min, 'volume_usd_30d_max', q.volume_usd_30d_max);
        f.add(3 /* TokenFigure.LiquidityUsd */, 'liquidity_usd_min', q.liquidity_usd_min, 'liquidity_usd_max', q.liquidity_usd_max);
        f.add(4 /* TokenFigure.Txns24h */, 'txns_24h_min', q.txns_24h_min, 'txns_24h_max', q.txns_24h_max);
        f.add(8 /* TokenFigure.PriceUsd */, 'price_usd_min', q.price_usd_min, 'price_usd_max', q.price_usd_max);
        f.add(5 /* TokenFigure.PriceChange24h */, 'price_change_percentage_24h_min', q.price_change_percentage_24h_min, 'price_change_percentage_24h_max', q.price_change_percentage_24h_max);
        f.add(7 /* TokenFigure.FdvUsd */, 'fdv_usd_min', q.fdv_usd_min ?? q.fdv_min, 'fdv_usd_max', q.fdv_usd_max ?? q.fdv_max);
        const now = ctx.now();
        const after = q.created_after === undefined ? undefined : timeBound('created_after', q.created_after, now);
        const before = q.created_before === undefined ? undefined : timeBound('created_before', q.created_before, now);
        f.add(6 /* TokenFigure.CreatedAt */, 'created_after', after, 'created_before', before, true);
        return f;
    }
    function search(nets, q, chainsEcho) {
        const { registry } = ctx;
        const after = cursorOf(q);
        const filters = filtersOf(q);
        const order = TOKEN_ORDER_BY.indexOf(q.order_by);
        const needChange = order === 5 /* TokenFigure.PriceChange24h */ || filters.which.includes(5 /* TokenFigure.PriceChange24h */);
        onChain.fill(0);
        for (const net of nets)
            onChain[net.index] = 1;
        top.reset(q.limit + 1, q.sort === 'desc');
        const tokens = registry.tokens;
        const nowMs = performance.now();
        const name = after?.rankings.length === 1 ? after.rankings[0] : '';
        const frozen = rankings.get(name);
        if (frozen !== undefined) {
            frozen.lastUsedMs = nowMs;
            rankings.delete(name);
            rankings.set(name, frozen);
        }
        if (current.length < tokens.length)
            current = new Float64Array(Math.max(tokens.length, 2 * current.length));
        for (let t = 0; t < tokens.length; t++) {
            current[t] = Number.NaN;
            const token = tokens[t];
            if (token === undefined || onChain[token.chain] !== 1)
                continue;
            const out = figures.compute(token, needChange);
            current[t] = out[order];
            if (!filters.accepts(figure))
                continue;
            // A token newer than the frozen ranking is not in it.
            const v = frozen === undefined ? out[order] : t < frozen.values.length ? frozen.values[t] : Number.NaN;
            if (Number.isNaN(v))
                continue;
            if (after !== null && !top.ahead(after.value, after.id, v, t))
                continue;
            top.offer(v, t);
        }
        const found = top.drain(values, ids);
        let ranking = [];
        if (found > q.limit)
            ranking = [frozen !== undefined ? name : keep(order, tokens.length, nowMs)];
        const rows = found > q.limit ? q.limit : found;
        let body = '{"results":[';
        for (let i = 0; i < rows; i++) {
            const token = tokens[ids[i]];
            const f = figures.compute(token, true);
            if (i > 0)
                body += ',';
            body +=
                `${headOf(token)}"price_usd":${num(f[8 /* TokenFigure.PriceUsd */])},"fdv_usd":${num(f[7 /* TokenFigure.FdvUsd */])}` +
                    `,"liquidity_usd":${num(f[3 /* TokenFigure.LiquidityUsd */])},"volume_usd_24h":${num(f[0 /* TokenFigure.VolumeUsd24h */])}` +
                    `,"volume_usd_7d":${num(f[1 /* TokenFigure.VolumeUsd7d */])},"volume_usd_30d":${num(f[2 /* TokenFigure.VolumeUsd30d */])}` +
                    `,"txns_24h":${num(f[4 /* TokenFigure.Txns24h */])},"price_change_percentage_24h":${num(f[5 /* TokenFigure.PriceChange24h */])}` +
                    `,"created_at":${timeOrNull(token.addedAt)},"pools_count":${(registry.tokenPools[token.id] ?? []).length}}`;
        }
        return Buffer.from(body + envelopeEnd(q, found, values, ids, `${chainsEcho}${filters.echo}`, ranking), 'utf8');
    }
    return cursorSearch(ctx, parser, globalParser, search);
}
//# sourceMappingURL=token-search.js.map