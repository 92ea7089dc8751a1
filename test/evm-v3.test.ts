/**
 * Uniswap v3 through the EVM source on a real anvil: the real factory and pool bytecode, a 6-decimal
 * stablecoin and an 18-decimal wrapped native token, positions minted and burned through a small
 * callback contract, swaps both ways, a burn left uncollected then collected, a flash, protocol fees
 * collected. The REST answers are compared with the pool's own logs and state (its token balances
 * included), read here with viem.
 */
import { maxUint256, parseAbiItem, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilBackfillChain, balancesOf, deploy, deployTestTokens, fixtures, mineAt, read, send, startAnvil, v3LoggedBalances, v3PoolTxs, V3_COLLECT, V3_COLLECT_PROTOCOL, V3_FACTORY, V3_FLASH, V3_POOL, type Anvil, type V3PoolTx } from './support/evm.js';
import { backfillAndServe, expectClose, expectTransactions, getJson, MAX_SQRT_RATIO, MIN_SQRT_RATIO, sqrtPriceX96Of, type ServedChains } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;

let node: Anvil;
let served: ServedChains | undefined;
let base = '';
let usdc: Address;
let weth: Address;
let pool: Address;
let caller: Address;
let factory: Address;
/** A pool initialised and funded, never traded. */
let fresh: Address;
/** Served after a burn left uncollected (the next steps not yet mined): the pool's details then, and its balances. */
let afterBurn: { body: any; balances: [bigint, bigint]; token0: Address; token1: Address } | null = null;


const get = (path: string) => getJson(base + path);

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0 });
  const f = fixtures();
  let t = T0 + 10;
  ({ usdc, weth } = await deployTestTokens(node, t, { usdc: ['USD Coin', 'USDC', 6, 10n ** 12n * E6], weth: ['Wrapped Ether', 'WETH', 18, 10n ** 9n * E18] }));
  t += 2;
  await mineAt(node, t++);
  factory = await deploy(node, V3_FACTORY);
  const factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await mineAt(node, t++);
  caller = await deploy(node, f.V3Caller);
  for (const token of [usdc, weth]) {
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'approve', [caller, maxUint256]);
  }
  await mineAt(node, t++);
  await send(node, factory, V3_FACTORY.abi, 'createPool', [usdc, weth, 3000]);
  pool = await read<Address>(node, factory, V3_FACTORY.abi, 'getPool', [usdc, weth, 3000]);
  // 3,000 USDC per WETH, as a raw token1/token0 ratio in Q64.96.
  const usdcIs0 = usdc.toLowerCase() < weth.toLowerCase();
  await mineAt(node, t++);
  await send(node, pool, V3_POOL.abi, 'initialize', [sqrtPriceX96Of(usdcIs0, 18, 3_000n)]);
  // A quarter of the swap fees to the protocol (owner action: the deployer owns the factory).
  await mineAt(node, t++);
  await send(node, pool, V3_POOL.abi, 'setFeeProtocol', [4, 4]);

  await mineAt(node, T0 + 300);
  await send(node, caller, f.V3Caller.abi, 'mint', [pool, -887220, 887220, 5_000_000_000_000_000n]);
  await mineAt(node, T0 + 310);
  await send(node, caller, f.V3Caller.abi, 'mint', [pool, -600, 600, 1_000_000_000_000n]);
  const swap = async (usdcIn: boolean, amount: bigint, at: number) => {
    const zeroForOne = usdcIn === usdcIs0;
    await mineAt(node, at);
    await send(node, caller, f.V3Caller.abi, 'swap', [pool, zeroForOne, amount, zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n]);
  };
  await swap(true, 6_000n * E6, T0 + 6 * 60 + 5);
  await swap(false, 3n * E18, T0 + 7 * 60 + 15);
  await swap(true, 1_234_567n, T0 + 7 * 60 + 50);
  await mineAt(node, T0 + 9 * 60);
  await send(node, caller, f.V3Caller.abi, 'burn', [pool, -887220, 887220, 1_000_000_000_000_000n]);
  await swap(false, E18 / 7n, T0 + 11 * 60 + 1);
  // A second pool (0.05 %), initialised at 2,500 USDC per WETH and given a small position: no swap yet.
  await mineAt(node, T0 + 12 * 60);
  await send(node, factory, V3_FACTORY.abi, 'createPool', [usdc, weth, 500]);
  fresh = await read<Address>(node, factory, V3_FACTORY.abi, 'getPool', [usdc, weth, 500]);
  await mineAt(node, T0 + 12 * 60 + 10);
  await send(node, fresh, V3_POOL.abi, 'initialize', [sqrtPriceX96Of(usdcIs0, 18, 2_500n)]);
  await mineAt(node, T0 + 12 * 60 + 20);
  await send(node, caller, f.V3Caller.abi, 'mint', [fresh, -887270, 887270, 1_000_000_000n]);

  // Tokens that move outside swaps and mints. A burn without its collect: the amounts are owed to
  // the position and stay in the pool; a swap meanwhile.
  await mineAt(node, T0 + 13 * 60);
  await send(node, caller, f.V3Caller.abi, 'burnOnly', [pool, -600, 600, 500_000_000_000n]);
  await swap(true, 2_000n * E6, T0 + 13 * 60 + 30);
  const token0 = await read<Address>(node, pool, V3_POOL.abi, 'token0');
  const token1 = await read<Address>(node, pool, V3_POOL.abi, 'token1');
  {
    const mid = await backfillAndServe([chainConfig(factoryBlock)], NOW);
    try {
      const r = await fetch(`${mid.url}/networks/anvil/pools/${pool}`);
      afterBurn = { body: await r.json(), balances: await balancesOf(node, pool, token0, token1), token0, token1 };
    } finally {
      await mid.close();
    }
  }
  // The collect pays the burned amounts and the position's fees out; a flash pays a fee (and 7 units
  // of token 0 more) in; the protocol's fees are collected; a burn is left uncollected at the end.
  await mineAt(node, T0 + 15 * 60);
  await send(node, caller, f.V3Caller.abi, 'collect', [pool, -600, 600]);
  await mineAt(node, T0 + 16 * 60);
  await send(node, caller, f.V3Caller.abi, 'flash', [pool, usdcIs0 ? 1_000n * E6 : E18, usdcIs0 ? E18 : 1_000n * E6, 7n]);
  await mineAt(node, T0 + 17 * 60);
  await send(node, pool, V3_POOL.abi, 'collectProtocol', [node.account, 2n ** 128n - 1n, 2n ** 128n - 1n]);
  await mineAt(node, T0 + 18 * 60);
  await send(node, caller, f.V3Caller.abi, 'burnOnly', [pool, -887220, 887220, 100_000_000_000_000n]);
  await swap(false, E18 / 5n, T0 + 19 * 60);

  served = await backfillAndServe([chainConfig(factoryBlock)], NOW);
  base = served.url;
}, 60_000);

