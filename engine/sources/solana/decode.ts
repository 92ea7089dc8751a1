/**
 * Swaps of one transaction, from what it proves: each swap instruction of a known DEX program (top
 * level, or invoked by a router such as Jupiter, each hop on its own) names its pool and the pool's
 * vaults (families.ts); its amounts are the token transfers into and out of those vaults among the
 * instructions it invoked, so a routed swap is attributed to every pool it passes through with that
 * pool's own amounts. pump.fun's bonding curve keeps its SOL as lamports: its amounts are those of the
 * program's TradeEvent. Reserves are the vaults' balances after the transaction.
 *
 * Liquidity adds and removes are read the same way from their instructions (families.ts). And the
 * reserves of every pool seen follow its vaults in any transaction that moves them (fees collected,
 * instructions not decoded, tokens sent straight to a vault): the vaults' pre and post token balances
 * the transaction states give the change (`balance`).
 */
import { base58Bytes, base58Into, u64le } from './base58.js';
import { EVENT_CPI_TAG, FAMILY_SPECS, PUMPFUN_TRADE_EVENT, TOKEN_PROGRAMS, type CurveLayout, type SwapLayout } from './families.js';
import type { SolanaFamily } from './preset.js';
import { accountCount, accountKeys, accountOf, flatten, keyAt, subtreeEnd, type Instruction, type RpcTokenBalance, type RpcTransaction } from './transaction.js';

/**
 * What a transaction did to a pool: a `swap`, a liquidity `add` or `remove` (its instruction decoded),
 * or a `balance` change of its vaults by anything else.
 */
export type PoolChangeKind = 'swap' | 'add' | 'remove' | 'balance';

