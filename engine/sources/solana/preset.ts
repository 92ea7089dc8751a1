/**
 * The `solana` network of the built-in registry (engine/sources/evm/presets.ts lists it beside the
 * EVM networks): the DEX programs the source decodes, wrapped SOL and the USD stablecoins.
 *
 * Program ids are those invoked in recorded mainnet transactions (the test data's MANIFEST.json
 * names each transaction's programs) and published in each project's documentation; the mints are
 * the SPL Token mints of wrapped SOL, Circle's USDC and Tether's USDT on Solana.
 */

/** The DEX families the Solana source decodes (engine/sources/solana/families.ts). */
export const SOLANA_FAMILIES = [
  'raydium_amm_v4',
  'raydium_cpmm',
  'raydium_clmm',
  'orca_whirlpool',
  'meteora_dlmm',
  'meteora_damm_v1',
  'meteora_damm_v2',
  'pumpfun',
  'pumpswap',
] as const;
export type SolanaFamily = (typeof SOLANA_FAMILIES)[number];

export interface SolanaProgramPreset {
  /** DEX id as served by the interface. */
  readonly dexId: string;
  readonly name: string;
  readonly family: SolanaFamily;
  /** The program id (base58), served as the DEX's factory. */
  readonly programId: string;
  /** Swap fee in millionths served for its pools (each pool may charge its own; this is the family's usual one). */
  readonly feePpm: number;
}

export interface SolanaPreset {
  readonly id: string;
  readonly displayName: string;
  /** Seconds per slot. */
  readonly slotSeconds: number;
  readonly wrappedNative: { readonly address: string; readonly symbol: string; readonly name: string };
  /** The first is the chain's USD reference; every one listed is pegged at 1 USD. */
  readonly stablecoins: readonly { readonly address: string; readonly symbol: string; readonly name: string }[];
  readonly programs: readonly SolanaProgramPreset[];
}

export const SOLANA_PRESET: SolanaPreset = {
  id: 'solana',
  displayName: 'Solana',
  slotSeconds: 0.4,
  wrappedNative: { address: 'So11111111111111111111111111111111111111112', symbol: 'WSOL', name: 'Wrapped SOL' },
  stablecoins: [
    { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', symbol: 'USDC', name: 'USD Coin' },
    { address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', symbol: 'USDT', name: 'USDT' },
  ],
  programs: [
    { dexId: 'raydium', name: 'Raydium AMM v4', family: 'raydium_amm_v4', programId: '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8', feePpm: 2_500 },
    { dexId: 'raydium_cpmm', name: 'Raydium CPMM', family: 'raydium_cpmm', programId: 'CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C', feePpm: 2_500 },
    { dexId: 'raydium_clmm', name: 'Raydium CLMM', family: 'raydium_clmm', programId: 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK', feePpm: 2_500 },
    { dexId: 'orca', name: 'Orca Whirlpools', family: 'orca_whirlpool', programId: 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc', feePpm: 3_000 },
    { dexId: 'meteora_dlmm', name: 'Meteora DLMM', family: 'meteora_dlmm', programId: 'LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo', feePpm: 2_500 },
    { dexId: 'meteora_damm', name: 'Meteora DAMM v1', family: 'meteora_damm_v1', programId: 'Eo7WjKq67rjJQSZxS6z3YkapzY3eMj6Xy8X5EQVn5UaB', feePpm: 2_500 },
    { dexId: 'meteora_damm_v2', name: 'Meteora DAMM v2', family: 'meteora_damm_v2', programId: 'cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG', feePpm: 2_500 },
    { dexId: 'pumpfun', name: 'pump.fun', family: 'pumpfun', programId: '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P', feePpm: 10_000 },
    { dexId: 'pumpswap', name: 'PumpSwap', family: 'pumpswap', programId: 'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA', feePpm: 2_500 },
  ],
};
