/**
 * Swaps of one transaction, from what it proves: each swap instruction of a known DEX program (top
 * level, or invoked by a router such as Jupiter, each hop on its own) names its pool and the pool's
 * vaults (families.ts); its amounts are the token transfers into and out of those vaults among the
 * instructions it invoked, so a routed swap is attributed to every pool it passes through with that
 * pool's own amounts. pump.fun's bonding curve keeps its SOL as lamports: its amounts are those of the
 * program's TradeEvent. Reserves are the vaults' balances after the transaction.
 */
import { base58Bytes, hexOf, u64le } from './base58.js';
import { EVENT_CPI_TAG, FAMILY_SPECS, PUMPFUN_TRADE_EVENT, TOKEN_PROGRAMS, type FamilySpec, type SwapLayout } from './families.js';
import type { SolanaFamily } from './preset.js';
import { accountKeys, flatten, subtreeEnd, type Instruction, type RpcTransaction } from './transaction.js';

export interface DecodedSwap {
  readonly programId: string;
  readonly family: SolanaFamily;
  readonly pool: string;
  readonly mint0: string;
  readonly mint1: string;
  readonly decimals0: number;
  readonly decimals1: number;
  /** The pool's view: + received by the pool, - paid out. */
  readonly amount0: bigint;
  readonly amount1: bigint;
  /** The pool's token 0 and token 1 holdings after the transaction. */
  readonly reserve0: bigint;
  readonly reserve1: bigint;
  /** The transaction's fee payer. */
  readonly trader: string;
  /** The pool's token accounts (none for a bonding curve's SOL). */
  readonly vault0?: string;
  readonly vault1?: string;
}

/**
 * A Token-2022 mint may charge a fee on transfers, withheld from what the destination receives: what
 * a vault of such a mint received is its balance change, not the amount sent. Where one swap alone
 * moved that vault in the transaction, its side is the balance change the transaction states.
 */
function withTransferFees(swaps: DecodedSwap[], balances: ReadonlyMap<string, VaultBalance>): DecodedSwap[] {
  const uses = new Map<string, number>();
  for (const s of swaps) for (const v of [s.vault0, s.vault1]) if (v !== undefined) uses.set(v, (uses.get(v) ?? 0) + 1);
  return swaps.map((s) => {
    let { amount0, amount1 } = s;
    const b0 = s.vault0 !== undefined ? balances.get(s.vault0) : undefined;
    const b1 = s.vault1 !== undefined ? balances.get(s.vault1) : undefined;
    if (b0?.program === TOKEN_2022 && uses.get(s.vault0!) === 1 && b0.post - b0.pre !== 0n) amount0 = b0.post - b0.pre;
    if (b1?.program === TOKEN_2022 && uses.get(s.vault1!) === 1 && b1.post - b1.pre !== 0n) amount1 = b1.post - b1.pre;
    return amount0 === s.amount0 && amount1 === s.amount1 ? s : { ...s, amount0, amount1 };
  });
}

interface VaultBalance {
  readonly mint: string;
  readonly decimals: number;
  readonly pre: bigint;
  readonly post: bigint;
  /** The account's token program (Token-2022 mints may charge a transfer fee). */
  readonly program: string | undefined;
}

const PUMP_EVENT = EVENT_CPI_TAG + PUMPFUN_TRADE_EVENT;
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const WSOL_DECIMALS = 9;
/** Base58 length of the longest swap instruction data read (two-hop swaps with their options stay well under it). */
const MAX_SWAP_DATA_CHARS = 160;

/** Token balances after the transaction, by account key (an account closed in it keeps its mint with 0). */
function vaultBalances(tx: RpcTransaction, keys: readonly string[]): Map<string, VaultBalance> {
  const out = new Map<string, VaultBalance>();
  for (const b of tx.meta?.preTokenBalances ?? []) out.set(keys[b.accountIndex]!, { mint: b.mint, decimals: b.uiTokenAmount.decimals, pre: BigInt(b.uiTokenAmount.amount), post: 0n, program: b.programId });
  for (const b of tx.meta?.postTokenBalances ?? []) {
    const k = keys[b.accountIndex]!;
    out.set(k, { mint: b.mint, decimals: b.uiTokenAmount.decimals, pre: out.get(k)?.pre ?? 0n, post: BigInt(b.uiTokenAmount.amount), program: b.programId });
  }
  return out;
}