export interface DecodedSwap {
  readonly kind: PoolChangeKind;
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
  /**
   * `balance` only: false when one vault is not among the transaction's accounts (its holdings unknown
   * here): the amounts are then the change of the other, and the reserves are not all known.
   */
  readonly complete: boolean;
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
function withTransferFees(swaps: DecodedSwap[], balances: Balances): DecodedSwap[] {
  const uses = new Map<string, number>();
  for (const s of swaps) for (const v of [s.vault0, s.vault1]) if (v !== undefined) uses.set(v, (uses.get(v) ?? 0) + 1);
  return swaps.map((s) => {
    let { amount0, amount1 } = s;
    const b0 = s.vault0 !== undefined ? balances.get(s.vault0) : null;
    const b1 = s.vault1 !== undefined ? balances.get(s.vault1) : null;
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

const PUMP_EVENT_BYTES = Buffer.from(EVENT_CPI_TAG + PUMPFUN_TRADE_EVENT, 'hex');
const PUMP_LOG_BYTES = Buffer.from(PUMPFUN_TRADE_EVENT, 'hex');
const PUMP_LOG_PREFIX = `Program data: ${PUMP_LOG_BYTES.subarray(0, 6).toString('base64')}`;

function startsWith(b: Uint8Array, prefix: Uint8Array): boolean {
  if (b.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[i] !== prefix[i]) return false;
  return true;
}
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const WSOL_DECIMALS = 9;
/** Base58 length of the longest swap instruction data read (two-hop swaps with their options stay well under it). */
const MAX_SWAP_DATA_CHARS = 160;

/**
 * The token balances of one transaction's accounts, read only for the accounts asked about (a pool's
 * vaults): the pre and post lists are searched for the key, an account closed in the transaction
 * keeps its mint with 0 after it, one created in it had 0 before.
 */
class Balances {
  private tx: RpcTransaction | null = null;
  private pre: readonly RpcTokenBalance[] = [];
  private post: readonly RpcTokenBalance[] = [];

  /** What get() answered for this transaction (a pool's vaults are asked for by its swap, its fee check and its reserves). */
  private readonly memo = new Map<string, VaultBalance | null>();

  reset(tx: RpcTransaction): void {
    this.tx = tx;
    this.pre = tx.meta?.preTokenBalances ?? [];
    this.post = tx.meta?.postTokenBalances ?? [];
    if (this.memo.size > 0) this.memo.clear();
  }

  private find(list: readonly RpcTokenBalance[], account: string): RpcTokenBalance | null {
    const tx = this.tx!;
    for (let i = 0; i < list.length; i++) if (keyAt(tx, list[i]!.accountIndex) === account) return list[i]!;
    return null;
  }

  /** The account's token balance before and after the transaction; null when it is no token account of the transaction. */
  get(account: string): VaultBalance | null {
    let v = this.memo.get(account);
    if (v === undefined) {
      v = this.read(account);
      this.memo.set(account, v);
    }
    return v;
  }

  private read(account: string): VaultBalance | null {
    const a = this.find(this.pre, account);
    const b = this.find(this.post, account);
    const m = b ?? a;
    if (m === null) return null;
    return { mint: m.mint, decimals: m.uiTokenAmount.decimals, pre: a ? BigInt(a.uiTokenAmount.amount) : 0n, post: b ? BigInt(b.uiTokenAmount.amount) : 0n, program: m.programId };
  }
}

/** Instruction data read on the decoding path: swap and transfer data, a few dozen bytes (longer data is no swap). */
const DATA = new Uint8Array(128);

/** The first 6 bytes of the data as a number (exact below 2^53), the key of a discriminator's lookup. */
const head48 = (b: Uint8Array): number => ((((b[0]! * 256 + b[1]!) * 256 + b[2]!) * 256 + b[3]!) * 256 + b[4]!) * 256 + b[5]!;

/** One discriminator of a family: bytes 6 and 7 (8-byte discriminators), then what it decodes. */
interface Discriminated {
  readonly tail: number;
  readonly swaps: ((accounts: number) => readonly SwapLayout[] | null) | null;
  readonly curve: CurveLayout | null;
  readonly liquidity: SwapLayout | null;
}

/** Per family: its discriminator bytes and, by their first 6 bytes (or the one byte), what each decodes. */
interface FamilyLookup {
  readonly bytes: 1 | 8;
  readonly byHead: ReadonlyMap<number, Discriminated>;
}

function familyLookup(family: SolanaFamily): FamilyLookup {
  const spec = FAMILY_SPECS[family];
  const byHead = new Map<number, Discriminated>();
  const add = (hex: string, swaps: Discriminated['swaps'], curve: CurveLayout | null, liquidity: SwapLayout | null) => {
    const b = Buffer.from(hex, 'hex');
    const key = spec.discriminatorBytes === 1 ? b[0]! : head48(b);
    if (byHead.has(key)) throw new Error(`${family}: two discriminators share their first bytes (${hex})`);
    byHead.set(key, { tail: spec.discriminatorBytes === 1 ? 0 : b[6]! * 256 + b[7]!, swaps, curve, liquidity });
  };
  for (const [hex, layouts] of spec.swaps) add(hex, layouts, null, null);
  for (const [hex, curve] of spec.curve ?? []) add(hex, null, curve, null);
  for (const [hex, layout] of spec.liquidity ?? []) add(hex, null, null, layout);
  return { bytes: spec.discriminatorBytes, byHead };
}

const TOKEN_TRANSFER = 3;
const TOKEN_TRANSFER_CHECKED = 12;

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
  private readonly lookups: ReadonlyMap<string, FamilyLookup>;
  private readonly wrappedNative: string;
  /** Pools with `mint` order whose token 0 is the vault listed second. */
  private readonly flipped = new Map<string, boolean>();
  private readonly balances = new Balances();
  /** The transfer transferAt found last: its source and destination token accounts. */
  private source = '';
  private destination = '';
  /** The transaction's pump.fun TradeEvents logged as `Program data:`, read when a curve swap first needs one. */
  private pumpLogs: Uint8Array[] | null = null;
  /** Whether a swap of the transaction being decoded has a Token-2022 vault. */
  private token2022 = false;
  /** The vaults of every pool decoded so far: pool -> its token 0 vault and token 1 vault (null: the pool account's lamports). */
  private readonly poolVaults = new Map<string, { readonly programId: string; readonly family: SolanaFamily; readonly vault0: string; readonly vault1: string | null }>();
  /** Vault -> its pool. */
  private readonly vaultPool = new Map<string, string>();
  /** Pools changed by a decoded instruction of the transaction being decoded. */
  private readonly decoded = new Set<string>();
  /** Pools whose vaults were learnt since takeLearned() last ran: [pool, program id, vault 0, vault 1 (null: the curve's lamports)]. */
  private learned: [string, string, string, string | null][] = [];

  constructor(programs: DecoderPrograms) {
    this.families = programs.families;
    const lookups = new Map<SolanaFamily, FamilyLookup>();
    for (const f of new Set(programs.families.values())) lookups.set(f, familyLookup(f));
    this.lookups = new Map([...programs.families].map(([program, f]) => [program, lookups.get(f)!]));
    this.wrappedNative = programs.wrappedNative;
  }

  /**
   * The amount of the token transfer at ixs[k] (its accounts in this.source and this.destination), -1n
   * for any other instruction. Transfer: tag 3, amount; accounts source, destination, authority.
   * TransferChecked: tag 12, amount, decimals; accounts source, mint, destination, authority.
   */
  private transferAt(ix: Instruction, keys: readonly string[]): bigint {
    if (!TOKEN_PROGRAMS.has(ix.program)) return -1n;
    if (ix.parsed) {
      const info = ix.parsed.info;
      const amount = ix.parsed.type === 'transfer' ? info['amount'] : ix.parsed.type === 'transferChecked' ? (info['tokenAmount'] as { amount?: unknown } | undefined)?.amount : undefined;
      const source = info['source'];
      const destination = info['destination'];
      if (typeof amount !== 'string' || typeof source !== 'string' || typeof destination !== 'string') return -1n;
      this.source = source;
      this.destination = destination;
      return BigInt(amount);
    }
    if (ix.data.length < 10 || ix.data.length > 16) return -1n;
    const n = base58Into(ix.data, DATA);
    if (n < 9 || (DATA[0] !== TOKEN_TRANSFER && DATA[0] !== TOKEN_TRANSFER_CHECKED)) return -1n;
    const amount = u64le(DATA, 1, n);
    const source = accountOf(ix, keys, 0);
    const destination = accountOf(ix, keys, DATA[0] === TOKEN_TRANSFER ? 1 : 2);
    if (amount === null || source === undefined || destination === undefined) return -1n;
    this.source = source;
    this.destination = destination;
    return amount;
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
    if (!tx.meta || tx.meta.err !== null) return out;
    this.balances.reset(tx);
    if (this.touches(tx)) this.decodeInstructions(tx, out);
    if (this.vaultPool.size > 0 && (tx.meta.postTokenBalances?.length ?? 0) + (tx.meta.preTokenBalances?.length ?? 0) > 0) this.vaultChanges(tx, out);
    this.decoded.clear();
    return out;
  }

  /** Swaps and liquidity changes of the transaction's instructions, in execution order, into `out`. */
  private decodeInstructions(tx: RpcTransaction, out: DecodedSwap[]): void {
    const keys = accountKeys(tx);
    const ixs = flatten(tx, keys);
    const balances = this.balances;
    const first = out.length;
    this.token2022 = false;
    this.pumpLogs = null;
    for (let i = 0; i < ixs.length; i++) {
      const ix = ixs[i]!;
      // Swap instructions carry a few dozen bytes; longer data (event self-invocations) is no swap.
      if (ix.data === '' || ix.data.length > MAX_SWAP_DATA_CHARS) continue;
      const lookup = this.lookups.get(ix.program);
      if (lookup === undefined) continue;
      const n = base58Into(ix.data, DATA);
      if (n < lookup.bytes) continue;
      const found = lookup.byHead.get(lookup.bytes === 1 ? DATA[0]! : head48(DATA));
      if (found === undefined || (lookup.bytes === 8 && found.tail !== DATA[6]! * 256 + DATA[7]!)) continue;
      const family = this.families.get(ix.program)!;
      if (found.curve !== null) {
        const swap = this.curveSwap(tx, keys, ixs, i, subtreeEnd(ixs, i), found.curve, family);
        if (swap) out.push(this.learn(swap, accountOf(ix, keys, found.curve.tokenVault)));
        continue;
      }
      if (found.liquidity !== null) {
        const change = this.vaultSwap(keys, ixs, i, subtreeEnd(ixs, i), found.liquidity, family, true);
        if (change) out.push(this.learn(change));
        continue;
      }
      const layouts = found.swaps?.(accountCount(ix));
      if (!layouts) continue;
      const end = subtreeEnd(ixs, i);
      for (const layout of layouts) {
        const swap = this.vaultSwap(keys, ixs, i, end, layout, family, false);
        if (swap) out.push(this.learn(swap));
      }
    }
    if (this.token2022) {
      const fixed = withTransferFees(out.slice(first), balances);
      for (let k = 0; k < fixed.length; k++) out[first + k] = fixed[k]!;
    }
  }

  /** Keeps the pool's vaults (its reserves follow them from now on) and marks it changed by an instruction of this transaction. */
  private learn(d: DecodedSwap, curveVault?: string): DecodedSwap {
    this.decoded.add(d.pool);
    const vault0 = d.vault0 ?? curveVault;
    if (vault0 !== undefined && !this.poolVaults.has(d.pool) && this.knowVaults(d.pool, d.programId, vault0, d.vault1 ?? null)) this.learned.push([d.pool, d.programId, vault0, d.vault1 ?? null]);
    return d;
  }

  /**
   * Keeps a pool's vaults, token 0 then token 1 (null: a bonding curve's lamports): learnt from its
   * instructions, or given back after a restart. False (nothing kept) for a program not configured.
   */
  knowVaults(pool: string, programId: string, vault0: string, vault1: string | null): boolean {
    const family = this.families.get(programId);
    if (family === undefined || this.poolVaults.has(pool)) return false;
    this.poolVaults.set(pool, { programId, family, vault0, vault1 });
    this.vaultPool.set(vault0, pool);
    if (vault1 !== null) this.vaultPool.set(vault1, pool);
    return true;
  }

  /** The pools whose vaults were learnt since the last call: [pool, program id, vault 0, vault 1 or null]. */
  takeLearned(): [string, string, string, string | null][] {
    const out = this.learned;
    if (out.length > 0) this.learned = [];
    return out;
  }

  /**
   * Pools seen before whose vaults the transaction moved without a decoded instruction of theirs: a
   * `balance` change each, from the vaults' pre and post token balances (a bonding curve's SOL side:
   * the curve account's lamports).
   */
  private vaultChanges(tx: RpcTransaction, out: DecodedSwap[]): void {
    let moved: string[] | null = null;
    // Post balances list every account a transaction leaves open; pre balances those it closed.
    for (let side = 0; side < 2; side++) {
      const list = side === 0 ? tx.meta!.postTokenBalances : tx.meta!.preTokenBalances;
      if (!list) continue;
      for (let i = 0; i < list.length; i++) {
        const key = keyAt(tx, list[i]!.accountIndex);
        const pool = key === undefined ? undefined : this.vaultPool.get(key);
        if (pool === undefined || this.decoded.has(pool)) continue;
        this.decoded.add(pool);
        (moved ??= []).push(pool);
      }
    }
    if (moved === null) return;
    for (const pool of moved) {
      const v = this.poolVaults.get(pool)!;
      const b0 = this.balances.get(v.vault0);
      let b1: { readonly pre: bigint; readonly post: bigint } | null = null;
      if (v.vault1 !== null) b1 = this.balances.get(v.vault1);
      else {
        // The bonding curve's SOL: the pool account's lamports, when the transaction lists it.
        const keys = accountKeys(tx);
        const at = keys.indexOf(pool);
        if (at >= 0) b1 = { pre: BigInt(tx.meta!.preBalances[at] ?? 0), post: BigInt(tx.meta!.postBalances[at] ?? 0) };
      }
      const d0 = b0 ? b0.post - b0.pre : 0n;
      const d1 = b1 ? b1.post - b1.pre : 0n;
      if (d0 === 0n && d1 === 0n) continue;
      out.push({
        kind: 'balance',
        programId: v.programId,
        family: v.family,
        pool,
        mint0: b0?.mint ?? '',
        mint1: '',
        decimals0: b0?.decimals ?? 0,
        decimals1: 0,
        amount0: d0,
        amount1: d1,
        reserve0: b0?.post ?? 0n,
        reserve1: b1?.post ?? 0n,
        complete: b0 !== null && b1 !== null,
        trader: keyAt(tx, 0) ?? '',
        vault0: v.vault0,
        ...(v.vault1 !== null ? { vault1: v.vault1 } : {}),
      });
    }
  }

  private vaultSwap(keys: readonly string[], ixs: readonly Instruction[], at: number, end: number, layout: SwapLayout, family: SolanaFamily, liquidity: boolean): DecodedSwap | null {
    const ix = ixs[at]!;
    const pool = accountOf(ix, keys, layout.pool);
    let v0 = accountOf(ix, keys, layout.vaults[0]);
    let v1 = accountOf(ix, keys, layout.vaults[1]);
    if (pool === undefined || v0 === undefined || v1 === undefined || v0 === v1) return null;
    let b0 = this.balances.get(v0);
    let b1 = this.balances.get(v1);
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
      const amount = this.transferAt(ixs[k]!, keys);
      if (amount < 0n) continue;
      if (this.destination === v0) amount0 += amount;
      if (this.source === v0) amount0 -= amount;
      if (this.destination === v1) amount1 += amount;
      if (this.source === v1) amount1 -= amount;
    }
    let kind: PoolChangeKind = 'swap';
    if (liquidity) {
      // An add moves tokens in only, a remove out only (one side may stay: a one-sided position).
      if (amount0 >= 0n && amount1 >= 0n && amount0 + amount1 > 0n) kind = 'add';
      else if (amount0 <= 0n && amount1 <= 0n && amount0 + amount1 < 0n) kind = 'remove';
      else return null;
    } else if (amount0 === 0n || amount1 === 0n || amount0 > 0n === amount1 > 0n) return null; // A swap moves both sides, in opposite directions.
    if (b0.program === TOKEN_2022 || b1.program === TOKEN_2022) this.token2022 = true;
    return {
      kind,
      complete: true,
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

  private curveSwap(tx: RpcTransaction, keys: readonly string[], ixs: readonly Instruction[], at: number, end: number, layout: CurveLayout, family: SolanaFamily): DecodedSwap | null {
    const ix = ixs[at]!;
    const curve = accountOf(ix, keys, layout.curve);
    const vault = accountOf(ix, keys, layout.tokenVault);
    const mint = accountOf(ix, keys, layout.mint);
    if (curve === undefined || vault === undefined || mint === undefined) return null;
    // The TradeEvent: emitted by self-invocation (newer programs), else as a `Program data:` log, in order.
    let event: Uint8Array | null = null;
    for (let k = at + 1; k < end && event === null; k++) {
      const inner = ixs[k]!;
      if (inner.program !== ix.program || inner.data.length < 40) continue;
      const b = base58Bytes(inner.data);
      if (b && startsWith(b, PUMP_EVENT_BYTES)) event = b.subarray(8);
    }
    if (event === null) event = (this.pumpLogs ??= programDataLogs(tx)).shift() ?? null;
    if (event === null || event.length < 8 + 32 + 17) return null;
    const sol = u64le(event, 40);
    const tokens = u64le(event, 48);
    const isBuy = event[56] === 1;
    if (sol === null || tokens === null || sol === 0n || tokens === 0n) return null;
    const vb = this.balances.get(vault);
    const curveIndex = keys.indexOf(curve);
    const lamports = curveIndex >= 0 ? BigInt(tx.meta!.postBalances[curveIndex] ?? 0) : 0n;
    return {
      kind: 'swap',
      complete: true,
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
    // The discriminator's first 6 bytes are the first 8 base64 characters: other programs' data is not decoded.
    if (!line.startsWith(PUMP_LOG_PREFIX)) continue;
    const b = Buffer.from(line.slice(14), 'base64');
    if (startsWith(b, PUMP_LOG_BYTES)) out.push(new Uint8Array(b.buffer, b.byteOffset, b.length));
  }
  return out;
}
