/**
 * PancakeSwap v3 through the EVM source on a real anvil: the factory and pool bytecode of
 * @pancakeswap/v3-core, a 6-decimal stablecoin, an 18-decimal wrapped native and an 8-decimal token,
 * positions minted and burned, swaps both ways crossing position bounds, two swaps in one block, a
 * burn left uncollected then collected, a flash, protocol fees (on by default in PancakeSwap v3)
 * collected. Its Swap event has two more fields than Uniswap v3's (another topic). Every figure the
 * REST interface serves for the pools (price, reserves, volume, candles, transactions) is compared
 * with the pools' own logs and state (their token balances included), read here with viem.
 */
import { formatUnits, maxUint256, parseAbiItem, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilBackfillChain, balancesOf, deploy, deployTestTokens, deployPancakeV3Factory, fixtures, inOneBlock, mineAt, PANCAKE_V3_FACTORY, PANCAKE_V3_POOL, read, send, startAnvil, v3LoggedBalances, v3PoolTxs, V3_COLLECT, V3_COLLECT_PROTOCOL, V3_FLASH, type Anvil, type V3PoolTx } from './support/evm.js';
import { backfillAndServe, expectCandles, expectClose, expectTransactions, getJson, MAX_SQRT_RATIO, minuteCandles, MIN_SQRT_RATIO, sqrtPriceRatio, sqrtPriceUsd, sqrtPriceX96Of, usdcLeg, type ServedChains } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E8 = 10n ** 8n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;

let node: Anvil;
let served: ServedChains | undefined;
let base = '';
const tok: Record<'usdc' | 'weth' | 'wbtc', Address> = {} as never;
const dec = { usdc: 6, weth: 18, wbtc: 8 };
let factory: Address;
let caller: Address;
/** USDC/WETH 0.25 % and WBTC/USDC 0.05 %. */
let wethPool: Address;
let wbtcPool: Address;
/** The block holding two swaps. */
let twoSwapBlock = 0;
/** Bounds of the USDC/WETH position about the first price. */
let narrow: readonly [number, number] = [0, 0];
/** Served after a burn left uncollected in the USDC/WETH pool (the next steps not yet mined): per pool, its reserves served then and its balances. */
const afterBurn = new Map<Address, { reserves: string[]; balances: [bigint, bigint] }>();
let factoryBlock = 0;


const get = (path: string) => getJson(base + path);

