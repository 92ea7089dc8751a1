/**
 * The swap instructions of each DEX family: how an instruction is recognised (its discriminator:
 * Anchor's first 8 bytes of sha256("global:<name>"), or Raydium AMM v4's one-byte tag) and where its
 * accounts name the pool and the pool's two token vaults. The amounts are not read from here: they
 * are what the transaction moved in and out of those vaults (decode.ts).
 *
 * `order`: `given` when the two vaults are listed as the pool's token 0 and token 1; `mint` when they
 * are listed as input and output, the pool's token 0 being the mint whose 32 bytes sort first (the
 * rule Raydium CPMM, Raydium CLMM and Orca Whirlpools enforce at pool creation).
 *
 * Liquidity instructions (adds and removes) name the pool and its vaults the same way, token 0 then
 * token 1; their amounts are the transfers into (an add) or out of (a remove) the vaults. Their
 * account positions are those of each program's published interface (IDL or instruction builder); no
 * recorded transaction holds one, so only their vault balance changes prove them.
 */
import { createHash } from 'node:crypto';
import type { SolanaFamily } from './preset.js';

export interface SwapLayout {
  /** Account index of the pool. */
  readonly pool: number;
  /** Account indices of the pool's two token vaults. */
  readonly vaults: readonly [number, number];
  readonly order: 'given' | 'mint';
}

/**
 * pump.fun's bonding curve: the curve account holds the SOL (lamports, no token account), its token
 * account the other side; the SOL amount is read from the program's TradeEvent.
 */
export interface CurveLayout {
  readonly curve: number;
  readonly tokenVault: number;
  readonly mint: number;
}

export interface FamilySpec {
  /** Bytes of the discriminator: 1 (Raydium AMM v4) or 8 (Anchor). */
  readonly discriminatorBytes: 1 | 8;
  /** Per swap instruction discriminator (hex): the pools it trades with, given the instruction's account count. */
  readonly swaps: ReadonlyMap<string, (accounts: number) => readonly SwapLayout[] | null>;
  readonly curve?: ReadonlyMap<string, CurveLayout>;
  /** Per liquidity instruction discriminator (hex): the pool and its vaults, token 0 then token 1. */
  readonly liquidity?: ReadonlyMap<string, SwapLayout>;
}

/** Anchor's instruction discriminator of `name`, in hex. */
export function anchorDiscriminator(name: string): string {
  return createHash('sha256').update(`global:${name}`).digest('hex').slice(0, 16);
}

/** Anchor's event discriminator of `name`, in hex (the 8 bytes after the event-CPI tag, or at the start of a `Program data:` log). */
export function anchorEventDiscriminator(name: string): string {
  return createHash('sha256').update(`event:${name}`).digest('hex').slice(0, 16);
}

/** Tag of Anchor's event self-invocation (`emit_cpi!`): the first 8 bytes of its instruction data. */
export const EVENT_CPI_TAG = 'e445a52e51cb9a1d';

const one = (pool: number, a: number, b: number, order: SwapLayout['order']) => (): readonly SwapLayout[] => [{ pool, vaults: [a, b], order }];
const anchor = (entries: readonly [string, (accounts: number) => readonly SwapLayout[] | null][]) =>
  new Map(entries.map(([name, layout]) => [anchorDiscriminator(name), layout] as const));

/** Liquidity instructions of the Anchor programs: each name with its pool and vaults (token 0, token 1). */
const adds = (entries: readonly [names: readonly string[], pool: number, vault0: number, vault1: number][]): ReadonlyMap<string, SwapLayout> =>
  new Map(entries.flatMap(([names, pool, a, b]) => names.map((n) => [anchorDiscriminator(n), { pool, vaults: [a, b], order: 'given' }] as const)));

const AMM_V4_WITH_TARGET_ORDERS: readonly SwapLayout[] = [{ pool: 1, vaults: [5, 6], order: 'given' }];
const AMM_V4_WITHOUT_TARGET_ORDERS: readonly SwapLayout[] = [{ pool: 1, vaults: [4, 5], order: 'given' }];
const ammV4Swap = (n: number): readonly SwapLayout[] | null => (n >= 18 ? AMM_V4_WITH_TARGET_ORDERS : n === 17 ? AMM_V4_WITHOUT_TARGET_ORDERS : null);

