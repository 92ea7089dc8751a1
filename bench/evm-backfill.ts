/**
 * EVM backfill throughput: a local anvil holding N swaps of one family's pools (200,000 by default,
 * made by a contract that swaps many times per transaction): `--family uniswap_v2` (the default) a
 * Uniswap v2 WETH/USDC pair; `algebra` an Algebra Integral pool (@cryptoalgebra/integral-core's
 * bytecode, one Swap log each); `solidly` a Solidly volatile WETH/USDC pool and `solidly_stable` a
 * Solidly stable USDC/USDT pool (Aerodrome's Pool compiled from its package's sources);
 * `uniswap_v4` swaps through the PoolManager of @uniswap/v4-core on a pool with a full-range
 * position and 20 narrower ones; `balancer_v2` swaps through the Balancer v2 Vault (the bytecode of
 * @balancer-labs/v2-deployments) on a 50/50 WETH/USDC weighted pool, many steps per `batchSwap`. The chain is read (1) as raw `eth_getLogs` pages alone, the
 * ceiling, and (2) by the whole pipeline: the EVM source, ingest with LMDB commits and two shard
 * threads (the engine as `dexdata serve --source evm` runs it). Prints events/s of both and the ratio.
 * Then (3) the cost of a reorganisation on that chain: the newest blocks are replaced (evm_snapshot /
 * evm_revert) under the live engine and the rollback's phases are printed.
 *
 *   npm run build && node dist/bench/evm-backfill.js [--family uniswap_v2|algebra|solidly|solidly_stable|uniswap_v4|balancer_v2] [--swaps N] [--per-tx N] [--batch-blocks N] [--runs N]
 *
 * A section of `npm run bench` (bench/run.ts). Needs the dev dependencies (anvil, solc, viem, Uniswap bytecode).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RollbackResult } from '../engine/ingest/rollback.js';
import { startEngine } from '../engine/engine.js';
import { TOPICS } from '../engine/sources/evm/abi.js';
import { EvmChainSchema } from '../engine/sources/evm/config.js';
import { FAMILIES, type EvmProtocol } from '../engine/sources/evm/families/index.js';
import { createLogReader } from '../engine/sources/evm/logs.js';
import { createRpcClient } from '../engine/sources/evm/rpc.js';
import { createEvmSource } from '../engine/sources/evm/source.js';
import { ALGEBRA_CALLEE, ALGEBRA_INTEGRAL_FACTORY, ALGEBRA_INTEGRAL_POOL, deploy, deployAlgebraFactory, deployV2Market, fixtures, mineAt, read, send, startAnvil, type Anvil } from '../test/support/evm.js';
import type { PoolKey } from '../test/support/evm-v4.js';
import { deploySolidlyMarket } from '../test/support/solidly.js';
import { median } from './median.js';

/** The DEX designs whose swaps can fill the chain: the values of `--family`. */
export const BENCH_FAMILIES = ['uniswap_v2', 'algebra', 'solidly', 'solidly_stable', 'uniswap_v4', 'balancer_v2'] as const;
export type BenchFamily = (typeof BENCH_FAMILIES)[number];

export function isBenchFamily(value: string): value is BenchFamily {
  return (BENCH_FAMILIES as readonly string[]).includes(value);
}

export interface EvmBackfillOptions {
  readonly family?: BenchFamily;
  readonly swaps?: number;
  readonly perTx?: number;
  readonly batchBlocks?: number;
  /** Interleaved runs of the ceiling and the pipeline; medians are compared. */
  readonly runs?: number;
  readonly print?: (line: string) => void;
}

export interface EvmBackfillResult {
  readonly family: BenchFamily;
  readonly swaps: number;
  readonly logs: number;
  /** Raw eth_getLogs logs/s, one page in flight and four. */
  readonly rawOne: number;
  readonly rawFour: number;
  readonly events: number;
  /** Medians of the runs. */
  readonly eventsPerSecond: number;
  /** CPU seconds per 100,000 events of the pipeline runs, medians: the engine's process (every thread) and the node's. */
  readonly cpuPer100k: number;
  readonly nodeCpuPer100k: number;
  /** The same per 100,000 logs of the raw reads (one page, four in flight), medians: the reading process and the node. */
  readonly rawCpuPer100k: readonly [number, number];
  readonly rawNodeCpuPer100k: readonly [number, number];
  /** Pipeline rate over the raw ceilings (0..1). */
  readonly ratioOne: number;
  readonly ratioFour: number;
  readonly rollback: RollbackResult | null;
}

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