/** A token transfer: source and destination token accounts and the raw amount; null for any other instruction. */
function transferOf(ix: Instruction): { source: string; destination: string; amount: bigint } | null {
  if (!TOKEN_PROGRAMS.has(ix.program)) return null;
  if (ix.parsed) {
    const info = ix.parsed.info;
    const amount = ix.parsed.type === 'transfer' ? info['amount'] : ix.parsed.type === 'transferChecked' ? (info['tokenAmount'] as { amount?: unknown } | undefined)?.amount : undefined;
    if (typeof amount !== 'string' || typeof info['source'] !== 'string' || typeof info['destination'] !== 'string') return null;
    return { source: info['source'], destination: info['destination'], amount: BigInt(amount) };
  }
  // Transfer: tag 3, amount; accounts source, destination, authority. TransferChecked: tag 12, amount,
  // decimals; accounts source, mint, destination, authority.
  const c = ix.data.charCodeAt(0);
  if (ix.data.length < 10 || ix.data.length > 16 || c === undefined) return null;
  const b = base58Bytes(ix.data);
  if (!b || (b[0] !== 3 && b[0] !== 12)) return null;
  const amount = u64le(b, 1);
  const destination = ix.accounts[b[0] === 3 ? 1 : 2];
  if (amount === null || destination === undefined || ix.accounts[0] === undefined) return null;
  return { source: ix.accounts[0], destination, amount };
}