function chainConfig(factoryBlock: number) {
  return anvilBackfillChain(node, {
    id: 'anvil',
    displayName: 'Anvil',
    startBlock: factoryBlock,
    stablecoins: [usdc],
    wrappedNative: weth,
    factories: [{ dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: factory }],
  });
}

afterAll(async () => {
  await served?.close();
  await node?.stop();
});

const SWAP = parseAbiItem('event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)');

interface V3Truth {
  dec0: number;
  dec1: number;
  token0: Address;
  txs: V3PoolTx[];
}

async function truth(): Promise<V3Truth> {
  const token0 = await read<Address>(node, pool, V3_POOL.abi, 'token0');
  const txs = await v3PoolTxs(node, pool, SWAP);
  const usdcIs0 = token0.toLowerCase() === usdc.toLowerCase();
  return { token0, dec0: usdcIs0 ? 6 : 18, dec1: usdcIs0 ? 18 : 6, txs };
}

const INITIALIZE = parseAbiItem('event Initialize(uint160 sqrtPriceX96, int24 tick)');

describe('Uniswap v3 on anvil through the REST interface', () => {
  it('Initialize sets a pool\'s price from sqrtPriceX96 before any swap', async () => {
    expect(await node.pub.getLogs({ address: fresh, event: SWAP, fromBlock: 0n })).toHaveLength(0);
    const [init] = await node.pub.getLogs({ address: fresh, event: INITIALIZE, fromBlock: 0n });
    const sqrtPriceX96 = init!.args.sqrtPriceX96!;
    const usdcIs0 = usdc.toLowerCase() < weth.toLowerCase();
    const sqrt = Number(sqrtPriceX96) / 2 ** 96;
    const ratio = sqrt * sqrt * 10 ** (usdcIs0 ? 6 - 18 : 18 - 6); // token0 in token1, decimals applied
    const { status, body } = await get(`/networks/anvil/pools/${fresh}`);
    expect(status).toBe(200);
    expect(body.transactions).toBe(0);
    expectClose(body.last_price, ratio, 'last_price');
    // USDC is 1 USD: WETH in USD is the pool's price of WETH in USDC, about 2,500.
    const wethUsd = usdcIs0 ? 1 / ratio : ratio;
    expect(Math.abs(wethUsd - 2_500)).toBeLessThan(1e-6);
    const inv = await get(`/networks/anvil/pools/${fresh}?inversed=${usdcIs0}`);
    expectClose(inv.body.last_price_usd, wethUsd, 'WETH last_price_usd in the new pool');
  });

  it('pool details: fee tier, tokens, price from the last sqrtPriceX96, reserves from the pool logs', async () => {
    const p = await truth();
    const { status, body } = await get(`/networks/anvil/pools/${pool}`);
    expect(status).toBe(200);
    expect([body.dex_id, body.factory_id, body.fee]).toEqual(['uniswap_v3', factory.toLowerCase(), 3000]);
    expect(body.tokens.map((t: { id: string }) => t.id)).toEqual([p.token0.toLowerCase(), (p.token0.toLowerCase() === usdc.toLowerCase() ? weth : usdc).toLowerCase()]);
    const slot0 = await read<readonly [bigint, number]>(node, pool, V3_POOL.abi, 'slot0');
    const lastSwap = p.txs.filter((x) => x.type === 'swap').pop()!;
    expect(lastSwap.sqrtPriceX96).toBe(slot0[0]);
    const sqrt = Number(slot0[0]) / 2 ** 96;
    expectClose(body.last_price, sqrt * sqrt * 10 ** (p.dec0 - p.dec1), 'last_price');
    // Reserves: the pool's token balances, which its logs account for (mints and swaps in, collects
    // and protocol collects out, flash fees in; a burn moves nothing until it is collected).
    const token1 = await read<Address>(node, pool, V3_POOL.abi, 'token1');
    const balances = await balancesOf(node, pool, p.token0, token1);
    expect(await v3LoggedBalances(node, pool, SWAP)).toEqual(balances);
    expect(body.token_reserves.map((r: { reserve: string }) => r.reserve)).toEqual(balances.map(String));
    expect(body.transactions).toBe(p.txs.filter((x) => x.type === 'swap').length);
  });

  it('reserves are the pool\'s balances after a burn left uncollected, then after the collect, a flash and a protocol collect', async () => {
    const logged = await node.pub.getLogs({ address: pool, events: [V3_COLLECT, V3_COLLECT_PROTOCOL, V3_FLASH], fromBlock: 0n });
    expect(logged.map((l) => l.eventName).sort()).toEqual(['Collect', 'Collect', 'CollectProtocol', 'Flash']);
    const flash = logged.find((l) => l.eventName === 'Flash')!.args as Record<string, bigint>;
    expect(flash.paid0! > 0n && flash.paid1! > 0n).toBe(true);
    // While the burned amounts are owed to the position, they are still the pool's.
    const mid = afterBurn!;
    expect(mid.body.token_reserves.map((r: { reserve: string }) => r.reserve)).toEqual(mid.balances.map(String));
    const { body } = await get(`/networks/anvil/pools/${pool}`);
    const balances = await balancesOf(node, pool, mid.token0, mid.token1);
    expect(body.token_reserves.map((r: { reserve: string }) => r.reserve)).toEqual(balances.map(String));
    // liquidity_usd is those balances at USD prices: USDC at 1, WETH at the pool's price from slot0.
    const usdcIs0 = mid.token0.toLowerCase() === usdc.toLowerCase();
    const slot0 = await read<readonly [bigint, number]>(node, pool, V3_POOL.abi, 'slot0');
    const ratio = (Number(slot0[0]) / 2 ** 96) ** 2 * 10 ** (usdcIs0 ? 6 - 18 : 18 - 6); // token0 in token1
    const wethUsd = usdcIs0 ? 1 / ratio : ratio;
    const [usdcRaw, wethRaw] = usdcIs0 ? balances : [balances[1], balances[0]];
    expectClose(body.liquidity_usd, Number(usdcRaw) / 1e6 + (Number(wethRaw) / 1e18) * wethUsd, 'liquidity_usd');
    expectClose(body.liquidity_usd, body.token_reserves[0].reserve_usd + body.token_reserves[1].reserve_usd, 'liquidity_usd as the sum of reserve_usd');
  });

  it('WETH is priced in USD from the pool, USDC at 1', async () => {
    const p = await truth();
    const sqrt = Number(p.txs.filter((x) => x.type === 'swap').pop()!.sqrtPriceX96) / 2 ** 96;
    const ratio = sqrt * sqrt * 10 ** (p.dec0 - p.dec1); // token0 in token1
    const wethUsd = p.token0.toLowerCase() === usdc.toLowerCase() ? 1 / ratio : ratio;
    expectClose((await get(`/networks/anvil/tokens/${weth}`)).body.price_usd, wethUsd, 'WETH price_usd');
    expect((await get(`/networks/anvil/tokens/${usdc}`)).body.price_usd).toBe(1);
  });

  it('transactions: every Swap, Mint and Burn log, newest first, with signed amounts, blocks and times from the logs', async () => {
    const p = await truth();
    const { status, body } = await get(`/networks/anvil/pools/${pool}/transactions?limit=100`);
    expect(status).toBe(200);
    expectTransactions(body, p.txs, p.dec0, p.dec1);
  });
});
