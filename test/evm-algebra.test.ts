/**
 * Algebra through the EVM source on a real anvil: the factory, pool deployer and pool bytecode of
 * @cryptoalgebra/integral-core 1.2.5 (Integral, whose Swap and Burn carry the fees applied, topics
 * of their own) and of @cryptoalgebra/core 3.0.0 (Algebra v1.9, Uniswap v3's topics, an adaptive fee),
 * driven by the package's own TestAlgebraCallee. A 6-decimal stablecoin, an 18-decimal wrapped
 * native, an 8-decimal and another 18-decimal token; an Integral pool announced by `Pool`, another by
 * `CustomPool`, a v1.9 pool; positions minted and burned, swaps both ways crossing position bounds,
 * two swaps in one block, a burn left uncollected then collected, flashes. Every figure the REST
 * interface serves for the pools (price, reserves, volume, candles, transactions) is compared with
 * the pools' own logs and state (their token balances included), read here with viem.
 */
import { formatUnits, maxUint256, parseAbiItem, type AbiEvent, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALGEBRA_CALLEE,
  ALGEBRA_CUSTOM_POOL_CREATOR,
  ALGEBRA_INTEGRAL_FACTORY,
  ALGEBRA_INTEGRAL_POOL,
  ALGEBRA_V19_FACTORY,
  ALGEBRA_V19_POOL,
  anvilBackfillChain,
  balancesOf,
  deploy,
  deployAlgebraFactory,
  deployTestTokens,
  fixtures,
  inOneBlock,
  mineAt,
  read,
  send,
  startAnvil,
  v3LoggedBalances,
  v3PoolTxs,
  V3_COLLECT,
  V3_FLASH,
  V3_BURN,
  type Anvil,
  type V3PoolTx,
} from './support/evm.js';
import { backfillAndServe, expectCandles, expectClose, expectTransactions, getJson, MAX_SQRT_RATIO, minuteCandles, MIN_SQRT_RATIO, sqrtPriceRatio, sqrtPriceUsd, sqrtPriceX96Of, usdcLeg, type ServedChains } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E8 = 10n ** 8n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;
/** The fee the configuration states for the Integral factory's pools: the factory's default fee, checked below. */
const INTEGRAL_FEE = 500;

type Other = 'weth' | 'wbtc' | 'link';
let node: Anvil;
let served: ServedChains | undefined;
let base = '';
const tok: Record<'usdc' | Other, Address> = {} as never;
const dec = { usdc: 6, weth: 18, wbtc: 8, link: 18 };
let integral: Address;
let v19: Address;
let integralBlock = 0;
let callee: Address;
/** Integral USDC/WETH (announced by `Pool`), Integral WBTC/USDC (by `CustomPool`), v1.9 LINK/USDC. */
let wethPool: Address;
let wbtcPool: Address;
let linkPool: Address;
/** The block holding two swaps. */
let twoSwapBlock = 0;
/** Bounds of the USDC/WETH position about the first price. */
let narrow: readonly [number, number] = [0, 0];
/** Served after a burn left uncollected in the USDC/WETH pool: per pool, its reserves served then and its balances. */
const afterBurn = new Map<Address, { reserves: string[]; balances: [bigint, bigint] }>();

/** Integral 1.2.1-1.2.5's Swap and Burn (the fees applied appended); v1.9's are Uniswap v3's. */
const SWAP_FEES = parseAbiItem('event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)');
const BURN_FEE = parseAbiItem('event Burn(address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1, uint24 pluginFee)');
const SWAP_V3 = parseAbiItem('event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick)');
const POOL_EVENT = parseAbiItem('event Pool(address indexed token0, address indexed token1, address pool)');
const CUSTOM_POOL_EVENT = parseAbiItem('event CustomPool(address indexed deployer, address indexed token0, address indexed token1, address pool)');
const FEE_EVENT = parseAbiItem('event Fee(uint16 fee)');

