import { createPoolState, readPool } from '../../engine/state/read.js';
import { num, timeOrNull, u128Text } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { networkOrNotFound, poolOrNotFound } from './resolve.js';
import { poolDetailsQuery } from './schemas.js';
/** Window objects of the details body, in output order. */
const DETAIL_WINDOWS = [
    ['24h', 5 /* Win.H24 */],
    ['6h', 4 /* Win.H6 */],
    ['1h', 3 /* Win.H1 */],
    ['30m', 2 /* Win.M30 */],
    ['15m', 1 /* Win.M15 */],
    ['5m', 0 /* Win.M5 */],
];
function reserveEntry(tokenId, s, side) {
    const normalized = side === 0 ? s.reserve0 : s.reserve1;
    const priceUsd = side === 0 ? s.priceUsd0 : s.priceUsd1;
    return `{"token_id":${tokenId},"reserve":"${u128Text(s.reserveRaw, side * 4)}","reserve_normalized":${num(normalized)},"reserve_usd":${num(normalized * priceUsd)}}`;
}
export function renderPoolDetails(st, s, inversed) {
    const first = inversed ? 1 : 0;
    const second = inversed ? 0 : 1;
    const lastPrice = inversed ? (s.ratio > 0 ? 1 / s.ratio : 0) : s.ratio;
    let body = `${st.detailsHead[first]}"last_price":${num(lastPrice)},"last_price_usd":${num(inversed ? s.priceUsd1 : s.priceUsd0)}` +
        `,"volume_usd":${num(s.winVolumeUsd[5 /* Win.H24 */])},"price_time":${timeOrNull(s.lastEventTime)}` +
        `,"token_reserves":[${reserveEntry(st.tokenIds[first], s, first)},${reserveEntry(st.tokenIds[second], s, second)}]` +
        `,"liquidity_usd":${num(s.liquidityUsd)},"transactions":${num(s.txnsTotal)}`;
    const changes = inversed ? s.winPriceChange1 : s.winPriceChange;
    for (const [name, w] of DETAIL_WINDOWS) {
        const volume = s.winVolumeUsd[w];
        const bought = s.winBuyVolumeUsd[w];
        const sold = volume > bought ? volume - bought : 0;
        const txns = s.winTxns[w];
        const buys = s.winBuys[w];
        const sells = txns > buys ? txns - buys : 0;
        body +=
            `,"${name}":{"last_price_usd_change":${num(changes[w])},"volume_usd":${num(volume)}` +
                `,"buy_usd":${num(inversed ? sold : bought)},"sell_usd":${num(inversed ? bought : sold)}` +
                `,"buys":${num(inversed ? sells : buys)},"sells":${num(inversed ? buys : sells)},"txns":${num(txns)}}`;
    }
    return `${body}}`;
}
export function createPoolDetails(ctx, cache, statics) {
    const parser = new QueryParser(poolDetailsQuery);
    const state = createPoolState();
    return (network, address, query) => {
        const pool = poolOrNotFound(ctx.registry, networkOrNotFound(ctx.registry, network), address);
        const { inversed } = parser.parse(query);
        const p = pool.id;
        const key = inversed ? `d:${p}:i` : `d:${p}`;
        const cached = cache.get(key, Atomics.load(ctx.views.poolSeq, p));
        if (cached !== undefined)
            return cached.body;
        if (!readPool(ctx.views, p, state, inversed))
            throw new Error(`pool ${p} state did not settle`);
        const body = Buffer.from(renderPoolDetails(statics.get(p), state, inversed), 'utf8');
        cache.set(key, state.seq, body);
        return body;
    };
}
//# sourceMappingURL=pools.js.map