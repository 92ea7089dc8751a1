/**
 * Solidly-style stable and volatile pools (the Velodrome v2 / Aerodrome design) through the EVM
 * source on a real anvil: Aerodrome's Pool and PoolFactory compiled from the sources an npm package
 * ships (test/support/solidly.ts), a stable USDC (6 decimals) / USDT (18 decimals) pool, volatile
 * WETH/USDC and WBTC (8 decimals)/USDC pools, liquidity added and removed, swaps both ways, two swaps
 * in one block, and a Uniswap v2 pair of a token against USDT, so that its USD price is routed
 * through the stable pool (across families). Every figure the REST interface serves (prices,
 * reserves, fees, volume, candles, transactions) is compared with the pools' own logs and state read
 * here with viem: a stable pool's price with its curve's marginal price computed here from
 * getReserves(), and cross-checked with the pool's own getAmountOut of a small amount; the fees
 * with the factory's getFee, before and after a stable fee set on the factory and configured.
 */
import { Decimal } from 'decimal.js';
import { formatUnits, parseAbiItem, toEventSelector, type Abi, type AbiEvent, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvmChainSchema } from '../engine/sources/evm/config.js';
import { EVENTS } from '../engine/sources/evm/families/solidly/index.js';
import { anvilBackfillChain, blockTimes, deploy, deployTestTokens, inOneBlock, mineAt, pairHistory, read, send, startAnvil, v2Trades, V2_FACTORY, V2_PAIR, type Anvil } from './support/evm.js';
import { backfillAndServe, expectCandles, expectClose, expectTransactions, getJson, minuteCandles, relErr, usdcLeg, type ServedChains } from './support/evm-serve.js';
import { deploySolidlyMarket, type SolidlyMarket } from './support/solidly.js';

const E18 = 10n ** 18n;
const E8 = 10n ** 8n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;
const M = 60;

type Sym = 'usdc' | 'usdt' | 'weth' | 'wbtc' | 'aero';
const dec: Record<Sym, number> = { usdc: 6, usdt: 18, weth: 18, wbtc: 8, aero: 18 };
const tok = {} as Record<Sym, Address>;

let node: Anvil;
let served: ServedChains | undefined;
let base = '';
let market: SolidlyMarket;
let v2Factory: Address;
/** Stable USDC/USDT, volatile WETH/USDC and WBTC/USDC; the Uniswap v2 AERO/USDT pair. */
let stablePool: Address;
let wethPool: Address;
let wbtcPool: Address;
let aeroPair: Address;
/** Blocks holding two swaps of a pool. */
const twoSwapBlocks = new Map<Address, number>();

const SWAP = parseAbiItem('event Swap(address indexed sender, address indexed to, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out)');
const SYNC = parseAbiItem('event Sync(uint256 reserve0, uint256 reserve1)');
const MINT = parseAbiItem('event Mint(address indexed sender, uint256 amount0, uint256 amount1)');
const BURN = parseAbiItem('event Burn(address indexed sender, address indexed to, uint256 amount0, uint256 amount1)');
const FEES = parseAbiItem('event Fees(address indexed sender, uint256 amount0, uint256 amount1)');

const get = (path: string) => getJson(base + path);

/**
 * Two swaps of `pool` in the block at time t, the second the other way, each for the pool's quote
 * before the block (the second then takes less than the pool would pay after the first: it passes
 * the pool's k check); each call must succeed.
 */
