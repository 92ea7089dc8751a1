/**
 * Configuration of the Solana JSON-RPC source (the config file's `solana` section, or
 * `--network solana --rpc URL`), validated by zod with every problem listed at once.
 */
import { z } from 'zod';
import { RpcUrlSchema } from '../evm/config.js';
import { SOLANA_FAMILIES, SOLANA_PRESET } from './preset.js';

/** A base58 public key: 32 to 44 digits of the Bitcoin alphabet. */
const PUBKEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const pubkey = z.string().regex(PUBKEY, 'must be a base58 public key');

export const SolanaProgramSchema = z
  .object({
    dexId: z.string().regex(/^[a-z0-9_-]+$/, 'must be lowercase letters, digits, _ or -'),
    name: z.string().min(1).optional(),
    family: z.enum(SOLANA_FAMILIES),
    programId: pubkey,
    feePpm: z.number().int().min(0).max(1_000_000).default(2_500),
  })
  .strict();

export const SolanaChainSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9_-]+$/, 'must be lowercase letters, digits, _ or -').default(SOLANA_PRESET.id),
    displayName: z.string().min(1).default(SOLANA_PRESET.displayName),
    rpcUrls: z.array(RpcUrlSchema).min(1),
    slotSeconds: z.number().positive().max(60).default(SOLANA_PRESET.slotSeconds),
    /**
     * First slot read on a fresh store. Absent: `backfillSlots` before the node's confirmed slot at
     * the first start (0 of them: from that slot on).
     */
    startSlot: z.number().int().min(0).optional(),
    /** Slots read before the current one on a fresh store when neither startSlot nor recentDays is given (216,000 slots: about a day). */
    backfillSlots: z.number().int().min(0).max(100_000_000).default(0),
    /**
     * Start from recent history on a fresh store: the first block whose block time is at or after now
     * minus these days, found by a binary search over the slots that hold blocks (`--recent DAYS`).
     */
    recentDays: z.number().positive().max(36_500).optional(),
    /** `confirmed` follows the chain closely (a fork a confirmed slot did not survive is rolled back); `finalized` reads only what cannot change. */
    commitment: z.enum(['confirmed', 'finalized']).default('confirmed'),
    /** Slots asked for per `getBlocks` (the nodes answer at most 500,000). */
    rangeSlots: z.number().int().min(1).max(500_000).default(500_000),
    /** Blocks fetched per source step (an ingest commit), several at once. */
    stepBlocks: z.number().int().min(1).max(10_000).default(32),
    /** USD stablecoins, the first the reference; each is pegged at 1 USD. */
    stablecoins: z.array(pubkey).min(1).default(SOLANA_PRESET.stablecoins.map((s) => s.address)),
    wrappedNative: pubkey.default(SOLANA_PRESET.wrappedNative.address),
    programs: z.array(SolanaProgramSchema).min(1).default(SOLANA_PRESET.programs.map((p) => ({ ...p }))),
    requestTimeoutMs: z.number().int().min(100).max(600_000).default(30_000),
    maxRetries: z.number().int().min(0).max(1_000).default(8),
    /** Milliseconds between polls of the node's slot once live, while no subscription is up. */
    pollIntervalMs: z.number().int().min(10).max(600_000).default(1_000),
    /**
     * The node's PubSub WebSocket endpoint (`ws://` or `wss://`). Absent: the first RPC URL with
     * http turned into ws and https into wss, and an explicit port plus one (Agave validators and
     * solana-test-validator serve PubSub next to RPC: 8899 -> 8900); without a port, the same host
     * and path (as hosted RPC providers serve it).
     */
    wsUrl: z
      .string()
      .url()
      .refine((u) => /^wss?:\/\//i.test(u), 'must be a ws:// or wss:// URL')
      .optional(),
    /** Whether to subscribe at all (`blockSubscribe`, else `slotSubscribe`); false: polling only. */
    subscribe: z.boolean().default(true),
    /** A subscription that has notified nothing for this long is taken as dead: polling resumes and the socket is opened again. */
    wsSilenceMs: z.number().int().min(100).max(3_600_000).default(10_000),
    /** Longest wait between two attempts to open the socket again (the wait doubles from 500 ms up to it). */
    wsRetryMaxMs: z.number().int().min(100).max(3_600_000).default(30_000),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.startSlot !== undefined && c.recentDays !== undefined) ctx.addIssue({ code: 'custom', path: ['recentDays'], message: 'give startSlot or recentDays, not both' });
    const seen = new Set<string>();
    c.programs.forEach((p, i) => {
      if (seen.has(p.dexId)) ctx.addIssue({ code: 'custom', path: ['programs', i, 'dexId'], message: `duplicate DEX id "${p.dexId}"` });
      seen.add(p.dexId);
    });
  });

export const SolanaChainsSchema = z.array(SolanaChainSchema).superRefine((chains, ctx) => {
  const seen = new Set<string>();
  chains.forEach((c, i) => {
    if (seen.has(c.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate network id "${c.id}"` });
    seen.add(c.id);
  });
});

/** The PubSub endpoint of a chain: its `wsUrl`, else derived from its first RPC URL (the rule above). */
export function pubsubUrl(config: Pick<SolanaChainConfig, 'wsUrl' | 'rpcUrls'>): string {
  if (config.wsUrl !== undefined) return config.wsUrl;
  const u = new URL(config.rpcUrls[0]!);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.port !== '') u.port = String(Number(u.port) + 1);
  return u.toString();
}

export type SolanaProgramConfig = z.infer<typeof SolanaProgramSchema>;
export type SolanaChainConfig = z.infer<typeof SolanaChainSchema>;
export type SolanaChainConfigInput = z.input<typeof SolanaChainSchema>;