/** sqrtPriceX96 of `usdPerUnit` USDC per unit of `token`, as the pool orders them. */
const sqrtPriceOf = (token: 'weth' | 'wbtc', usdPerUnit: bigint): bigint => sqrtPriceX96Of(tok.usdc.toLowerCase() < tok[token].toLowerCase(), dec[token], usdPerUnit);

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 56 });
  const f = fixtures();
  let t = T0 + 10;
  Object.assign(tok, await deployTestTokens(node, t, { usdc: ['USD Coin', 'USDC', 6, 10n ** 12n * E6], weth: ['Wrapped Ether', 'WETH', 18, 10n ** 9n * E18], wbtc: ['Wrapped BTC', 'WBTC', 8, 10n ** 7n * E8] }));
  t += 3;
  await mineAt(node, t++);
  const deployed = await deployPancakeV3Factory(node);
  factory = deployed.factory;
  await mineAt(node, t++);
  caller = await deploy(node, f.V3Caller);
  for (const token of Object.values(tok)) {
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'approve', [caller, maxUint256]);
  }
  const create = async (a: Address, b: Address, fee: number, sqrtPriceX96: bigint, at: number): Promise<Address> => {
    await mineAt(node, at);
    await send(node, factory, PANCAKE_V3_FACTORY.abi, 'createPool', [a, b, fee]);
    const pool = await read<Address>(node, factory, PANCAKE_V3_FACTORY.abi, 'getPool', [a, b, fee]);
    await mineAt(node, at + 1);
    await send(node, pool, PANCAKE_V3_POOL.abi, 'initialize', [sqrtPriceX96]);
    return pool;
  };
  wethPool = await create(tok.weth, tok.usdc, 2500, sqrtPriceOf('weth', 3_000n), t);
  wbtcPool = await create(tok.usdc, tok.wbtc, 500, sqrtPriceOf('wbtc', 60_000n), t + 2);

  const mint = (pool: Address, lower: number, upper: number, liquidity: bigint, at: number) =>
    mineAt(node, at).then(() => send(node, caller, f.V3Caller.abi, 'mint', [pool, lower, upper, liquidity]));
  const swapArgs = (pool: Address, token: 'weth' | 'wbtc', usdcIn: boolean, amount: bigint) => {
    const usdcIs0 = tok.usdc.toLowerCase() < tok[token].toLowerCase();
    const zeroForOne = usdcIn === usdcIs0;
    return [pool, zeroForOne, amount, zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n] as const;
  };
  const swap = (pool: Address, token: 'weth' | 'wbtc', usdcIn: boolean, amount: bigint, at: number) =>
    mineAt(node, at).then(() => send(node, caller, f.V3Caller.abi, 'swap', swapArgs(pool, token, usdcIn, amount)));

  // USDC/WETH: a full-range position, one about the price (±3 %) and one beside it (tick spacing 50
  // at 0.25 %): the swaps below move the price across their bounds.
  const [, tick] = await read<readonly [bigint, number]>(node, wethPool, PANCAKE_V3_POOL.abi, 'slot0');
  const at = Math.round(tick / 50) * 50;
  narrow = [at - 300, at + 300];
  await mint(wethPool, -887200, 887200, 4_000_000_000_000_000n, T0 + 300);
  await mint(wethPool, at - 300, at + 300, 1_000_000_000_000_000n, T0 + 305);
  await mint(wethPool, at + 300, at + 900, 1_000_000_000_000_000n, T0 + 306);
  await swap(wethPool, 'weth', true, 9_000n * E6, T0 + 6 * 60 + 5);
  await swap(wethPool, 'weth', false, 5n * E18, T0 + 7 * 60 + 15);
  await swap(wethPool, 'weth', true, 1_234_567n, T0 + 7 * 60 + 50);
  // Two swaps in one block, the second the other way.
  const swapCall = (usdcIn: boolean, amount: bigint) => ({ address: caller, abi: f.V3Caller.abi, functionName: 'swap', args: swapArgs(wethPool, 'weth', usdcIn, amount) });
  twoSwapBlock = Number((await inOneBlock(node, T0 + 8 * 60 + 30, [swapCall(true, 2_500n * E6), swapCall(false, E18 / 3n)])).block);
  await mineAt(node, T0 + 9 * 60);
  await send(node, caller, f.V3Caller.abi, 'burn', [wethPool, -887200, 887200, 1_000_000_000_000_000n]);
  await swap(wethPool, 'weth', false, E18 / 7n, T0 + 11 * 60 + 1);
  // WBTC (8 decimals) / USDC (6 decimals).
  await mint(wbtcPool, -887270, 887270, 50_000_000_000n, T0 + 12 * 60);
  await swap(wbtcPool, 'wbtc', true, 30_000n * E6, T0 + 13 * 60 + 20);
  await swap(wbtcPool, 'wbtc', false, E8 / 4n, T0 + 14 * 60 + 40);

  // Tokens that move outside swaps and mints. A burn without its collect (the amounts stay in the
  // pool, owed to the position), a swap meanwhile; served at that point.
  factoryBlock = deployed.factoryBlock;
  await mineAt(node, T0 + 15 * 60);
  await send(node, caller, f.V3Caller.abi, 'burnOnly', [wethPool, narrow[0], narrow[1], 400_000_000_000_000n]);
  await swap(wethPool, 'weth', false, E18 / 2n, T0 + 15 * 60 + 30);
  const mid = await backfillAndServe([chainConfig()], NOW);
  try {
    for (const pool of [wethPool, wbtcPool]) {
      const body = (await (await fetch(`${mid.url}/networks/bsc/pools/${pool}`)).json()) as { token_reserves: { reserve: string }[] };
      const t0 = await read<Address>(node, pool, PANCAKE_V3_POOL.abi, 'token0');
      const t1 = await read<Address>(node, pool, PANCAKE_V3_POOL.abi, 'token1');
      afterBurn.set(pool, { reserves: body.token_reserves.map((r) => r.reserve), balances: await balancesOf(node, pool, t0, t1) });
    }
  } finally {
    await mid.close();
  }
  // The collect pays the burned amounts and the fees out; flashes pay fees in (7 units of token 0
  // more in the USDC/WETH pool); the protocol fees are collected (the factory's owner collects for
  // the pools); a burn is left uncollected at the end.
  await mineAt(node, T0 + 16 * 60);
  await send(node, caller, f.V3Caller.abi, 'collect', [wethPool, narrow[0], narrow[1]]);
  const flashOf = async (pool: Address, a0: bigint, a1: bigint, extra0: bigint, at: number) => {
    await mineAt(node, at);
    await send(node, caller, f.V3Caller.abi, 'flash', [pool, a0, a1, extra0]);
  };
  await flashOf(wethPool, E6 * 100n, E18 / 10n, 7n, T0 + 16 * 60 + 30);
  await flashOf(wbtcPool, E6 * 50n, E8 / 1000n, 0n, T0 + 16 * 60 + 40);
  for (const [i, pool] of [wethPool, wbtcPool].entries()) {
    await mineAt(node, T0 + 17 * 60 + i);
    await send(node, factory, PANCAKE_V3_FACTORY.abi, 'collectProtocol', [pool, node.account, 2n ** 128n - 1n, 2n ** 128n - 1n]);
  }
  await mineAt(node, T0 + 18 * 60);
  await send(node, caller, f.V3Caller.abi, 'burnOnly', [wethPool, -887200, 887200, 500_000_000_000_000n]);
  await swap(wethPool, 'weth', true, 700n * E6, T0 + 18 * 60 + 30);

  served = await backfillAndServe([chainConfig()], NOW);
  base = served.url;
}, 180_000);

