/**
 * Balancer v2 weighted pools: one Vault holds every pool's tokens and emits every pool's logs, naming
 * the pool by its 32-byte id in topic 1 (served as the pool's address, `0x` and 64 hex digits; the
 * pool contract's address is the id's first 20 bytes). The factory configured is the Vault.
 *
 * - `TokensRegistered` announces a pool with its tokens (in the pool's order); the pool's normalised
 *   weights (`getNormalizedWeights()`) and swap fee (`getSwapFeePercentage()`) are read from the
 *   pool contract when it is found. A pool whose contract has no weights (stable, linear and other
 *   Vault pools) is not served.
 * - Pools with more than two tokens are served as the pair of their first two tokens (token 0 and
 *   token 1 in the pool's registration order): reserves are the pool's balances of those two, and
 *   the price is theirs, (B1/w1) / (B0/w0) (PoolProtocol.Weighted, engine/state/reserve-price.ts).
 * - `Swap(poolId, tokenIn, tokenOut, amountIn, amountOut)`: between token 0 and token 1 a swap (the
 *   Vault's log names no trader: sender and recipient are the Vault); touching one of them only, a
 *   change of that reserve (a `reserve_delta`, no transaction); touching neither, nothing.
 * - `PoolBalanceChanged`: a join (every delta >= 0) is an add of the amounts paid in, an exit a
 *   remove of the amounts paid out; the protocol fees the Vault charges on it leave the pool's
 *   balances (a `reserve_delta`).
 * - `PoolBalanceManaged` (asset managers): the pool's balance moves by cash plus managed delta.
 *
 * Weights are read once: the moving weights of liquidity bootstrapping pools are not followed, nor
 * a swap fee changed later. The decoding state is each pool's first two tokens (a swap's tokens are
 * named by address), kept per chain and rebuilt from the Vault's logs on a restart.
 */
import { PoolProtocol, type ChainEvent, type EventKey } from '../../../../events/model.js';
import { logSigned, logWord, signed, word, type RpcLog } from '../../words.js';
import type { FamilyDecoder, PoolCreation, ProtocolFamily } from '../family.js';
import type { ViewCall } from '../take-up.js';

export const EVENTS = {
  /** Vault `TokensRegistered(bytes32 indexed poolId, IERC20[] tokens, address[] assetManagers)` */
  balancerTokensRegistered: { signature: 'TokensRegistered(bytes32,address[],address[])', topic: '0xf5847d3f2197b16cdcd2098ec95d0905cd1abdaf415f07bb7cef2bba8ac5dec4' },
  /** Vault `Swap(bytes32 indexed poolId, IERC20 indexed tokenIn, IERC20 indexed tokenOut, uint256 amountIn, uint256 amountOut)` */
  balancerSwap: { signature: 'Swap(bytes32,address,address,uint256,uint256)', topic: '0x2170c741c41531aec20e7c107c24eecfdd15e69c9bb0a8dd37b1840b9e0b207b' },
  /** Vault `PoolBalanceChanged(bytes32 indexed poolId, address indexed liquidityProvider, IERC20[] tokens, int256[] deltas, uint256[] protocolFeeAmounts)` */
  balancerPoolBalanceChanged: { signature: 'PoolBalanceChanged(bytes32,address,address[],int256[],uint256[])', topic: '0xe5ce249087ce04f05a957192435400fd97868dba0e6a4b4c049abf8af80dae78' },
  /** Vault `PoolBalanceManaged(bytes32 indexed poolId, address indexed assetManager, IERC20 indexed token, int256 cashDelta, int256 managedDelta)` */
  balancerPoolBalanceManaged: { signature: 'PoolBalanceManaged(bytes32,address,address,int256,int256)', topic: '0x6edcaf6241105b4c94c2efdbf3a6b12458eb3d07be3a0e81d24b13c44045fe7a' },
} as const;

const T = {
  registered: EVENTS.balancerTokensRegistered.topic,
  swap: EVENTS.balancerSwap.topic,
  changed: EVENTS.balancerPoolBalanceChanged.topic,
  managed: EVENTS.balancerPoolBalanceManaged.topic,
};

/** Pool views read when a pool is found. */
const VIEW = {
  getNormalizedWeights: '0xf89f27ed', // getNormalizedWeights() returns (uint256[])
  getSwapFeePercentage: '0x55c67628', // getSwapFeePercentage() returns (uint256), 1e18 = 100 %
} as const;

/** A swap fee of 1e18 (100 %) in millionths: divided by 1e12. */
const FEE_TO_PPM = 1_000_000_000_000n;

/** The i-th element of the dynamic array whose offset is in word `at` of the data; its length with i = -1. */
function arrayWord(data: string, at: number, i: number): bigint {
  const start = Number(word(data, at)) / 32;
  return word(data, start + 1 + i);
}

/** A pool id topic as served: lowercase. */
const idOf = (topic: string): string => topic.toLowerCase();

/** The address in a word (the low 20 bytes). */
const wordToAddress = (w: bigint): string => `0x${w.toString(16).padStart(40, '0')}`;

/** Per pool, its first two tokens and the block it was registered in (for rollbacks). */
class BalancerDecoder implements FamilyDecoder {
  private readonly tokens = new Map<string, { readonly t0: string; readonly t1: string; readonly block: number }>();
  /** The Vault's address as its logs spell it, and in lowercase (one Vault per chain). */
  private vaultAsSent = '';
  private vault = '';

  private lower(address: string): string {
    if (address !== this.vaultAsSent) {
      this.vaultAsSent = address;
      this.vault = address.toLowerCase();
    }
    return this.vault;
  }

