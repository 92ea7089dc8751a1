/**
 * Static catalogue of the simulated networks: block clocks, DEXes and the well-known tokens.
 * Prices are plausible late-2024 levels; addresses are not listed here (they are derived
 * deterministically from the ids, see the universe builder).
 */
import { PoolProtocol } from '../../events/model.js';
/** 2024-12-01T00:00:00Z. Every network's `epochBlock` is its block (slot) number at this instant. */
export const CHAIN_EPOCH_UNIX_SECONDS = 1_733_011_200;
const UNISWAP_V3_FEE_TIERS_PPM = [100, 500, 3000, 10000];
const V2_FEE_PPM = 3000;
const uniswapV2 = (weight) => ({
    id: 'uniswap_v2',
    name: 'Uniswap V2',
    protocol: 'uniswap_v2',
    poolProtocol: PoolProtocol.ConstantProduct,
    feeTiersPpm: [V2_FEE_PPM],
    weight,
});
const uniswapV3 = (weight) => ({
    id: 'uniswap_v3',
    name: 'Uniswap V3',
    protocol: 'uniswap_v3',
    poolProtocol: PoolProtocol.Concentrated,
    feeTiersPpm: UNISWAP_V3_FEE_TIERS_PPM,
    weight,
});
const sushiswap = (weight) => ({
    id: 'sushiswap',
    name: 'SushiSwap',
    protocol: 'uniswap_v2',
    poolProtocol: PoolProtocol.ConstantProduct,
    feeTiersPpm: [V2_FEE_PPM],
    weight,
});
const usdc = (decimals = 6) => ({ symbol: 'USDC', name: 'USD Coin', decimals, priceUsd: 1, dailyVolatility: 0 });
const usdt = (decimals = 6) => ({ symbol: 'USDT', name: 'Tether USD', decimals, priceUsd: 1, dailyVolatility: 0 });
const dai = (symbol = 'DAI') => ({ symbol, name: 'Dai Stablecoin', decimals: 18, priceUsd: 1, dailyVolatility: 0 });
const ETH_PRICE_USD = 3300;
const BTC_PRICE_USD = 95_000;
const ETH_DAILY_VOLATILITY = 0.04;
const BTC_DAILY_VOLATILITY = 0.03;
const weth = (symbol = 'WETH', name = 'Wrapped Ether', decimals = 18) => ({
    symbol,
    name,
    decimals,
    priceUsd: ETH_PRICE_USD,
    dailyVolatility: ETH_DAILY_VOLATILITY,
    asset: 'ETH',
});
const btc = (symbol, name, decimals) => ({
    symbol,
    name,
    decimals,
    priceUsd: BTC_PRICE_USD,
    dailyVolatility: BTC_DAILY_VOLATILITY,
    asset: 'BTC',
});
const link = (symbol = 'LINK') => ({ symbol, name: 'ChainLink Token', decimals: 18, priceUsd: 22, dailyVolatility: 0.06, asset: 'LINK' });
const aave = () => ({ symbol: 'AAVE', name: 'Aave Token', decimals: 18, priceUsd: 320, dailyVolatility: 0.06, asset: 'AAVE' });
const uni = () => ({ symbol: 'UNI', name: 'Uniswap', decimals: 18, priceUsd: 13, dailyVolatility: 0.06, asset: 'UNI' });
export const NETWORKS = [
    {
        id: 'ethereum',
        displayName: 'Ethereum',
        blockTimeMs: 12_000,
        epochBlock: 21_300_000,
        addressFormat: 'evm',
        poolWeight: 5,
        liquidityScale: 1,
        arbitrageGasUsd: 8,
        wrappedNative: weth(),
        stables: [usdc(), usdt(), dai()],
        majors: [
            btc('WBTC', 'Wrapped BTC', 8),
            link(),
            uni(),
            aave(),
            { symbol: 'PEPE', name: 'Pepe', decimals: 18, priceUsd: 0.000018, dailyVolatility: 0.08 },
            { symbol: 'LDO', name: 'Lido DAO Token', decimals: 18, priceUsd: 1.8, dailyVolatility: 0.07 },
            { symbol: 'MKR', name: 'Maker', decimals: 18, priceUsd: 1900, dailyVolatility: 0.05 },
            { symbol: 'SHIB', name: 'SHIBA INU', decimals: 18, priceUsd: 0.000022, dailyVolatility: 0.06 },
        ],
        dexes: [uniswapV2(0.35), uniswapV3(0.5), sushiswap(0.15)],
    },
    {
        id: 'solana',
        displayName: 'Solana',
        blockTimeMs: 400,
        epochBlock: 305_000_000,
        addressFormat: 'solana',
        poolWeight: 5,
        liquidityScale: 0.6,
        arbitrageGasUsd: 0.05,
        wrappedNative: { symbol: 'WSOL', name: 'Wrapped SOL', decimals: 9, priceUsd: 190, dailyVolatility: 0.05, asset: 'SOL' },
        stables: [usdc(), usdt()],
        majors: [
            { symbol: 'JUP', name: 'Jupiter', decimals: 6, priceUsd: 0.9, dailyVolatility: 0.07 },
            { symbol: 'BONK', name: 'Bonk', decimals: 5, priceUsd: 0.00003, dailyVolatility: 0.08 },
            { symbol: 'RAY', name: 'Raydium', decimals: 6, priceUsd: 4.5, dailyVolatility: 0.07 },
            { symbol: 'JTO', name: 'Jito', decimals: 9, priceUsd: 3, dailyVolatility: 0.07 },
            { symbol: 'WIF', name: 'dogwifhat', decimals: 6, priceUsd: 2.2, dailyVolatility: 0.09 },
            { symbol: 'PYTH', name: 'Pyth Network', decimals: 6, priceUsd: 0.4, dailyVolatility: 0.07 },
            weth('WETH', 'Wrapped Ether (Wormhole)', 8),
        ],
        dexes: [
            { id: 'raydium', name: 'Raydium', protocol: 'raydium', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [2500], weight: 0.5 },
            { id: 'orca', name: 'Orca', protocol: 'whirlpool', poolProtocol: PoolProtocol.Concentrated, feeTiersPpm: [100, 500, 3000, 10000], weight: 0.3 },
            { id: 'meteora', name: 'Meteora', protocol: 'dlmm', poolProtocol: PoolProtocol.Concentrated, feeTiersPpm: [100, 1000, 2500, 10000], weight: 0.2 },
        ],
    },
    {
        id: 'bsc',
        displayName: 'BNB Chain',
        blockTimeMs: 3_000,
        epochBlock: 44_400_000,
        addressFormat: 'evm',
        poolWeight: 4,
        liquidityScale: 0.5,
        arbitrageGasUsd: 0.3,
        wrappedNative: { symbol: 'WBNB', name: 'Wrapped BNB', decimals: 18, priceUsd: 650, dailyVolatility: 0.045, asset: 'BNB' },
        stables: [usdc(18), usdt(18), { symbol: 'FDUSD', name: 'First Digital USD', decimals: 18, priceUsd: 1, dailyVolatility: 0 }],
        majors: [
            btc('BTCB', 'BTCB Token', 18),
            weth('ETH', 'Ethereum Token', 18),
            { symbol: 'CAKE', name: 'PancakeSwap Token', decimals: 18, priceUsd: 2.4, dailyVolatility: 0.07 },
            { symbol: 'XRP', name: 'XRP Token', decimals: 18, priceUsd: 2.3, dailyVolatility: 0.06 },
            link(),
        ],
        dexes: [
            { id: 'pancakeswap_v2', name: 'PancakeSwap V2', protocol: 'uniswap_v2', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [2500], weight: 0.45 },
            { id: 'pancakeswap_v3', name: 'PancakeSwap V3', protocol: 'uniswap_v3', poolProtocol: PoolProtocol.Concentrated, feeTiersPpm: [100, 500, 2500, 10000], weight: 0.4 },
            { id: 'biswap', name: 'Biswap', protocol: 'uniswap_v2', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [2000], weight: 0.15 },
        ],
    },
    {
        id: 'base',
        displayName: 'Base',
        blockTimeMs: 2_000,
        epochBlock: 23_100_000,
        addressFormat: 'evm',
        poolWeight: 4,
        liquidityScale: 0.5,
        arbitrageGasUsd: 0.1,
        wrappedNative: weth(),
        stables: [usdc(), { symbol: 'USDbC', name: 'USD Base Coin', decimals: 6, priceUsd: 1, dailyVolatility: 0 }, dai()],
        majors: [
            btc('cbBTC', 'Coinbase Wrapped BTC', 8),
            { symbol: 'AERO', name: 'Aerodrome', decimals: 18, priceUsd: 1.3, dailyVolatility: 0.08 },
            { symbol: 'DEGEN', name: 'Degen', decimals: 18, priceUsd: 0.012, dailyVolatility: 0.09 },
            { symbol: 'BRETT', name: 'Brett', decimals: 18, priceUsd: 0.12, dailyVolatility: 0.09 },
        ],
        dexes: [
            { id: 'aerodrome', name: 'Aerodrome', protocol: 'solidly', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [V2_FEE_PPM], weight: 0.35 },
            uniswapV3(0.35),
            uniswapV2(0.15),
            { id: 'aerodrome_slipstream', name: 'Aerodrome Slipstream', protocol: 'slipstream', poolProtocol: PoolProtocol.Concentrated, feeTiersPpm: [100, 500, 3000, 10000], weight: 0.15 },
        ],
    },
    {
        id: 'arbitrum',
        displayName: 'Arbitrum',
        blockTimeMs: 250,
        epochBlock: 280_000_000,
        addressFormat: 'evm',
        poolWeight: 2,
        liquidityScale: 0.4,
        arbitrageGasUsd: 0.1,
        wrappedNative: weth(),
        stables: [usdc(), usdt(), dai()],
        majors: [
            btc('WBTC', 'Wrapped BTC', 8),
            { symbol: 'ARB', name: 'Arbitrum', decimals: 18, priceUsd: 0.75, dailyVolatility: 0.07 },
            { symbol: 'GMX', name: 'GMX', decimals: 18, priceUsd: 28, dailyVolatility: 0.07 },
            link(),
            { symbol: 'MAGIC', name: 'MAGIC', decimals: 18, priceUsd: 0.5, dailyVolatility: 0.09 },
        ],
        dexes: [
            uniswapV3(0.55),
            { id: 'camelot', name: 'Camelot', protocol: 'uniswap_v2', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [V2_FEE_PPM], weight: 0.25 },
            sushiswap(0.2),
        ],
    },
    {
        id: 'polygon',
        displayName: 'Polygon',
        blockTimeMs: 2_000,
        epochBlock: 64_900_000,
        addressFormat: 'evm',
        poolWeight: 1.5,
        liquidityScale: 0.15,
        arbitrageGasUsd: 0.05,
        wrappedNative: { symbol: 'WPOL', name: 'Wrapped POL', decimals: 18, priceUsd: 0.55, dailyVolatility: 0.06, asset: 'POL' },
        stables: [usdc(), usdt(), dai()],
        majors: [weth(), btc('WBTC', 'Wrapped BTC', 8), link(), aave(), { symbol: 'QUICK', name: 'QuickSwap', decimals: 18, priceUsd: 0.05, dailyVolatility: 0.08 }],
        dexes: [
            { id: 'quickswap', name: 'QuickSwap', protocol: 'uniswap_v2', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [V2_FEE_PPM], weight: 0.4 },
            uniswapV3(0.4),
            sushiswap(0.2),
        ],
    },
    {
        id: 'avalanche',
        displayName: 'Avalanche',
        blockTimeMs: 2_000,
        epochBlock: 53_500_000,
        addressFormat: 'evm',
        poolWeight: 1,
        liquidityScale: 0.15,
        arbitrageGasUsd: 0.2,
        wrappedNative: { symbol: 'WAVAX', name: 'Wrapped AVAX', decimals: 18, priceUsd: 42, dailyVolatility: 0.06, asset: 'AVAX' },
        stables: [usdc(), { symbol: 'USDt', name: 'TetherToken', decimals: 6, priceUsd: 1, dailyVolatility: 0 }, dai('DAI.e')],
        majors: [weth('WETH.e', 'Wrapped Ether', 18), btc('BTC.b', 'Bitcoin', 8), { symbol: 'JOE', name: 'JoeToken', decimals: 18, priceUsd: 0.45, dailyVolatility: 0.08 }, link('LINK.e')],
        dexes: [
            { id: 'traderjoe', name: 'Trader Joe', protocol: 'uniswap_v2', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [V2_FEE_PPM], weight: 0.45 },
            { id: 'pangolin', name: 'Pangolin', protocol: 'uniswap_v2', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [V2_FEE_PPM], weight: 0.2 },
            uniswapV3(0.35),
        ],
    },
    {
        id: 'optimism',
        displayName: 'Optimism',
        blockTimeMs: 2_000,
        epochBlock: 128_700_000,
        addressFormat: 'evm',
        poolWeight: 1.5,
        liquidityScale: 0.15,
        arbitrageGasUsd: 0.1,
        wrappedNative: weth(),
        stables: [usdc(), usdt(), dai()],
        majors: [
            { symbol: 'OP', name: 'Optimism', decimals: 18, priceUsd: 2.1, dailyVolatility: 0.07 },
            btc('WBTC', 'Wrapped BTC', 8),
            { symbol: 'SNX', name: 'Synthetix Network Token', decimals: 18, priceUsd: 2.6, dailyVolatility: 0.07 },
            { symbol: 'VELO', name: 'Velodrome', decimals: 18, priceUsd: 0.13, dailyVolatility: 0.08 },
            link(),
        ],
        dexes: [
            { id: 'velodrome', name: 'Velodrome', protocol: 'solidly', poolProtocol: PoolProtocol.ConstantProduct, feeTiersPpm: [V2_FEE_PPM], weight: 0.45 },
            uniswapV3(0.45),
            sushiswap(0.1),
        ],
    },
];
/** Unix seconds at which the network's block (slot) number is zero under its constant block time. */
export function networkLaunchTime(spec) {
    return CHAIN_EPOCH_UNIX_SECONDS - (spec.epochBlock * spec.blockTimeMs) / 1000;
}
//# sourceMappingURL=catalog.js.map