/**
 * Taking up a pool created before a chain's scan starts (a start from recent history: `fromBlock`,
 * `recentDays`). Its creation log is never read; at its first log its creation data is read from the
 * pool itself (`token0()`, `token1()`, and `fee()` or `stable()` where the family states one there),
 * and the pool is accepted only when its factory's own registry (`getPair`, `getPool`, `poolByPair`)
 * names it: a contract that merely claims a configured factory through its `factory()` is refused.
 */
import { wordAddress, word } from '../words.js';
import type { PoolCreation } from './family.js';

/** A view call's answer (hex), null when it reverts or the contract lacks the function. */
export type ViewCall = (to: string, data: string) => Promise<string | null>;

/** Function selectors of the views read (the first four bytes of keccak-256 of the signature). */
export const VIEW = {
  factory: '0xc45a0155', // factory()
  token0: '0x0dfe1681', // token0()
  token1: '0xd21220a7', // token1()
  fee: '0xddca3f43', // fee()
  stable: '0x22be3de1', // stable()
  getPair: '0xe6a43905', // getPair(address,address): Uniswap v2
  getPoolByFee: '0x1698ee82', // getPool(address,address,uint24): Uniswap v3, PancakeSwap v3
  getPoolByStable: '0x79bc57d5', // getPool(address,address,bool): Solidly
  poolByPair: '0xd9a641e1', // poolByPair(address,address): Algebra
  slot0: '0x3850c7bd', // slot0(): Uniswap v3, PancakeSwap v3 (sqrtPriceX96 first)
  globalState: '0xe76c01e4', // globalState(): Algebra (price first)
  balanceOf: '0x70a08231', // balanceOf(address)
} as const;

/** An ABI word of an address, or of a small integer. */
export const wordOf = (x: string | bigint | number): string => (typeof x === 'string' ? x.slice(2).toLowerCase() : BigInt(x).toString(16)).padStart(64, '0');

/** The first word of an answer as an address, null without one. */
function answerAddress(out: string | null): string | null {
  return out !== null && out.length >= 66 ? wordAddress(out, 0) : null;
}

/** What `takeUp` reads: the registry call that must name the pool back, given its tokens. */
type RegistryCall = (token0: string, token1: string, pool: string, call: ViewCall) => Promise<{ data: string; feePpm?: number; stable?: boolean } | null>;

/**
 * A family's `takeUp`: the pool's tokens, then the factory's registry call (`registry`), whose answer
 * must be the pool. `feePpm` is the factory's configured fee unless the registry call reads the pool's.
 */
export function takeUpBy(registry: RegistryCall, protocolOf?: (stable: boolean) => PoolCreation['protocol']) {
  return async (call: ViewCall, pool: string, factory: string, defaultFeePpm: number, stableFeePpm: number | undefined): Promise<PoolCreation | null> => {
    const [a, b] = await Promise.all([call(pool, VIEW.token0), call(pool, VIEW.token1)]);
    const token0 = answerAddress(a);
    const token1 = answerAddress(b);
    if (token0 === null || token1 === null) return null;
    const r = await registry(token0, token1, pool, call);
    if (r === null || answerAddress(await call(factory, r.data)) !== pool) return null;
    const feePpm = r.feePpm ?? (r.stable ? (stableFeePpm ?? defaultFeePpm) : defaultFeePpm);
    return { pool, token0, token1, feePpm, ...(protocolOf && r.stable !== undefined ? { protocol: protocolOf(r.stable) } : {}) };
  };
}

/** Uniswap v2 pairs: `getPair(token0, token1)`. */
export const pairRegistry: RegistryCall = async (t0, t1) => ({ data: VIEW.getPair + wordOf(t0) + wordOf(t1) });

/** Uniswap v3 style pools: the pool's `fee()`, then `getPool(token0, token1, fee)`. */
export const feeTierRegistry: RegistryCall = async (t0, t1, pool, call) => {
  const out = await call(pool, VIEW.fee);
  if (out === null || out.length < 66) return null;
  const fee = Number(word(out, 0));
  return { data: VIEW.getPoolByFee + wordOf(t0) + wordOf(t1) + wordOf(fee), feePpm: fee };
};

/** Solidly pools: the pool's `stable()`, then `getPool(token0, token1, stable)`. */
export const stableRegistry: RegistryCall = async (t0, t1, pool, call) => {
  const out = await call(pool, VIEW.stable);
  if (out === null || out.length < 66) return null;
  const stable = word(out, 0) !== 0n;
  return { data: VIEW.getPoolByStable + wordOf(t0) + wordOf(t1) + wordOf(stable ? 1 : 0), stable };
};

/** Algebra pools: `poolByPair(token0, token1)`. */
export const pairRegistryAlgebra: RegistryCall = async (t0, t1) => ({ data: VIEW.poolByPair + wordOf(t0) + wordOf(t1) });