interface PoolKind {
  readonly other: Other;
  readonly v19: boolean;
}
const kinds = new Map<Address, PoolKind>();
const events = (pool: Address) => (kinds.get(pool)!.v19 ? { swap: SWAP_V3 as AbiEvent, burn: V3_BURN as AbiEvent } : { swap: SWAP_FEES as AbiEvent, burn: BURN_FEE as AbiEvent });
const poolAbi = (pool: Address) => (kinds.get(pool)!.v19 ? ALGEBRA_V19_POOL.abi : ALGEBRA_INTEGRAL_POOL.abi);

const get = (path: string) => getJson(base + path);

/** sqrtPriceX96 of `usdPerUnit` USDC per unit of `token`, as the pool orders them. */
const sqrtPriceOf = (token: Other, usdPerUnit: bigint): bigint => sqrtPriceX96Of(tok.usdc.toLowerCase() < tok[token].toLowerCase(), dec[token], usdPerUnit);

/** The pool's price and tick from its globalState (price first, tick second in every version). */
async function globalState(pool: Address): Promise<{ price: bigint; tick: number; fee: number }> {
  const s = await read<readonly unknown[]>(node, pool, poolAbi(pool), 'globalState');
  // Integral: (price, tick, lastFee, pluginConfig, communityFee, unlocked); v1.9: (price, tick, prevInitializedTick, fee, timepointIndex, communityFee, unlocked).
  return { price: s[0] as bigint, tick: Number(s[1]), fee: Number(kinds.get(pool)!.v19 ? s[3] : s[2]) };
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 137 });
  const f = fixtures();
  let t = T0 + 10;
  Object.assign(tok, await deployTestTokens(node, t, { usdc: ['USD Coin', 'USDC', 6, 10n ** 12n * E6], weth: ['Wrapped Ether', 'WETH', 18, 10n ** 9n * E18], wbtc: ['Wrapped BTC', 'WBTC', 8, 10n ** 7n * E8], link: ['ChainLink Token', 'LINK', 18, 10n ** 9n * E18] }));
  t += 4;
  await mineAt(node, t++);
  const a = await deployAlgebraFactory(node, false);
  integral = a.factory;
  integralBlock = a.factoryBlock;
  await mineAt(node, t++);
  v19 = (await deployAlgebraFactory(node, true)).factory;
  await mineAt(node, t++);
  callee = await deploy(node, ALGEBRA_CALLEE);
  for (const token of Object.values(tok)) {
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'approve', [callee, maxUint256]);
  }
  // Pools: Integral's createPool (a `Pool` log) and createCustomPool (a `CustomPool` log, asked for
  // by the package's custom pool deployer, given its role), v1.9's createPool.
  await mineAt(node, t++);
  await send(node, integral, ALGEBRA_INTEGRAL_FACTORY.abi, 'createPool', [tok.weth, tok.usdc, '0x']);
  wethPool = await read<Address>(node, integral, ALGEBRA_INTEGRAL_FACTORY.abi, 'poolByPair', [tok.weth, tok.usdc]);
  const role = await read<Hex>(node, integral, ALGEBRA_INTEGRAL_FACTORY.abi, 'CUSTOM_POOL_DEPLOYER');
  await mineAt(node, t++);
  const creator = await deploy(node, ALGEBRA_CUSTOM_POOL_CREATOR);
  await mineAt(node, t++);
  await send(node, integral, ALGEBRA_INTEGRAL_FACTORY.abi, 'grantRole', [role, creator]);
  await mineAt(node, t++);
  await send(node, creator, ALGEBRA_CUSTOM_POOL_CREATOR.abi, 'createCustomPool', [integral, tok.usdc, tok.wbtc, '0x']);
  wbtcPool = await read<Address>(node, integral, ALGEBRA_INTEGRAL_FACTORY.abi, 'customPoolByPair', [creator, tok.usdc, tok.wbtc]);
  await mineAt(node, t++);
  await send(node, v19, ALGEBRA_V19_FACTORY.abi, 'createPool', [tok.link, tok.usdc]);
  linkPool = await read<Address>(node, v19, ALGEBRA_V19_FACTORY.abi, 'poolByPair', [tok.link, tok.usdc]);
  kinds.set(wethPool, { other: 'weth', v19: false });
  kinds.set(wbtcPool, { other: 'wbtc', v19: false });
  kinds.set(linkPool, { other: 'link', v19: true });
  for (const [pool, usd] of [
    [wethPool, 3_000n],
    [wbtcPool, 60_000n],
    [linkPool, 15n],
  ] as const) {
    await mineAt(node, t++);
    await send(node, pool, poolAbi(pool), 'initialize', [sqrtPriceOf(kinds.get(pool)!.other, usd)]);
  }

  const mint = (pool: Address, lower: number, upper: number, liquidity: bigint, at: number) =>
    mineAt(node, at).then(() => send(node, callee, ALGEBRA_CALLEE.abi, 'mint', [pool, node.account, lower, upper, liquidity]));
  const swapArgs = (pool: Address, usdcIn: boolean, amount: bigint) => {
    const usdcIs0 = tok.usdc.toLowerCase() < tok[kinds.get(pool)!.other].toLowerCase();
    const zeroForOne = usdcIn === usdcIs0;
    return { fn: zeroForOne ? 'swapExact0For1' : 'swapExact1For0', args: [pool, amount, node.account, zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n] as const };
  };
  const swap = (pool: Address, usdcIn: boolean, amount: bigint, at: number) => {
    const s = swapArgs(pool, usdcIn, amount);
    return mineAt(node, at).then(() => send(node, callee, ALGEBRA_CALLEE.abi, s.fn, s.args));
  };
  const burn = (pool: Address, lower: number, upper: number, liquidity: bigint, at: number) =>
    mineAt(node, at).then(() => send(node, pool, poolAbi(pool), 'burn', kinds.get(pool)!.v19 ? [lower, upper, liquidity] : [lower, upper, liquidity, '0x']));
  const collect = (pool: Address, lower: number, upper: number, at: number) =>
    mineAt(node, at).then(() => send(node, pool, poolAbi(pool), 'collect', [node.account, lower, upper, 2n ** 128n - 1n, 2n ** 128n - 1n]));

  // USDC/WETH: a full-range position, one about the price (±3 %) and one beside it (tick spacing
  // 60): the swaps below move the price across their bounds.
  const spacing = Number(await read<number>(node, wethPool, ALGEBRA_INTEGRAL_POOL.abi, 'tickSpacing'));
  const { tick } = await globalState(wethPool);
  const at = Math.round(tick / spacing) * spacing;
  const full = Math.floor(887272 / spacing) * spacing;
  narrow = [at - 300, at + 300];
  await mint(wethPool, -full, full, 4_000_000_000_000_000n, T0 + 300);
  await mint(wethPool, at - 300, at + 300, 1_000_000_000_000_000n, T0 + 305);
  await mint(wethPool, at + 300, at + 900, 1_000_000_000_000_000n, T0 + 306);
  await swap(wethPool, true, 9_000n * E6, T0 + 6 * 60 + 5);
  await swap(wethPool, false, 5n * E18, T0 + 7 * 60 + 15);
  await swap(wethPool, true, 1_234_567n, T0 + 7 * 60 + 50);
  // Two swaps in one block, the second the other way.
  const swapCall = (usdcIn: boolean, amount: bigint) => {
    const c = swapArgs(wethPool, usdcIn, amount);
    return { address: callee, abi: ALGEBRA_CALLEE.abi, functionName: c.fn, args: c.args };
  };
  twoSwapBlock = Number((await inOneBlock(node, T0 + 8 * 60 + 30, [swapCall(true, 2_500n * E6), swapCall(false, E18 / 3n)])).block);
  await burn(wethPool, -full, full, 1_000_000_000_000_000n, T0 + 9 * 60);
  await collect(wethPool, -full, full, T0 + 9 * 60 + 10);
  await swap(wethPool, false, E18 / 7n, T0 + 11 * 60 + 1);
  // WBTC (8 decimals) / USDC (6 decimals), and LINK (18) / USDC on v1.9.
  const fullOf = async (pool: Address) => {
    const s = Number(await read<number>(node, pool, poolAbi(pool), 'tickSpacing'));
    return Math.floor(887272 / s) * s;
  };
  const wbtcFull = await fullOf(wbtcPool);
  const linkFull = await fullOf(linkPool);
  await mint(wbtcPool, -wbtcFull, wbtcFull, 50_000_000_000n, T0 + 12 * 60);
  await swap(wbtcPool, true, 30_000n * E6, T0 + 13 * 60 + 20);
  await swap(wbtcPool, false, E8 / 4n, T0 + 14 * 60 + 40);
  await mint(linkPool, -linkFull, linkFull, 10n ** 16n, T0 + 14 * 60 + 45);
  await swap(linkPool, true, 5_000n * E6, T0 + 14 * 60 + 50);
  await swap(linkPool, false, 300n * E18, T0 + 14 * 60 + 55);
  await swap(linkPool, false, 40n * E18, T0 + 14 * 60 + 58);

  // A burn without its collect (the amounts stay in the pool, owed to the position), a swap
  // meanwhile; served at that point.
  await burn(wethPool, narrow[0], narrow[1], 400_000_000_000_000n, T0 + 15 * 60);
  await burn(linkPool, -linkFull, linkFull, 10n ** 15n, T0 + 15 * 60 + 5);
  await swap(wethPool, false, E18 / 2n, T0 + 15 * 60 + 30);
  const mid = await backfillAndServe([chainConfig()], NOW);
  try {
    for (const pool of [wethPool, wbtcPool, linkPool]) {
      const body = (await (await fetch(`${mid.url}/networks/polygon_pos/pools/${pool}`)).json()) as { token_reserves: { reserve: string }[] };
      const t0 = await read<Address>(node, pool, poolAbi(pool), 'token0');
      const t1 = await read<Address>(node, pool, poolAbi(pool), 'token1');
      afterBurn.set(pool, { reserves: body.token_reserves.map((r) => r.reserve), balances: await balancesOf(node, pool, t0, t1) });
    }
  } finally {
    await mid.close();
  }
  // The collects pay the burned amounts and the fees out; flashes pay fees in (7 units of token 0
  // more than asked in the USDC/WETH pool); a burn is left uncollected at the end.
  await collect(wethPool, narrow[0], narrow[1], T0 + 16 * 60);
  await collect(linkPool, -linkFull, linkFull, T0 + 16 * 60 + 5);
  const flashOf = async (pool: Address, a0: bigint, a1: bigint, extra0: bigint, at: number) => {
    // The Integral and v1.9 flash fee: 0.01 % of each amount, rounded up.
    const fee = (x: bigint) => (x * 100n + 999_999n) / 1_000_000n;
    await mineAt(node, at);
    await send(node, callee, ALGEBRA_CALLEE.abi, 'flash', [pool, node.account, a0, a1, a0 + fee(a0) + extra0, a1 + fee(a1)]);
  };
  await flashOf(wethPool, E6 * 100n, E18 / 10n, 7n, T0 + 16 * 60 + 30);
  await flashOf(linkPool, E6 * 50n, E18, 0n, T0 + 16 * 60 + 40);
  await burn(wethPool, -full, full, 500_000_000_000_000n, T0 + 18 * 60);
  await swap(wethPool, true, 700n * E6, T0 + 18 * 60 + 30);

  served = await backfillAndServe([chainConfig()], NOW);
  base = served.url;
}, 180_000);

