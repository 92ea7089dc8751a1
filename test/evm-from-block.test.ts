/**
 * Starting an EVM chain from recent history (`dexdata serve --from-block N`, `--recent DAYS`) on a
 * real anvil with Uniswap v2 and v3 bytecode: pools created before the start block are taken up when
 * they first trade after it (a v2 pair from its Sync, a v3 pool from its token balances and slot0
 * before that block), pools of an unconfigured factory, a contract that only claims a configured
 * factory, and pools that never trade again are not, and
 * /stats shows the backfill per network and per factory. Every figure is compared with the
 * contracts' own state read with viem.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxUint256, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancesOf, deploy, deployV2Market, fixtures, mineAt, read, send, startAnvil, V2_FACTORY, V2_PAIR, V3_FACTORY, V3_POOL, type Anvil, type V2Market } from './support/evm.js';
import { configProblems, expectClose, MAX_SQRT_RATIO, MIN_SQRT_RATIO, sqrtPriceX96Of } from './support/evm-serve.js';
import { CLI, startService, type RunningService } from './support/service.js';

const E18 = 10n ** 18n;
const E8 = 10n ** 8n;
const E6 = 10n ** 6n;
const DAY = 86_400;
const NOW = Math.floor(Date.now() / 1000);
/** History before the start block is five days old; the start block and what follows, within the last day. */
const OLD = NOW - 5 * DAY;
const RECENT = NOW - DAY + 600;

let node: Anvil;
let market: V2Market;
let other: Address;
let v3Factory: Address;
let caller: Address;
let dir = '';
let configFile = '';
/** The first block of recent history. */
let startBlock = 0;
/** Taken up: the WETH/USDC pair and the WETH/USDC v3 pool. Not served: a pair that never trades again, a pair of an unconfigured factory. */
let pair: Address;
let v3Pool: Address;
let quietPair: Address;
let foreignPair: Address;
/** Created after the start block: found by its creation as usual. */
let newPair: Address;
/** Claims the configured v2 factory through its factory() and emits a pair's logs, but the factory's getPair does not name it. */
let impostor: Address;
let swapsAfter = { pair: 0, v3: 0, newPair: 0 };