function chainConfig() {
  return anvilBackfillChain(node, {
    id: 'bsc',
    displayName: 'BNB Chain',
    startBlock: factoryBlock,
    logBatchBlocks: 7,
    stablecoins: [tok.usdc],
    wrappedNative: tok.weth,
    factories: [{ dexId: 'pancakeswap_v3', name: 'PancakeSwap V3', protocol: 'pancakeswap_v3', address: factory }],
  });
}

afterAll(async () => {
  await served?.close();
  await node?.stop();
});

const SWAP = parseAbiItem('event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint128 protocolFeesToken0, uint128 protocolFeesToken1)');

interface Truth {
  token0: Address;
  dec0: number;
  dec1: number;
  usdcIs0: boolean;
  txs: V3PoolTx[];
}

/** The pool's Swap, Mint and Burn logs read with viem's ABI decoding, and its tokens. */
async function truth(pool: Address, other: 'weth' | 'wbtc'): Promise<Truth> {
  const token0 = await read<Address>(node, pool, PANCAKE_V3_POOL.abi, 'token0');
  const txs = await v3PoolTxs(node, pool, SWAP);
  const usdcIs0 = token0.toLowerCase() === tok.usdc.toLowerCase();
  return { token0, usdcIs0, dec0: usdcIs0 ? dec.usdc : dec[other], dec1: usdcIs0 ? dec[other] : dec.usdc, txs };
}

