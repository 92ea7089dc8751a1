/**
 * Uniswap v2 and its clones (SushiSwap, PancakeSwap v2, ...): a factory's `PairCreated` announces a
 * pair; the pair's `Swap`, `Sync`, `Mint` and `Burn` are its trades, reserves and liquidity changes.
 * Pools are constant-product: the fee is the factory's (configured `feePpm`), the price the ratio of
 * the reserves each `Sync` states.
 */
import { PoolProtocol } from '../../../../events/model.js';
import { logWord, topicAddress, wordAddress } from '../../words.js';
import type { ProtocolFamily } from '../family.js';
import { pairRegistry, takeUpBy } from '../take-up.js';

export const EVENTS = {
  /** UniswapV2Factory `PairCreated(address indexed token0, address indexed token1, address pair, uint256)` */
  pairCreated: { signature: 'PairCreated(address,address,address,uint256)', topic: '0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9' },
  /** UniswapV2Pair `Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)` */
  v2Swap: { signature: 'Swap(address,uint256,uint256,uint256,uint256,address)', topic: '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822' },
  /** UniswapV2Pair `Sync(uint112 reserve0, uint112 reserve1)` */
  v2Sync: { signature: 'Sync(uint112,uint112)', topic: '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1' },
  /** UniswapV2Pair `Mint(address indexed sender, uint amount0, uint amount1)` */
  v2Mint: { signature: 'Mint(address,uint256,uint256)', topic: '0x4c209b5fc8ad50758f13e2e1088ba56a560dff690a1c6fef26394f4c03821c4f' },
  /** UniswapV2Pair `Burn(address indexed sender, uint amount0, uint amount1, address indexed to)` */
  v2Burn: { signature: 'Burn(address,uint256,uint256,address)', topic: '0xdccd412f0b1252819cb1fd330b93224ca42612892bb3f4f789976e6d81936496' },
} as const;

const T = {
  pairCreated: EVENTS.pairCreated.topic,
  swap: EVENTS.v2Swap.topic,
  sync: EVENTS.v2Sync.topic,
  mint: EVENTS.v2Mint.topic,
  burn: EVENTS.v2Burn.topic,
};

/** The topics of a Uniswap v2 style pool's events: their fields as Uniswap v2's (Solidly pools share this shape under other topics). */
export interface ReservePoolTopics {
  readonly swap: string;
  readonly sync: string;
  readonly mint: string;
  readonly burn: string;
}

/**
 * Decodes the logs of a pool whose `Swap` carries amounts in and out with sender and recipient in
 * topics 1 and 2, `Sync` its reserves, and `Mint` and `Burn` the amounts with the sender in topic 1.
 */
export function decodeReservePool(T: ReservePoolTopics): ProtocolFamily['decode'] {
  return (l, key, timestamp, pool, address) => {
    const t = l.topics;
    const txHash = l.transactionHash;
    switch (t[0]) {
      case T.swap: {
        const amount0 = logWord(l, 0) - logWord(l, 2);
        const amount1 = logWord(l, 1) - logWord(l, 3);
        return { kind: 'swap', key, timestamp, pool, amount0, amount1, sqrtPriceX96: 0n, liquidity: 0n, tick: 0, txHash, sender: address(t[1]!), recipient: address(t[2]!) };
      }
      case T.sync:
        return { kind: 'sync', key, timestamp, pool, reserve0: logWord(l, 0), reserve1: logWord(l, 1) };
      case T.mint:
        return { kind: 'mint', key, timestamp, pool, amount0: logWord(l, 0), amount1: logWord(l, 1), liquidity: 0n, tickLower: 0, tickUpper: 0, owner: address(t[1]!), txHash };
      case T.burn:
        return { kind: 'burn', key, timestamp, pool, amount0: logWord(l, 0), amount1: logWord(l, 1), liquidity: 0n, tickLower: 0, tickUpper: 0, owner: address(t[1]!), txHash };
      default:
        return null;
    }
  };
}

export const uniswapV2: ProtocolFamily = {
  id: 'uniswap_v2',
  poolProtocol: PoolProtocol.ConstantProduct,
  events: EVENTS,
  factoryTopics: [T.pairCreated],
  poolTopics: [T.swap, T.sync, T.mint, T.burn],
  creation(l, defaultFeePpm) {
    if (l.topics[0] !== T.pairCreated) return null;
    return { pool: wordAddress(l.data, 0), token0: topicAddress(l.topics[1]!), token1: topicAddress(l.topics[2]!), feePpm: defaultFeePpm };
  },
  decode: decodeReservePool(T),
  takeUp: takeUpBy(pairRegistry),
};