async function v3Swap(usdcIn: boolean, amount: bigint, t: number): Promise<void> {
  const usdcIs0 = market.tokens.usdc!.toLowerCase() < market.tokens.weth!.toLowerCase();
  const zeroForOne = usdcIn === usdcIs0;
  await mineAt(node, t);
  await send(node, caller, fixtures().V3Caller.abi, 'swap', [v3Pool, zeroForOne, amount, zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n]);
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: OLD, chainId: 31_339 });
  let t = OLD + 1;
  market = await deployV2Market(node, t, {
    usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 12n * E6 },
    weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 9n * E18 },
    wbtc: { name: 'Wrapped BTC', symbol: 'WBTC', decimals: 8, supply: 10n ** 7n * E8 },
  });
  const { usdc, weth, wbtc } = market.tokens as Record<'usdc' | 'weth' | 'wbtc', Address>;
  t += 10;
  await mineAt(node, t++);
  other = await deploy(node, V2_FACTORY, [node.account]);
  await mineAt(node, t++);
  v3Factory = await deploy(node, V3_FACTORY);
  await mineAt(node, t++);
  caller = await deploy(node, fixtures().V3Caller);
  for (const token of [usdc, weth]) {
    await mineAt(node, t++);
    await send(node, token, fixtures().TestToken.abi, 'approve', [caller, maxUint256]);
  }

  // Old history: pairs and a v3 pool created, funded and traded five days ago.
  pair = await market.createPair(weth, usdc, t++);
  await market.addLiquidity(pair, weth, 100n * E18, usdc, 300_000n * E6, t);
  await market.swap(pair, usdc, 9_000n * E6, t + 10);
  quietPair = await market.createPair(wbtc, usdc, t + 20);
  await market.addLiquidity(quietPair, wbtc, 5n * E8, usdc, 300_000n * E6, t + 21);
  await mineAt(node, t + 30);
  await send(node, other, V2_FACTORY.abi, 'createPair', [weth, usdc]);
  foreignPair = await read<Address>(node, other, V2_FACTORY.abi, 'getPair', [weth, usdc]);
  await market.addLiquidity(foreignPair, weth, 10n * E18, usdc, 20_000n * E6, t + 31);
  await mineAt(node, t + 40);
  await send(node, v3Factory, V3_FACTORY.abi, 'createPool', [usdc, weth, 3000]);
  v3Pool = await read<Address>(node, v3Factory, V3_FACTORY.abi, 'getPool', [usdc, weth, 3000]);
  await mineAt(node, t + 41);
  await send(node, v3Pool, V3_POOL.abi, 'initialize', [sqrtPriceX96Of(usdc.toLowerCase() < weth.toLowerCase(), 18, 3_000n)]);
  await mineAt(node, t + 42);
  await send(node, caller, fixtures().V3Caller.abi, 'mint', [v3Pool, -887220, 887220, 5_000_000_000_000_000n]);
  await v3Swap(true, 20_000n * E6, t + 50);

  // Recent history starts with an empty block: the first block of the last day.
  await node.rpc('evm_mine', [RECENT]);
  startBlock = Number(await node.rpc<string>('eth_blockNumber'));
  t = RECENT + 60;
  await market.swap(pair, weth, 2n * E18, t);
  await market.swap(pair, usdc, 1_500n * E6, t + 60);
  await market.addLiquidity(pair, weth, 3n * E18, usdc, 9_000n * E6, t + 120);
  swapsAfter.pair = 2;
  await v3Swap(false, 4n * E18, t + 180);
  await v3Swap(true, 7_000n * E6, t + 240);
  swapsAfter.v3 = 2;
  await market.swap(foreignPair, weth, E18, t + 300);
  await mineAt(node, t + 310);
  impostor = await deploy(node, fixtures().ImpostorPair, [market.factory, weth, usdc]);
  await mineAt(node, t + 311);
  await send(node, impostor, fixtures().ImpostorPair.abi, 'trade', [10n ** 20n, 10n ** 9n, 10n ** 18n, 10n ** 6n]);
  newPair = await market.createPair(wbtc, weth, t + 360);
  await market.addLiquidity(newPair, wbtc, E8, weth, 20n * E18, t + 361);
  await market.swap(newPair, wbtc, E8 / 10n, t + 400);
  swapsAfter.newPair = 1;

  dir = mkdtempSync(join(tmpdir(), 'evm-from-block-'));
  configFile = join(dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      chains: [
        {
          id: 'devnet',
          displayName: 'Local devnet',
          chainId: 31_339,
          rpcUrls: [node.url],
          blockTimeSeconds: 1,
          startBlock: market.factoryBlock,
          confirmations: 0,
          logBatchBlocks: 8,
          pollIntervalMs: 50,
          stablecoins: [usdc],
          wrappedNative: weth,
          factories: [
            { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: market.factory },
            { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: v3Factory },
          ],
        },
      ],
    }),
  );
}, 60_000);

afterAll(async () => {
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

interface Served {
  readonly url: string;
  readonly key: string;
}

async function pool(s: Served, address: Address): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}/networks/devnet/pools/${address}`, { headers: { authorization: s.key } });
  return { status: r.status, body: await r.json() };
}

/** Runs the service on a fresh data directory with these flags until it has caught up; `check` reads it meanwhile. */
async function served(flags: readonly string[], check: (s: Served, service: RunningService) => Promise<void>): Promise<void> {
  const data = join(dir, `data-${flags.join('-')}`);
  const key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', data], { encoding: 'utf8' }))![1]!;
  const service = await startService(['--config', configFile, '--source', 'evm', '--data-dir', data, ...flags]);
  try {
    await service.waitFor(/caught up/, 30_000);
    const line = await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/);
    await check({ url: `http://127.0.0.1:${/:(\d+)$/.exec(line)![1]}`, key }, service);
  } finally {
    await service.stop();
  }
}

