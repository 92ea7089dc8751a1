/**
 * Uniswap v4 through the EVM source on a real anvil: the PoolManager and the test routers compiled
 * in @uniswap/v4-core, a native-ETH/USDC (6 decimals) pool and a WBTC (8)/USDC pool, positions
 * added, topped up, partly and wholly removed, a zero change that only pays fees out, a donation,
 * swaps both ways crossing position bounds, two swaps in one block. Every figure the REST interface
 * serves (the pool id as address, native ETH as a token, price, reserves, volume, candles,
 * transactions with amounts and signs) is compared with the PoolManager's logs and state, read here
 * with viem: slot0 and position liquidity through `extsload` (the principal computed from them
 * exactly, the ticks' sqrt prices from the package's TickMath on the node), what each position would
 * be paid if removed now and what each liquidity change paid or was paid through the router's callerDelta
 * (less the fees owed), and the PoolManager's own balance changes for the swaps.
 */
import { formatUnits, maxUint256, parseAbi, parseAbiItem, zeroAddress, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilBackfillChain, blockTimes, deploy, deployTestTokens, fixtures, inOneBlock, mineAt, read, send, startAnvil, type Anvil } from './support/evm.js';
import { backfillAndServe, expectCandles, expectClose, expectTransactions, getJson, MAX_SQRT_RATIO, minuteCandles, MIN_SQRT_RATIO, sqrtPriceRatio, sqrtPriceUsd, sqrtPriceX96Of, usdcLeg, type LoggedTx, type ServedChains } from './support/evm-serve.js';
import { poolId, sendValue, V4, v4ExactPrincipal, v4Principal, v4PrincipalReserves, v4Slot0, type PoolKey } from './support/evm-v4.js';

const E18 = 10n ** 18n;
const E8 = 10n ** 8n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;
const NATIVE = zeroAddress;

let node: Anvil;
let served: ServedChains | undefined;
let base = '';
const tok: Record<'usdc' | 'weth' | 'wbtc', Address> = {} as never;
let manager: Address;
let managerBlock = 0;
let swapRouter: Address;
let lpRouter: Address;
let donateRouter: Address;
let tickMath: Address;

interface TestPool {
  readonly name: 'eth' | 'wbtc';
  readonly key: PoolKey;
  readonly id: Hex;
  readonly dec0: number;
  readonly dec1: number;
  readonly usdcIs0: boolean;
  /** Positions opened (owner: the liquidity router), one per tick range. */
  readonly positions: { lower: number; upper: number; salt: Hex }[];
  /** Liquidity changes as the router reported them: the principal in the pool's view, by transaction. */
  readonly changes: Map<Hex, { amount0: bigint; amount1: bigint }>;
}
const pools: Record<'eth' | 'wbtc', TestPool> = {} as never;
/** The block holding two swaps. */
let twoSwapBlock = 0n;
/** The ETH pool's narrow position about the first price. */
let narrow: readonly [number, number] = [0, 0];

