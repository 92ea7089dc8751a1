export const POOL_FIGURES = [
    'volume_usd_24h',
    'volume_usd_7d',
    'volume_usd_30d',
    'liquidity_usd',
    'txns_24h',
    'created_at',
    'price_usd',
    'price_change_percentage_24h',
    'price_change_percentage_48h',
    'price_change_percentage_6h',
    'price_change_percentage_1h',
    'price_change_percentage_5m',
];
const COLUMN = {
    volume_usd_24h: (v) => v.winVolumeUsd[5 /* Win.H24 */],
    volume_usd_7d: (v) => v.winVolumeUsd[7 /* Win.D7 */],
    volume_usd_30d: (v) => v.winVolumeUsd[8 /* Win.D30 */],
    liquidity_usd: (v) => v.liquidityUsd,
    txns_24h: (v) => v.winTxns[5 /* Win.H24 */],
    created_at: (v) => v.poolCreatedAt,
    price_usd: (v) => v.priceUsd0,
    price_change_percentage_24h: (v) => v.winPriceChange[5 /* Win.H24 */],
    price_change_percentage_48h: (v) => v.winPriceChange[6 /* Win.H48 */],
    price_change_percentage_6h: (v) => v.winPriceChange[4 /* Win.H6 */],
    price_change_percentage_1h: (v) => v.winPriceChange[3 /* Win.H1 */],
    price_change_percentage_5m: (v) => v.winPriceChange[0 /* Win.M5 */],
};
/** The column of every figure, in POOL_FIGURES order. */
export function figureColumns(views) {
    return POOL_FIGURES.map((f) => COLUMN[f](views));
}
export function figureIndex(name) {
    return POOL_FIGURES.indexOf(name);
}
/** The value a figure ranks and filters by: non-finite as 0, -0 as 0, so the order is total. */
export function rankValue(x) {
    return x - x === 0 ? x + 0 : 0;
}
//# sourceMappingURL=figures.js.map