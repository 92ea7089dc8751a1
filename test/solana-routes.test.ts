/**
 * Routed swaps inside one DEX instruction: Orca Whirlpools' `two_hop_swap` and `two_hop_swap_v2`
 * and Raydium CLMM's router `swap_router_base_in`, each hop served as a swap of its own pool.
 *
 * The recorded mainnet transactions hold none of these instructions (none of their discriminators
 * occurs in the test data), so the transactions here are SYNTHETIC, built on the account layouts of
 * each program's published interface: they check that the decoder attributes each hop to its pool
 * with that pool's own amounts, not that the layouts match what the programs do on chain (no
 * recorded transaction proves these decoders). The independent calculation is each transaction's
 * own token balances: every served hop must carry its two vaults' balance changes, and each pool's
 * served reserves its vaults' balances after it.
 */
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anchorDiscriminator } from '../engine/sources/solana/families.js';
import type { RpcTransaction } from '../engine/sources/solana/transaction.js';
import { getJson } from './support/evm-serve.js';
import { followAndServe, type ServedSolana } from './support/solana-serve.js';
import { startReplayNode, type FixtureTransaction, type ReplayNode } from './support/solana-replay.js';
import { syntheticTransaction, TOKEN_PROGRAM, type SyntheticTransfer } from './support/solana-synthetic.js';

const TOKEN = TOKEN_PROGRAM;
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const MEMO = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
const WHIRLPOOL = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';
const CLMM = 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK';
const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const T0 = 1_760_000_000;

const b58 = getBase58Decoder();
const newKey = (): string => b58.decode(randomBytes(32));

/** A token account of the synthetic transactions: its mint, decimals and balance before. */
interface TokenAccount {
  readonly mint: string;
  readonly decimals: number;
  readonly before: bigint;
}

/** An Anchor instruction's data: the discriminator of `name`, then `args` bytes. */
const anchorData = (name: string, args: Buffer): string => b58.decode(Buffer.concat([Buffer.from(anchorDiscriminator(name), 'hex'), args]));
const u64 = (x: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(x);
  return b;
};

/** A SYNTHETIC transaction (support/solana-synthetic.ts) with the balances before of every account in `tokens`. */
function synthetic(payer: string, program: string, accounts: readonly string[], data: string, transfers: readonly SyntheticTransfer[], tokens: ReadonlyMap<string, TokenAccount>): RpcTransaction {
  return syntheticTransaction(payer, program, accounts, data, transfers, new Map([...tokens].map(([k, v]) => [k, v.before])), tokens);
}

/** One hop as the test built it: its pool, DEX and the two vaults it moved. */
interface Hop {
  readonly pool: string;
  readonly dex: string;
  readonly vaults: readonly [string, string];
}

interface Built {
  readonly label: string;
  readonly tx: RpcTransaction;
  readonly hops: readonly Hop[];
  readonly tokens: ReadonlyMap<string, TokenAccount>;
}