/** CPU seconds (user + system) a process (or, by its task's stat file, one thread) has used so far, from /proc (0 where there is none). */
function processCpu(pid: number, file = `/proc/${pid}/stat`): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 per second on Linux).
    const stat = readFileSync(file, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by this process (every thread), by its main thread, and by the node. */
interface Cpu {
  readonly own: number;
  readonly main: number;
  readonly node: number;
}

function cpuNow(node: Anvil): Cpu {
  const u = process.cpuUsage();
  // The main thread's task id is the process id.
  return { own: (u.user + u.system) / 1e6, main: processCpu(process.pid, `/proc/${process.pid}/task/${process.pid}/stat`), node: processCpu(node.child.pid ?? -1) };
}

/** CPU seconds between two readings, per 100,000 items: this process, its main thread, the node. */
function cpuBetween(a: Cpu, b: Cpu, items: number): Cpu {
  const per = (x: number) => (x * 100_000) / Math.max(1, items);
  return { own: per(b.own - a.own), main: per(b.main - a.main), node: per(b.node - a.node) };
}

const cpuText = (c: Cpu) => `CPU per 100k ${c.own.toFixed(2)} s here (main thread ${c.main.toFixed(2)}), ${c.node.toFixed(2)} s in the node`;

/** Integer square root (Newton), for a sqrtPriceX96. */
function isqrt(n: bigint): bigint {
  let x = n;
  let y = (x + 1n) / 2n;
  while (y < x) {
    x = y;
    y = (x + n / x) / 2n;
  }
  return x;
}

/** A chain filled with one pool's swaps: the factory as the chain's configuration names it, the logs read, and a call that adds n swaps in block time t. */
export interface Market {
  readonly factory: { readonly dexId: string; readonly protocol: EvmProtocol; readonly address: string };
  /** The block of the factory (for Uniswap v4, of the PoolManager), where the backfill starts. */
  readonly startBlock: number;
  readonly stablecoins: readonly string[];
  readonly wrappedNative: string;
  /** The logs the source reads, for the raw ceiling. */
  readonly filter: { readonly address: string[]; readonly topics0: string[] };
  /** Swaps per churn transaction unless --per-tx says otherwise. */
  readonly perTx: number;
  /** Events the engine ingests per swap. */
  readonly eventsPerSwap: number;
  /** The kinds of events the backfill ingests, as printed. */
  readonly events: string;
  churn(n: number, t: number): Promise<void>;
}

/**
 * A Uniswap v2 pair, or a Solidly volatile (WETH/USDC) or stable (USDT/USDC) pool, and V2Churn, which
 * swaps many times per transaction from its own balance. A Solidly volatile pool's fee (30 bps) is
 * Uniswap v2's, and near balance the stable curve pays more than the constant-product quote the churn takes.
 */
async function pairMarket(node: Anvil, t0: number, family: 'uniswap_v2' | 'solidly' | 'solidly_stable'): Promise<Market> {
  const f = fixtures();
  const solidly = family !== 'uniswap_v2';
  const stable = family === 'solidly_stable';
  // Token A (the wrapped native token, or the second stablecoin), USDC, the factory and the pool with its liquidity, in blocks t0 + 1 to t0 + 29.
  let a: `0x${string}`;
  let usdc: `0x${string}`;
  let pair: `0x${string}`;
  let factory: string;
  let startBlock: number;
  if (!solidly) {
    const market = await deployV2Market(node, t0 + 1, {
      usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 15n * E6 },
      weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 12n * E18 },
    });
    [a, usdc, factory, startBlock] = [market.tokens.weth!, market.tokens.usdc!, market.factory, market.factoryBlock];
    pair = await market.createPair(a, usdc, t0 + 10);
    await market.addLiquidity(pair, a, 100_000n * E18, usdc, 300_000_000n * E6, t0 + 20);
  } else {
    await mineAt(node, t0 + 1);
    usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 15n * E6]);
    await mineAt(node, t0 + 2);
    a = stable ? await deploy(node, f.TestToken, ['Tether USD', 'USDT', 18, 10n ** 15n * E18]) : await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 12n * E18]);
    const market = await deploySolidlyMarket(node, t0 + 3);
    [factory, startBlock] = [market.factory, market.factoryBlock];
    pair = await market.createPool(a, usdc, stable, t0 + 10);
    await market.addLiquidity(pair, a, stable ? 300_000_000n * E18 : 100_000n * E18, usdc, 300_000_000n * E6, t0 + 20);
  }
  await mineAt(node, t0 + 30);
  const churn = await deploy(node, f.V2Churn);
  const funds = [
    [a, stable ? 30_000_000n * E18 : 10_000n * E18],
    [usdc, 30_000_000n * E6],
  ] as const;
  for (const [i, [token, amount]] of funds.entries()) {
    await mineAt(node, t0 + 31 + i);
    await send(node, token, f.TestToken.abi, 'transfer', [churn, amount]);
  }
  // The amounts of A and of USDC each swap sells, as the pool orders them.
  const inA = stable ? 300n * E18 : E18 / 10n;
  const [in0, in1] = a.toLowerCase() < usdc.toLowerCase() ? [inA, 300n * E6] : [300n * E6, inA];
  return {
    factory: solidly ? { dexId: 'aerodrome', protocol: 'solidly', address: factory } : { dexId: 'uniswap_v2', protocol: 'uniswap_v2', address: factory },
    startBlock,
    stablecoins: stable ? [usdc, a] : [usdc],
    // The stable pool holds no wrapped native token: an address that is no token on this chain.
    wrappedNative: stable ? '0x4200000000000000000000000000000000000006' : a,
    filter: {
      address: [pair],
      topics0: solidly ? [TOPICS.solidlySwap!, TOPICS.solidlySync!, TOPICS.solidlyMint!, TOPICS.solidlyBurn!] : [TOPICS.v2Swap!, TOPICS.v2Sync!, TOPICS.v2Mint!, TOPICS.v2Burn!],
    },
    perTx: 200,
    eventsPerSwap: 2,
    events: 'block, pool, sync, swap, mint',
    async churn(n, t) {
      await mineAt(node, t);
      await send(node, churn, f.V2Churn.abi, 'churn', [pair, BigInt(n), in0, in1], solidly ? 60_000_000n : 16_000_000n);
    },
  };
}

