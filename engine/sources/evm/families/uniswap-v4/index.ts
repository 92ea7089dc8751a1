/**
 * Uniswap v4: one singleton PoolManager holds every pool. Its `Initialize` announces a pool by its
 * 32-byte id (keccak-256 of the PoolKey), served as the pool's address (`0x` and 64 hex digits), with
 * its currencies (currency0 may be the chain's native token, address zero), fee and first price;
 * `Swap` and `ModifyLiquidity` name the pool by that id in topic 1. Pools are concentrated-liquidity,
 * priced from sqrtPriceX96 like Uniswap v3's.
 *
 * A v4 `Swap` states amounts from the caller's side (negative: paid to the pool): they are negated
 * into the pool's view. `ModifyLiquidity` carries only the liquidity change and its tick range: its
 * amounts follow from the pool's current price (math.ts, exactly as Pool.modifyLiquidity computes
 * them), so the family decodes through a per-chain state (`decoder()`) that follows each pool's
 * price and the liquidity of each of its tick ranges.
 *
 * Reserves: the PoolManager holds all pools' tokens together, and fees leave with any later
 * ModifyLiquidity of a position without showing in its event, so a pool's reserves are its
 * principal: the exact amounts its positions' liquidity is worth at the current price, summed and
 * rounded down once (pool-state.ts; at most one unit per position above what removing every
 * position now would pay, each removal rounded down; fees owed and donations are not counted).
 * Every swap and liquidity change is preceded by a `sync` stating them after it (as a Uniswap v2
 * pair's Sync precedes its Swap), so the engine moves none by the event's amounts. Hooks act beyond
 * what the events show (amounts a hook takes or adds, custom curves) and are not followed.
 */
import { PoolProtocol, type ChainEvent, type EventKey } from '../../../../events/model.js';
import { logInt, logSigned, logWord, topicAddress, word, type RpcLog } from '../../words.js';
import type { FamilyDecoder, ProtocolFamily } from '../family.js';
import { liquidityAmounts } from './math.js';
import { V4PoolState } from './pool-state.js';

export const EVENTS = {
  /** PoolManager `Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)` */
  v4Initialize: { signature: 'Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)', topic: '0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438' },
  /** PoolManager `Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)` */
  v4Swap: { signature: 'Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)', topic: '0x40e9cecb9f5f1f1c5b9c97dec2917b7ee92e57ba5563708daca94dd84ad7112f' },
  /** PoolManager `ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)` */
  v4ModifyLiquidity: { signature: 'ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)', topic: '0xf208f4912782fd25c7f114ca3723a2d5dd6f3bcc3ac8db5af63baa85f711d5ec' },
  /** PoolManager `Donate(bytes32 indexed id, address indexed sender, uint256 amount0, uint256 amount1)`: fees to in-range positions, no principal; not read. */
  v4Donate: { signature: 'Donate(bytes32,address,uint256,uint256)', topic: '0x29ef05caaff9404b7cb6d1c0e9bbae9eaa7ab2541feba1a9c4248594c08156cb' },
} as const;

/** LPFeeLibrary.DYNAMIC_FEE_FLAG: the pool's hook sets its fee; served as fee 0. */
const DYNAMIC_FEE_FLAG = 0x800000;

const T = {
  initialize: EVENTS.v4Initialize.topic,
  swap: EVENTS.v4Swap.topic,
  modify: EVENTS.v4ModifyLiquidity.topic,
};

/** A change of a pool's state and how to undo it, kept while a reorganisation can still reach its block. */
interface Undo {
  readonly block: number;
  undo(): void;
}

/** The decoding state of one chain's v4 pools: their price and tick ranges, with undo records for reorganisations. */
class V4Decoder implements FamilyDecoder {
  private readonly pools = new Map<string, V4PoolState>();
  /** Undo records in block order; those before `undoHead` are dropped (compacted a batch at a time). */
  private readonly undos: Undo[] = [];
  private undoHead = 0;

  private record(block: number, undo: () => void): void {
    this.undos.push({ block, undo });
  }

