import { createPoolState, readPool } from '../../engine/state/read.js';
import { invalidParameter } from '../errors.js';
import { integerJson, num, str, timeOrNull } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { globalSearchQuery } from './schemas-search.js';
import { TokenFigures } from './token-search.js';
/** Entries per list in a /search answer. */
export const GLOBAL_SEARCH_MAX = 10;
const MATCH_EXACT = 3;
const MATCH_PREFIX = 2;
const MATCH_SUBSTRING = 1;
/** How well `text` (lower case) matches `q` (lower case): 3 exact, 2 prefix, 1 substring, 0 none. */
function matchText(text, q) {
    if (text === q)
        return MATCH_EXACT;
    const at = text.indexOf(q);
    return at === 0 ? MATCH_PREFIX : at > 0 ? MATCH_SUBSTRING : 0;
}
/** Addresses match whole or by prefix only. */
function matchAddress(address, q) {
    return address === q ? MATCH_EXACT : address.startsWith(q) ? MATCH_PREFIX : 0;
}
/** The best `capacity` (score desc, volume desc, id asc) of what is offered; insertion into a short sorted list. */
class Best {
    score;
    volume;
    id;
    size = 0;
    constructor(capacity) {
        this.score = new Float64Array(capacity);
        this.volume = new Float64Array(capacity);
        this.id = new Int32Array(capacity);
    }
    before(s, v, i, k) {
        const ks = this.score[k];
        if (s !== ks)
            return s > ks;
        const kv = this.volume[k];
        if (v !== kv)
            return v > kv;
        return i < this.id[k];
    }
    offer(s, v, i) {
        const cap = this.id.length;
        let at = this.size;
        if (at === cap) {
            if (!this.before(s, v, i, cap - 1))
                return;
            at = cap - 1;
        }
        else
            this.size++;
        while (at > 0 && this.before(s, v, i, at - 1)) {
            this.score[at] = this.score[at - 1];
            this.volume[at] = this.volume[at - 1];
            this.id[at] = this.id[at - 1];
            at--;
        }
        this.score[at] = s;
        this.volume[at] = v;
        this.id[at] = i;
    }
}
export function createGlobalSearch(ctx, statics) {
    const parser = new QueryParser(globalSearchQuery);
    const figures = new TokenFigures(ctx);
    const tokenBest = new Best(GLOBAL_SEARCH_MAX);
    const poolBest = new Best(GLOBAL_SEARCH_MAX);
    const dexBest = new Best(GLOBAL_SEARCH_MAX);
    const state = createPoolState();
    const lowerTokens = [];
    const lowerPools = [];
    /** Match score of each token in this request (reset per request, grown with the registry). */
    let tokenScore = new Uint8Array(0);
    const lowerToken = (t) => (lowerTokens[t.id] ??= { name: t.name.toLowerCase(), symbol: t.symbol.toLowerCase(), address: t.address.toLowerCase() });
    return (query) => {
        const { views, registry } = ctx;
        const raw = parser.parse(query).query.trim();
        if (raw === '')
            throw invalidParameter('query', 'is required: the text to search for');
        const q = raw.toLowerCase();
        tokenBest.size = poolBest.size = dexBest.size = 0;
        const tokens = registry.tokens;
        if (tokenScore.length < tokens.length)
            tokenScore = new Uint8Array(Math.max(tokens.length, 2 * tokenScore.length));
        else
            tokenScore.fill(0);
        for (let t = 0; t < tokens.length; t++) {
            const token = tokens[t];
            if (token === undefined)
                continue;
            const l = lowerToken(token);
            const s = Math.max(matchText(l.symbol, q), matchText(l.name, q), matchAddress(l.address, q));
            tokenScore[t] = s;
            if (s === 0)
                continue;
            tokenBest.offer(s, figures.compute(token, false)[0 /* TokenFigure.VolumeUsd24h */], t);
        }
        const vol24 = views.winVolumeUsd[5 /* Win.H24 */];
        for (const net of registry.networks) {
            for (const p of net.poolIds) {
                const address = (lowerPools[p] ??= registry.pools[p].address.toLowerCase());
                const s = Math.max(matchAddress(address, q), tokenScore[views.poolToken0[p]], tokenScore[views.poolToken1[p]]);
                if (s === 0)
                    continue;
                const v = vol24[p];
                poolBest.offer(s, v - v === 0 ? v : 0, p);
            }
        }
        // DEXes: match first, then one pass over the pools of the chains holding a match.
        const dexes = registry.dexes;
        const dexScore = new Uint8Array(dexes.length);
        const chains = new Set();
        for (const d of dexes) {
            const s = Math.max(matchText(d.id.toLowerCase(), q), matchText(d.name.toLowerCase(), q));
            dexScore[d.index] = s;
            if (s > 0)
                chains.add(d.chain);
        }
        const dexVolume = new Float64Array(dexes.length);
        const dexTxns = new Float64Array(dexes.length);
        const dexPools = new Float64Array(dexes.length);
        const dexCreated = new Float64Array(dexes.length).fill(Infinity);
        const txns24 = views.winTxns[5 /* Win.H24 */];
        for (const c of chains) {
            for (const p of registry.networks[c].poolIds) {
                const d = views.poolDex[p];
                if (dexScore[d] === 0)
                    continue;
                const v = vol24[p];
                const n = txns24[p];
                dexVolume[d] = dexVolume[d] + (v - v === 0 ? v : 0);
                dexTxns[d] = dexTxns[d] + (n - n === 0 ? n : 0);
                dexPools[d] = dexPools[d] + 1;
                dexCreated[d] = Math.min(dexCreated[d], views.poolCreatedAt[p]);
            }
        }
        for (const d of dexes)
            if (dexScore[d.index] > 0)
                dexBest.offer(dexScore[d.index], dexVolume[d.index], d.index);
        let body = '{"tokens":[';
        for (let i = 0; i < tokenBest.size; i++) {
            const token = tokens[tokenBest.id[i]];
            const f = figures.compute(token, true);
            if (i > 0)
                body += ',';
            body +=
                `{"id":${str(token.address)},"name":${str(token.name)},"symbol":${str(token.symbol)},"chain":${str(registry.networks[token.chain].id)}` +
                    `,"decimals":${token.decimals},"total_supply":${integerJson(token.totalSupply)},"price_usd":${num(f[8 /* TokenFigure.PriceUsd */])}` +
                    `,"fdv":${num(f[7 /* TokenFigure.FdvUsd */])},"liquidity_usd":${num(f[3 /* TokenFigure.LiquidityUsd */])}` +
                    `,"volume_usd":${num(f[0 /* TokenFigure.VolumeUsd24h */])},"price_usd_change":${num(f[5 /* TokenFigure.PriceChange24h */])}}`;
        }
        body += '],"pools":[';
        for (let i = 0; i < poolBest.size; i++) {
            const p = poolBest.id[i];
            if (!readPool(views, p, state))
                throw new Error(`pool ${p} state did not settle`);
            const st = statics.get(p);
            if (i > 0)
                body += ',';
            body +=
                `${st.rowHead}"volume_usd":${num(state.winVolumeUsd[5 /* Win.H24 */])},"transactions":${num(state.winTxns[5 /* Win.H24 */])}` +
                    `,"price_usd":${num(state.priceUsd0)},"last_price_change_usd_5m":${num(state.winPriceChange[0 /* Win.M5 */])}` +
                    `,"last_price_change_usd_1h":${num(state.winPriceChange[3 /* Win.H1 */])},"last_price_change_usd_24h":${num(state.winPriceChange[5 /* Win.H24 */])}` +
                    `,${st.fullRowTail}`;
        }
        body += '],"dexes":[';
        for (let i = 0; i < dexBest.size; i++) {
            const d = dexes[dexBest.id[i]];
            const created = dexCreated[d.index];
            if (i > 0)
                body += ',';
            body +=
                `{"id":${str(d.id)},"dex_id":${str(d.id)},"dex_name":${str(d.name)},"chain":${str(registry.networks[d.chain].id)}` +
                    `,"protocol":${str(d.protocol)},"volume_usd_24h":${num(dexVolume[d.index])},"txns_24h":${num(dexTxns[d.index])}` +
                    `,"pools_count":${dexPools[d.index]},"created_at":${timeOrNull(created)}}`;
        }
        body += ']}';
        return Buffer.from(body, 'utf8');
    };
}
//# sourceMappingURL=global-search.js.map