/** Every figure served of the pools, against the contracts' state. */
async function expectServedAsChain(s: Served): Promise<void> {
  // The v2 pair: its reserves are getReserves(), its price their ratio, its swaps those after the start.
  const p = await pool(s, pair);
  expect(p.status).toBe(200);
  const [r0, r1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
  expect(p.body.token_reserves.map((x: { reserve: string }) => x.reserve)).toEqual([r0.toString(), r1.toString()]);
  const usdcIs0 = market.tokens.usdc!.toLowerCase() < market.tokens.weth!.toLowerCase();
  const [d0, d1] = usdcIs0 ? [6, 18] : [18, 6];
  expectClose(p.body.last_price, Number(r1) / 10 ** d1 / (Number(r0) / 10 ** d0), 'pair price', 1e-12);
  expect(p.body.transactions).toBe(swapsAfter.pair);

  // The v3 pool: reserves its token balances (taken up from those before its first recent swap), price from slot0.
  const v = await pool(s, v3Pool);
  expect(v.status).toBe(200);
  const [b0, b1] = await balancesOf(node, v3Pool, usdcIs0 ? market.tokens.usdc! : market.tokens.weth!, usdcIs0 ? market.tokens.weth! : market.tokens.usdc!);
  expect(v.body.token_reserves.map((x: { reserve: string }) => x.reserve)).toEqual([b0.toString(), b1.toString()]);
  const [sqrtPriceX96] = await read<[bigint, number]>(node, v3Pool, V3_POOL.abi, 'slot0');
  expectClose(v.body.last_price, (Number(sqrtPriceX96) / 2 ** 96) ** 2 * 10 ** (d0 - d1), 'v3 price', 1e-9);
  expect(v.body.transactions).toBe(swapsAfter.v3);
  expect(v.body.fee).toBe(3000);

  // Created after the start: found by its creation, every swap served.
  const n = await pool(s, newPair);
  expect(n.status).toBe(200);
  expect(n.body.transactions).toBe(swapsAfter.newPair);

  // Not taken up: a pair that did not trade after the start, a pair of a factory not configured, and
  // a contract whose factory() names the configured factory while the factory's getPair does not name it.
  expect((await pool(s, quietPair)).status).toBe(404);
  expect((await pool(s, foreignPair)).status).toBe(404);
  expect((await read<Address>(node, impostor, fixtures().ImpostorPair.abi, 'factory')).toLowerCase()).toBe(market.factory.toLowerCase());
  expect((await pool(s, impostor)).status).toBe(404);
}

async function expectStats(s: Served): Promise<void> {
  const r = await fetch(`${s.url}/stats`, { headers: { authorization: s.key } });
  expect(r.status).toBe(200);
  const body = (await r.json()) as { pools: number; engine: { backfill: any[] } };
  expect(body.pools).toBe(3);
  const [chain] = body.engine.backfill;
  const head = Number(await node.rpc<string>('eth_blockNumber'));
  expect(chain).toMatchObject({ chain: 'devnet', state: 'live', start_block: startBlock, blocks_done: head + 1 - startBlock, blocks_total: head + 1 - startBlock, pools: 3, pools_taken_up: 2 });
  expect(chain.factories).toEqual([
    { dex_id: 'uniswap_v2', start_block: startBlock, pools: 2 },
    { dex_id: 'uniswap_v3', start_block: startBlock, pools: 1 },
  ]);
}

describe('EVM chains started from recent history', () => {
  it('--from-block N: pools created before N are taken up at their first trade, checked with their factory', async () => {
    await served(['--from-block', String(startBlock)], async (s, service) => {
      await expectServedAsChain(s);
      await expectStats(s);
      expect(service.output()).toMatch(new RegExp(`took up \\d+ pools? created before block ${startBlock} at (its|their) first trade \\(2 so far\\)`));
      expect(service.output()).toMatch(/\d+ of \d+ blocks done, \d+ pools/);
    });
  }, 60_000);

  it('--recent DAYS: the start block is found by its timestamp', async () => {
    await served(['--recent', '1'], async (s, service) => {
      expect(service.output()).toContain(`starting 1 day back, at block ${startBlock}`);
      await expectServedAsChain(s);
      await expectStats(s);
    });
  }, 60_000);

  it('refuses a bad --from-block or --recent, naming the flag', () => {
    expect(configProblems({ config: configFile, 'from-block': 'soon' })).toEqual(['--from-block must be a block number (an integer >= 0), got "soon"']);
    expect(configProblems({ config: configFile, recent: '-2' })).toEqual(['--recent must be a number of days (> 0), got "-2"']);
    expect(configProblems({ config: configFile, recent: '2', 'from-block': '5' })).toEqual(['--from-block and --recent: give one of them, not both']);
    expect(configProblems({ 'from-block': '5' })).toEqual(['--from-block needs EVM chains (--network, or "chains" in the config file)']);
  });
});