  decode(l: RpcLog, key: EventKey, timestamp: number, pool: string, address: (topic: string) => string, out: ChainEvent[]): void {
    const t = l.topics;
    switch (t[0]) {
      case T.registered: {
        if (Number(arrayWord(l.data, 0, -1)) < 2 || this.tokens.has(pool)) return;
        this.tokens.set(pool, { t0: wordToAddress(arrayWord(l.data, 0, 0)), t1: wordToAddress(arrayWord(l.data, 0, 1)), block: key.blockNumber });
        return;
      }
      case T.swap: {
        const p = this.tokens.get(pool);
        if (!p) return;
        const tokenIn = address(t[2]!);
        const tokenOut = address(t[3]!);
        const amountIn = logWord(l, 0);
        const amountOut = logWord(l, 1);
        const sideIn = tokenIn === p.t0 ? 0 : tokenIn === p.t1 ? 1 : -1;
        const sideOut = tokenOut === p.t0 ? 0 : tokenOut === p.t1 ? 1 : -1;
        if (sideIn >= 0 && sideOut >= 0) {
          const vault = this.lower(l.address);
          const paid = -amountOut;
          out.push({ kind: 'swap', key, timestamp, pool, amount0: sideIn === 0 ? amountIn : paid, amount1: sideIn === 0 ? paid : amountIn, sqrtPriceX96: 0n, liquidity: 0n, tick: 0, txHash: l.transactionHash, sender: vault, recipient: vault });
        } else if (sideIn >= 0) out.push({ kind: 'reserve_delta', key, timestamp, pool, amount0: sideIn === 0 ? amountIn : 0n, amount1: sideIn === 1 ? amountIn : 0n });
        else if (sideOut >= 0) out.push({ kind: 'reserve_delta', key, timestamp, pool, amount0: sideOut === 0 ? -amountOut : 0n, amount1: sideOut === 1 ? -amountOut : 0n });
        return;
      }
      case T.changed: {
        const p = this.tokens.get(pool);
        if (!p) return;
        // tokens, deltas and protocol fee amounts: three arrays of the pool's tokens, in its order.
        const n = Number(arrayWord(l.data, 0, -1));
        let d0 = 0n;
        let d1 = 0n;
        let f0 = 0n;
        let f1 = 0n;
        let join = true;
        for (let i = 0; i < n; i++) {
          const token = wordToAddress(arrayWord(l.data, 0, i));
          const delta = signed(arrayWord(l.data, 1, i));
          if (delta < 0n) join = false;
          const fee = arrayWord(l.data, 2, i);
          if (token === p.t0) [d0, f0] = [delta, fee];
          else if (token === p.t1) [d1, f1] = [delta, fee];
        }
        const abs = (x: bigint) => (x < 0n ? -x : x);
        const owner = address(t[2]!);
        if (d0 !== 0n || d1 !== 0n)
          out.push({ kind: join ? 'mint' : 'burn', key, timestamp, pool, amount0: abs(d0), amount1: abs(d1), liquidity: 0n, tickLower: 0, tickUpper: 0, owner, txHash: l.transactionHash });
        if (f0 !== 0n || f1 !== 0n) out.push({ kind: 'reserve_delta', key, timestamp, pool, amount0: -f0, amount1: -f1 });
        return;
      }
      case T.managed: {
        const p = this.tokens.get(pool);
        if (!p) return;
        const token = address(t[3]!);
        const side = token === p.t0 ? 0 : token === p.t1 ? 1 : -1;
        const change = logSigned(l, 0) + logSigned(l, 1);
        if (side < 0 || change === 0n) return;
        out.push({ kind: 'reserve_delta', key, timestamp, pool, amount0: side === 0 ? change : 0n, amount1: side === 1 ? change : 0n });
        return;
      }
      default:
        return;
    }
  }

  rollback(block: number): void {
    for (const [pool, p] of this.tokens) if (p.block > block) this.tokens.delete(pool);
  }

  forget(): void {
    // A pool's tokens never change: nothing is kept only to undo blocks.
  }
}

/** Reads a found pool's weights and swap fee from its contract (the id's first 20 bytes); null when it has no weights. */
async function complete(call: ViewCall, c: PoolCreation): Promise<PoolCreation | null> {
  const contract = c.pool.slice(0, 42);
  const [weights, fee] = await Promise.all([call(contract, VIEW.getNormalizedWeights), call(contract, VIEW.getSwapFeePercentage)]);
  if (weights === null || weights.length < 2 + 64 * 4 || Number(arrayWord(weights, 0, -1)) < 2) return null;
  const w0 = arrayWord(weights, 0, 0);
  const w1 = arrayWord(weights, 0, 1);
  if (w0 === 0n || w1 === 0n) return null;
  const feePpm = fee !== null && fee.length >= 66 ? Number(BigInt(fee.slice(0, 66)) / FEE_TO_PPM) : c.feePpm;
  return { ...c, feePpm, weights: [w0, w1] };
}

export const balancerV2: ProtocolFamily = {
  id: 'balancer_v2',
  poolProtocol: PoolProtocol.Weighted,
  events: EVENTS,
  factoryTopics: [T.registered],
  poolTopics: [T.swap, T.changed, T.managed],
  poolIdTopic: 1,
  creation(l, defaultFeePpm) {
    if (l.topics[0] !== T.registered || l.topics.length < 2) return null;
    if (Number(arrayWord(l.data, 0, -1)) < 2) return null;
    return { pool: idOf(l.topics[1]!), token0: wordToAddress(arrayWord(l.data, 0, 0)), token1: wordToAddress(arrayWord(l.data, 0, 1)), feePpm: defaultFeePpm };
  },
  complete,
  decode() {
    // Read through decoder(): a swap's tokens are named by address, matched against the pool's.
    return null;
  },
  decoder: () => new BalancerDecoder(),
};
