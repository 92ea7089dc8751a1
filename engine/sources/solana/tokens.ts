/**
 * Token metadata of SPL mints, read once per mint when a pool with it is first seen: decimals and
 * supply from the mint account (`getMultipleAccounts`, base64: the SPL Mint layout, shared by
 * Token-2022), name and symbol from the Metaplex metadata account (its PDA), else from the mint's
 * own TokenMetadata extension (Token-2022). What cannot be read falls back to what the transaction
 * proved (its token balances' decimals) and the first characters of the address as the symbol, as
 * EVM tokens without `symbol()` are named.
 */
import { address as toAddress, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import { TokenRole, type TokenInfo } from '../../events/model.js';
import type { RpcClient } from '../evm/rpc.js';

/** The Metaplex Token Metadata program. */
export const METADATA_PROGRAM = 'metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s';
/** Accounts per `getMultipleAccounts` (the nodes' limit). */
const MULTIPLE_ACCOUNTS_MAX = 100;

export interface KnownToken {
  readonly address: string;
  readonly symbol: string;
  readonly name: string;
}

export interface TokenAnchors {
  /** The first is the USD reference; every one is pegged at 1 USD. */
  readonly stablecoins: readonly string[];
  readonly wrappedNative: string;
}

export function tokenRole(mint: string, anchors: TokenAnchors): TokenRole {
  if (anchors.stablecoins.includes(mint)) return TokenRole.PrimaryStable;
  if (mint === anchors.wrappedNative) return TokenRole.WrappedNative;
  return TokenRole.Other;
}

/** Token-2022 mints: the account type byte after the base Mint padded to an Account's 165 bytes, then the extensions as TLV entries. */
const ACCOUNT_TYPE_AT = 165;
const ACCOUNT_TYPE_MINT = 1;
/** Token-2022's ExtensionType of TokenMetadata (the token-metadata interface's fields kept in the mint itself). */
const EXTENSION_TOKEN_METADATA = 19;

/** Supply and decimals of an SPL Mint (mint authority option (4) and key (32), supply u64 at 36, decimals at 44), and its account bytes. */
function mintFields(data: unknown): { supply: bigint; decimals: number; bytes: Buffer } | null {
  if (!Array.isArray(data) || typeof data[0] !== 'string') return null;
  const b = Buffer.from(data[0], 'base64');
  if (b.length < 82) return null;
  return { supply: b.readBigUInt64LE(36), decimals: b[44]!, bytes: b };
}

/**
 * Name and symbol of a Token-2022 mint's TokenMetadata extension: after the account type (a mint),
 * TLV entries (u16 type, u16 length, value); the TokenMetadata value is the update authority (32),
 * the mint (32), then name, symbol and uri as borsh strings. Null without that extension.
 */
export function token2022Names(b: Buffer): { name: string; symbol: string } | null {
  if (b.length <= ACCOUNT_TYPE_AT || b[ACCOUNT_TYPE_AT] !== ACCOUNT_TYPE_MINT) return null;
  for (let at = ACCOUNT_TYPE_AT + 1; at + 4 <= b.length; ) {
    const type = b.readUInt16LE(at);
    const length = b.readUInt16LE(at + 2);
    if (type === 0 || at + 4 + length > b.length) return null;
    if (type === EXTENSION_TOKEN_METADATA) {
      const value = b.subarray(at + 4, at + 4 + length);
      const name = borshString(value, 64);
      const symbol = name ? borshString(value, name[1]) : null;
      return name && symbol ? { name: name[0], symbol: symbol[0] } : null;
    }
    at += 4 + length;
  }
  return null;
}

type AccountAnswer = { readonly data: unknown } | null;

async function multipleAccounts(rpc: RpcClient, keys: readonly string[], encoding: 'base64'): Promise<AccountAnswer[]> {
  const out: AccountAnswer[] = [];
  for (let i = 0; i < keys.length; i += MULTIPLE_ACCOUNTS_MAX) {
    const chunk = keys.slice(i, i + MULTIPLE_ACCOUNTS_MAX);
    const r = await rpc.request<{ value: AccountAnswer[] }>('getMultipleAccounts', [chunk, { encoding, commitment: 'confirmed' }]);
    for (let k = 0; k < chunk.length; k++) out.push(r.value[k] ?? null);
  }
  return out;
}

/** A borsh string (u32 length, UTF-8) at `at`; its text without the NUL padding Metaplex keeps, and the offset after it. */
function borshString(b: Buffer, at: number): [string, number] | null {
  if (b.length < at + 4) return null;
  const n = b.readUInt32LE(at);
  if (n > 200 || b.length < at + 4 + n) return null;
  return [b.toString('utf8', at + 4, at + 4 + n).replace(/\0+$/, '').trim(), at + 4 + n];
}

/** Name and symbol of a Metaplex metadata account: key (1), update authority (32), mint (32), name, symbol. */
function metaplexNames(data: unknown): { name: string; symbol: string } | null {
  if (!Array.isArray(data) || typeof data[0] !== 'string') return null;
  const b = Buffer.from(data[0], 'base64');
  const name = borshString(b, 65);
  if (!name) return null;
  const symbol = borshString(b, name[1]);
  return symbol ? { name: name[0], symbol: symbol[0] } : null;
}

async function metadataAddress(mint: string): Promise<string> {
  const enc = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({ programAddress: toAddress(METADATA_PROGRAM), seeds: ['metadata', enc.encode(toAddress(METADATA_PROGRAM)), enc.encode(toAddress(mint))] });
  return pda;
}

/**
 * TokenInfo of each mint, reading what the node has; `decimals` are those the transaction's token
 * balances state (used when the mint account cannot be read), `known` names the preset's tokens.
 */
export async function readTokens(rpc: RpcClient, mints: ReadonlyMap<string, number>, anchors: TokenAnchors, known: readonly KnownToken[]): Promise<TokenInfo[]> {
  const list = [...mints.keys()];
  if (list.length === 0) return [];
  const [accounts, pdas] = await Promise.all([multipleAccounts(rpc, list, 'base64'), Promise.all(list.map((m) => metadataAddress(m).catch(() => null)))]);
  const wanted = pdas.filter((p): p is string => p !== null);
  const metas = wanted.length > 0 ? await multipleAccounts(rpc, wanted, 'base64') : [];
  const metaOf = new Map<string, AccountAnswer>();
  wanted.forEach((p, i) => metaOf.set(p, metas[i] ?? null));
  return list.map((mint, i): TokenInfo => {
    const fields = mintFields(accounts[i]?.data);
    const pda = pdas[i];
    const mp = (pda ? metaplexNames(metaOf.get(pda)?.data) : null) ?? (fields ? token2022Names(fields.bytes) : null);
    const preset = known.find((k) => k.address === mint);
    const symbol = preset?.symbol || mp?.symbol || mint.slice(0, 8);
    const name = preset?.name || mp?.name || symbol;
    return { address: mint, name, symbol, decimals: fields?.decimals ?? mints.get(mint)!, totalSupply: fields?.supply ?? 0n, role: tokenRole(mint, anchors) };
  });
}
