/**
 * The one event model every source emits (simulator, EVM JSON-RPC, replay).
 *
 * On-chain events are identified by `(chain, blockNumber, txIndex, logIndex)`; a batch is
 * always for one chain, so the chain lives on the batch. Raw amounts and reserves are
 * integers (`bigint`) in the token's smallest unit; decimals are applied only where USD
 * figures are made. Signed amounts follow the pool's point of view, as Uniswap v3 logs do:
 * positive means the pool received tokens, negative means tokens left the pool.
 */

export interface EventKey {
  /** Integer block (slot) number; exact up to 2^53. */
  readonly blockNumber: number;
  readonly txIndex: number;
  readonly logIndex: number;
}

/** Pricing role of a token on its chain, used to route USD prices. */
export const TokenRole = {
  /** The chain's reference stablecoin: its price is 1 USD by definition. */
  PrimaryStable: 0,
  Stable: 1,
  WrappedNative: 2,
  Other: 3,
} as const;
export type TokenRole = (typeof TokenRole)[keyof typeof TokenRole];

export const PoolProtocol = {
  /** Constant product x*y=k with reserves (Uniswap v2 and its forks). */
  ConstantProduct: 0,
  /** Concentrated liquidity with sqrtPriceX96 and active liquidity (Uniswap v3 style). */
  Concentrated: 1,
  /**
   * Solidly stable curve x^3*y + x*y^3 = k on reserves with decimals applied (Velodrome v2,
   * Aerodrome): reserves from its `Sync` like a constant-product pool, priced at the curve's marginal
   * price (engine/state/reserve-price.ts).
   */
  SolidlyStable: 2,
  /**
   * Weighted pool (Balancer v2): reserves are the pool's balances of its first two tokens, moved by
   * its swaps and joins and exits; priced at the weighted ratio (B1/w1)/(B0/w0) of those balances and
   * their normalised weights (engine/state/reserve-price.ts).
   */
  Weighted: 3,
} as const;
export type PoolProtocol = (typeof PoolProtocol)[keyof typeof PoolProtocol];

export interface TokenInfo {
  readonly address: string;
  readonly name: string;
  readonly symbol: string;
  readonly decimals: number;
  /** Raw integer units. */
  readonly totalSupply: bigint;
  readonly role: TokenRole;
}

export interface PoolCreated {
  readonly kind: 'pool_created';
  readonly key: EventKey;
  /** Block timestamp, Unix seconds. */
  readonly timestamp: number;
  readonly pool: string;
  readonly dexId: string;
  readonly factory: string;
  readonly protocol: PoolProtocol;
  /** Swap fee in millionths (3000 = 0.3 %). */
  readonly feePpm: number;
  readonly token0: TokenInfo;
  readonly token1: TokenInfo;
  /** Weighted pools: the normalised weights of token 0 and token 1 (1e18 = 100 %). */
  readonly weights?: readonly [bigint, bigint];
}

export interface Swap {
  readonly kind: 'swap';
  readonly key: EventKey;
  readonly timestamp: number;
  readonly pool: string;
  /** Pool's view: + received by the pool, - paid out by the pool. */
  readonly amount0: bigint;
  readonly amount1: bigint;
  /** Concentrated pools: price after the swap, Q64.96. 0n for constant-product pools. */
  readonly sqrtPriceX96: bigint;
  /** Concentrated pools: active liquidity after the swap. 0n for constant-product pools. */
  readonly liquidity: bigint;
  readonly tick: number;
  readonly txHash: string;
  readonly sender: string;
  readonly recipient: string;
}

/** A change of liquidity; amounts are magnitudes (>= 0), their direction given by the kind. */
interface LiquidityChange {
  readonly key: EventKey;
  readonly timestamp: number;
  readonly pool: string;
  readonly amount0: bigint;
  readonly amount1: bigint;
  readonly liquidity: bigint;
  readonly tickLower: number;
  readonly tickUpper: number;
  readonly owner: string;
  readonly txHash: string;
}

/** Liquidity added: the pool received the amounts. */
export interface Mint extends LiquidityChange {
  readonly kind: 'mint';
}

/**
 * Liquidity removed. Constant-product pools: the amounts left the pool. Concentrated pools: the
 * amounts were credited to the position and stay in the pool until its `Collect` (a ReserveDelta).
 */
export interface Burn extends LiquidityChange {
  readonly kind: 'burn';
}

/**
 * Tokens that entered or left a pool outside a user transaction: on a concentrated-liquidity pool a
 * `Collect` (a position's owed tokens paid out: negative), a `CollectProtocol` (protocol fees paid
 * out: negative) or a `Flash` (the fee paid in: positive). It moves the pool's reserves, so that
 * they stay equal to the pool's token balances, and is no transaction (a v3 `Burn` only credits the
 * position; the tokens leave with its `Collect`).
 */
export interface ReserveDelta {
  readonly kind: 'reserve_delta';
  readonly key: EventKey;
  readonly timestamp: number;
  readonly pool: string;
  /** Pool's view: + received by the pool, - paid out by the pool. */
  readonly amount0: bigint;
  readonly amount1: bigint;
}

/**
 * Authoritative reserves after a change (Uniswap v2 `Sync`), or, with `sqrtPriceX96`, a concentrated
 * pool's `Initialize`: the price it starts at, before any swap (its reserves are then untouched).
 */
export interface Sync {
  readonly kind: 'sync';
  readonly key: EventKey;
  readonly timestamp: number;
  readonly pool: string;
  readonly reserve0: bigint;
  readonly reserve1: bigint;
  /** Concentrated pools' `Initialize` only: the initial price, Q64.96. */
  readonly sqrtPriceX96?: bigint;
}

/** A block seen by the source; emitted before the block's other events. */
export interface Block {
  readonly kind: 'block';
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
  readonly timestamp: number;
}

/** Roll back every effect of blocks after `toBlock` (which stays canonical). */
export interface Reorg {
  readonly kind: 'reorg';
  readonly toBlock: number;
  readonly toHash: string;
}

export type ChainEvent = PoolCreated | Swap | Mint | Burn | Sync | ReserveDelta | Block | Reorg;
export type OnChainEvent = PoolCreated | Swap | Mint | Burn | Sync | ReserveDelta;

/** A run of events of one chain, in chain order. */
export interface ChainEventBatch {
  readonly chain: string;
  readonly events: readonly ChainEvent[];
  /**
   * Facts a source keeps about the chain beside its events (the Solana pools' vault accounts), each
   * written to the store's meta under `source.<chain>.<key>` in the commit of the batch, and given
   * back to the source at its next start (store.ts, sourceRecords). Their values never change: a
   * rollback leaves them.
   */
  readonly records?: readonly (readonly [key: string, value: unknown])[];
}

/** Total order of on-chain events of one chain. */
export function compareKeys(a: EventKey, b: EventKey): number {
  return a.blockNumber - b.blockNumber || a.txIndex - b.txIndex || a.logIndex - b.logIndex;
}

/** Static description of a network and its DEXes, given by the source at start. */
export interface NetworkInfo {
  readonly id: string;
  readonly displayName: string;
  /** Seconds between blocks (slots), used by sources that generate or estimate times. */
  readonly blockTimeSeconds: number;
  readonly dexes: readonly DexInfo[];
}

export interface DexInfo {
  readonly id: string;
  readonly name: string;
  /** `uniswap_v2`, `uniswap_v3`, `raydium`, ... */
  readonly protocol: string;
  readonly poolProtocol: PoolProtocol;
  readonly factory: string;
}
