/**
 * A protocol family: the factory and pool contracts of one DEX design (Uniswap v2 and its clones,
 * Uniswap v3 and its clones, ...) as the source reads them. One folder per family, each exporting
 * one ProtocolFamily; families/index.ts lists them, and that list is the set of `protocol` values a
 * factory may name. The chain follower knows nothing of any family: it asks the factory's family
 * which logs announce pools and the pool's family what each of its logs means.
 *
 * Pricing and reserves are the engine's, chosen by `poolProtocol`: a constant-product pool is priced
 * from the reserves of its `sync` events (their ratio; a Solidly stable pool at its curve's marginal
 * price there: engine/state/reserve-price.ts), a concentrated one from the sqrtPriceX96 of its swaps (and
 * `sync` events carrying sqrtPriceX96 before the first swap), with reserves from the amounts its
 * swaps and mints moved in and its collects moved out, and the fees flashes paid in (`reserve_delta`
 * events): its token balances (engine/shards/apply.ts).
 *
 * Two options serve designs unlike these: a singleton whose one contract emits every pool's logs,
 * naming the pool by an id in a topic (`poolIdTopic`, Uniswap v4), and a family whose logs mean
 * something only against the pool's earlier ones (`decoder`, a per-chain state the follower keeps,
 * rolls back on reorganisations and rebuilds on restart).
 */
import type { ChainEvent, EventKey, PoolProtocol } from '../../../events/model.js';
import type { RpcLog } from '../words.js';
import type { ViewCall } from './take-up.js';

/** An event of the family's contracts: its canonical signature and topic (keccak-256 of the signature). */
export interface FamilyEvent {
  readonly signature: string;
  readonly topic: string;
}

/** A pool announced by a factory log. */
export interface PoolCreation {
  /** Lowercase addresses. */
  readonly pool: string;
  readonly token0: string;
  readonly token1: string;
  /** Swap fee in millionths; families whose pools carry no fee in the creation log return `defaultFeePpm`. */
  readonly feePpm: number;
  /** The pool's pricing model when the creation log chooses it (a Solidly stable pool); the family's `poolProtocol` when absent. */
  readonly protocol?: PoolProtocol;
  /** Weighted pools: the normalised weights of token 0 and token 1 (1e18 = 100 %). */
  readonly weights?: readonly [bigint, bigint];
}

export interface ProtocolFamily {
  /** The `protocol` a factory names in the configuration, served as the DEX's protocol. */
  readonly id: string;
  /** The engine's pricing and reserves model for the family's pools (a pool's creation may state another). */
  readonly poolProtocol: PoolProtocol;
  /** Every event decoded, by a name unique across families (the names TOPICS is keyed by). */
  readonly events: Readonly<Record<string, FamilyEvent>>;
  /** Topics of the factory logs that announce a pool. */
  readonly factoryTopics: readonly string[];
  /** Topics of the pool logs decoded. */
  readonly poolTopics: readonly string[];
  /**
   * The pool a factory log announces, or null when the log is no pool creation of this family.
   * `defaultFeePpm` and `stableFeePpm` are the factory's configured fees (the latter for Solidly
   * stable pools; undefined when not configured).
   */
  creation(log: RpcLog, defaultFeePpm: number, stableFeePpm: number | undefined): PoolCreation | null;
  /**
   * A pool log as an engine event, or null when the log is none of the family's pool events.
   * `topicAddress` reads an address topic (memoised by the caller: routers repeat in runs).
   */
  decode(log: RpcLog, key: EventKey, timestamp: number, pool: string, topicAddress: (topic: string) => string): ChainEvent | null;
  /**
   * Singletons: every pool's logs come from the factory's own address, the pool named by the 32-byte
   * id in this topic (a pool is served by its id, `0x` and 64 hex digits); the factory's creation log
   * is also the pool's first log. Absent: each pool is a contract whose logs come from its address.
   */
  readonly poolIdTopic?: number;
  /**
   * A pool created before the chain's scan starts (a start from recent history), met at its first
   * log: its creation data read from the pool and checked with `factory`'s registry (take-up.ts);
   * null when the factory does not name it. Absent: such pools of the family are not taken up.
   */
  takeUp?(call: ViewCall, pool: string, factory: string, defaultFeePpm: number, stableFeePpm: number | undefined): Promise<PoolCreation | null>;
  /**
   * What a creation log does not state, read from the pool when it is found (a Balancer pool's
   * weights and swap fee); null: the pool is none the family serves. Absent: the log says it all.
   */
  complete?(call: ViewCall, creation: PoolCreation): Promise<PoolCreation | null>;
  /** Concentrated pools taken up: the pool's view whose first word is its sqrtPriceX96 (slot0, globalState). */
  readonly priceView?: string;
  /** Families whose logs are read against the pool's earlier ones: a chain's decoder, used in place of `decode`. */
  decoder?(): FamilyDecoder;
}

/** The decoding state of one chain's pools of a family (see ProtocolFamily.decoder). */
export interface FamilyDecoder {
  /** Appends the log's engine events to `out` (none when it is none of the family's, or moves nothing). */
  decode(log: RpcLog, key: EventKey, timestamp: number, pool: string, topicAddress: (topic: string) => string, out: ChainEvent[]): void;
  /** Undoes what the logs of blocks after `block` did (a reorganisation rolled back to it). */
  rollback(block: number): void;
  /** Drops what is kept to undo blocks at or before `block`: no reorganisation reaches back past it. */
  forget(block: number): void;
}