async function twoSwapsInOneBlock(pool: Address, a: Address, amountA: bigint, b: Address, amountB: bigint, t: number): Promise<void> {
  const outA = await market.quote(pool, a, amountA);
  const outB = await market.quote(pool, b, amountB);
  const calls = [...(await market.swapCalls(pool, a, amountA, outA)), ...(await market.swapCalls(pool, b, amountB, outB))];
  twoSwapBlocks.set(pool, Number((await inOneBlock(node, t, calls)).block));
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 8453 });
  let t = T0 + 10;
  Object.assign(
    tok,
    await deployTestTokens(node, t, {
      usdc: ['USD Coin', 'USDC', dec.usdc, 10n ** 12n * E6],
      usdt: ['Tether USD', 'USDT', dec.usdt, 10n ** 12n * E18],
      weth: ['Wrapped Ether', 'WETH', dec.weth, 10n ** 9n * E18],
      wbtc: ['Wrapped BTC', 'WBTC', dec.wbtc, 10n ** 7n * E8],
      aero: ['Aerodrome', 'AERO', dec.aero, 10n ** 12n * E18],
    }),
  );
  t += 5;
  market = await deploySolidlyMarket(node, t);
  t += 2;
  await mineAt(node, t++);
  v2Factory = await deploy(node, V2_FACTORY, [node.account]);

  stablePool = await market.createPool(tok.usdc, tok.usdt, true, T0 + 60);
  wethPool = await market.createPool(tok.weth, tok.usdc, false, T0 + 61);
  wbtcPool = await market.createPool(tok.usdc, tok.wbtc, false, T0 + 62);
  await mineAt(node, T0 + 63);
  await send(node, v2Factory, V2_FACTORY.abi, 'createPair', [tok.aero, tok.usdt]);
  aeroPair = await read<Address>(node, v2Factory, V2_FACTORY.abi, 'getPair', [tok.aero, tok.usdt]);

  // Stable USDC/USDT: the first deposit is equal in value (the pool requires it), then swaps both
  // ways take it well off balance, liquidity is added and part removed.
  await market.addLiquidity(stablePool, tok.usdc, 1_000_000n * E6, tok.usdt, 1_000_000n * E18, T0 + 2 * M);
  await market.swap(stablePool, tok.usdc, 400_000n * E6, T0 + 3 * M + 5);
  await market.swap(stablePool, tok.usdt, 90_000n * E18, T0 + 4 * M + 10);
  await market.swap(stablePool, tok.usdc, 123_456_789n, T0 + 4 * M + 40);
  await market.addLiquidity(stablePool, tok.usdc, 200_000n * E6, tok.usdt, 150_000n * E18, T0 + 5 * M);
  await twoSwapsInOneBlock(stablePool, tok.usdt, 60_000n * E18, tok.usdc, 25_000n * E6, T0 + 6 * M + 30);
  await market.removeLiquidity(stablePool, 30n, T0 + 7 * M);
  await market.swap(stablePool, tok.usdc, 170_000n * E6, T0 + 8 * M + 20);

  // Volatile WETH/USDC at about 3000 USD.
  await market.addLiquidity(wethPool, tok.weth, 100n * E18, tok.usdc, 300_000n * E6, T0 + 9 * M);
  await market.swap(wethPool, tok.usdc, 15_000n * E6, T0 + 10 * M + 5);
  await market.swap(wethPool, tok.weth, 7n * E18, T0 + 10 * M + 50);
  await twoSwapsInOneBlock(wethPool, tok.usdc, 4_000n * E6, tok.weth, E18 / 3n, T0 + 11 * M + 30);
  await market.removeLiquidity(wethPool, 25n, T0 + 12 * M);
  await market.swap(wethPool, tok.weth, E18 / 7n, T0 + 12 * M + 40);

  // Volatile WBTC (8 decimals) / USDC at about 60000 USD.
  await market.addLiquidity(wbtcPool, tok.usdc, 300_000n * E6, tok.wbtc, 5n * E8, T0 + 13 * M);
  await market.swap(wbtcPool, tok.usdc, 30_000n * E6, T0 + 14 * M + 20);
  await market.swap(wbtcPool, tok.wbtc, E8 / 4n, T0 + 14 * M + 40);
  await market.removeLiquidity(wbtcPool, 40n, T0 + 14 * M + 50);

  // AERO/USDT on Uniswap v2 at about 0.5 USDT: AERO's USD price goes through the stable pool.
  const v2 = v2Trades(node);
  await v2.addLiquidity(aeroPair, tok.aero, 1_000_000n * E18, tok.usdt, 500_000n * E18, T0 + 15 * M);
  await v2.swap(aeroPair, tok.aero, 20_000n * E18, T0 + 16 * M + 10);

  served = await backfillAndServe([chainConfig()], NOW);
  base = served.url;
}, 180_000);