/** An Algebra Integral pool with one full-range position, and AlgebraChurn, which swaps many times per transaction from its own balance. */
async function algebraMarket(node: Anvil, t0: number): Promise<Market> {
  const f = fixtures();
  let t = t0 + 1;
  await mineAt(node, t++);
  const usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 15n * E6]);
  await mineAt(node, t++);
  const weth = await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 12n * E18]);
  await mineAt(node, t++);
  const { factory, factoryBlock } = await deployAlgebraFactory(node, false);
  await mineAt(node, t++);
  await send(node, factory, ALGEBRA_INTEGRAL_FACTORY.abi, 'createPool', [weth, usdc, '0x']);
  const pool = await read<string>(node, factory, ALGEBRA_INTEGRAL_FACTORY.abi, 'poolByPair', [weth, usdc]);
  const usdcIs0 = usdc.toLowerCase() < weth.toLowerCase();
  // 3,000 USDC per WETH, as the pool orders them.
  const [num, den] = usdcIs0 ? [E18, 3_000n * E6] : [3_000n * E6, E18];
  await mineAt(node, t++);
  await send(node, pool as `0x${string}`, ALGEBRA_INTEGRAL_POOL.abi, 'initialize', [isqrt((num * 2n ** 192n) / den)]);
  await mineAt(node, t++);
  const callee = await deploy(node, ALGEBRA_CALLEE);
  for (const token of [usdc, weth]) {
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'approve', [callee, 2n ** 256n - 1n]);
  }
  await mineAt(node, t++);
  await send(node, callee, ALGEBRA_CALLEE.abi, 'mint', [pool, node.account, -887220, 887220, 10n ** 17n]);
  await mineAt(node, t++);
  const churn = await deploy(node, f.AlgebraChurn);
  for (const [token, amount] of [
    [weth, 10_000n * E18],
    [usdc, 30_000_000n * E6],
  ] as const) {
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'transfer', [churn, amount]);
  }
  const [in0, in1] = usdcIs0 ? [300n * E6, E18 / 10n] : [E18 / 10n, 300n * E6];
  return {
    factory: { dexId: 'algebra', protocol: 'algebra', address: factory },
    startBlock: factoryBlock,
    stablecoins: [usdc],
    wrappedNative: weth,
    filter: { address: [pool], topics0: [...FAMILIES.algebra.poolTopics] },
    // An Algebra swap costs several times a v2 swap's gas.
    perTx: 100,
    // One Swap log each; the pool's state is read from it.
    eventsPerSwap: 1,
    events: 'block, pool, sync (Initialize), swap, mint',
    async churn(n, at) {
      await mineAt(node, at);
      await send(node, churn, f.AlgebraChurn.abi, 'churn', [pool, BigInt(n), in0, in1], 60_000_000n);
    },
  };
}