  rollback(block: number): void {
    while (this.undos.length > this.undoHead && this.undos[this.undos.length - 1]!.block > block) this.undos.pop()!.undo();
  }

  forget(block: number): void {
    while (this.undoHead < this.undos.length && this.undos[this.undoHead]!.block <= block) this.undoHead++;
    if (this.undoHead > 1024 && this.undoHead * 2 > this.undos.length) {
      this.undos.splice(0, this.undoHead);
      this.undoHead = 0;
    }
  }

  decode(l: RpcLog, key: EventKey, timestamp: number, pool: string, address: (topic: string) => string, out: ChainEvent[]): void {
    const t = l.topics;
    switch (t[0]) {
      case T.initialize: {
        const sqrtPriceX96 = logWord(l, 3);
        const tick = logInt(l, 4);
        if (this.pools.has(pool)) return;
        this.pools.set(pool, new V4PoolState(sqrtPriceX96, tick));
        this.record(key.blockNumber, () => this.pools.delete(pool));
        // The pool's starting price, before any swap; it holds nothing until positions pay in.
        out.push({ kind: 'sync', key, timestamp, pool, reserve0: 0n, reserve1: 0n, sqrtPriceX96 });
        return;
      }
      case T.swap: {
        const p = this.pools.get(pool);
        const sqrtPriceX96 = logWord(l, 2);
        const tick = logInt(l, 4);
        if (p) {
          const before = { sqrtPriceX96: p.sqrtPriceX96, tick: p.tick };
          p.movePrice(sqrtPriceX96, tick);
          this.record(key.blockNumber, () => p.movePrice(before.sqrtPriceX96, before.tick));
          // The reserves after the swap, stated first: the engine then moves none by the swap's amounts.
          const [reserve0, reserve1] = p.reserves();
          out.push({ kind: 'sync', key, timestamp, pool, reserve0, reserve1 });
        }
        // The caller's amounts (negative: paid in) in the pool's view.
        out.push({
          kind: 'swap',
          key,
          timestamp,
          pool,
          amount0: -logSigned(l, 0),
          amount1: -logSigned(l, 1),
          sqrtPriceX96,
          liquidity: logWord(l, 3),
          tick,
          txHash: l.transactionHash,
          sender: address(t[2]!),
          recipient: address(t[2]!),
        });
        return;
      }
      case T.modify: {
        const p = this.pools.get(pool);
        const delta = logSigned(l, 2);
        if (!p || delta === 0n) return; // a zero change only pays the position's fees out
        const lower = logInt(l, 0);
        const upper = logInt(l, 1);
        const [amount0, amount1] = liquidityAmounts(p.tick, p.sqrtPriceX96, lower, upper, delta);
        p.changeLiquidity(lower, upper, delta);
        this.record(key.blockNumber, () => p.changeLiquidity(lower, upper, -delta));
        const [reserve0, reserve1] = p.reserves();
        out.push({ kind: 'sync', key, timestamp, pool, reserve0, reserve1 });
        const base = { key, timestamp, pool, amount0, amount1, liquidity: delta > 0n ? delta : -delta, tickLower: lower, tickUpper: upper, owner: address(t[2]!), txHash: l.transactionHash };
        out.push(delta > 0n ? { kind: 'mint', ...base } : { kind: 'burn', ...base });
        return;
      }
      default:
        return;
    }
  }
}

export const uniswapV4: ProtocolFamily = {
  id: 'uniswap_v4',
  poolProtocol: PoolProtocol.Concentrated,
  events: EVENTS,
  factoryTopics: [T.initialize],
  poolTopics: [T.swap, T.modify],
  poolIdTopic: 1,
  creation(l) {
    if (l.topics[0] !== T.initialize) return null;
    const fee = Number(word(l.data, 0));
    return { pool: l.topics[1]!.toLowerCase(), token0: topicAddress(l.topics[2]!), token1: topicAddress(l.topics[3]!), feePpm: fee === DYNAMIC_FEE_FLAG ? 0 : fee };
  },
  decode() {
    // Read through decoder(): a liquidity change's amounts depend on the pool's earlier logs.
    return null;
  },
  decoder: () => new V4Decoder(),
};
