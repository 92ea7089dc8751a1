/**
 * The protocol families the EVM source reads, by the `protocol` id a factory names. Adding a family:
 * a folder beside these exporting one ProtocolFamily (family.ts), and one line here; the configuration's
 * `protocol` values, the topics asked for and TOPICS follow from this list.
 */
import { algebra } from './algebra/index.js';
import { balancerV2 } from './balancer-v2/index.js';
import type { ProtocolFamily } from './family.js';
import { pancakeswapV3 } from './pancakeswap-v3/index.js';
import { solidly } from './solidly/index.js';
import { uniswapV2 } from './uniswap-v2/index.js';
import { uniswapV3 } from './uniswap-v3/index.js';
import { uniswapV4 } from './uniswap-v4/index.js';

export const FAMILIES = {
  uniswap_v2: uniswapV2,
  uniswap_v3: uniswapV3,
  pancakeswap_v3: pancakeswapV3,
  algebra,
  solidly,
  uniswap_v4: uniswapV4,
  balancer_v2: balancerV2,
} as const satisfies Record<string, ProtocolFamily>;

export type EvmProtocol = keyof typeof FAMILIES;
export const EVM_PROTOCOLS = Object.keys(FAMILIES) as [EvmProtocol, ...EvmProtocol[]];
export const FAMILY_LIST: readonly ProtocolFamily[] = Object.values(FAMILIES);

/** Topics of every factory log that announces a pool, and of every pool log, over all families. */
export const FACTORY_TOPICS: readonly string[] = [...new Set(FAMILY_LIST.flatMap((f) => f.factoryTopics))];
export const POOL_TOPICS: readonly string[] = [...new Set(FAMILY_LIST.flatMap((f) => f.poolTopics))];

export type { FamilyDecoder, PoolCreation, ProtocolFamily } from './family.js';
