/**
 * Balancer v2 weighted pools through the EVM source on a real anvil: the Vault, Authorizer and
 * WeightedPoolFactory from the bytecode `@balancer-labs/v2-deployments` ships (test/support/balancer.ts),
 * a 50/50 WETH/USDC pool (6 decimals), an 80/20 BAL/WETH pool and a 40/40/20 WBTC (8 decimals) /
 * WETH / USDC pool served as the pair of its first two tokens; joins, exits, swaps both ways, two
 * swaps in one block, swaps touching one of the pair's tokens only, and a protocol swap fee charged
 * on joins and exits, and a restart midway (the service resumes from its store). Every figure served (reserves, price, fee, swaps, transactions, USD prices to
 * the last digit) is compared with the Vault's `getPoolTokens`, the pools' weights and the Vault's logs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import { formatUnits, parseAbiItem, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS } from '../engine/sources/evm/families/balancer-v2/index.js';
import { deployBalancer, type BalancerMarket } from './support/balancer.js';
import { anvilBackfillChain, blockTimes, deployTestTokens, inOneBlock, mineAt, startAnvil, type Anvil } from './support/evm.js';
import { backfillAndServe, expectClose, expectTransactions, getJson, type LoggedTx, type ServedChains } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E8 = 10n ** 8n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;
const M = 60;

type Sym = 'usdc' | 'weth' | 'wbtc' | 'bal';
const dec: Record<Sym, number> = { usdc: 6, weth: 18, wbtc: 8, bal: 18 };
const tok = {} as Record<Sym, Address>;
const decOf = (a: Address): number => dec[(Object.keys(tok) as Sym[]).find((k) => tok[k].toLowerCase() === a.toLowerCase())!];

interface Pool {
  readonly name: string;
  readonly id: Hex;
  readonly contract: Address;
  readonly tokens: Address[];
  readonly weights: bigint[];
  readonly swapFee: bigint;
}

let node: Anvil;
let served: ServedChains | undefined;
let base = '';
let bal: BalancerMarket;
const pools: Pool[] = [];
let twoSwapBlock = 0;
/** The data directory, served once midway and again (resumed) at the end. */
let dir = '';

const SWAP = parseAbiItem('event Swap(bytes32 indexed poolId, address indexed tokenIn, address indexed tokenOut, uint256 amountIn, uint256 amountOut)');
const CHANGED = parseAbiItem('event PoolBalanceChanged(bytes32 indexed poolId, address indexed liquidityProvider, address[] tokens, int256[] deltas, uint256[] protocolFeeAmounts)');