function chainConfig(stableFeePpm?: number) {
  return anvilBackfillChain(node, {
    id: 'base',
    displayName: 'Base',
    startBlock: market.factoryBlock,
    logBatchBlocks: 9,
    stablecoins: [tok.usdc, tok.usdt],
    wrappedNative: tok.weth,
    factories: [
      { dexId: 'aerodrome', name: 'Aerodrome', protocol: 'solidly', address: market.factory, ...(stableFeePpm === undefined ? {} : { stableFeePpm }) },
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: v2Factory },
    ],
  });
}

afterAll(async () => {
  await served?.close();
  await node?.stop();
});

const poolAbi = (): Abi => market.artifacts.pool.abi;

interface Tx {
  id: string;
  hash: string;
  block: number;
  time: number;
  type: 'swap' | 'add' | 'remove';
  amount0: bigint;
  amount1: bigint;
  /** The pool's reserves after it (its Sync in the same transaction). */
  r0: bigint;
  r1: bigint;
}

interface Truth {
  stable: boolean;
  token0: Address;
  token1: Address;
  dec0: number;
  dec1: number;
  usdcIs0: boolean;
  reserves: [bigint, bigint];
  txs: Tx[];
}

/** The pool's kind, tokens and getReserves(), and its Swap, Mint and Burn logs (with the Sync before each) read with viem. */
async function truth(pool: Address): Promise<Truth> {
  const abi = poolAbi();
  const token0 = await read<Address>(node, pool, abi, 'token0');
  const token1 = await read<Address>(node, pool, abi, 'token1');
  const stable = await read<boolean>(node, pool, abi, 'stable');
  const [r0, r1] = await read<readonly [bigint, bigint, bigint]>(node, pool, abi, 'getReserves');
  const decOf = (a: Address) => dec[(Object.keys(tok) as Sym[]).find((k) => tok[k].toLowerCase() === a.toLowerCase())!];
  const logs = await node.pub.getLogs({ address: pool, events: [SWAP, SYNC, MINT, BURN], fromBlock: 0n });
  const times = await blockTimes(node, logs);
  const txs: Tx[] = [];
  let s0 = 0n;
  let s1 = 0n;
  let syncTx = '';
  for (const l of logs) {
    const a = l.args as Record<string, bigint>;
    if (l.eventName === 'Sync') {
      [s0, s1, syncTx] = [a.reserve0!, a.reserve1!, l.transactionHash];
      continue;
    }
    expect(syncTx, `${l.eventName} ${l.transactionHash} has its Sync before it`).toBe(l.transactionHash);
    const b = { id: `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`, hash: l.transactionHash, block: Number(l.blockNumber), time: times.get(l.blockNumber)!, r0: s0, r1: s1 };
    if (l.eventName === 'Swap') txs.push({ ...b, type: 'swap', amount0: a.amount0In! - a.amount0Out!, amount1: a.amount1In! - a.amount1Out! });
    else if (l.eventName === 'Mint') txs.push({ ...b, type: 'add', amount0: a.amount0!, amount1: a.amount1! });
    else txs.push({ ...b, type: 'remove', amount0: -a.amount0!, amount1: -a.amount1! });
  }
  const usdcIs0 = token0.toLowerCase() === tok.usdc.toLowerCase();
  return { stable, token0, token1, dec0: decOf(token0), dec1: decOf(token1), usdcIs0, reserves: [r0, r1], txs };
}

/**
 * Price of token 0 in token 1 at reserves r0, r1 (decimals applied): for a stable pool the marginal
 * price of x^3*y + x*y^3 = k, -dy/dx = (3x^2*y + y^3) / (x^3 + 3x*y^2); for a volatile pool y/x.
 */
function marginal(p: Truth, r0: bigint, r1: bigint): number {
  const x = Number(formatUnits(r0, p.dec0));
  const y = Number(formatUnits(r1, p.dec1));
  return p.stable ? (3 * x ** 2 * y + y ** 3) / (x ** 3 + 3 * x * y ** 2) : y / x;
}
/** USD price of the pool's non-USDC token from its price in USDC. */
const usdOf = (p: Truth, r0: bigint, r1: bigint) => (p.usdcIs0 ? 1 / marginal(p, r0, r1) : marginal(p, r0, r1));

