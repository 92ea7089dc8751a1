/**
 * Solidly-style stable/volatile pools in the Velodrome v2 / Aerodrome design: a factory's
 * `PoolCreated` announces a pool and whether it is stable; the pool's `Sync` states its reserves
 * (after the swap fee has been sent out to its PoolFees contract, so they are the pool's
 * `getReserves()`, not its fee-inclusive balances), `Swap`, `Mint` and `Burn` are its trades and
 * liquidity changes, in the Uniswap v2 order (the `Sync` first, in the same transaction).
 *
 * A volatile pool is constant-product (x*y = k), priced by its reserves' ratio like a Uniswap v2
 * pair. A stable pool trades on x^3*y + x*y^3 = k over reserves with decimals applied, and is priced
 * at that curve's marginal price at its reserves (PoolProtocol.SolidlyStable,
 * engine/state/reserve-price.ts). Its fee is the factory's default for its kind: `feePpm` for
 * volatile pools (3000, the factory's 30 bps), `stableFeePpm` for stable ones (500, its 5 bps); a
 * pool's custom fee (`setCustomFee`) is not followed. `Fees` (the fee sent to PoolFees, before the
 * `Sync`) and `Claim` (paid by PoolFees, not the pool) move none of the pool's reserves: they are
 * declared for their topics and not read.
 */
import { PoolProtocol } from '../../../../events/model.js';
import { topicAddress, wordAddress } from '../../words.js';
import type { ProtocolFamily } from '../family.js';
import { stableRegistry, takeUpBy } from '../take-up.js';
import { decodeReservePool } from '../uniswap-v2/index.js';

/** The factory's default fee of stable pools (5 bps), in millionths, when the configuration names none. */
export const STABLE_FEE_PPM = 500;

export const EVENTS = {
  /** PoolFactory `PoolCreated(address indexed token0, address indexed token1, bool indexed stable, address pool, uint256)` */
  solidlyPoolCreated: { signature: 'PoolCreated(address,address,bool,address,uint256)', topic: '0x2128d88d14c80cb081c1252a5acff7a264671bf199ce226b53788fb26065005e' },
  /** Pool `Swap(address indexed sender, address indexed to, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out)` */
  solidlySwap: { signature: 'Swap(address,address,uint256,uint256,uint256,uint256)', topic: '0xb3e2773606abfd36b5bd91394b3a54d1398336c65005baf7bf7a05efeffaf75b' },
  /** Pool `Sync(uint256 reserve0, uint256 reserve1)` */
  solidlySync: { signature: 'Sync(uint256,uint256)', topic: '0xcf2aa50876cdfbb541206f89af0ee78d44a2abf8d328e37fa4917f982149848a' },
  /** Pool `Mint(address indexed sender, uint256 amount0, uint256 amount1)` (Uniswap v2's topic) */
  solidlyMint: { signature: 'Mint(address,uint256,uint256)', topic: '0x4c209b5fc8ad50758f13e2e1088ba56a560dff690a1c6fef26394f4c03821c4f' },
  /** Pool `Burn(address indexed sender, address indexed to, uint256 amount0, uint256 amount1)` */
  solidlyBurn: { signature: 'Burn(address,address,uint256,uint256)', topic: '0x5d624aa9c148153ab3446c1b154f660ee7701e549fe9b62dab7171b1c80e6fa2' },
  /** Pool `Fees(address indexed sender, uint256 amount0, uint256 amount1)`: not read (see above). */
  solidlyFees: { signature: 'Fees(address,uint256,uint256)', topic: '0x112c256902bf554b6ed882d2936687aaeb4225e8cd5b51303c90ca6cf43a8602' },
  /** Pool `Claim(address indexed sender, address indexed recipient, uint256 amount0, uint256 amount1)`: not read (see above). */
  solidlyClaim: { signature: 'Claim(address,address,uint256,uint256)', topic: '0x865ca08d59f5cb456e85cd2f7ef63664ea4f73327414e9d8152c4158b0e94645' },
} as const;

const T = {
  created: EVENTS.solidlyPoolCreated.topic,
  swap: EVENTS.solidlySwap.topic,
  sync: EVENTS.solidlySync.topic,
  mint: EVENTS.solidlyMint.topic,
  burn: EVENTS.solidlyBurn.topic,
};

/** The `stable` topic of a PoolCreated: an ABI bool, 0 or 1. */
const TRUE_TOPIC = `0x${'0'.repeat(63)}1`;

export const solidly: ProtocolFamily = {
  id: 'solidly',
  // The model of the factory's volatile pools; a stable pool's creation states its own.
  poolProtocol: PoolProtocol.ConstantProduct,
  events: EVENTS,
  factoryTopics: [T.created],
  poolTopics: [T.swap, T.sync, T.mint, T.burn],
  creation(l, defaultFeePpm, stableFeePpm) {
    if (l.topics[0] !== T.created || l.topics.length < 4) return null;
    const stable = l.topics[3]!.toLowerCase() === TRUE_TOPIC;
    return {
      pool: wordAddress(l.data, 0),
      token0: topicAddress(l.topics[1]!),
      token1: topicAddress(l.topics[2]!),
      feePpm: stable ? (stableFeePpm ?? STABLE_FEE_PPM) : defaultFeePpm,
      protocol: stable ? PoolProtocol.SolidlyStable : PoolProtocol.ConstantProduct,
    };
  },
  // Its Swap, Sync, Mint and Burn carry Uniswap v2's fields (Swap's recipient a topic, not last).
  decode: decodeReservePool(T),
  takeUp: takeUpBy(stableRegistry, (stable) => (stable ? PoolProtocol.SolidlyStable : PoolProtocol.ConstantProduct)),
};