/** Compares two base58 keys by their bytes. */
function compareKeyBytes(a: string, b: string): number {
  const x = base58Bytes(a);
  const y = base58Bytes(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 0; i < 32; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

export interface DecoderPrograms {
  /** Program id -> its family. */
  readonly families: ReadonlyMap<string, SolanaFamily>;
  readonly wrappedNative: string;
}

/**
 * Decodes transactions of the configured programs. Keeps, per pool seen, whether its vaults were
 * listed in token order (pools with `mint` order), so a pool's two mints are compared once.
 */
export class SwapDecoder {
  private readonly families: ReadonlyMap<string, SolanaFamily>;
  private readonly wrappedNative: string;
  /** Pools with `mint` order whose token 0 is the vault listed second. */
  private readonly flipped = new Map<string, boolean>();

  constructor(programs: DecoderPrograms) {
    this.families = programs.families;
    this.wrappedNative = programs.wrappedNative;
  }

  /** Whether the transaction names one of the programs at all (most of a block's do not: votes, transfers). */
  touches(tx: RpcTransaction): boolean {
    const keys = tx.transaction.message.accountKeys;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (this.families.has(typeof k === 'string' ? k : k.pubkey)) return true;
    }
    // A program invoked by another (a router's hop) may come from an address lookup table.
    const loaded = tx.meta?.loadedAddresses;
    if (loaded) {
      for (const k of loaded.readonly) if (this.families.has(k)) return true;
      for (const k of loaded.writable) if (this.families.has(k)) return true;
    }
    return false;
  }

  /** The transaction's swaps in execution order; none for a failed transaction. */
  decode(tx: RpcTransaction): DecodedSwap[] {
    const out: DecodedSwap[] = [];
    if (!tx.meta || tx.meta.err !== null || !this.touches(tx)) return out;
    const keys = accountKeys(tx);
    const ixs = flatten(tx, keys);
    let balances: Map<string, VaultBalance> | null = null;
    let pumpLogs: Uint8Array[] | null = null;
    for (let i = 0; i < ixs.length; i++) {
      const ix = ixs[i]!;
      const family = this.families.get(ix.program);
      // Swap instructions carry a few dozen bytes; longer data (event self-invocations) is no swap.
      if (family === undefined || ix.data === '' || ix.data.length > MAX_SWAP_DATA_CHARS) continue;
      const spec: FamilySpec = FAMILY_SPECS[family];
      const data = base58Bytes(ix.data);
      if (!data || data.length < spec.discriminatorBytes) continue;
      const disc = hexOf(data, 0, spec.discriminatorBytes);
      const end = subtreeEnd(ixs, i);
      balances ??= vaultBalances(tx, keys);
      const curve = spec.curve?.get(disc);
      if (curve) {
        pumpLogs ??= programDataLogs(tx);
        const swap = this.curveSwap(tx, keys, ixs, i, end, curve, balances, pumpLogs, family);
        if (swap) out.push(swap);
        continue;
      }
      const layouts = spec.swaps.get(disc)?.(ix.accounts.length);
      if (!layouts) continue;
      for (const layout of layouts) {
        const swap = this.vaultSwap(tx, keys, ixs, i, end, layout, balances, family);
        if (swap) out.push(swap);
      }
    }
    return balances !== null && out.length > 0 ? withTransferFees(out, balances) : out;
  }

  private vaultSwap(tx: RpcTransaction, keys: readonly string[], ixs: readonly Instruction[], at: number, end: number, layout: SwapLayout, balances: ReadonlyMap<string, VaultBalance>, family: SolanaFamily): DecodedSwap | null {
    const ix = ixs[at]!;
    const pool = ix.accounts[layout.pool];
    let v0 = ix.accounts[layout.vaults[0]];
    let v1 = ix.accounts[layout.vaults[1]];
    if (pool === undefined || v0 === undefined || v1 === undefined || v0 === v1) return null;
    let b0 = balances.get(v0);
    let b1 = balances.get(v1);
    if (!b0 || !b1 || b0.mint === b1.mint) return null;
    if (layout.order === 'mint') {
      let flip = this.flipped.get(pool);
      if (flip === undefined) {
        flip = compareKeyBytes(b0.mint, b1.mint) > 0;
        this.flipped.set(pool, flip);
      }
      if (flip) {
        [v0, v1] = [v1, v0];
        [b0, b1] = [b1, b0];
      }
    }
    let amount0 = 0n;
    let amount1 = 0n;
    for (let k = at + 1; k < end; k++) {
      const t = transferOf(ixs[k]!);
      if (!t) continue;
      if (t.destination === v0) amount0 += t.amount;
      if (t.source === v0) amount0 -= t.amount;
      if (t.destination === v1) amount1 += t.amount;
      if (t.source === v1) amount1 -= t.amount;
    }
    // A swap moves both sides, in opposite directions.
    if (amount0 === 0n || amount1 === 0n || amount0 > 0n === amount1 > 0n) return null;
    return {
      programId: ix.program,
      family,
      pool,
      mint0: b0.mint,
      mint1: b1.mint,
      decimals0: b0.decimals,
      decimals1: b1.decimals,
      amount0,
      amount1,
      reserve0: b0.post,
      reserve1: b1.post,
      trader: keys[0]!,
      vault0: v0,
      vault1: v1,
    };
  }

  private curveSwap(
    tx: RpcTransaction,
    keys: readonly string[],
    ixs: readonly Instruction[],
    at: number,
    end: number,
    layout: { readonly curve: number; readonly tokenVault: number; readonly mint: number },
    balances: ReadonlyMap<string, VaultBalance>,
    logs: Uint8Array[],
    family: SolanaFamily,
  ): DecodedSwap | null {
    const ix = ixs[at]!;
    const curve = ix.accounts[layout.curve];
    const vault = ix.accounts[layout.tokenVault];
    const mint = ix.accounts[layout.mint];
    if (curve === undefined || vault === undefined || mint === undefined) return null;
    // The TradeEvent: emitted by self-invocation (newer programs), else as a `Program data:` log, in order.
    let event: Uint8Array | null = null;
    for (let k = at + 1; k < end && event === null; k++) {
      const inner = ixs[k]!;
      if (inner.program !== ix.program || inner.data.length < 40) continue;
      const b = base58Bytes(inner.data);
      if (b && hexOf(b, 0, 16) === PUMP_EVENT) event = b.subarray(8);
    }
    if (event === null) event = logs.shift() ?? null;
    if (event === null || event.length < 8 + 32 + 17) return null;
    const sol = u64le(event, 40);
    const tokens = u64le(event, 48);
    const isBuy = event[56] === 1;
    if (sol === null || tokens === null || sol === 0n || tokens === 0n) return null;
    const vb = balances.get(vault);
    const curveIndex = keys.indexOf(curve);
    const lamports = curveIndex >= 0 ? BigInt(tx.meta!.postBalances[curveIndex] ?? 0) : 0n;
    return {
      programId: ix.program,
      family,
      pool: curve,
      mint0: mint,
      mint1: this.wrappedNative,
      decimals0: vb?.decimals ?? 6,
      decimals1: WSOL_DECIMALS,
      amount0: isBuy ? -tokens : tokens,
      amount1: isBuy ? sol : -sol,
      reserve0: vb?.post ?? 0n,
      reserve1: lamports,
      trader: keys[0]!,
    };
  }
}

/** pump.fun TradeEvents logged as `Program data:` (base64), each from its discriminator on, in log order. */
function programDataLogs(tx: RpcTransaction): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const line of tx.meta?.logMessages ?? []) {
    if (!line.startsWith('Program data: ')) continue;
    const b = Buffer.from(line.slice(14), 'base64');
    if (b.length >= 8 && b.toString('hex', 0, 8) === PUMPFUN_TRADE_EVENT) out.push(new Uint8Array(b.buffer, b.byteOffset, b.length));
  }
  return out;
}