describe('Solana routed swaps within one instruction (SYNTHETIC transactions: no recorded one holds these instructions)', () => {
  const X = newKey();
  const accountOf = (mint: string, before: bigint): TokenAccount => ({ mint, decimals: mint === WSOL ? 9 : 6, before });
  const built: Built[] = [];
  let node: ReplayNode;
  let served: ServedSolana;
  const clock = { now: T0 + 600 };

  beforeAll(async () => {
    // SYNTHETIC 1: Whirlpools two_hop_swap: X -> USDC in pool one (A = X, B = USDC), USDC -> WSOL in pool two (A = USDC, B = WSOL).
    {
      const payer = newKey();
      const [one, two, userX, userUsdc, userSol, oneA, oneB, twoA, twoB] = Array.from({ length: 9 }, newKey);
      const tokens = new Map([
        [userX!, accountOf(X, 10n ** 12n)],
        [userUsdc!, accountOf(USDC, 0n)],
        [userSol!, accountOf(WSOL, 0n)],
        [oneA!, accountOf(X, 5_000_000_000n)],
        [oneB!, accountOf(USDC, 9_000_000_000n)],
        [twoA!, accountOf(USDC, 70_000_000_000n)],
        [twoB!, accountOf(WSOL, 400_000_000_000n)],
      ]);
      const ticks = Array.from({ length: 8 }, newKey);
      // token program, authority, whirlpool one and two, then per pool owner A, vault A, owner B, vault B; tick arrays, oracles.
      const accounts = [TOKEN, payer, one!, two!, userX!, oneA!, userUsdc!, oneB!, userUsdc!, twoA!, userSol!, twoB!, ...ticks];
      const args = Buffer.concat([u64(1_000_000n), u64(1n), Buffer.from([1, 1, 1]), Buffer.alloc(32)]);
      const tx = synthetic(payer, WHIRLPOOL, accounts, anchorData('two_hop_swap', args), [
        { from: userX!, to: oneA!, amount: 1_000_000n },
        { from: oneB!, to: userUsdc!, amount: 1_790_000n },
        { from: userUsdc!, to: twoA!, amount: 1_790_000n },
        { from: twoB!, to: userSol!, amount: 10_020_000n },
      ], tokens);
      built.push({ label: 'two_hop_swap', tx, tokens, hops: [{ pool: one!, dex: 'orca', vaults: [oneA!, oneB!] }, { pool: two!, dex: 'orca', vaults: [twoA!, twoB!] }] });
    }
    // SYNTHETIC 2: Whirlpools two_hop_swap_v2: WSOL -> USDC in pool three, USDC -> X in pool four; the intermediate USDC goes from vault to vault.
    {
      const payer = newKey();
      const [three, four, userSol, userX, threeSol, threeUsdc, fourUsdc, fourX] = Array.from({ length: 8 }, newKey);
      const tokens = new Map([
        [userSol!, accountOf(WSOL, 10n ** 12n)],
        [userX!, accountOf(X, 0n)],
        [threeSol!, accountOf(WSOL, 300_000_000_000n)],
        [threeUsdc!, accountOf(USDC, 50_000_000_000n)],
        [fourUsdc!, accountOf(USDC, 8_000_000_000n)],
        [fourX!, accountOf(X, 4_000_000_000n)],
      ]);
      const ticks = Array.from({ length: 8 }, newKey);
      // whirlpools one and two, mints input/intermediate/output, their token programs, owner input, vault one input, vault one
      // intermediate, vault two intermediate, vault two output, owner output, authority, tick arrays, oracles, memo.
      const accounts = [three!, four!, WSOL, USDC, X, TOKEN, TOKEN, TOKEN, userSol!, threeSol!, threeUsdc!, fourUsdc!, fourX!, userX!, payer, ...ticks, MEMO];
      const args = Buffer.concat([u64(2_000_000_000n), u64(1n), Buffer.from([1, 1, 0]), Buffer.alloc(32), Buffer.from([0])]);
      const tx = synthetic(payer, WHIRLPOOL, accounts, anchorData('two_hop_swap_v2', args), [
        { from: userSol!, to: threeSol!, amount: 2_000_000_000n },
        { from: threeUsdc!, to: fourUsdc!, amount: 356_000_000n },
        { from: fourX!, to: userX!, amount: 177_500_000n },
      ], tokens);
      built.push({ label: 'two_hop_swap_v2', tx, tokens, hops: [{ pool: three!, dex: 'orca', vaults: [threeSol!, threeUsdc!] }, { pool: four!, dex: 'orca', vaults: [fourUsdc!, fourX!] }] });
    }
    // SYNTHETIC 3: Raydium CLMM swap_router_base_in: USDC -> WSOL in pool five (two tick arrays), WSOL -> X in pool six (one).
    {
      const payer = newKey();
      const [five, six, userUsdc, userSol, userX, fiveUsdc, fiveSol, sixSol, sixX] = Array.from({ length: 9 }, newKey);
      const tokens = new Map([
        [userUsdc!, accountOf(USDC, 10n ** 12n)],
        [userSol!, accountOf(WSOL, 0n)],
        [userX!, accountOf(X, 0n)],
        [fiveUsdc!, accountOf(USDC, 90_000_000_000n)],
        [fiveSol!, accountOf(WSOL, 500_000_000_000n)],
        [sixSol!, accountOf(WSOL, 60_000_000_000n)],
        [sixX!, accountOf(X, 30_000_000_000n)],
      ]);
      const [config5, obs5, tickA, tickB, config6, obs6, tickC] = Array.from({ length: 7 }, newKey);
      // payer, input token account, input mint, token programs, memo; per hop amm_config, pool, output token
      // account, input vault, output vault, output mint, observation, tick arrays.
      const accounts = [payer, userUsdc!, USDC, TOKEN, TOKEN_2022, MEMO, config5!, five!, userSol!, fiveUsdc!, fiveSol!, WSOL, obs5!, tickA!, tickB!, config6!, six!, userX!, sixSol!, sixX!, X, obs6!, tickC!];
      const tx = synthetic(payer, CLMM, accounts, anchorData('swap_router_base_in', Buffer.concat([u64(250_000_000n), u64(1n)])), [
        { from: userUsdc!, to: fiveUsdc!, amount: 250_000_000n },
        { from: fiveSol!, to: userSol!, amount: 1_395_000_000n },
        { from: userSol!, to: sixSol!, amount: 1_395_000_000n },
        { from: sixX!, to: userX!, amount: 690_000_000n },
      ], tokens);
      built.push({ label: 'swap_router_base_in', tx, tokens, hops: [{ pool: five!, dex: 'raydium_clmm', vaults: [fiveUsdc!, fiveSol!] }, { pool: six!, dex: 'raydium_clmm', vaults: [sixSol!, sixX!] }] });
    }
    const txs: FixtureTransaction[] = built.map((b) => ({ signature: b.tx.transaction.signatures[0]!, file: `synthetic ${b.label}`, recordedSlot: 0, tx: b.tx }));
    node = await startReplayNode({ transactions: txs, firstTime: T0, spacingSeconds: 30 });
    served = await followAndServe({ rpcUrls: [node.url], startSlot: node.slots[0]!, pollIntervalMs: 10, subscribe: false }, clock);
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await node?.close();
  });

  it.each(['two_hop_swap', 'two_hop_swap_v2', 'swap_router_base_in'])('%s: one swap per hop, in its own pool, with its vaults\' balance changes', async (label) => {
    const b = built.find((x) => x.label === label)!;
    const sig = b.tx.transaction.signatures[0]!;
    const after = new Map(b.tx.meta!.postTokenBalances!.map((x) => [b.tx.transaction.message.accountKeys[x.accountIndex] as string, BigInt(x.uiTokenAmount.amount)]));
    for (const hop of b.hops) {
      const pool = await getJson(`${served.url}/networks/solana/pools/${hop.pool}`);
      expect(pool.status, `${label} pool ${hop.pool}`).toBe(200);
      expect(pool.body.dex_id).toBe(hop.dex);
      // The pool's tokens are its vaults' mints; each served reserve is the vault of that mint after the transaction.
      const vaultOf = (mint: string) => hop.vaults.find((v) => b.tokens.get(v)!.mint === mint)!;
      const ids = (pool.body.tokens as { id: string }[]).map((t) => t.id);
      expect(new Set(ids)).toEqual(new Set(hop.vaults.map((v) => b.tokens.get(v)!.mint)));
      expect((pool.body.token_reserves as { reserve: string }[]).map((x) => BigInt(x.reserve))).toEqual(ids.map((m) => after.get(vaultOf(m))!));
      const r = await getJson(`${served.url}/networks/solana/pools/${hop.pool}/transactions?limit=10`);
      expect(r.status).toBe(200);
      const list = r.body as Record<string, string>[];
      expect(list.map((x) => [x['type'], x['transaction_hash']])).toEqual([['swap', sig]]);
      // Amounts in the pool's view: what each vault's balance changed by.
      const decimals = (pool.body.tokens as { decimals: number }[]).map((t) => t.decimals);
      const amount = (i: 0 | 1) => {
        const text = list[0]![`amount_${i}`]!;
        const neg = text.startsWith('-');
        const [w, f = ''] = (neg ? text.slice(1) : text).split('.');
        const v = BigInt(w!) * 10n ** BigInt(decimals[i]!) + BigInt((f + '0'.repeat(decimals[i]!)).slice(0, decimals[i]!) || '0');
        return neg ? -v : v;
      };
      const change = (mint: string) => after.get(vaultOf(mint))! - b.tokens.get(vaultOf(mint))!.before;
      expect([amount(0), amount(1)], `${label} ${hop.pool}`).toEqual([change(ids[0]!), change(ids[1]!)]);
      expect(change(ids[0]!) > 0n !== change(ids[1]!) > 0n).toBe(true);
    }
    // Nothing else of the transaction is served as a swap.
    const p = served.source.progress()[0]!;
    expect(p.swaps).toBe(6);
  });
});