/** Uniswap v4: the PoolManager, a WETH/USDC pool with a full-range position and 20 narrower ranges about the price, and V4Churn, which swaps many times per unlock. */
async function v4Market(node: Anvil, t0: number): Promise<Market> {
  // Loaded here: it reads @uniswap/v4-core's artifacts as it loads, which no other family needs.
  const { poolId, V4, v4Slot0 } = await import('../test/support/evm-v4.js');
  const f = fixtures();
  let t = t0 + 1;
  await mineAt(node, t++);
  const usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 15n * E6]);
  await mineAt(node, t++);
  const weth = await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 12n * E18]);
  await mineAt(node, t++);
  const manager = await deploy(node, V4.PoolManager, [node.account]);
  const startBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await mineAt(node, t++);
  const lp = await deploy(node, V4.PoolModifyLiquidityTest, [manager]);
  await mineAt(node, t++);
  const churn = await deploy(node, f.V4Churn, [manager]);
  for (const token of [usdc, weth]) {
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'approve', [lp, 2n ** 256n - 1n]);
    await mineAt(node, t++);
    await send(node, token, f.TestToken.abi, 'transfer', [churn, token === weth ? 10_000n * E18 : 30_000_000n * E6]);
  }
  const wethIs0 = weth.toLowerCase() < usdc.toLowerCase();
  const key: PoolKey = { currency0: wethIs0 ? weth : usdc, currency1: wethIs0 ? usdc : weth, fee: 3000, tickSpacing: 60, hooks: '0x0000000000000000000000000000000000000000' };
  // 3,000 USDC per WETH, as the pool orders them.
  const [num, den] = wethIs0 ? [3_000n * E6, E18] : [E18, 3_000n * E6];
  await mineAt(node, t++);
  await send(node, manager, V4.PoolManager.abi, 'initialize', [key, isqrt((num * 2n ** 192n) / den)]);
  const at = Math.round((await v4Slot0(node, manager, poolId(key))).tick / 60) * 60;
  const ranges: [number, number, bigint][] = [[-887220, 887220, 10n ** 18n]];
  for (let i = 1; i <= 20; i++) ranges.push([at - 60 * i, at + 60 * i, 10n ** 16n]);
  for (const [i, [lower, upper, liquidity]] of ranges.entries()) {
    await mineAt(node, t++);
    const salt = `0x${(i + 1).toString(16).padStart(64, '0')}`;
    await send(node, lp, V4.PoolModifyLiquidityTest.abi, 'modifyLiquidity', [key, { tickLower: lower, tickUpper: upper, liquidityDelta: liquidity, salt }, '0x']);
  }
  const [in0, in1] = wethIs0 ? [E18 / 10n, 300n * E6] : [300n * E6, E18 / 10n];
  return {
    factory: { dexId: 'uniswap_v4', protocol: 'uniswap_v4', address: manager },
    startBlock,
    stablecoins: [usdc],
    wrappedNative: weth,
    filter: { address: [manager], topics0: [TOPICS.v4Initialize!, TOPICS.v4Swap!, TOPICS.v4ModifyLiquidity!] },
    perTx: 200,
    // Each v4 Swap log gives two events: the swap and a sync of the reserves.
    eventsPerSwap: 2,
    events: 'block, pool, sync, swap, mint; each v4 Swap log gives a swap and a sync',
    async churn(n, at) {
      await mineAt(node, at);
      await send(node, churn, f.V4Churn.abi, 'churn', [key, BigInt(n), in0, in1], 30_000_000n);
    },
  };
}