const SALT = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`;

const get = (path: string) => getJson(base + path);

/** A liquidity change through the router at time `at`, with the principal it moved recorded beforehand. */
async function modify(p: TestPool, lower: number, upper: number, delta: bigint, salt: Hex, at: number): Promise<void> {
  const [amount0, amount1] = await v4Principal(node, lpRouter, p.key, lower, upper, delta, salt);
  await mineAt(node, at);
  const { hash } = await sendValue(node, lpRouter, V4.PoolModifyLiquidityTest.abi, 'modifyLiquidity', [p.key, { tickLower: lower, tickUpper: upper, liquidityDelta: delta, salt }, '0x'], p.key.currency0 === NATIVE && delta > 0n ? 1_000n * E18 : 0n);
  if (delta !== 0n) p.changes.set(hash, { amount0, amount1 });
  if (delta > 0n && !p.positions.some((x) => x.lower === lower && x.upper === upper)) p.positions.push({ lower, upper, salt });
}

function swapArgs(p: TestPool, usdcIn: boolean, amountIn: bigint) {
  const zeroForOne = usdcIn === p.usdcIs0;
  return [p.key, { zeroForOne, amountSpecified: -amountIn, sqrtPriceLimitX96: zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n }, { takeClaims: false, settleUsingBurn: false }, '0x'] as const;
}

/** ETH paid with a swap: its amount when native ETH goes in, else nothing. */
const swapValue = (p: TestPool, usdcIn: boolean, amountIn: bigint) => (p.key.currency0 === NATIVE && !usdcIn ? amountIn : 0n);

async function swap(p: TestPool, usdcIn: boolean, amountIn: bigint, at: number): Promise<void> {
  await mineAt(node, at);
  await sendValue(node, swapRouter, V4.PoolSwapTest.abi, 'swap', swapArgs(p, usdcIn, amountIn), swapValue(p, usdcIn, amountIn));
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 1 });
  const f = fixtures();
  let t = T0 + 10;
  Object.assign(tok, await deployTestTokens(node, t, { usdc: ['USD Coin', 'USDC', 6, 10n ** 12n * E6], weth: ['Wrapped Ether', 'WETH', 18, 10n ** 9n * E18], wbtc: ['Wrapped BTC', 'WBTC', 8, 10n ** 7n * E8] }));
  t += 3;
  await mineAt(node, t++);
  manager = await deploy(node, V4.PoolManager, [node.account]);
  managerBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await mineAt(node, t++);
  tickMath = await deploy(node, V4.TickMathTest);
  for (const [i, artifact] of [V4.PoolSwapTest, V4.PoolModifyLiquidityTest, V4.PoolDonateTest].entries()) {
    await mineAt(node, t++);
    const a = await deploy(node, artifact, [manager]);
    if (i === 0) swapRouter = a;
    else if (i === 1) lpRouter = a;
    else donateRouter = a;
  }
  for (const token of [tok.usdc, tok.wbtc]) {
    for (const router of [swapRouter, lpRouter, donateRouter]) {
      await mineAt(node, t++);
      await send(node, token, f.TestToken.abi, 'approve', [router, maxUint256]);
    }
  }
  const wbtcIs0 = tok.wbtc.toLowerCase() < tok.usdc.toLowerCase();
  const ethKey: PoolKey = { currency0: NATIVE, currency1: tok.usdc, fee: 3000, tickSpacing: 60, hooks: zeroAddress };
  const wbtcKey: PoolKey = { currency0: wbtcIs0 ? tok.wbtc : tok.usdc, currency1: wbtcIs0 ? tok.usdc : tok.wbtc, fee: 500, tickSpacing: 10, hooks: zeroAddress };
  pools.eth = { name: 'eth', key: ethKey, id: poolId(ethKey), dec0: 18, dec1: 6, usdcIs0: false, positions: [], changes: new Map() };
  pools.wbtc = { name: 'wbtc', key: wbtcKey, id: poolId(wbtcKey), dec0: wbtcIs0 ? 8 : 6, dec1: wbtcIs0 ? 6 : 8, usdcIs0: !wbtcIs0, positions: [], changes: new Map() };
  await mineAt(node, T0 + 60);
  await send(node, manager, V4.PoolManager.abi, 'initialize', [ethKey, sqrtPriceX96Of(false, 18, 3_000n)]);
  await mineAt(node, T0 + 61);
  await send(node, manager, V4.PoolManager.abi, 'initialize', [wbtcKey, sqrtPriceX96Of(!wbtcIs0, 8, 60_000n)]);

  // ETH/USDC: a full-range position, one about the price (±600 ticks) and one above it; the swaps
  // below move the price across their bounds both ways.
  const eth = pools.eth;
  const { tick } = await v4Slot0(node, manager, eth.id);
  const at = Math.round(tick / 60) * 60;
  narrow = [at - 600, at + 600];
  await modify(eth, -887220, 887220, 10n ** 15n, SALT(1), T0 + 300);
  await modify(eth, narrow[0], narrow[1], 5n * 10n ** 15n, SALT(2), T0 + 305);
  await modify(eth, at + 600, at + 1800, 3n * 10n ** 15n, SALT(3), T0 + 306);
  await swap(eth, true, 20_000n * E6, T0 + 6 * 60 + 5);
  await swap(eth, false, 10n * E18, T0 + 7 * 60 + 15);
  await swap(eth, true, 1_234_567n, T0 + 7 * 60 + 50);
  // Two swaps in one block, the second the other way.
  const swapCall = (usdcIn: boolean, amountIn: bigint) => ({ address: swapRouter, abi: V4.PoolSwapTest.abi, functionName: 'swap', args: swapArgs(eth, usdcIn, amountIn), value: swapValue(eth, usdcIn, amountIn) });
  twoSwapBlock = (await inOneBlock(node, T0 + 8 * 60 + 30, [swapCall(true, 2_500n * E6), swapCall(false, E18 / 3n)])).block;
  // A top-up of the narrow position (fees owed are paid out with it), part of it removed, the
  // position above removed whole, a zero change (fees only), a donation.
  await modify(eth, narrow[0], narrow[1], 10n ** 15n, SALT(2), T0 + 9 * 60);
  await modify(eth, narrow[0], narrow[1], -(2n * 10n ** 15n), SALT(2), T0 + 9 * 60 + 20);
  await modify(eth, at + 600, at + 1800, -(3n * 10n ** 15n), SALT(3), T0 + 9 * 60 + 40);
  await modify(eth, -887220, 887220, 0n, SALT(1), T0 + 10 * 60);
  await mineAt(node, T0 + 10 * 60 + 30);
  await sendValue(node, donateRouter, V4.PoolDonateTest.abi, 'donate', [eth.key, E18 / 100n, 30n * E6, '0x'], E18 / 100n);
  await swap(eth, false, E18 / 7n, T0 + 11 * 60 + 1);

  // WBTC (8 decimals) / USDC (6 decimals): full range and a narrow range crossed both ways.
  const w = pools.wbtc;
  const wt = Math.round((await v4Slot0(node, manager, w.id)).tick / 10) * 10;
  await modify(w, -887270, 887270, 5n * 10n ** 10n, SALT(1), T0 + 12 * 60);
  await modify(w, wt - 200, wt + 200, 10n ** 11n, SALT(2), T0 + 12 * 60 + 10);
  await swap(w, true, 40_000n * E6, T0 + 13 * 60 + 20);
  await swap(w, false, E8 / 2n, T0 + 14 * 60 + 40);
  await modify(w, wt - 200, wt + 200, -(10n ** 11n) / 3n, SALT(2), T0 + 15 * 60);
  await swap(w, true, 5_000n * E6, T0 + 15 * 60 + 30);

  served = await backfillAndServe([chainConfig()], NOW);
  base = served.url;
}, 180_000);

function chainConfig() {
  return anvilBackfillChain(node, {
    id: 'ethereum',
    displayName: 'Ethereum',
    startBlock: managerBlock,
    logBatchBlocks: 7,
    stablecoins: [tok.usdc],
    wrappedNative: tok.weth,
    factories: [{ dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: manager }],
  });
}

afterAll(async () => {
  await served?.close();
  await node?.stop();
});

const SWAP = parseAbiItem('event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)');
const MODIFY = parseAbiItem('event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)');
const BALANCE_OF = parseAbi(['function balanceOf(address) view returns (uint256)']);

type Tx = LoggedTx & { sqrtPriceX96: bigint; tick: number };

/** The pool's Swap and (non-zero) ModifyLiquidity logs read with viem: swaps in the pool's view (negated), liquidity changes with the principal the router reported. */
async function truth(p: TestPool): Promise<Tx[]> {
  // The PoolManager's logs of every pool, kept for this pool's id (topic 1).
  const logs = (await node.pub.getLogs({ address: manager, events: [SWAP, MODIFY], fromBlock: 0n })).filter((l) => (l.args as { id?: string }).id === p.id);
  const times = await blockTimes(node, logs);
  const out: Tx[] = [];
  for (const l of logs) {
    const a = l.args as Record<string, bigint>;
    const b = { id: `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`, hash: l.transactionHash, block: Number(l.blockNumber), time: times.get(l.blockNumber)! };
    if (l.eventName === 'Swap') out.push({ ...b, type: 'swap', amount0: -a.amount0!, amount1: -a.amount1!, sqrtPriceX96: a.sqrtPriceX96!, tick: Number(a.tick) });
    else if (a.liquidityDelta !== 0n) {
      const c = p.changes.get(l.transactionHash)!;
      out.push({ ...b, type: a.liquidityDelta! > 0n ? 'add' : 'remove', amount0: c.amount0, amount1: c.amount1, sqrtPriceX96: 0n, tick: 0 });
    }
  }
  return out;
}

/** The PoolManager's balance of a currency (native ETH: its ether balance) at a block. */
async function managerBalance(currency: Address, blockNumber: bigint): Promise<bigint> {
  if (currency === NATIVE) return node.pub.getBalance({ address: manager, blockNumber });
  return node.pub.readContract({ address: currency, abi: BALANCE_OF, functionName: 'balanceOf', args: [manager], blockNumber });
}

describe('Uniswap v4 on anvil through the REST interface', () => {
  it('each pool is served under its id, on the uniswap_v4 DEX, with native ETH as a token', async () => {
    for (const p of Object.values(pools)) {
      const { status, body } = await get(`/networks/ethereum/pools/${p.id}`);
      expect(status, p.name).toBe(200);
      expect(body.id).toBe(p.id.toLowerCase());
      expect([body.dex_id, body.factory_id, body.fee]).toEqual(['uniswap_v4', manager.toLowerCase(), p.key.fee]);
      expect(body.tokens.map((x: { id: string }) => x.id)).toEqual([p.key.currency0.toLowerCase(), p.key.currency1.toLowerCase()]);
      // The id in upper case names the same pool.
      expect((await get(`/networks/ethereum/pools/0x${p.id.slice(2).toUpperCase()}`)).body.id).toBe(p.id.toLowerCase());
      // Search finds it by a prefix of its id.
      expect(JSON.stringify((await get(`/search?query=${p.id.slice(0, 24)}`)).body)).toContain(p.id.toLowerCase());
    }
    const eth = (await get(`/networks/ethereum/pools/${pools.eth.id}`)).body.tokens[0];
    expect([eth.id, eth.symbol, eth.name, eth.decimals]).toEqual([NATIVE, 'ETH', 'Ether', 18]);
    const token = await get(`/networks/ethereum/tokens/${NATIVE}`);
    expect(token.status).toBe(200);
    expect([token.body.symbol, token.body.decimals]).toEqual(['ETH', 18]);
    expect(JSON.stringify((await get('/networks/ethereum/dexes')).body)).toContain('uniswap_v4');
  });

  it('every Swap is read, two in one block included, and the swaps crossed the positions\' bounds both ways', async () => {
    const txs = await truth(pools.eth);
    const swaps = txs.filter((x) => x.type === 'swap');
    expect(swaps.filter((x) => BigInt(x.block) === twoSwapBlock)).toHaveLength(2);
    expect(swaps.some((x) => x.tick >= narrow[1])).toBe(true);
    expect(swaps.some((x) => x.tick < narrow[0])).toBe(true);
    expect(swaps.some((x) => x.tick >= narrow[0] && x.tick < narrow[1])).toBe(true);
    const { body } = await get(`/networks/ethereum/pools/${pools.eth.id}`);
    expect(body.transactions).toBe(swaps.length);
  });

  it('price from slot0; reserves the positions\' principal at that price: exact, and at most a unit per position above what removing each now would pay, fees apart', async () => {
    for (const p of Object.values(pools)) {
      const slot0 = await v4Slot0(node, manager, p.id);
      const txs = await truth(p);
      expect(txs.filter((x) => x.type === 'swap').pop()!.sqrtPriceX96).toBe(slot0.sqrtPriceX96);
      const { body } = await get(`/networks/ethereum/pools/${p.id}`);
      expectClose(body.last_price, sqrtPriceRatio(p, slot0.sqrtPriceX96), `${p.name} last_price`);
      const [r0, r1] = await v4ExactPrincipal(node, manager, tickMath, lpRouter, p.key, p.positions);
      expect(r0 > 0n && r1 > 0n, p.name).toBe(true);
      expect(body.token_reserves.map((r: { reserve: string }) => r.reserve), p.name).toEqual([String(r0), String(r1)]);
      // The PoolManager's own rounding: removing every position now pays each amount rounded down.
      const [w0, w1] = await v4PrincipalReserves(node, manager, lpRouter, p.key, p.positions);
      const n = BigInt(p.positions.length);
      expect(r0 >= w0 && r0 - w0 < n && r1 >= w1 && r1 - w1 < n, `${p.name}: ${r0}, ${r1} against removals ${w0}, ${w1}`).toBe(true);
      const [usdcRaw, otherRaw] = p.usdcIs0 ? [r0, r1] : [r1, r0];
      expectClose(body.liquidity_usd, Number(formatUnits(usdcRaw, 6)) + Number(formatUnits(otherRaw, p.usdcIs0 ? p.dec1 : p.dec0)) * sqrtPriceUsd(p, slot0.sqrtPriceX96), `${p.name} liquidity_usd`);
      const other = p.name === 'eth' ? NATIVE : tok.wbtc;
      expectClose((await get(`/networks/ethereum/tokens/${other}`)).body.price_usd, sqrtPriceUsd(p, slot0.sqrtPriceX96), `${p.name} price_usd`);
    }
  });

  it('24 h volume: the USDC legs of the swaps', async () => {
    for (const p of Object.values(pools)) {
      const want = (await truth(p)).filter((x) => x.type === 'swap').reduce((s, x) => s + usdcLeg(p, x), 0);
      expectClose((await get(`/networks/ethereum/pools/${p.id}`)).body.volume_usd, want, `${p.name} volume_usd`);
    }
  });

  it('OHLCV: one-minute candles of ETH in USD from each swap\'s sqrtPriceX96, volume from the USDC legs', async () => {
    const p = pools.eth;
    const swaps = (await truth(p)).filter((x) => x.type === 'swap');
    const candles = minuteCandles(swaps.map((x) => ({ time: x.time, price: sqrtPriceUsd(p, x.sqrtPriceX96), volume: usdcLeg(p, x) })));
    const { status, body } = await get(`/networks/ethereum/pools/${p.id}/ohlcv?interval=1m&start=${T0}&inversed=${p.usdcIs0}`);
    expect(status).toBe(200);
    expectCandles(body, candles);
  });

  it('transactions: every swap and liquidity change, newest first, signed in the pool\'s view; swaps match the PoolManager\'s balance changes', async () => {
    for (const p of Object.values(pools)) {
      const txs = await truth(p);
      // A swap's amounts are what the PoolManager received (+) and paid (-) in its block.
      const byBlock = new Map<number, [bigint, bigint]>();
      for (const x of txs) if (x.type === 'swap') byBlock.set(x.block, [(byBlock.get(x.block)?.[0] ?? 0n) + x.amount0, (byBlock.get(x.block)?.[1] ?? 0n) + x.amount1]);
      for (const [block, [a0, a1]] of byBlock) {
        const b = BigInt(block);
        const moved0 = (await managerBalance(p.key.currency0, b)) - (await managerBalance(p.key.currency0, b - 1n));
        const moved1 = (await managerBalance(p.key.currency1, b)) - (await managerBalance(p.key.currency1, b - 1n));
        expect([moved0, moved1], `${p.name} block ${block}`).toEqual([a0, a1]);
      }
      expect(txs.some((x) => x.type === 'add')).toBe(true);
      expect(txs.some((x) => x.type === 'remove' && x.amount0 < 0n && x.amount1 < 0n)).toBe(true);
      const { status, body } = await get(`/networks/ethereum/pools/${p.id}/transactions?limit=100`);
      expect(status).toBe(200);
      expectTransactions(body, txs, p.dec0, p.dec1);
      const expected = [...txs].reverse();
      for (const [i, x] of expected.entries()) if (x.type === 'swap') expectClose(body[i].volume_usd, usdcLeg(p, x), `${p.name} swap ${x.id} volume`);
    }
  });
});
