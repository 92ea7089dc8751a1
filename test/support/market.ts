/** The tokens and the network the in-process test markets are built from (test/support/access.ts, streams.ts). */
import type { NetworkInfo, TokenInfo } from '../../engine/events/model.js';

export const E18 = 10n ** 18n;
export const E6 = 10n ** 6n;

export const USDC: TokenInfo = { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 };
export const WETH: TokenInfo = { address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, totalSupply: 10n ** 24n, role: 2 };

/** Ethereum with Uniswap V2 only. */
export const NETWORKS: NetworkInfo[] = [
  {
    id: 'ethereum',
    displayName: 'Ethereum',
    blockTimeSeconds: 12,
    dexes: [{ id: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f' }],
  },
];
