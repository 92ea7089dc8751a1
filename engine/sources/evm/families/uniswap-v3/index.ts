/**
 * Uniswap v3 and its clones: a factory's `PoolCreated` announces a pool with its fee tier; the
 * pool's `Initialize` sets its first price, `Swap` carries the amounts and the price after it
 * (sqrtPriceX96, active liquidity, tick), `Mint` and `Burn` the positions' amounts. Pools are
 * concentrated-liquidity. A `Burn` moves no tokens (it credits the position's tokensOwed): they
 * leave with the position's `Collect`; `CollectProtocol` pays out protocol fees and `Flash` adds
 * the fee paid. These three become `reserve_delta` events, so that a pool's reserves follow its
 * token balances (`balanceOf(pool)`) exactly. A clone whose `Swap` carries more fields after these seven (PancakeSwap v3)
 * is the same family under another Swap topic: `concentratedFamily` builds it; a design with its own
 * factory event, or more Swap and Burn topics whose first fields are Uniswap v3's (Algebra), passes
 * a `ConcentratedDesign`.
 */
import { PoolProtocol } from '../../../../events/model.js';
import { logInt, logSigned, logWord, signed, topicAddress, wordAddress, type RpcLog } from '../../words.js';
import type { FamilyEvent, PoolCreation, ProtocolFamily } from '../family.js';
import { feeTierRegistry, takeUpBy, VIEW } from '../take-up.js';

export const EVENTS = {
  /** UniswapV3Factory `PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)` */
  poolCreated: { signature: 'PoolCreated(address,address,uint24,int24,address)', topic: '0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118' },
  /** UniswapV3Pool `Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)` */
  v3Swap: { signature: 'Swap(address,address,int256,int256,uint160,uint128,int24)', topic: '0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67' },
  /** UniswapV3Pool `Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)` */
  v3Mint: { signature: 'Mint(address,address,int24,int24,uint128,uint256,uint256)', topic: '0x7a53080ba414158be7ec69b987b5fb7d07dee101fe85488f0853ae16239d0bde' },
  /** UniswapV3Pool `Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)` */
  v3Burn: { signature: 'Burn(address,int24,int24,uint128,uint256,uint256)', topic: '0x0c396cd989a39f4459b5fa1aed6a9a8dcdbc45908acfd67e028cd568da98982c' },
  /** UniswapV3Pool `Initialize(uint160 sqrtPriceX96, int24 tick)` */
  v3Initialize: { signature: 'Initialize(uint160,int24)', topic: '0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95' },
  /** UniswapV3Pool `Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount0, uint128 amount1)` */
  v3Collect: { signature: 'Collect(address,address,int24,int24,uint128,uint128)', topic: '0x70935338e69775456a85ddef226c395fb668b63fa0115f5f20610b388e6ca9c0' },
  /** UniswapV3Pool `CollectProtocol(address indexed sender, address indexed recipient, uint128 amount0, uint128 amount1)` */
  v3CollectProtocol: { signature: 'CollectProtocol(address,address,uint128,uint128)', topic: '0x596b573906218d3411850b26a6b437d6c4522fdb43d2d2386263f86d50b8b151' },
  /** UniswapV3Pool `Flash(address indexed sender, address indexed recipient, uint256 amount0, uint256 amount1, uint256 paid0, uint256 paid1)` */
  v3Flash: { signature: 'Flash(address,address,uint256,uint256,uint256,uint256)', topic: '0xbdbdb71d7860376ba52b25a5028beea23581364a40522f6bcfb86bb1f2dca633' },
} as const;

/** What sets a Uniswap v3 style design apart beyond its Swap topic; each part left out is Uniswap v3's. */
export interface ConcentratedDesign {
  /** Factory logs announcing a pool, and how one is read (Uniswap v3's `PoolCreated` by default). */
  readonly factoryTopics?: readonly string[];
  readonly creation?: (log: RpcLog, defaultFeePpm: number) => PoolCreation | null;
  /** A second Swap topic (a later revision's), its first seven fields Uniswap v3's. */
  readonly swap2?: FamilyEvent;
  /** A second Burn topic, its first three data fields Uniswap v3's. */
  readonly burn2?: FamilyEvent;
  /** The pool has Uniswap v3's CollectProtocol (true by default). */
  readonly collectProtocol?: boolean;
  /** Taking up pools created before the scan's start (take-up.ts): Uniswap v3's `fee()` and `getPool`, `slot0()` unless told. */
  readonly takeUp?: ProtocolFamily['takeUp'];
  readonly priceView?: string;
}

