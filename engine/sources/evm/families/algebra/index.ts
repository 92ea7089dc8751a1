/**
 * Algebra: concentrated-liquidity pools with a dynamic fee (Algebra v1.9 as in @cryptoalgebra/core,
 * Algebra Integral as in @cryptoalgebra/integral-core; QuickSwap, Camelot, THENA FUSION and others
 * deploy them). The factory announces a pool with `Pool(token0, token1, pool)`, Integral's also a
 * custom pool (one made through a plugin's deployer) with `CustomPool(deployer, token0, token1, pool)`.
 * The pool's `Initialize`, `Mint`, `Collect` and `Flash` are Uniswap v3's events under other parameter
 * names (the same topics); its `Swap` and `Burn` are Uniswap v3's in v1.9 and Integral 1.0, 1.1, 1.2.9
 * and 1.2.10 (the fees applied come in events of their own there, `SwapFee` and `BurnFee`), while
 * Integral 1.2.1 to 1.2.5 append those fees to the events: `Swap(…, uint24 overrideFee, uint24 pluginFee)`
 * and `Burn(…, uint24 pluginFee)`, other topics whose first fields are Uniswap v3's. Both are read.
 * There is no `CollectProtocol`: the community fee leaves the pool for its vault.
 *
 * Reserves follow `balanceOf(pool)` as for Uniswap v3 (swaps and mints in, collects out, flash
 * payments in) while the pool keeps no community fee and no plugin fee. Those fees are paid to the
 * community vault and the plugin by plain token transfers that no pool event states (v1.9 on each
 * swap, Integral every few hours from the pending amounts), so in a pool that takes them the
 * reserves served exceed the balances by the fees paid out so far. The fee served is the factory's
 * configured `feePpm`: the pool's fee changes over time (`Fee` events) and is not followed.
 */
import { topicAddress, wordAddress } from '../../words.js';
import { pairRegistryAlgebra, takeUpBy, VIEW } from '../take-up.js';
import { concentratedFamily } from '../uniswap-v3/index.js';

export const EVENTS = {
  /** AlgebraFactory `Pool(address indexed token0, address indexed token1, address pool)` */
  algebraPool: { signature: 'Pool(address,address,address)', topic: '0x91ccaa7a278130b65168c3a0c8d3bcae84cf5e43704342bd3ec0b59e59c036db' },
  /** AlgebraFactory (Integral) `CustomPool(address indexed deployer, address indexed token0, address indexed token1, address pool)` */
  algebraCustomPool: { signature: 'CustomPool(address,address,address,address)', topic: '0x8a5f030f5fc13b04a1e4ef7c47177e3d76b0e80e1d9be9843db37caa5b7b9b8f' },
  /** AlgebraPool (Integral 1.2.1 to 1.2.5) `Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)` */
  algebraSwapFees: { signature: 'Swap(address,address,int256,int256,uint160,uint128,int24,uint24,uint24)', topic: '0x121cb44ee54098b1a04743c487e7460d8dd429b27f88b1f4d4767396e1a59f79' },
  /** AlgebraPool (Integral 1.2.1 to 1.2.5) `Burn(address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1, uint24 pluginFee)` */
  algebraBurnFee: { signature: 'Burn(address,int24,int24,uint128,uint256,uint256,uint24)', topic: '0x932214d4a69c27c086643126ed97c32681da179064c678836c173f99bd13ca01' },
} as const;

/** Uniswap v3's Swap (the pool's Swap in v1.9 and most Integral releases). */
const V3_SWAP = { signature: 'Swap(address,address,int256,int256,uint160,uint128,int24)', topic: '0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67' } as const;

const POOL = EVENTS.algebraPool.topic;
const CUSTOM_POOL = EVENTS.algebraCustomPool.topic;

export const algebra = concentratedFamily('algebra', V3_SWAP, EVENTS, {
  factoryTopics: [POOL, CUSTOM_POOL],
  creation(l, defaultFeePpm) {
    const t = l.topics;
    if (t[0] === POOL) return { pool: wordAddress(l.data, 0), token0: topicAddress(t[1]!), token1: topicAddress(t[2]!), feePpm: defaultFeePpm };
    if (t[0] === CUSTOM_POOL) return { pool: wordAddress(l.data, 0), token0: topicAddress(t[2]!), token1: topicAddress(t[3]!), feePpm: defaultFeePpm };
    return null;
  },
  swap2: EVENTS.algebraSwapFees,
  burn2: EVENTS.algebraBurnFee,
  collectProtocol: false,
  // Pools of the factory's own deployer (custom pools are registered by deployer and are not taken up).
  takeUp: takeUpBy(pairRegistryAlgebra),
  priceView: VIEW.globalState,
});
