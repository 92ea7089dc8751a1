/**
 * SYNTHETIC Solana transactions for tests of cases no recorded transaction holds (liquidity, routed
 * instructions, vault movements): every one a test serves is labelled synthetic where it is built.
 */
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { RpcTokenBalance, RpcTransaction } from '../../engine/sources/solana/transaction.js';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const b58 = getBase58Decoder();

/** SPL Token Transfer (tag 3, u64 amount) as base58 instruction data. */
export function transferData(amount: bigint): string {
  const b = Buffer.alloc(9);
  b[0] = 3;
  b.writeBigUInt64LE(amount, 1);
  return b58.decode(b);
}

export interface SyntheticTransfer {
  readonly from: string;
  readonly to: string;
  readonly amount: bigint;
}

/**
 * A SYNTHETIC transaction (json encoding): one top-level instruction of `program` with `accounts`
 * and `data`, invoking the token transfers given (`invoked` false: the instruction is itself the one
 * transfer), with the token balances before (`before`) and after of every account `before` lists,
 * their mints and decimals from `mints`.
 */
export function syntheticTransaction(
  payer: string,
  program: string,
  accounts: readonly string[],
  data: string,
  transfers: readonly SyntheticTransfer[],
  before: ReadonlyMap<string, bigint>,
  mints: ReadonlyMap<string, { readonly mint: string; readonly decimals: number }>,
  invoked = true,
): RpcTransaction {
  const keys: string[] = [payer];
  const at = (k: string): number => {
    let i = keys.indexOf(k);
    if (i < 0) i = keys.push(k) - 1;
    return i;
  };
  const top = { programIdIndex: at(program), accounts: accounts.map(at), data, stackHeight: null };
  const inner = (invoked ? transfers : []).map((t) => ({ programIdIndex: at(TOKEN_PROGRAM), accounts: [at(t.from), at(t.to), at(payer)], data: transferData(t.amount), stackHeight: 2 }));
  const after = new Map(before);
  for (const t of transfers) {
    after.set(t.from, after.get(t.from)! - t.amount);
    after.set(t.to, after.get(t.to)! + t.amount);
  }
  const balances = (m: ReadonlyMap<string, bigint>): RpcTokenBalance[] =>
    [...m].map(([k, amount]) => ({ accountIndex: at(k), mint: mints.get(k)!.mint, owner: payer, programId: TOKEN_PROGRAM, uiTokenAmount: { amount: amount.toString(), decimals: mints.get(k)!.decimals } }));
  const pre = balances(before);
  const post = balances(after);
  return {
    version: 'legacy',
    transaction: { signatures: [b58.decode(randomBytes(64))], message: { accountKeys: keys, instructions: [top] } },
    meta: { err: null, preBalances: keys.map(() => 2_039_280), postBalances: keys.map(() => 2_039_280), preTokenBalances: pre, postTokenBalances: post, innerInstructions: inner.length > 0 ? [{ index: 0, instructions: inner }] : [], logMessages: [], loadedAddresses: null },
  };
}