/**
 * Raydium CLMM's router (`swap_router_base_in`): payer, input token account, input mint, token
 * program, Token-2022 program, memo program, then per hop amm_config, pool_state, output token
 * account, input vault, output vault, output mint, observation state and its tick arrays (as many as
 * the hop needs: the program finds the next hop's amm_config by its size, which the transaction does
 * not state). Every position a hop may start at is a candidate: pool at +1, input and output vaults
 * at +3 and +4. Only a hop's own position has tokens moved into its first vault and out of its second
 * among the instruction's transfers (vaultSwap rejects the others), so each hop is its own swap.
 * Candidate lists are made once per account count.
 */
const CLMM_ROUTER_FIRST_HOP = 6;
const routerHops = new Map<number, readonly SwapLayout[]>();
function clmmRouterHops(accounts: number): readonly SwapLayout[] | null {
  if (accounts < CLMM_ROUTER_FIRST_HOP + 7) return null;
  let hops = routerHops.get(accounts);
  if (hops === undefined) {
    const list: SwapLayout[] = [];
    for (let i = CLMM_ROUTER_FIRST_HOP; i + 4 < accounts; i++) list.push({ pool: i + 1, vaults: [i + 3, i + 4], order: 'mint' });
    hops = list;
    if (routerHops.size < 256) routerHops.set(accounts, hops);
  }
  return hops;
}

