/**
 * Configuration of the EVM JSON-RPC source: one entry per chain, validated by zod with every problem
 * listed at once (the service's config loader reports them together with its own).
 */
import { z } from 'zod';
import { EVM_PROTOCOLS } from './families/index.js';

/** A JSON-RPC endpoint: the client speaks HTTP(S) only. */
export const RpcUrlSchema = z
  .string()
  .url()
  .refine((u) => !URL.canParse(u) || /^https?:$/.test(new URL(u).protocol), 'must be an http:// or https:// URL');

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const address = z.string().regex(ADDRESS, 'must be a 0x-prefixed 20-byte hex address');

/** The protocol families a factory can name (families/index.ts). */
export { EVM_PROTOCOLS, type EvmProtocol } from './families/index.js';

export const EvmFactorySchema = z
  .object({
    /** DEX id as served by the interface (`uniswap_v2`, `sushiswap`, ...); unique per chain. */
    dexId: z.string().regex(/^[a-z0-9_-]+$/, 'must be lowercase letters, digits, _ or -'),
    /** Display name; the DEX id when absent. */
    name: z.string().min(1).optional(),
    protocol: z.enum(EVM_PROTOCOLS),
    address,
    /** Swap fee in millionths (3000 = 0.3 %, Uniswap v2) of families whose pools do not state theirs (v3 pools carry their own; an Algebra pool's fee changes over time, and this one is served for it). */
    feePpm: z.number().int().min(0).max(1_000_000).default(3_000),
    /** `solidly` factories: swap fee in millionths of their stable pools (500 = 0.05 %, the factory's default, when absent); `feePpm` is their volatile pools'. */
    stableFeePpm: z.number().int().min(0).max(1_000_000).optional(),
    /** First block to scan for this factory's pools; the chain's startBlock when absent. */
    startBlock: z.number().int().min(0).optional(),
  })
  .strict();

export const EvmChainSchema = z
  .object({
    /** Network id as served by the interface (`ethereum`, `base`, ...). */
    id: z.string().regex(/^[a-z0-9_-]+$/, 'must be lowercase letters, digits, _ or -'),
    displayName: z.string().min(1),
    /** Checked against `eth_chainId` before anything is read; ingest refuses to start on a mismatch. */
    chainId: z.number().int().min(1),
    /** JSON-RPC endpoints over HTTP(S); on repeated failures the next one is tried. */
    rpcUrls: z.array(RpcUrlSchema).min(1),
    blockTimeSeconds: z.number().positive().max(3_600).default(12),
    /** First block scanned (the factories' deployment block is a good choice). */
    startBlock: z.number().int().min(0).default(0),
    /**
     * Start from recent history: the first block read on a first start (factories deployed later
     * start at their own block). Pools created before it are taken up when they first trade, once
     * their `factory()` is found to be one configured here.
     */
    fromBlock: z.number().int().min(0).optional(),
    /** Start from the last this many days: the first block at or after now minus them, found by its timestamp on a first start (as fromBlock otherwise). */
    recentDays: z.number().positive().max(36_500).optional(),
    /** Blocks behind the head that are ingested: only blocks at least this deep are read. */
    confirmations: z.number().int().min(0).max(10_000).default(12),
    /** Blocks per `eth_getLogs` request to start with; halved when the node refuses a range, regrown on success. */
    logBatchBlocks: z.number().int().min(1).max(1_000_000).default(2_000),
    /** Blocks read per source step (several `eth_getLogs` ranges), which bounds one ingest commit. */
    stepBlocks: z.number().int().min(1).max(10_000_000).default(20_000),
    /**
     * USD stablecoins. The first is the chain's reference for USD routing, 1 USD by definition; the
     * others are priced by their market (routed like any token), unless listed in `pegged`.
     */
    stablecoins: z.array(address).min(1),
    /** Stablecoins of the list priced at 1 USD by definition, like the first (references for routing). */
    pegged: z.array(address).default([]),
    /** Wrapped native token (WETH, WBNB, ...), routed to USD through the stablecoins. */
    wrappedNative: address,
    factories: z.array(EvmFactorySchema).min(1),
    requestTimeoutMs: z.number().int().min(100).max(600_000).default(20_000),
    /** Retries of a failed request (timeouts, 429, 5xx, network errors) with exponential backoff and jitter. */
    maxRetries: z.number().int().min(0).max(1_000).default(8),
    /** Milliseconds between head polls once live. */
    pollIntervalMs: z.number().int().min(10).max(600_000).default(2_000),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.fromBlock !== undefined && c.recentDays !== undefined) ctx.addIssue({ code: 'custom', path: ['recentDays'], message: 'give fromBlock or recentDays, not both' });
    const stable = new Set(c.stablecoins.map((a) => a.toLowerCase()));
    c.pegged.forEach((a, i) => {
      if (!stable.has(a.toLowerCase())) ctx.addIssue({ code: 'custom', path: ['pegged', i], message: `${a} is not one of the chain's stablecoins` });
    });
    const seen = new Set<string>();
    c.factories.forEach((f, i) => {
      if (seen.has(f.dexId)) ctx.addIssue({ code: 'custom', path: ['factories', i, 'dexId'], message: `duplicate DEX id "${f.dexId}"` });
      if (f.stableFeePpm !== undefined && f.protocol !== 'solidly') ctx.addIssue({ code: 'custom', path: ['factories', i, 'stableFeePpm'], message: 'only a solidly factory has stable pools' });
      seen.add(f.dexId);
    });
  });

export const EvmChainsSchema = z.array(EvmChainSchema).superRefine((chains, ctx) => {
  const seen = new Set<string>();
  chains.forEach((c, i) => {
    if (seen.has(c.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate network id "${c.id}"` });
    seen.add(c.id);
  });
});

export type EvmFactoryConfig = z.infer<typeof EvmFactorySchema>;
export type EvmChainConfig = z.infer<typeof EvmChainSchema>;
export type EvmChainConfigInput = z.input<typeof EvmChainSchema>;
