/**
 * A transaction as `getBlock` / `getTransaction` return it, in either encoding (`json`: keys as
 * indices, data in base58; `jsonParsed`: keys as strings, known programs' instructions parsed), read
 * into one flat list of instructions in execution order: each top-level instruction followed by the
 * instructions it invoked, each with its call depth (`stackHeight`, 1 for top level).
 */

export interface RpcTokenBalance {
  readonly accountIndex: number;
  readonly mint: string;
  readonly owner?: string;
  readonly programId?: string;
  readonly uiTokenAmount: { readonly amount: string; readonly decimals: number };
}

interface RpcParsedInstruction {
  readonly programId: string;
  readonly program?: string;
  readonly parsed?: { readonly type?: string; readonly info?: Record<string, unknown> } | string;
  readonly accounts?: readonly string[];
  readonly data?: string;
  readonly stackHeight?: number | null;
}

interface RpcCompiledInstruction {
  readonly programIdIndex: number;
  readonly accounts: readonly number[];
  readonly data: string;
  readonly stackHeight?: number | null;
}

type RpcInstruction = RpcCompiledInstruction | RpcParsedInstruction;

export interface RpcTransaction {
  readonly slot?: number;
  readonly blockTime?: number | null;
  readonly version?: number | 'legacy';
  readonly transaction: {
    readonly signatures: readonly string[];
    readonly message: {
      readonly accountKeys: readonly (string | { readonly pubkey: string })[];
      readonly instructions: readonly RpcInstruction[];
    };
  };
  readonly meta: {
    readonly err: unknown;
    readonly preBalances: readonly number[];
    readonly postBalances: readonly number[];
    readonly preTokenBalances?: readonly RpcTokenBalance[] | null;
    readonly postTokenBalances?: readonly RpcTokenBalance[] | null;
    readonly innerInstructions?: readonly { readonly index: number; readonly instructions: readonly RpcInstruction[] }[] | null;
    readonly logMessages?: readonly string[] | null;
    readonly loadedAddresses?: { readonly writable: readonly string[]; readonly readonly: readonly string[] } | null;
  } | null;
}

/** One instruction, top level or invoked. */
export interface Instruction {
  readonly program: string;
  /** `json` encoding: the accounts as indices into the transaction's keys (accountOf reads them); null when given as keys. */
  readonly indices: readonly number[] | null;
  /** `jsonParsed` encoding: the accounts' keys (empty for an instruction given as indices). */
  readonly named: readonly string[];
  /** Base58 data; '' for an instruction given parsed. */
  readonly data: string;
  /** The parsed form (`jsonParsed` encoding, known programs only). */
  readonly parsed: { readonly type: string; readonly info: Record<string, unknown> } | null;
  /** 1 for a top-level instruction, 2 for what it invokes, and so on. */
  readonly depth: number;
}

const NONE: readonly string[] = [];

/** The instruction's account at position `i` (undefined past its last). */
export function accountOf(ix: Instruction, keys: readonly string[], i: number): string | undefined {
  if (ix.indices === null) return ix.named[i];
  const k = ix.indices[i];
  return k === undefined ? undefined : keys[k];
}

/** How many accounts the instruction lists. */
export function accountCount(ix: Instruction): number {
  return ix.indices !== null ? ix.indices.length : ix.named.length;
}

/** Every account key of the transaction in index order: static keys, then loaded writable, then loaded read-only. */
export function accountKeys(tx: RpcTransaction): string[] {
  const keys = tx.transaction.message.accountKeys;
  const out = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    out[i] = typeof k === 'string' ? k : k.pubkey;
  }
  // In jsonParsed encoding accountKeys already hold the loaded addresses.
  if (keys.length > 0 && typeof keys[0] !== 'string') return out;
  const loaded = tx.meta?.loadedAddresses;
  if (loaded) {
    for (const k of loaded.writable) out.push(k);
    for (const k of loaded.readonly) out.push(k);
  }
  return out;
}

function instruction(ix: RpcInstruction, keys: readonly string[], depth: number): Instruction {
  if ('programIdIndex' in ix) return { program: keys[ix.programIdIndex]!, indices: ix.accounts, named: NONE, data: ix.data, parsed: null, depth: ix.stackHeight ?? depth };
  const parsed = typeof ix.parsed === 'object' && ix.parsed !== null && typeof ix.parsed.type === 'string' ? { type: ix.parsed.type, info: ix.parsed.info ?? {} } : null;
  return { program: ix.programId, indices: null, named: ix.accounts ?? NONE, data: ix.data ?? '', parsed, depth: ix.stackHeight ?? depth };
}

/** The transaction's instructions in execution order, each top-level one followed by those it invoked. */
export function flatten(tx: RpcTransaction, keys: readonly string[]): Instruction[] {
  const top = tx.transaction.message.instructions;
  const groups = tx.meta?.innerInstructions ?? [];
  // The node lists the groups by their instruction's index, ascending; any other order is sorted here.
  let ordered = true;
  for (let g = 1; g < groups.length; g++) if (groups[g]!.index < groups[g - 1]!.index) ordered = false;
  const inner = ordered ? groups : [...groups].sort((a, b) => a.index - b.index);
  const out: Instruction[] = [];
  let g = 0;
  for (let i = 0; i < top.length; i++) {
    out.push(instruction(top[i]!, keys, 1));
    while (g < inner.length && inner[g]!.index < i) g++;
    // Without stackHeight (transactions before it was recorded) every invoked instruction counts as depth 2.
    for (; g < inner.length && inner[g]!.index === i; g++) for (const ix of inner[g]!.instructions) out.push(instruction(ix, keys, 2));
  }
  return out;
}

/** Index one past the last instruction invoked (directly or not) by the instruction at `at`. */
export function subtreeEnd(ixs: readonly Instruction[], at: number): number {
  const depth = ixs[at]!.depth;
  let end = at + 1;
  while (end < ixs.length && ixs[end]!.depth > depth) end++;
  return end;
}

/** The transaction's account key at index `i` (as accountKeys(tx)[i], without making the list). */
export function keyAt(tx: RpcTransaction, i: number): string | undefined {
  const keys = tx.transaction.message.accountKeys;
  if (i < keys.length) {
    const k = keys[i]!;
    return typeof k === 'string' ? k : k.pubkey;
  }
  // In jsonParsed encoding accountKeys already hold the loaded addresses.
  const loaded = tx.meta?.loadedAddresses;
  if (!loaded || (keys.length > 0 && typeof keys[0] !== 'string')) return undefined;
  const j = i - keys.length;
  return j < loaded.writable.length ? loaded.writable[j] : loaded.readonly[j - loaded.writable.length];
}