describe('PancakeSwap v3 on anvil through the REST interface', () => {
  it('every PancakeSwap Swap is read (its topic is not Uniswap v3\'s), two in one block included', async () => {
    const p = await truth(wethPool, 'weth');
    const swaps = p.txs.filter((x) => x.type === 'swap');
    expect(swaps.filter((x) => x.block === twoSwapBlock)).toHaveLength(2);
    // The swaps took the price out of the narrow position's range and back.
    const ticks = (await node.pub.getLogs({ address: wethPool, event: SWAP, fromBlock: 0n })).map((l) => l.args.tick!);
    expect(ticks.some((t) => t < narrow[0] || t >= narrow[1]), ticks.join(',')).toBe(true);
    expect(ticks.some((t) => t >= narrow[0] && t < narrow[1]), ticks.join(',')).toBe(true);
    const { status, body } = await get(`/networks/bsc/pools/${wethPool}`);
    expect(status).toBe(200);
    expect(body.transactions).toBe(swaps.length);
    expect([body.dex_id, body.factory_id, body.fee]).toEqual(['pancakeswap_v3', factory.toLowerCase(), 2500]);
    const dexes = await get('/networks/bsc/dexes');
    expect(JSON.stringify(dexes.body)).toContain('pancakeswap_v3');
  });

  it('price from slot0, reserves the pools\' token balances, for both pools (6, 8 and 18 decimals)', async () => {
    for (const [pool, other] of [
      [wethPool, 'weth'],
      [wbtcPool, 'wbtc'],
    ] as const) {
      const p = await truth(pool, other);
      const slot0 = await read<readonly [bigint, number]>(node, pool, PANCAKE_V3_POOL.abi, 'slot0');
      expect(p.txs.filter((x) => x.type === 'swap').pop()!.sqrtPriceX96).toBe(slot0[0]);
      const { body } = await get(`/networks/bsc/pools/${pool}`);
      expectClose(body.last_price, sqrtPriceRatio(p, slot0[0]), `${other} pool last_price`);
      // The balances, which the logs account for: mints and swaps in, collects and protocol collects
      // out, flash payments in; a burn moves nothing until it is collected.
      const balances = await balancesOf(node, pool, p.token0, await read<Address>(node, pool, PANCAKE_V3_POOL.abi, 'token1'));
      expect(await v3LoggedBalances(node, pool, SWAP)).toEqual(balances);
      expect(body.token_reserves.map((r: { reserve: string }) => r.reserve), other).toEqual(balances.map(String));
      // liquidity_usd: those balances at USD prices (USDC at 1, the other token at the pool's price from slot0).
      const [usdcRaw, otherRaw] = p.usdcIs0 ? balances : [balances[1], balances[0]];
      expectClose(body.liquidity_usd, Number(formatUnits(usdcRaw, dec.usdc)) + Number(formatUnits(otherRaw, dec[other])) * sqrtPriceUsd(p, slot0[0]), `${other} pool liquidity_usd`);
      expectClose((await get(`/networks/bsc/tokens/${tok[other]}`)).body.price_usd, sqrtPriceUsd(p, slot0[0]), `${other} price_usd`);
    }
  });

  it('reserves were the balances while a burn was owed to its position, and a collect, flashes and protocol collects happened since', async () => {
    for (const pool of [wethPool, wbtcPool]) {
      const mid = afterBurn.get(pool)!;
      expect(mid.reserves).toEqual(mid.balances.map(String));
    }
    const kinds = async (pool: Address) => (await node.pub.getLogs({ address: pool, events: [V3_COLLECT, V3_COLLECT_PROTOCOL, V3_FLASH], fromBlock: 0n })).map((l) => l.eventName).sort();
    expect(await kinds(wethPool)).toEqual(['Collect', 'Collect', 'CollectProtocol', 'Flash']);
    expect(await kinds(wbtcPool)).toEqual(['CollectProtocol', 'Flash']);
  });

  it('24 h volume: the USDC legs of the swaps', async () => {
    for (const [pool, other] of [
      [wethPool, 'weth'],
      [wbtcPool, 'wbtc'],
    ] as const) {
      const p = await truth(pool, other);
      const want = p.txs.filter((x) => x.type === 'swap').reduce((s, x) => s + usdcLeg(p, x), 0);
      const { body } = await get(`/networks/bsc/pools/${pool}`);
      expectClose(body.volume_usd, want, `${other} pool volume_usd`);
    }
  });

  it('OHLCV: one-minute candles of WETH in USD from each swap\'s sqrtPriceX96, volume from the USDC legs', async () => {
    const p = await truth(wethPool, 'weth');
    const swaps = p.txs.filter((x) => x.type === 'swap');
    const candles = minuteCandles(swaps.map((x) => ({ time: x.time, price: sqrtPriceUsd(p, x.sqrtPriceX96), volume: usdcLeg(p, x) })));
    const { status, body } = await get(`/networks/bsc/pools/${wethPool}/ohlcv?interval=1m&start=${T0}&inversed=${p.usdcIs0}`);
    expect(status).toBe(200);
    expectCandles(body, candles);
  });

  it('transactions: every Swap, Mint and Burn log, newest first, with signed amounts, blocks, times and USD volume', async () => {
    for (const [pool, other] of [
      [wethPool, 'weth'],
      [wbtcPool, 'wbtc'],
    ] as const) {
      const p = await truth(pool, other);
      const { status, body } = await get(`/networks/bsc/pools/${pool}/transactions?limit=100`);
      expect(status).toBe(200);
      expectTransactions(body, p.txs, p.dec0, p.dec1);
      const expected = [...p.txs].reverse();
      for (const [i, x] of expected.entries()) if (x.type === 'swap') expectClose(body[i].volume_usd, usdcLeg(p, x), `${other} swap ${x.id} volume`);
    }
  });
});
