/**
 * PancakeSwap v3: Uniswap v3's design, whose pool `Swap` carries two more fields (the protocol fees
 * taken in each token) and so has a topic of its own. Factory `PoolCreated`, `Mint`, `Burn`,
 * `Initialize`, `Collect`, `CollectProtocol` and `Flash` are Uniswap v3's events; the seven first Swap fields are Uniswap v3's.
 */
import { concentratedFamily } from '../uniswap-v3/index.js';

export const EVENTS = {
  /** PancakeV3Pool `Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint128 protocolFeesToken0, uint128 protocolFeesToken1)` */
  pancakeV3Swap: { signature: 'Swap(address,address,int256,int256,uint160,uint128,int24,uint128,uint128)', topic: '0x19b47279256b2a23a1665c810c8d55a1758940ee09377d4f8d26497a3577dc83' },
} as const;

export const pancakeswapV3 = concentratedFamily('pancakeswap_v3', EVENTS.pancakeV3Swap, EVENTS);