const get = (path: string) => getJson(base + path);

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 1 });
  let t = T0 + 10;
  Object.assign(
    tok,
    await deployTestTokens(node, t, {
      usdc: ['USD Coin', 'USDC', dec.usdc, 10n ** 12n * E6],
      weth: ['Wrapped Ether', 'WETH', dec.weth, 10n ** 9n * E18],
      wbtc: ['Wrapped BTC', 'WBTC', dec.wbtc, 10n ** 7n * E8],
      bal: ['Balancer', 'BAL', dec.bal, 10n ** 12n * E18],
    }),
  );
  t += 5;
  bal = await deployBalancer(node, tok.weth, [tok.usdc, tok.weth, tok.wbtc, tok.bal], t);
  const make = async (name: string, list: Address[], weights: bigint[], swapFee: bigint, at: number) => {
    const p = await bal.createPool(list, weights, swapFee, at);
    pools.push({ name, id: p.id, contract: p.pool, tokens: p.tokens, weights: p.weights, swapFee });
    return pools[pools.length - 1]!;
  };
  // In the pool's token order, from amounts by token.
  const amounts = (p: Pool, by: Partial<Record<Sym, bigint>>) => p.tokens.map((a) => by[(Object.keys(tok) as Sym[]).find((k) => tok[k].toLowerCase() === a.toLowerCase())!] ?? 0n);

  // WETH/USDC 50/50 at 3000 USD, the deepest: WETH's USD route.
  const a = await make('WETH/USDC 50/50', [tok.weth, tok.usdc], [E18 / 2n, E18 / 2n], 3n * 10n ** 15n, T0 + M);
  await bal.init(a.id, a.tokens, amounts(a, { weth: 1_000n * E18, usdc: 3_000_000n * E6 }), T0 + M + 5);
  await bal.swap(a.id, tok.usdc, tok.weth, 45_000n * E6, T0 + 2 * M + 10);
  await bal.swap(a.id, tok.weth, tok.usdc, 7n * E18, T0 + 3 * M + 20);
  // Two swaps in one block, opposite ways.
  twoSwapBlock = Number((await inOneBlock(node, T0 + 4 * M + 30, [bal.swapCall(a.id, tok.weth, tok.usdc, 3n * E18), bal.swapCall(a.id, tok.usdc, tok.weth, 20_000n * E6)])).block);
  // A protocol swap fee: the joins and exits after it pay the Vault its share of the swap fees grown since.
  await bal.setProtocolSwapFee(E18 / 2n, T0 + 5 * M);
  await bal.join(a.id, a.tokens, amounts(a, { weth: 10n * E18, usdc: 25_000n * E6 }), T0 + 6 * M);
  await bal.swap(a.id, tok.usdc, tok.weth, 90_000n * E6, T0 + 7 * M + 10);
  await bal.exit(a.id, a.contract, a.tokens, 20n, T0 + 8 * M);

  // BAL/WETH 80/20 at 5 USD a BAL: BAL's USD price is routed through WETH's.
  const b = await make('BAL/WETH 80/20', [tok.bal, tok.weth], [(E18 * 4n) / 5n, E18 / 5n], E18 / 100n, T0 + 9 * M);
  await bal.init(b.id, b.tokens, amounts(b, { bal: 1_000_000n * E18, weth: (1_250_000n * E18) / 3_000n }), T0 + 9 * M + 5);

  // The service stops here and resumes later from its store: the pools' tokens, which the Vault's
  // swaps are read against, are rebuilt from the Vault's logs.
  await mineAt(node, T0 + 9 * M + 30);
  await node.rpc('evm_mine', []);
  dir = mkdtempSync(join(tmpdir(), 'evm-balancer-'));
  await (await backfillAndServe([chainConfig()], T0 + 9 * M + 40, { dir })).close();
  await bal.swap(b.id, tok.weth, tok.bal, 20n * E18, T0 + 10 * M + 10);
  await bal.swap(b.id, tok.bal, tok.weth, 31_337n * E18, T0 + 11 * M + 40);

  // WBTC/WETH/USDC 40/40/20: served as its first two tokens; swaps with the third move one reserve.
  const c = await make('WBTC/WETH/USDC 40/40/20', [tok.wbtc, tok.weth, tok.usdc], [(E18 * 2n) / 5n, (E18 * 2n) / 5n, E18 / 5n], (25n * E18) / 10_000n, T0 + 12 * M);
  await bal.init(c.id, c.tokens, amounts(c, { wbtc: 4n * E8, weth: 80n * E18, usdc: 120_000n * E6 }), T0 + 12 * M + 5);
  await bal.swap(c.id, c.tokens[0]!, c.tokens[1]!, c.tokens[0] === tok.wbtc ? E8 / 10n : c.tokens[0] === tok.weth ? 2n * E18 : 6_000n * E6, T0 + 13 * M + 10);
  await bal.swap(c.id, c.tokens[2]!, c.tokens[0]!, c.tokens[2] === tok.wbtc ? E8 / 20n : c.tokens[2] === tok.weth ? E18 : 3_000n * E6, T0 + 14 * M + 20);
  await bal.swap(c.id, c.tokens[1]!, c.tokens[2]!, c.tokens[1] === tok.wbtc ? E8 / 20n : c.tokens[1] === tok.weth ? E18 : 3_000n * E6, T0 + 15 * M + 30);
  await bal.join(c.id, c.tokens, amounts(c, { wbtc: E8, weth: 20n * E18, usdc: 30_000n * E6 }), T0 + 16 * M);
  await mineAt(node, T0 + 17 * M);
  await node.rpc('evm_mine', []);

  served = await backfillAndServe([chainConfig()], T0 + 20 * M, { dir });
  base = served.url;
}, 120_000);