const POOLS = () =>
  [
    [stablePool, 'usdt'],
    [wethPool, 'weth'],
    [wbtcPool, 'wbtc'],
  ] as const;

describe('Solidly stable and volatile pools on anvil through the REST interface', () => {
  it('the family\'s event signatures and topics are those of the compiled Pool and PoolFactory ABIs', () => {
    const abiEvents = [...market.artifacts.pool.abi, ...market.artifacts.factory.abi].filter((x): x is AbiEvent => x.type === 'event');
    const topic = (name: string) => toEventSelector(abiEvents.find((e) => e.name === name)!);
    const names: Record<keyof typeof EVENTS, string> = {
      solidlyPoolCreated: 'PoolCreated',
      solidlySwap: 'Swap',
      solidlySync: 'Sync',
      solidlyMint: 'Mint',
      solidlyBurn: 'Burn',
      solidlyFees: 'Fees',
      solidlyClaim: 'Claim',
    };
    for (const [k, name] of Object.entries(names)) expect(EVENTS[k as keyof typeof EVENTS].topic, name).toBe(topic(name));
  });

  it('every pool is found with its kind, tokens and the factory\'s fee for it (getFee), two swaps in one block included', async () => {
    for (const [pool] of POOLS()) {
      const p = await truth(pool);
      const { status, body } = await get(`/networks/base/pools/${pool}`);
      expect(status).toBe(200);
      const feeBps = await read<bigint>(node, market.factory, market.artifacts.factory.abi, 'getFee', [pool, p.stable]);
      expect([body.dex_id, body.factory_id, body.fee]).toEqual(['aerodrome', market.factory.toLowerCase(), Number(feeBps) * 100]);
      expect(body.fee).toBe(p.stable ? 500 : 3000);
      expect(body.transactions).toBe(p.txs.filter((x) => x.type === 'swap').length);
    }
    for (const pool of [stablePool, wethPool]) {
      const swaps = (await truth(pool)).txs.filter((x) => x.type === 'swap' && x.block === twoSwapBlocks.get(pool));
      expect(swaps.map((x) => Math.sign(Number(x.amount0)))).toEqual([swaps[0]!.amount0 > 0n ? 1 : -1, swaps[0]!.amount0 > 0n ? -1 : 1]);
    }
    expect((await get(`/networks/base/pools/${aeroPair}`)).body.dex_id).toBe('uniswap_v2');
  });

  it('reserves are the pools\' getReserves() (the last Sync); the swap fees went out to PoolFees', async () => {
    for (const [pool, other] of POOLS()) {
      const p = await truth(pool);
      const { body } = await get(`/networks/base/pools/${pool}`);
      expect(body.token_reserves.map((r: { reserve: string }) => r.reserve), other).toEqual(p.reserves.map(String));
      // The amounts the Swap, Mint and Burn logs moved, less the fees each Fees log sent out, are the reserves.
      const fees = (await node.pub.getLogs({ address: pool, event: FEES, fromBlock: 0n })).map((l) => [l.args.amount0!, l.args.amount1!] as const);
      expect(fees.length).toBeGreaterThan(0);
      const moved = p.txs.reduce<[bigint, bigint]>((s, x) => [s[0] + x.amount0, s[1] + x.amount1], [0n, 0n]);
      const feeSum = fees.reduce<[bigint, bigint]>((s, x) => [s[0] + x[0], s[1] + x[1]], [0n, 0n]);
      expect([moved[0] - feeSum[0], moved[1] - feeSum[1]], other).toEqual(p.reserves);
      expect(feeSum[0] + feeSum[1]).toBeGreaterThan(0n);
    }
  });

  it('price: the stable pool\'s curve marginal price at its reserves (not their ratio), the volatile pools\' reserve ratio; the pools\' getAmountOut agrees', async () => {
    for (const [pool, other] of POOLS()) {
      const p = await truth(pool);
      const price = marginal(p, ...p.reserves);
      const { body } = await get(`/networks/base/pools/${pool}`);
      expectClose(body.last_price, price, `${other} pool last_price`);
      // The pool's own quote of a small amount (1/100000 of the reserve in), both ways: the marginal
      // price of what is left of it after the fee, to the amount's own price impact (under twice
      // its share of the reserve on either curve) and the quote's rounding to a unit of the token out.
      const feeBps = await read<bigint>(node, market.factory, market.artifacts.factory.abi, 'getFee', [pool, p.stable]);
      for (const side of [0, 1] as const) {
        const amountIn = p.reserves[side] / 100_000n;
        const afterFee = amountIn - (amountIn * feeBps) / 10_000n;
        const out = await market.quote(pool, side === 0 ? p.token0 : p.token1, amountIn);
        const [decIn, decOut] = side === 0 ? [p.dec0, p.dec1] : [p.dec1, p.dec0];
        const quoted = Number(formatUnits(out, decOut)) / Number(formatUnits(afterFee, decIn));
        const tolerance = 2e-5 + 2 / Number(out);
        expectClose(quoted, side === 0 ? price : 1 / price, `${other} getAmountOut of token ${side}`, tolerance);
        if (p.stable) expect(tolerance).toBeLessThan(1e-4);
      }
      if (p.stable) {
        // Off balance: the reserves' ratio is far from the curve's price (a test that could not tell them apart would prove nothing).
        const ratio = Number(formatUnits(p.reserves[1], p.dec1)) / Number(formatUnits(p.reserves[0], p.dec0));
        expect(relErr(ratio, price), `ratio ${ratio} vs curve ${price}`).toBeGreaterThan(0.1);
        expect(relErr(price, 1)).toBeGreaterThan(1e-3);
      }
    }
  });

  it('USD prices: USDT through the stable pool (exact digits), WETH and WBTC through their pools, AERO through Uniswap v2 and then the stable pool', async () => {
    // USDT: the stable pool's price of USDT in USDC, as the exact fraction of its reserves, 18 significant digits.
    const s = await truth(stablePool);
    const Exact = Decimal.clone({ precision: 80 });
    const X = new Exact(s.reserves[0].toString()).div(new Exact(10).pow(s.dec0));
    const Y = new Exact(s.reserves[1].toString()).div(new Exact(10).pow(s.dec1));
    const token0In1 = X.pow(2).mul(Y).mul(3).add(Y.pow(3)).div(X.pow(3).add(X.mul(Y.pow(2)).mul(3)));
    const usdtUsd = s.usdcIs0 ? new Exact(1).div(token0In1) : token0In1;
    const usdt = await get(`/networks/base/tokens/${tok.usdt}`);
    expect(/"price_usd":([0-9.e+-]+)/.exec(usdt.text)![1]).toBe(usdtUsd.toSignificantDigits(18).toFixed());
    expectClose(usdt.body.price_usd, usdOf(s, ...s.reserves), 'USDT price_usd');
    expect(relErr(usdt.body.price_usd, 1)).toBeGreaterThan(1e-3);
    for (const [pool, other] of [
      [wethPool, 'weth'],
      [wbtcPool, 'wbtc'],
    ] as const) {
      const p = await truth(pool);
      expectClose((await get(`/networks/base/tokens/${tok[other]}`)).body.price_usd, usdOf(p, ...p.reserves), `${other} price_usd`);
      // liquidity_usd: the reserves at USD prices (USDC at 1).
      const { body } = await get(`/networks/base/pools/${pool}`);
      const [usdcRaw, otherRaw] = p.usdcIs0 ? p.reserves : [p.reserves[1], p.reserves[0]];
      expectClose(body.liquidity_usd, Number(formatUnits(usdcRaw, dec.usdc)) + Number(formatUnits(otherRaw, dec[other])) * usdOf(p, ...p.reserves), `${other} pool liquidity_usd`);
    }
    // The stable pool's liquidity: USDC at 1, USDT at its price from the curve.
    const [usdcRaw, usdtRaw] = s.usdcIs0 ? s.reserves : [s.reserves[1], s.reserves[0]];
    expectClose((await get(`/networks/base/pools/${stablePool}`)).body.liquidity_usd, Number(formatUnits(usdcRaw, 6)) + Number(formatUnits(usdtRaw, 18)) * usdOf(s, ...s.reserves), 'stable pool liquidity_usd');
    // AERO: its Uniswap v2 pair's reserves give it in USDT, USDT's price from the stable pool.
    const [a0, a1] = await read<readonly [bigint, bigint, number]>(node, aeroPair, V2_PAIR.abi, 'getReserves');
    const aeroIs0 = (await read<Address>(node, aeroPair, V2_PAIR.abi, 'token0')).toLowerCase() === tok.aero.toLowerCase();
    const [ra, ru] = aeroIs0 ? [a0, a1] : [a1, a0];
    const aeroInUsdt = Number(formatUnits(ru, 18)) / Number(formatUnits(ra, 18));
    expectClose((await get(`/networks/base/tokens/${tok.aero}`)).body.price_usd, aeroInUsdt * usdOf(s, ...s.reserves), 'AERO price_usd');
    expect((await pairHistory(node, aeroPair)).filter((x) => x.type === 'swap')).toHaveLength(1);
  });

  it('24 h volume: the USDC legs of the swaps', async () => {
    for (const [pool, other] of POOLS()) {
      const p = await truth(pool);
      const want = p.txs.filter((x) => x.type === 'swap').reduce((sum, x) => sum + usdcLeg(p, x), 0);
      expectClose((await get(`/networks/base/pools/${pool}`)).body.volume_usd, want, `${other} pool volume_usd`);
    }
  });

  it('OHLCV: one-minute candles of the non-USDC token in USD from the reserves after each swap (the stable pool\'s on its curve), volume from the USDC legs', async () => {
    for (const [pool, other] of POOLS()) {
      const p = await truth(pool);
      const swaps = p.txs.filter((x) => x.type === 'swap');
      const candles = minuteCandles(swaps.map((x) => ({ time: x.time, price: usdOf(p, x.r0, x.r1), volume: usdcLeg(p, x) })));
      const { status, body } = await get(`/networks/base/pools/${pool}/ohlcv?interval=1m&start=${T0}&inversed=${p.usdcIs0}`);
      expect(status).toBe(200);
      expectCandles(body, candles, other);
    }
  });

  it('a stable fee set on the factory is served as configured (stableFeePpm), only for solidly factories', async () => {
    await mineAt(node, T0 + 17 * M);
    await send(node, market.factory, market.artifacts.factory.abi, 'setFee', [true, 1n]);
    const again = await backfillAndServe([chainConfig(100)], NOW);
    try {
      for (const [pool] of POOLS()) {
        const stable = await read<boolean>(node, pool, poolAbi(), 'stable');
        const feeBps = await read<bigint>(node, market.factory, market.artifacts.factory.abi, 'getFee', [pool, stable]);
        const body = (await (await fetch(`${again.url}/networks/base/pools/${pool}`)).json()) as { fee: number };
        expect(body.fee).toBe(Number(feeBps) * 100);
        expect(body.fee).toBe(stable ? 100 : 3000);
      }
    } finally {
      await again.close();
    }
    const v2WithStableFee = { ...chainConfig(), factories: [{ dexId: 'uniswap_v2', protocol: 'uniswap_v2', address: v2Factory, stableFeePpm: 100 }] };
    const refused = EvmChainSchema.safeParse(v2WithStableFee);
    expect(refused.success).toBe(false);
    expect(refused.error!.issues.map((i) => i.message)).toEqual(['only a solidly factory has stable pools']);
  });

  it('transactions: every Swap, Mint and Burn log, newest first, with signed amounts, blocks, times and USD volume', async () => {
    for (const [pool, other] of POOLS()) {
      const p = await truth(pool);
      const { status, body } = await get(`/networks/base/pools/${pool}/transactions?limit=100`);
      expect(status).toBe(200);
      expectTransactions(body, p.txs, p.dec0, p.dec1);
      expect(p.txs.map((x) => x.type)).toEqual(expect.arrayContaining(['add', 'remove', 'swap']));
      const expected = [...p.txs].reverse();
      for (const [i, x] of expected.entries()) if (x.type === 'swap') expectClose(body[i].volume_usd, usdcLeg(p, x), `${other} swap ${x.id} volume`);
    }
  });
});