function chainConfig() {
  return anvilBackfillChain(node, {
    id: 'polygon_pos',
    displayName: 'Polygon POS',
    startBlock: integralBlock,
    logBatchBlocks: 7,
    stablecoins: [tok.usdc],
    wrappedNative: tok.weth,
    factories: [
      { dexId: 'algebra_integral', name: 'Algebra Integral', protocol: 'algebra', address: integral, feePpm: INTEGRAL_FEE },
      { dexId: 'algebra_v1_9', name: 'Algebra v1.9', protocol: 'algebra', address: v19 },
    ],
  });
}

afterAll(async () => {
  await served?.close();
  await node?.stop();
});

interface Truth {
  token0: Address;
  dec0: number;
  dec1: number;
  usdcIs0: boolean;
  txs: V3PoolTx[];
}

/** The pool's Swap, Mint and Burn logs read with viem's ABI decoding, and its tokens. */
async function truth(pool: Address): Promise<Truth> {
  const other = kinds.get(pool)!.other;
  const token0 = await read<Address>(node, pool, poolAbi(pool), 'token0');
  const { swap, burn } = events(pool);
  const txs = await v3PoolTxs(node, pool, swap, burn);
  const usdcIs0 = token0.toLowerCase() === tok.usdc.toLowerCase();
  return { token0, usdcIs0, dec0: usdcIs0 ? dec.usdc : dec[other], dec1: usdcIs0 ? dec[other] : dec.usdc, txs };
}