afterAll(async () => {
  await served?.close();
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

function chainConfig() {
  return anvilBackfillChain(node, {
    id: 'ethereum',
    displayName: 'Ethereum',
    startBlock: bal.vaultBlock,
    stablecoins: [tok.usdc],
    wrappedNative: tok.weth,
    factories: [{ dexId: 'balancer_v2', name: 'Balancer V2', protocol: 'balancer_v2', address: bal.vault }],
    logBatchBlocks: 7,
  });
}

/** The pool as the Vault holds it: balances of its first two tokens, their weights and decimals. */
async function truth(p: Pool) {
  const { tokens, balances } = await bal.poolTokens(p.id);
  expect(tokens.map((x) => x.toLowerCase())).toEqual(p.tokens.map((x) => x.toLowerCase()));
  const d0 = decOf(tokens[0]!);
  const d1 = decOf(tokens[1]!);
  // Token 0 in token 1: (B1/w1) / (B0/w0), decimals applied, exactly.
  const price = new Decimal(balances[1]!.toString()).mul(p.weights[0]!.toString()).mul(new Decimal(10).pow(d0)).div(new Decimal(balances[0]!.toString()).mul(p.weights[1]!.toString()).mul(new Decimal(10).pow(d1)));
  return { b0: balances[0]!, b1: balances[1]!, d0, d1, price };
}

/** The pool's transactions as the Vault's logs tell them: swaps between its first two tokens, joins and exits. */
async function loggedTxs(p: Pool): Promise<LoggedTx[]> {
  const [t0, t1] = [p.tokens[0]!.toLowerCase(), p.tokens[1]!.toLowerCase()];
  const swaps = await node.pub.getLogs({ address: bal.vault, event: SWAP, args: { poolId: p.id }, fromBlock: 0n });
  const changes = await node.pub.getLogs({ address: bal.vault, event: CHANGED, args: { poolId: p.id }, fromBlock: 0n });
  const times = await blockTimes(node, [...swaps, ...changes]);
  const out: (LoggedTx & { order: number })[] = [];
  const base = (l: { blockNumber: bigint; transactionIndex: number; logIndex: number; transactionHash: Hex }) => ({
    id: `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`,
    hash: l.transactionHash,
    block: Number(l.blockNumber),
    time: times.get(l.blockNumber)!,
    order: Number(l.blockNumber) * 1e6 + l.logIndex,
  });
  for (const l of swaps) {
    const a = l.args as { tokenIn: Address; tokenOut: Address; amountIn: bigint; amountOut: bigint };
    const i = a.tokenIn.toLowerCase();
    const o = a.tokenOut.toLowerCase();
    if (![t0, t1].includes(i) || ![t0, t1].includes(o)) continue;
    out.push({ ...base(l), type: 'swap', amount0: i === t0 ? a.amountIn : -a.amountOut, amount1: i === t1 ? a.amountIn : -a.amountOut });
  }
  for (const l of changes) {
    const a = l.args as { deltas: readonly bigint[] };
    const join = a.deltas.every((d) => d >= 0n);
    out.push({ ...base(l), type: join ? 'add' : 'remove', amount0: a.deltas[0]!, amount1: a.deltas[1]! });
  }
  return out.sort((x, y) => x.order - y.order);
}

describe('Balancer v2 weighted pools', () => {
  it('the family decodes the Vault events the pools emitted (topics as the contracts compute them)', async () => {
    const logs = await node.pub.getLogs({ address: bal.vault, fromBlock: 0n });
    const topics = new Set(logs.map((l) => l.topics[0]));
    for (const e of [EVENTS.balancerTokensRegistered, EVENTS.balancerSwap, EVENTS.balancerPoolBalanceChanged]) expect(topics.has(e.topic as Hex), e.signature).toBe(true);
  });

  it('pool details: reserves are the Vault balances of the first two tokens, the price their weighted ratio, the fee the pool\'s', async () => {
    for (const p of pools) {
      const x = await truth(p);
      const { status, body } = await get(`/networks/ethereum/pools/${p.id}`);
      expect(status, p.name).toBe(200);
      expect(body.tokens.map((k: { id: string }) => k.id), p.name).toEqual(p.tokens.slice(0, 2).map((a) => a.toLowerCase()));
      expect(body.token_reserves.map((r: { reserve: string }) => r.reserve), p.name).toEqual([x.b0.toString(), x.b1.toString()]);
      expectClose(body.last_price, x.price.toNumber(), `${p.name} price`, 1e-12);
      expect(body.fee, p.name).toBe(Number(p.swapFee / 10n ** 12n));
      const swaps = (await loggedTxs(p)).filter((t) => t.type === 'swap').length;
      expect(body.transactions, p.name).toBe(swaps);
    }
  });

  it('USD prices to the last digit: WETH through the 50/50 pool, BAL through the 80/20 pool and WETH', async () => {
    const [a, b] = pools as [Pool, Pool];
    const xa = await truth(a);
    const xb = await truth(b);
    // WETH in USDC from pool A, BAL in WETH from pool B (either may hold its tokens in either order).
    const wethUsd = a.tokens[0]!.toLowerCase() === tok.weth.toLowerCase() ? xa.price : new Decimal(1).div(xa.price);
    const balWeth = b.tokens[0]!.toLowerCase() === tok.bal.toLowerCase() ? xb.price : new Decimal(1).div(xb.price);
    const { status, text } = await get(`/networks/ethereum/multi/prices?tokens=${tok.weth},${tok.bal}`);
    expect(status).toBe(200);
    const served = Object.fromEntries([...text.matchAll(/"id":"(0x[0-9a-f]+)","chain":"ethereum","price_usd":([0-9.e+-]+)/g)].map((m) => [m[1], m[2]]));
    expect(served[tok.weth.toLowerCase()]).toBe(wethUsd.toSignificantDigits(18).toFixed());
    expect(served[tok.bal.toLowerCase()]).toBe(balWeth.mul(wethUsd).toSignificantDigits(18).toFixed());
  });

  it('transactions: swaps between the pair\'s tokens, joins and exits, newest first, with signed amounts', async () => {
    for (const p of pools) {
      const logged = await loggedTxs(p);
      const { status, body } = await get(`/networks/ethereum/pools/${p.id}/transactions?limit=100`);
      expect(status, p.name).toBe(200);
      const x = await truth(p);
      expectTransactions(body, logged, x.d0, x.d1);
    }
    const a = pools[0]!;
    const inBlock = (await loggedTxs(a)).filter((t) => t.block === twoSwapBlock && t.type === 'swap');
    expect(inBlock).toHaveLength(2);
    expect(formatUnits(inBlock[0]!.amount0, 0)).not.toBe(formatUnits(inBlock[1]!.amount0, 0));
  });

  it('a protocol fee on a join or exit leaves the pool: its reserves follow the Vault\'s, not the deltas alone', async () => {
    const a = pools[0]!;
    const changes = await node.pub.getLogs({ address: bal.vault, event: CHANGED, args: { poolId: a.id }, fromBlock: 0n });
    const fees = changes.flatMap((l) => (l.args as { protocolFeeAmounts: readonly bigint[] }).protocolFeeAmounts);
    expect(fees.some((f) => f > 0n)).toBe(true);
    const x = await truth(a);
    const { body } = await get(`/networks/ethereum/pools/${a.id}`);
    expect(body.token_reserves.map((r: { reserve: string }) => r.reserve)).toEqual([x.b0.toString(), x.b1.toString()]);
  });
});
