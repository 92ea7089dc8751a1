/**
 * ERC-20 metadata by `eth_call`: `name`, `symbol`, `decimals`, `totalSupply`, each read on its own so
 * that one missing or reverting function does not lose the others. `bytes32` names and symbols are
 * decoded as text. Fallbacks: symbol → first bytes of the address, name → symbol, decimals → 18
 * (the ERC-20 convention; also for answers above 77), total supply → 0.
 *
 * The chain's native token (ETH, BNB, ...), which Uniswap v4 pools hold as currency address zero, is
 * served as the zero address with 18 decimals, named after the wrapped native token (WETH → ETH,
 * "Wrapped Ether" → "Ether") and priced like it (the WrappedNative role); nothing is called at
 * address zero.
 */
import { TokenRole, type TokenInfo } from '../../events/model.js';
import { decodeStringOrBytes32, SELECTORS, word } from './abi.js';
import { RpcError, type RpcClient } from './rpc.js';

export const DEFAULT_DECIMALS = 18;
/** The native token's address (Uniswap v4's CurrencyLibrary.ADDRESS_ZERO). */
export const NATIVE_ADDRESS = '0x0000000000000000000000000000000000000000';
/** Decimals of every EVM chain's native token. */
export const NATIVE_DECIMALS = 18;
const MAX_DECIMALS = 77n;

export interface TokenMetadata {
  readonly name: string;
  readonly symbol: string;
  readonly decimals: number;
  readonly totalSupply: bigint;
}

/** The answer of a view call, or null when the call reverts or the contract lacks the function. */
export async function viewCall(rpc: RpcClient, to: string, data: string, block: string): Promise<string | null> {
  try {
    const out = await rpc.request<string>('eth_call', [{ to, data }, block]);
    return typeof out === 'string' && out.length > 2 ? out : null;
  } catch (err) {
    if (err instanceof RpcError && !err.retryable) return null;
    throw err;
  }
}

export async function readTokenMetadata(rpc: RpcClient, address: string, block: string = 'latest'): Promise<TokenMetadata> {
  const [name, symbol, decimals, supply] = await Promise.all([
    viewCall(rpc, address, SELECTORS.name, block),
    viewCall(rpc, address, SELECTORS.symbol, block),
    viewCall(rpc, address, SELECTORS.decimals, block),
    viewCall(rpc, address, SELECTORS.totalSupply, block),
  ]);
  const sym = (symbol && decodeStringOrBytes32(symbol)) || `${address.slice(0, 8)}`;
  let dec = DEFAULT_DECIMALS;
  if (decimals && decimals.length >= 66) {
    const d = word(decimals, 0);
    // Amounts are scaled by 10^decimals up to 10^77 (the largest uint256 has 78 digits); beyond that the answer is nonsense.
    if (d <= MAX_DECIMALS) dec = Number(d);
  }
  return {
    name: (name && decodeStringOrBytes32(name)) || sym,
    symbol: sym,
    decimals: dec,
    totalSupply: supply && supply.length >= 66 ? word(supply, 0) : 0n,
  };
}

/** The native token's metadata from the wrapped native token's: its name and symbol without the wrapping. */
export function nativeMetadata(wrapped: Pick<TokenMetadata, 'name' | 'symbol'>): TokenMetadata {
  const symbol = /^W[A-Z0-9]{2,}$/.test(wrapped.symbol) ? wrapped.symbol.slice(1) : wrapped.symbol;
  const name = /^Wrapped\s+\S/i.test(wrapped.name) ? wrapped.name.replace(/^Wrapped\s+/i, '') : wrapped.name;
  return { name, symbol, decimals: NATIVE_DECIMALS, totalSupply: 0n };
}

/**
 * The pricing role of a token on its chain from the configured anchors: the first stablecoin and the
 * pegged ones are references (1 USD by definition), the other stablecoins are priced by their market.
 */
export function tokenRole(address: string, stablecoins: readonly string[], wrappedNative: string, pegged: readonly string[] = []): TokenRole {
  const a = address.toLowerCase();
  if (a === NATIVE_ADDRESS) return TokenRole.WrappedNative;
  if (stablecoins.length > 0 && stablecoins[0]!.toLowerCase() === a) return TokenRole.PrimaryStable;
  if (pegged.some((s) => s.toLowerCase() === a)) return TokenRole.PrimaryStable;
  if (stablecoins.some((s) => s.toLowerCase() === a)) return TokenRole.Stable;
  if (wrappedNative.toLowerCase() === a) return TokenRole.WrappedNative;
  return TokenRole.Other;
}

export function tokenInfo(address: string, meta: TokenMetadata, role: TokenRole): TokenInfo {
  return { address: address.toLowerCase(), name: meta.name, symbol: meta.symbol, decimals: meta.decimals, totalSupply: meta.totalSupply, role };
}