/** Balancer v2: the Vault, a 50/50 WETH/USDC weighted pool, and batchSwap calls of n steps alternating direction (one Swap log each). */
async function balancerMarket(node: Anvil, t0: number): Promise<Market> {
  // Loaded here: it reads @balancer-labs/v2-deployments' bytecode as it loads, which no other family needs.
  const { BALANCER, deployBalancer } = await import('../test/support/balancer.js');
  const f = fixtures();
  let t = t0 + 1;
  await mineAt(node, t++);
  const usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 15n * E6]);
  await mineAt(node, t++);
  const weth = await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 12n * E18]);
  const bal = await deployBalancer(node, weth, [usdc, weth], t);
  t += 10;
  const pool = await bal.createPool([weth, usdc], [E18 / 2n, E18 / 2n], 3n * 10n ** 15n, t++);
  const amounts = pool.tokens.map((a) => (a === weth ? 100_000n * E18 : 300_000_000n * E6));
  await bal.init(pool.id, pool.tokens, amounts, t++);
  const small = pool.tokens.map((a) => (a === weth ? E18 / 10n : 300n * E6));
  const funds = { sender: node.account, fromInternalBalance: false, recipient: node.account, toInternalBalance: false };
  return {
    factory: { dexId: 'balancer_v2', protocol: 'balancer_v2', address: bal.vault },
    startBlock: bal.vaultBlock,
    stablecoins: [usdc],
    wrappedNative: weth,
    filter: { address: [bal.vault], topics0: [...FAMILIES.balancer_v2.factoryTopics, ...FAMILIES.balancer_v2.poolTopics] },
    perTx: 200,
    eventsPerSwap: 1,
    events: 'block, pool, mint (join), swap',
    async churn(n, at) {
      const steps = Array.from({ length: n }, (_, i) => ({ poolId: pool.id, assetInIndex: BigInt(i % 2), assetOutIndex: BigInt(1 - (i % 2)), amount: small[i % 2]!, userData: '0x' as const }));
      await mineAt(node, at);
      await send(node, bal.vault, BALANCER.vault.abi, 'batchSwap', [0, steps, pool.tokens, funds, [2n ** 255n - 1n, 2n ** 255n - 1n], 2n ** 256n - 1n], 60_000_000n);
    },
  };
}

/** The family's market, made in blocks t0 + 1 to t0 + 59 at the latest (the swaps follow from t0 + 72). */
export function deployMarket(node: Anvil, t0: number, family: BenchFamily): Promise<Market> {
  switch (family) {
    case 'algebra':
      return algebraMarket(node, t0);
    case 'uniswap_v4':
      return v4Market(node, t0);
    case 'balancer_v2':
      return balancerMarket(node, t0);
    default:
      return pairMarket(node, t0, family);
  }
}

