/**
 * The pool search mix of the benchmark: 256 distinct requests, each with two filters and an
 * ordering, over all networks, a few networks or one, in both directions and at several page
 * sizes. Deterministic, so runs compare.
 */
import { Rng } from '../engine/sources/simulator/prng.js';
export function searchPaths(networks, nowSeconds, count = 256) {
    const rng = new Rng(7);
    const r = () => rng.nextFloat();
    const pick = (xs) => xs[Math.floor(r() * xs.length)];
    const liquidity = [1_000, 10_000, 50_000, 100_000, 1_000_000];
    const volume = [10, 100, 1_000, 10_000];
    const txns = [1, 2, 5, 10];
    const limit = () => pick([10, 10, 20, 50, 100]);
    const shapes = [
        () => `/pools/search?liquidity_usd_min=${pick(liquidity)}&volume_usd_24h_min=${pick(volume)}&order_by=volume_usd_24h&limit=${limit()}`,
        () => `/networks/${pick(networks)}/pools/search?liquidity_usd_min=${pick(liquidity)}&txns_24h_min=${pick(txns)}&order_by=liquidity_usd&limit=${limit()}`,
        () => {
            const a = pick(networks);
            const b = pick(networks.filter((n) => n !== a));
            return `/pools/search?chains=${a},${b}&volume_usd_24h_min=${pick(volume)}&liquidity_usd_max=${pick(liquidity) * 10}&order_by=txns_24h&limit=${limit()}`;
        },
        () => `/networks/${pick(networks)}/pools/search?created_after=${nowSeconds - Math.ceil(r() * 365) * 86_400}&liquidity_usd_min=${pick(liquidity)}&order_by=created_at&limit=${limit()}`,
        () => `/pools/search?liquidity_usd_min=${pick(liquidity)}&price_usd_min=0.01&order_by=liquidity_usd&sort=asc&limit=${limit()}`,
        () => `/pools/search?volume_usd_24h_min=${pick(volume)}&txns_24h_min=${pick(txns)}&order_by=price_change_percentage_1h&sort=${pick(['desc', 'asc'])}&limit=${limit()}`,
    ];
    return Array.from({ length: count }, (_, i) => shapes[i % shapes.length]());
}
//# sourceMappingURL=search-paths.js.map