/**
 * A Uniswap v3 style family whose Swap event is `swap` (its first seven fields those of Uniswap
 * v3's); factory, Mint, Burn, Initialize, Collect, CollectProtocol and Flash events are Uniswap v3's
 * unless `design` says otherwise. `extraEvents` are declared beside Uniswap v3's (for TOPICS), named uniquely.
 */
export function concentratedFamily(id: string, swap: FamilyEvent, extraEvents: Readonly<Record<string, FamilyEvent>>, design: ConcentratedDesign = {}): ProtocolFamily {
  const created = EVENTS.poolCreated.topic;
  const swapTopic = swap.topic;
  // A design without a second Swap or Burn topic repeats the first (a duplicate case is never reached).
  const swapTopic2 = design.swap2?.topic ?? swapTopic;
  const mint = EVENTS.v3Mint.topic;
  const burn = EVENTS.v3Burn.topic;
  const burn2 = design.burn2?.topic ?? burn;
  const initialize = EVENTS.v3Initialize.topic;
  const collect = EVENTS.v3Collect.topic;
  const collectProtocol = EVENTS.v3CollectProtocol.topic;
  const flash = EVENTS.v3Flash.topic;
  const poolTopics = [...new Set([swapTopic, swapTopic2, mint, burn, burn2, initialize, collect, ...(design.collectProtocol === false ? [] : [collectProtocol]), flash])];
  return {
    id,
    poolProtocol: PoolProtocol.Concentrated,
    events: extraEvents,
    factoryTopics: design.factoryTopics ?? [created],
    poolTopics,
    takeUp: design.takeUp ?? takeUpBy(feeTierRegistry),
    priceView: design.priceView ?? VIEW.slot0,
    creation:
      design.creation ??
      ((l) => {
        if (l.topics[0] !== created) return null;
        return { pool: wordAddress(l.data, 1), token0: topicAddress(l.topics[1]!), token1: topicAddress(l.topics[2]!), feePpm: Number(BigInt(l.topics[3]!)) };
      }),
    decode(l, key, timestamp, pool, address) {
      const t = l.topics;
      const txHash = l.transactionHash;
      switch (t[0]) {
        case swapTopic:
        case swapTopic2:
          return {
            kind: 'swap',
            key,
            timestamp,
            pool,
            amount0: logSigned(l, 0),
            amount1: logSigned(l, 1),
            sqrtPriceX96: logWord(l, 2),
            liquidity: logWord(l, 3),
            tick: logInt(l, 4),
            txHash,
            sender: address(t[1]!),
            recipient: address(t[2]!),
          };
        case mint:
          return {
            kind: 'mint',
            key,
            timestamp,
            pool,
            amount0: logWord(l, 2),
            amount1: logWord(l, 3),
            liquidity: logWord(l, 1),
            tickLower: Number(signed(BigInt(t[2]!))),
            tickUpper: Number(signed(BigInt(t[3]!))),
            owner: address(t[1]!),
            txHash,
          };
        case burn:
        case burn2:
          return {
            kind: 'burn',
            key,
            timestamp,
            pool,
            amount0: logWord(l, 1),
            amount1: logWord(l, 2),
            liquidity: logWord(l, 0),
            tickLower: Number(signed(BigInt(t[2]!))),
            tickUpper: Number(signed(BigInt(t[3]!))),
            owner: address(t[1]!),
            txHash,
          };
        case collect:
        case collectProtocol: {
          // Tokens paid out of the pool: Collect (owner, recipient in data, amounts in words 1, 2),
          // CollectProtocol (amounts in words 0, 1).
          const at = t[0] === collect ? 1 : 0;
          const amount0 = logWord(l, at);
          const amount1 = logWord(l, at + 1);
          if (amount0 === 0n && amount1 === 0n) return null;
          return { kind: 'reserve_delta', key, timestamp, pool, amount0: -amount0, amount1: -amount1 };
        }
        case flash: {
          // The tokens lent come back within the call; the pool keeps what was paid for them.
          const paid0 = logWord(l, 2);
          const paid1 = logWord(l, 3);
          if (paid0 === 0n && paid1 === 0n) return null;
          return { kind: 'reserve_delta', key, timestamp, pool, amount0: paid0, amount1: paid1 };
        }
        case initialize:
          // The pool's starting price, before any swap; its reserves are those its positions paid in.
          return { kind: 'sync', key, timestamp, pool, reserve0: 0n, reserve1: 0n, sqrtPriceX96: logWord(l, 0) };
        default:
          return null;
      }
    },
  };
}

export const uniswapV3: ProtocolFamily = concentratedFamily('uniswap_v3', EVENTS.v3Swap, EVENTS);