export const FAMILY_SPECS: Readonly<Record<SolanaFamily, FamilySpec>> = {
  // swapBaseIn (9) / swapBaseOut (11): amm at 1; coin and pc vaults at 5, 6 with the target-orders
  // account (18 accounts), at 4, 5 without it (17); the v2 instructions (16, 17) list 8 accounts, vaults at 3, 4.
  raydium_amm_v4: {
    discriminatorBytes: 1,
    swaps: new Map<string, (accounts: number) => readonly SwapLayout[] | null>([
      ['09', ammV4Swap],
      ['0b', ammV4Swap],
      ['10', one(1, 3, 4, 'given')],
      ['11', one(1, 3, 4, 'given')],
    ]),
    // deposit (3) / withdraw (4): token program, amm, authority, open orders, target orders, lp mint, coin vault, pc vault, ...
    liquidity: new Map([
      ['03', { pool: 1, vaults: [6, 7], order: 'given' }],
      ['04', { pool: 1, vaults: [6, 7], order: 'given' }],
    ]),
  },
  // payer, authority, amm_config, pool_state, input/output token accounts, input/output vaults, ...
  raydium_cpmm: {
    discriminatorBytes: 8,
    swaps: anchor([['swap_base_input', one(3, 6, 7, 'mint')], ['swap_base_output', one(3, 6, 7, 'mint')]]),
    // owner, authority, pool_state, owner lp account, token 0 and 1 accounts, token 0 and 1 vaults, ...
    liquidity: adds([[['deposit', 'withdraw'], 2, 6, 7]]),
  },
  // payer, amm_config, pool_state, input/output token accounts, input/output vaults, ...
  raydium_clmm: {
    discriminatorBytes: 8,
    swaps: anchor([['swap', one(2, 5, 6, 'mint')], ['swap_v2', one(2, 5, 6, 'mint')], ['swap_router_base_in', clmmRouterHops]]),
    liquidity: adds([
      // nft owner, nft account, pool_state, protocol position, personal position, tick arrays lower and upper, token accounts 0 and 1, vaults 0 and 1, ...
      [['increase_liquidity', 'increase_liquidity_v2'], 2, 9, 10],
      // nft owner, nft account, personal position, pool_state, protocol position, vaults 0 and 1, ...
      [['decrease_liquidity', 'decrease_liquidity_v2'], 3, 5, 6],
    ]),
  },
  orca_whirlpool: {
    discriminatorBytes: 8,
    swaps: anchor([
      // token_program, token_authority, whirlpool, owner A, vault A, owner B, vault B, ...
      ['swap', one(2, 4, 6, 'given')],
      // token programs A and B, memo, authority, whirlpool, mints A and B, owner A, vault A, owner B, vault B, ...
      ['swap_v2', one(4, 8, 10, 'given')],
      // whirlpools one and two, then per pool its owner and vault of A, its owner and vault of B.
      ['two_hop_swap', () => [{ pool: 2, vaults: [5, 7], order: 'given' }, { pool: 3, vaults: [9, 11], order: 'given' }]],
      // whirlpools one and two, 3 mints, 3 token programs, input owner, vault one in, vault one mid, vault two mid, vault two out, ...
      ['two_hop_swap_v2', () => [{ pool: 0, vaults: [9, 10], order: 'mint' }, { pool: 1, vaults: [11, 12], order: 'mint' }]],
    ]),
    liquidity: adds([
      // whirlpool, token program, position authority, position, position token account, owner accounts A and B, vaults A and B, ...
      [['increase_liquidity', 'decrease_liquidity'], 0, 7, 8],
      // whirlpool, token programs A and B, memo, position authority, position, position token account, mints A and B, owner accounts A and B, vaults A and B, ...
      [['increase_liquidity_v2', 'decrease_liquidity_v2'], 0, 11, 12],
    ]),
  },
  // lb_pair, bitmap extension, reserve X, reserve Y, ...
  meteora_dlmm: {
    discriminatorBytes: 8,
    swaps: anchor(['swap', 'swap_exact_out', 'swap_with_price_impact', 'swap2', 'swap_exact_out2', 'swap_with_price_impact2'].map((n) => [n, one(0, 2, 3, 'given')] as [string, () => readonly SwapLayout[]])),
    // position, lb_pair, bitmap extension, user token X and Y, reserves X and Y, ...
    liquidity: adds([[['add_liquidity', 'add_liquidity_by_weight', 'add_liquidity_by_strategy', 'add_liquidity2', 'add_liquidity_by_strategy2', 'remove_liquidity', 'remove_all_liquidity', 'remove_liquidity_by_range', 'remove_liquidity2', 'remove_liquidity_by_range2'], 1, 5, 6]]),
  },
  // pool, user source and destination, vaults A and B, the vaults' token accounts A and B, ...
  meteora_damm_v1: { discriminatorBytes: 8, swaps: anchor([['swap', one(0, 5, 6, 'given')]]) },
  // pool authority, pool, input and output token accounts, vaults A and B, ...
  meteora_damm_v2: {
    discriminatorBytes: 8,
    swaps: anchor([['swap', one(1, 4, 5, 'given')], ['swap2', one(1, 4, 5, 'given')]]),
    liquidity: adds([
      // pool, position, token A and B accounts, vaults A and B, ...
      [['add_liquidity'], 0, 4, 5],
      // pool authority, pool, position, token A and B accounts, vaults A and B, ...
      [['remove_liquidity', 'remove_all_liquidity'], 1, 5, 6],
    ]),
  },
  // global, fee recipient, mint, bonding curve, its token account, ...
  pumpfun: {
    discriminatorBytes: 8,
    swaps: new Map(),
    curve: new Map(['buy', 'sell', 'buy_exact_sol_in'].map((n) => [anchorDiscriminator(n), { curve: 3, tokenVault: 4, mint: 2 }] as const)),
  },
  // pool, user, global config, base and quote mints, user base and quote accounts, pool base and quote accounts, ...
  pumpswap: {
    discriminatorBytes: 8,
    swaps: anchor(['buy', 'sell', 'buy_exact_quote_in'].map((n) => [n, one(0, 7, 8, 'given')] as [string, () => readonly SwapLayout[]])),
    // pool, global config, user, base and quote mints, lp mint, user base, quote and pool-token accounts, pool base and quote accounts, ...
    liquidity: adds([[['deposit', 'withdraw'], 0, 9, 10]]),
  },
};

/** pump.fun's TradeEvent: mint, sol_amount, token_amount, is_buy, user, timestamp, virtual reserves, ... */
export const PUMPFUN_TRADE_EVENT = anchorEventDiscriminator('TradeEvent');

/** SPL Token and Token-2022: their Transfer (3) and TransferChecked (12) share a layout. */
export const TOKEN_PROGRAMS: ReadonlySet<string> = new Set(['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb']);