const all = () => [wethPool, wbtcPool, linkPool];

describe('Algebra (Integral and v1.9) on anvil through the REST interface', () => {
  it('the pools announced by Pool and CustomPool are found, each under its factory, with the fee configured', async () => {
    expect((await node.pub.getLogs({ address: integral, event: POOL_EVENT, fromBlock: 0n })).map((l) => l.args.pool)).toEqual([wethPool]);
    expect((await node.pub.getLogs({ address: integral, event: CUSTOM_POOL_EVENT, fromBlock: 0n })).map((l) => l.args.pool)).toEqual([wbtcPool]);
    expect((await node.pub.getLogs({ address: v19, event: POOL_EVENT, fromBlock: 0n })).map((l) => l.args.pool)).toEqual([linkPool]);
    // Integral pools without a plugin keep the factory's default fee, which the configuration states.
    expect(await read<number>(node, integral, ALGEBRA_INTEGRAL_FACTORY.abi, 'defaultFee')).toBe(INTEGRAL_FEE);
    for (const [pool, dexId, factory, fee] of [
      [wethPool, 'algebra_integral', integral, INTEGRAL_FEE],
      [wbtcPool, 'algebra_integral', integral, INTEGRAL_FEE],
      [linkPool, 'algebra_v1_9', v19, 3000],
    ] as const) {
      const { status, body } = await get(`/networks/polygon_pos/pools/${pool}`);
      expect(status, pool).toBe(200);
      expect([body.dex_id, body.factory_id, body.fee]).toEqual([dexId, factory.toLowerCase(), fee]);
      if (!kinds.get(pool)!.v19) expect((await globalState(pool)).fee).toBe(fee);
      const swaps = (await truth(pool)).txs.filter((x) => x.type === 'swap');
      expect(body.transactions, pool).toBe(swaps.length);
    }
    // v1.9's fee moved with the swaps (Fee logs), which the served fee does not follow.
    expect((await node.pub.getLogs({ address: linkPool, event: FEE_EVENT, fromBlock: 0n })).length).toBeGreaterThan(0);
    const dexes = await get('/networks/polygon_pos/dexes');
    expect(JSON.stringify(dexes.body)).toContain('algebra_integral');
    expect(JSON.stringify(dexes.body)).toContain('algebra_v1_9');
  });

  it('every Integral Swap is read (its topic is neither Uniswap v3\'s nor v1.9\'s), two in one block included, crossing position bounds', async () => {
    const p = await truth(wethPool);
    expect(p.txs.filter((x) => x.type === 'swap' && x.block === twoSwapBlock)).toHaveLength(2);
    expect(await node.pub.getLogs({ address: wethPool, event: SWAP_V3, fromBlock: 0n })).toHaveLength(0);
    expect(await node.pub.getLogs({ address: linkPool, event: SWAP_FEES, fromBlock: 0n })).toHaveLength(0);
    const ticks = (await node.pub.getLogs({ address: wethPool, event: SWAP_FEES, fromBlock: 0n })).map((l) => l.args.tick!);
    expect(ticks.some((t) => t < narrow[0] || t >= narrow[1]), ticks.join(',')).toBe(true);
    expect(ticks.some((t) => t >= narrow[0] && t < narrow[1]), ticks.join(',')).toBe(true);
  });

  it('price from globalState, reserves the pools\' token balances, for every pool (6, 8 and 18 decimals)', async () => {
    for (const pool of all()) {
      const other = kinds.get(pool)!.other;
      const p = await truth(pool);
      const { price } = await globalState(pool);
      expect(p.txs.filter((x) => x.type === 'swap').pop()!.sqrtPriceX96).toBe(price);
      const { body } = await get(`/networks/polygon_pos/pools/${pool}`);
      expectClose(body.last_price, sqrtPriceRatio(p, price), `${other} pool last_price`);
      // The balances, which the logs account for: mints and swaps in, collects out, flash payments
      // in; a burn moves nothing until it is collected. No community fee is taken (both factories' default).
      const balances = await balancesOf(node, pool, p.token0, await read<Address>(node, pool, poolAbi(pool), 'token1'));
      expect(await v3LoggedBalances(node, pool, events(pool).swap)).toEqual(balances);
      expect(body.token_reserves.map((r: { reserve: string }) => r.reserve), other).toEqual(balances.map(String));
      const [usdcRaw, otherRaw] = p.usdcIs0 ? balances : [balances[1], balances[0]];
      expectClose(body.liquidity_usd, Number(formatUnits(usdcRaw, dec.usdc)) + Number(formatUnits(otherRaw, dec[other])) * sqrtPriceUsd(p, price), `${other} pool liquidity_usd`);
      expectClose((await get(`/networks/polygon_pos/tokens/${tok[other]}`)).body.price_usd, sqrtPriceUsd(p, price), `${other} price_usd`);
    }
  });

  it('reserves were the balances while burns were owed to their positions, and collects and flashes happened since', async () => {
    for (const pool of all()) {
      const mid = afterBurn.get(pool)!;
      expect(mid.reserves).toEqual(mid.balances.map(String));
    }
    const moved = async (pool: Address) => (await node.pub.getLogs({ address: pool, events: [V3_COLLECT, V3_FLASH], fromBlock: 0n })).map((l) => l.eventName).sort();
    expect(await moved(wethPool)).toEqual(['Collect', 'Collect', 'Flash']);
    expect(await moved(linkPool)).toEqual(['Collect', 'Flash']);
    const flash = (await node.pub.getLogs({ address: wethPool, event: V3_FLASH, fromBlock: 0n }))[0]!.args;
    expect(flash.paid0! > 0n && flash.paid1! > 0n).toBe(true);
  });

  it('24 h volume: the USDC legs of the swaps', async () => {
    for (const pool of all()) {
      const p = await truth(pool);
      const want = p.txs.filter((x) => x.type === 'swap').reduce((s, x) => s + usdcLeg(p, x), 0);
      const { body } = await get(`/networks/polygon_pos/pools/${pool}`);
      expectClose(body.volume_usd, want, `${kinds.get(pool)!.other} pool volume_usd`);
    }
  });

  it('OHLCV: one-minute candles of WETH in USD from each swap\'s price, volume from the USDC legs', async () => {
    const p = await truth(wethPool);
    const swaps = p.txs.filter((x) => x.type === 'swap');
    const candles = minuteCandles(swaps.map((x) => ({ time: x.time, price: sqrtPriceUsd(p, x.sqrtPriceX96), volume: usdcLeg(p, x) })));
    const { status, body } = await get(`/networks/polygon_pos/pools/${wethPool}/ohlcv?interval=1m&start=${T0}&inversed=${p.usdcIs0}`);
    expect(status).toBe(200);
    expectCandles(body, candles);
  });

  it('transactions: every Swap, Mint and Burn log, newest first, with signed amounts, blocks, times and USD volume', async () => {
    for (const pool of all()) {
      const p = await truth(pool);
      expect(p.txs.some((x) => x.type === 'remove') || pool === wbtcPool).toBe(true);
      const { status, body } = await get(`/networks/polygon_pos/pools/${pool}/transactions?limit=100`);
      expect(status).toBe(200);
      expectTransactions(body, p.txs, p.dec0, p.dec1);
      const expected = [...p.txs].reverse();
      for (const [i, x] of expected.entries()) if (x.type === 'swap') expectClose(body[i].volume_usd, usdcLeg(p, x), `${kinds.get(pool)!.other} swap ${x.id} volume`);
    }
  });
});