export async function benchEvmBackfill(options: EvmBackfillOptions = {}): Promise<EvmBackfillResult> {
  // 200,000 swaps: each pipeline run lasts seconds, as a backfill does. With 20,000 it lasts half a
  // second, and compiling the code of the fresh engine's threads takes a third of its CPU.
  const FAMILY = options.family ?? 'uniswap_v2';
  const SWAPS = options.swaps ?? 200_000;
  const BATCH_BLOCKS = options.batchBlocks ?? 10;
  const RUNS = options.runs ?? 3;
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const now = Math.floor(Date.now() / 1000);
  const t0 = now - 86_400;
  const node = await startAnvil({ timestamp: t0, gasLimit: 100_000_000 });
  try {
    const market = await deployMarket(node, t0, FAMILY);
    const PER_TX = options.perTx ?? market.perTx;
    const made = performance.now();
    let t = t0 + 60;
    for (let done = 0; done < SWAPS; done += PER_TX) {
      await market.churn(Math.min(PER_TX, SWAPS - done), (t += 12));
    }
    const head = Number(await node.rpc<string>('eth_blockNumber'));
    print(`anvil: ${SWAPS} ${FAMILY} swaps in ${head - market.startBlock} blocks, made in ${((performance.now() - made) / 1000).toFixed(1)} s`);

    // (1) Ceiling: the same eth_getLogs pages, fetched and JSON-parsed, nothing else; one page at a
    // time, and four in flight as the source reads them. (2) The pipeline: source, ingest (LMDB),
    // two shard threads, from the start block to the head, timed from the source's first read to
    // caught up (the engine's start, store and threads, is printed apart). Each is run RUNS times,
    // interleaved, and the medians are compared: on a shared machine single runs vary by 2x.
    const rpc = createRpcClient({ urls: [node.url], timeoutMs: 60_000, maxRetries: 0 });
    const filter = market.filter;
    const chain = EvmChainSchema.parse({
      id: 'devnet',
      displayName: 'Devnet',
      chainId: node.chainId,
      rpcUrls: [node.url],
      startBlock: market.startBlock,
      confirmations: 0,
      logBatchBlocks: BATCH_BLOCKS,
      stablecoins: market.stablecoins,
      wrappedNative: market.wrappedNative,
      factories: [market.factory],
    });
    const raw: [number[], number[]] = [[], []];
    const pipeline: number[] = [];
    const cpu: [number[], number[]] = [[], []];
    /** Per raw read (one page, four in flight): CPU per 100,000 logs of this process and of the node. */
    const rawCpu: [Cpu[], Cpu[]] = [[], []];
    let rawLogs = 0;
    let events = 0;
    const dirs: string[] = [];
    let engine: Awaited<ReturnType<typeof startEngine>> | null = null;
    try {
      for (let run = 0; run < RUNS; run++) {
        for (const [k, concurrency] of [1, 4].entries()) {
          const reader = createLogReader(rpc, BATCH_BLOCKS, concurrency);
          const cpuBefore = cpuNow(node);
          const started = performance.now();
          const logs = await reader.read(market.startBlock, head, filter);
          raw[k]!.push(logs.length / ((performance.now() - started) / 1000));
          rawCpu[k]!.push(cpuBetween(cpuBefore, cpuNow(node), logs.length));
          rawLogs = logs.length;
        }
        await engine?.stop();
        const dir = mkdtempSync(join(tmpdir(), 'evm-bench-'));
        dirs.push(dir);
        let sourceMs = 0;
        let firstRead = 0;
        let cpuAtFirstRead: Cpu = { own: 0, main: 0, node: 0 };
        const begun = performance.now();
        engine = await startEngine({
          dataDir: dir,
          shards: 2,
          capacity: { pools: 65_536, tokens: 65_536, chains: 8 },
          source: (store) => {
            const src = createEvmSource({ chains: [chain], store, progressIntervalMs: 0 });
            const advance = src.advance.bind(src);
            src.advance = async (until) => {
              const t = performance.now();
              if (firstRead === 0) {
                firstRead = t;
                cpuAtFirstRead = cpuNow(node);
              }
              try {
                return await advance(until);
              } finally {
                sourceMs += performance.now() - t;
              }
            };
            return src;
          },
        });
        await engine.caughtUp;
        const seconds = (performance.now() - firstRead) / 1000;
        const cpuAfter = cpuNow(node);
        events = engine.status().eventsIngested;
        pipeline.push(events / seconds);
        const ownCpu = cpuAfter.own - cpuAtFirstRead.own;
        const mainCpu = cpuAfter.main - cpuAtFirstRead.main;
        const nodeCpu = cpuAfter.node - cpuAtFirstRead.node;
        cpu[0].push((ownCpu * 100_000) / events);
        cpu[1].push((nodeCpu * 100_000) / events);
        print(
          `run ${run + 1}: raw ${Math.round(raw[0]![run]!)} logs/s one page at a time (${cpuText(rawCpu[0][run]!)}), ${Math.round(raw[1]![run]!)} four in flight (${cpuText(rawCpu[1][run]!)}); ` +
            `pipeline ${events} events in ${seconds.toFixed(2)} s = ${Math.round(events / seconds)} events/s ` +
            `(engine start before it ${((firstRead - begun) / 1000).toFixed(2)} s; waiting for the source ${(sourceMs / 1000).toFixed(2)} s; CPU ${ownCpu.toFixed(2)} s in this process, of which ${mainCpu.toFixed(2)} s on the main thread, ${nodeCpu.toFixed(2)} s in the node)`,
        );
      }
      const rawOne = median(raw[0]!);
      const rawFour = median(raw[1]!);
      const rate = median(pipeline);
      print(`raw eth_getLogs (${rawLogs} logs, pages of ${BATCH_BLOCKS} blocks), median of ${RUNS}: ${Math.round(rawOne)} logs/s one page at a time, ${Math.round(rawFour)} logs/s four in flight`);
      print(`pipeline backfill, median of ${RUNS}: ${Math.round(rate)} events/s (${events} events: ${market.events})`);
      const cpuPer100k = median(cpu[0]);
      const nodeCpuPer100k = median(cpu[1]);
      const rawCpuPer100k = [median(rawCpu[0].map((c) => c.own)), median(rawCpu[1].map((c) => c.own))] as const;
      const rawNodeCpuPer100k = [median(rawCpu[0].map((c) => c.node)), median(rawCpu[1].map((c) => c.node))] as const;
      print(`pipeline CPU per 100,000 events, median of ${RUNS}: ${cpuPer100k.toFixed(2)} s in this process (every thread), ${nodeCpuPer100k.toFixed(2)} s in the node`);
      print(
        `raw CPU per 100,000 logs, median of ${RUNS}: one page at a time ${rawCpuPer100k[0].toFixed(2)} s in this process, ${rawNodeCpuPer100k[0].toFixed(2)} s in the node; ` +
          `four in flight ${rawCpuPer100k[1].toFixed(2)} s in this process, ${rawNodeCpuPer100k[1].toFixed(2)} s in the node`,
      );
      print(`ratio to the raw eth_getLogs ceiling: ${((100 * rate) / rawOne).toFixed(0)} % of one page at a time, ${((100 * rate) / rawFour).toFixed(0)} % of four in flight (target at least 75 %)`);

      // (3) A reorganisation of the newest blocks under the live engine: 200 swaps ingested, then
      // replaced by 100 others; the engine rolls the chain back and rebuilds its views from the log.
      const live = engine!;
      const fork = Number(await node.rpc<string>('eth_blockNumber'));
      const snapshot = await node.rpc<string>('evm_snapshot');
      const ingested = live.status().eventsIngested;
      await market.churn(200, (t += 12));
      const deadline = Date.now() + 60_000;
      while (live.status().eventsIngested < ingested + 200 * market.eventsPerSwap && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await node.rpc('evm_revert', [snapshot]);
      await market.churn(100, (t += 13));
      while (live.ingest.rollbacks === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const rb = live.ingest.lastRollback;
      await live.stop();
      engine = null;
      if (rb === null || rb.toBlock !== fork) throw new Error(`no rollback to block ${fork} within 60 s (${JSON.stringify(rb)})`);
      print(
        `rollback of ${rb.eventsOrphaned} orphaned events on a chain of ${rb.eventsReplayed} events (${rb.batchesReplayed} log batches): ${rb.totalMs.toFixed(0)} ms = ` +
          `settle ${rb.settleMs.toFixed(0)} ms + one LMDB transaction ${rb.commitMs.toFixed(0)} ms + views rebuilt from the log ${rb.rebuildMs.toFixed(0)} ms ` +
          `(${Math.round(rb.eventsReplayed / Math.max(rb.rebuildMs / 1000, 1e-6))} events/s)`,
      );
      return { family: FAMILY, swaps: SWAPS, logs: rawLogs, rawOne, rawFour, events, eventsPerSecond: rate, cpuPer100k, nodeCpuPer100k, rawCpuPer100k, rawNodeCpuPer100k, ratioOne: rate / rawOne, ratioFour: rate / rawFour, rollback: rb };
    } finally {
      await engine?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await node.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage = `usage: node dist/bench/evm-backfill.js [--family ${BENCH_FAMILIES.join('|')}] [--swaps N] [--per-tx N] [--batch-blocks N] [--runs N]\n`;
  let values: { family?: string; swaps?: string; 'per-tx'?: string; 'batch-blocks'?: string; runs?: string };
  try {
    ({ values } = parseArgs({ options: { family: { type: 'string' }, swaps: { type: 'string' }, 'batch-blocks': { type: 'string' }, 'per-tx': { type: 'string' }, runs: { type: 'string' } } }));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${usage}`);
    process.exit(2);
  }
  if (values.family !== undefined && !isBenchFamily(values.family)) {
    process.stderr.write(`--family: one of ${BENCH_FAMILIES.join(', ')}, not ${values.family}\n${usage}`);
    process.exit(2);
  }
  benchEvmBackfill({
    ...(values.family !== undefined ? { family: values.family } : {}),
    ...(values.swaps !== undefined ? { swaps: Number(values.swaps) } : {}),
    ...(values['per-tx'] !== undefined ? { perTx: Number(values['per-tx']) } : {}),
    ...(values['batch-blocks'] !== undefined ? { batchBlocks: Number(values['batch-blocks']) } : {}),
    ...(values.runs !== undefined ? { runs: Number(values.runs) } : {}),
  }).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
