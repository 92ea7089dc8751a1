/**
 * EVM backfill throughput: a local anvil holding N Uniswap v2 swaps (200,000 by default, made by a
 * contract that swaps many times per transaction; `--family solidly` the same swaps on a Solidly
 * volatile WETH/USDC pool, `--family solidly_stable` on a Solidly stable USDC/USDT pool, Aerodrome's
 * Pool compiled from its package's sources), read (1) as raw `eth_getLogs` pages alone, the
 * ceiling, and (2) by the whole pipeline: the EVM source, ingest with LMDB commits and two shard
 * threads (the engine as `dexdata serve --source evm` runs it). Prints events/s of both and the ratio.
 * Then (3) the cost of a reorganisation on that chain: the newest blocks are replaced (evm_snapshot /
 * evm_revert) under the live engine and the rollback's phases are printed.
 *
 *   npm run build && node dist/bench/evm-backfill.js [--swaps N] [--batch-blocks N] [--runs N] [--family uniswap_v2|solidly|solidly_stable]
 *
 * A section of `npm run bench` (bench/run.ts). Needs the dev dependencies (anvil, solc, viem, Uniswap bytecode).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RollbackResult } from '../engine/ingest/rollback.js';
import { startEngine } from '../engine/engine.js';
import { TOPICS } from '../engine/sources/evm/abi.js';
import { EvmChainSchema } from '../engine/sources/evm/config.js';
import { createLogReader } from '../engine/sources/evm/logs.js';
import { createRpcClient } from '../engine/sources/evm/rpc.js';
import { createEvmSource } from '../engine/sources/evm/source.js';
import { deploy, deployV2Market, fixtures, mineAt, send, startAnvil, type Anvil } from '../test/support/evm.js';
import { deploySolidlyMarket } from '../test/support/solidly.js';

/** The pools swapped in: a Uniswap v2 pair, or a Solidly volatile or stable pool. */
export type BenchFamily = 'uniswap_v2' | 'solidly' | 'solidly_stable';
export const BENCH_FAMILIES: readonly BenchFamily[] = ['uniswap_v2', 'solidly', 'solidly_stable'];

export interface EvmBackfillOptions {
  readonly swaps?: number;
  readonly perTx?: number;
  readonly batchBlocks?: number;
  /** Interleaved runs of the ceiling and the pipeline; medians are compared. */
  readonly runs?: number;
  readonly family?: BenchFamily;
  readonly print?: (line: string) => void;
}

export interface EvmBackfillResult {
  readonly swaps: number;
  readonly logs: number;
  /** Raw eth_getLogs logs/s, one page in flight and four. */
  readonly rawOne: number;
  readonly rawFour: number;
  readonly events: number;
  /** Medians of the runs. */
  readonly eventsPerSecond: number;
  /** Pipeline rate over the raw ceilings (0..1). */
  readonly ratioOne: number;
  readonly ratioFour: number;
  readonly rollback: RollbackResult | null;
}

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

interface BenchMarket {
  readonly factory: string;
  readonly factoryBlock: number;
  readonly pair: `0x${string}`;
  /** Token A (the wrapped native, or the second stablecoin) and the reference stablecoin, and what the churn contract is given of each. */
  readonly a: `0x${string}`;
  readonly usdc: `0x${string}`;
  readonly fundA: bigint;
  readonly fundUsdc: bigint;
  /** Amounts of A and of USDC each swap sells. */
  readonly inA: bigint;
  readonly inUsdc: bigint;
  readonly topics: readonly string[];
  readonly factoryConfig: { dexId: string; protocol: 'uniswap_v2' | 'solidly'; address: string };
  /** Gas of one churn transaction of PER_TX swaps. */
  readonly churnGas: bigint;
}

/** The factory and the pool swapped in, with its liquidity; uses blocks from t0 + 1 to t0 + 29. */
async function benchMarket(node: Anvil, t0: number, family: BenchFamily): Promise<BenchMarket> {
  if (family === 'uniswap_v2') {
    const market = await deployV2Market(node, t0 + 1, {
      usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 15n * E6 },
      weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 12n * E18 },
    });
    const pair = await market.createPair(market.tokens.weth!, market.tokens.usdc!, t0 + 10);
    await market.addLiquidity(pair, market.tokens.weth!, 100_000n * E18, market.tokens.usdc!, 300_000_000n * E6, t0 + 20);
    return {
      factory: market.factory,
      factoryBlock: market.factoryBlock,
      pair,
      a: market.tokens.weth!,
      usdc: market.tokens.usdc!,
      fundA: 10_000n * E18,
      fundUsdc: 30_000_000n * E6,
      inA: E18 / 10n,
      inUsdc: 300n * E6,
      topics: [TOPICS.v2Swap!, TOPICS.v2Sync!, TOPICS.v2Mint!, TOPICS.v2Burn!],
      factoryConfig: { dexId: 'uniswap_v2', protocol: 'uniswap_v2', address: market.factory },
      churnGas: 16_000_000n,
    };
  }
  // The same churn on a Solidly pool: its volatile fee (30 bps) is Uniswap v2's, and near balance
  // the stable curve pays more than the constant-product quote the churn takes.
  const stable = family === 'solidly_stable';
  const f = fixtures();
  await mineAt(node, t0 + 1);
  const usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 15n * E6]);
  await mineAt(node, t0 + 2);
  const a = stable ? await deploy(node, f.TestToken, ['Tether USD', 'USDT', 18, 10n ** 15n * E18]) : await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 12n * E18]);
  const market = await deploySolidlyMarket(node, t0 + 3);
  const pair = await market.createPool(a, usdc, stable, t0 + 10);
  await market.addLiquidity(pair, a, stable ? 300_000_000n * E18 : 100_000n * E18, usdc, 300_000_000n * E6, t0 + 20);
  return {
    factory: market.factory,
    factoryBlock: market.factoryBlock,
    pair,
    a,
    usdc,
    fundA: stable ? 30_000_000n * E18 : 10_000n * E18,
    fundUsdc: 30_000_000n * E6,
    inA: stable ? 300n * E18 : E18 / 10n,
    inUsdc: 300n * E6,
    topics: [TOPICS.solidlySwap!, TOPICS.solidlySync!, TOPICS.solidlyMint!, TOPICS.solidlyBurn!],
    factoryConfig: { dexId: 'aerodrome', protocol: 'solidly', address: market.factory },
    churnGas: 60_000_000n,
  };
}

export async function benchEvmBackfill(options: EvmBackfillOptions = {}): Promise<EvmBackfillResult> {
  // 200,000 swaps: each pipeline run lasts seconds, as a backfill does. With 20,000 it lasts half a
  // second, and compiling the code of the fresh engine's threads takes a third of its CPU.
  const SWAPS = options.swaps ?? 200_000;
  const PER_TX = options.perTx ?? 200;
  const BATCH_BLOCKS = options.batchBlocks ?? 10;
  const RUNS = options.runs ?? 3;
  const FAMILY = options.family ?? 'uniswap_v2';
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const now = Math.floor(Date.now() / 1000);
  const t0 = now - 86_400;
  const node = await startAnvil({ timestamp: t0, gasLimit: 100_000_000 });
  try {
    const market = await benchMarket(node, t0, FAMILY);
    const pair = market.pair;
    const f = fixtures();
    await mineAt(node, t0 + 30);
    const churn = await deploy(node, f.V2Churn);
    for (const [i, token] of [market.a, market.usdc].entries()) {
      await mineAt(node, t0 + 31 + i);
      await send(node, token, f.TestToken.abi, 'transfer', [churn, token === market.a ? market.fundA : market.fundUsdc]);
    }
    const token0IsA = market.a.toLowerCase() < market.usdc.toLowerCase();
    const [in0, in1] = token0IsA ? [market.inA, market.inUsdc] : [market.inUsdc, market.inA];
    const made = performance.now();
    let t = t0 + 60;
    for (let done = 0; done < SWAPS; done += PER_TX) {
      await mineAt(node, (t += 12));
      await send(node, churn, f.V2Churn.abi, 'churn', [pair, BigInt(Math.min(PER_TX, SWAPS - done)), in0, in1], market.churnGas);
    }
    const head = Number(await node.rpc<string>('eth_blockNumber'));
    print(`anvil (${FAMILY}): ${SWAPS} swaps in ${head - market.factoryBlock} blocks, made in ${((performance.now() - made) / 1000).toFixed(1)} s`);

    // (1) Ceiling: the same eth_getLogs pages, fetched and JSON-parsed, nothing else; one page at a
    // time, and four in flight as the source reads them. (2) The pipeline: source, ingest (LMDB),
    // two shard threads, from the start block to the head, timed from the source's first read to
    // caught up (the engine's start, store and threads, is printed apart). Each is run RUNS times,
    // interleaved, and the medians are compared: on a shared machine single runs vary by 2x.
    const rpc = createRpcClient({ urls: [node.url], timeoutMs: 60_000, maxRetries: 0 });
    const filter = { address: [pair], topics0: market.topics };
    const chain = EvmChainSchema.parse({
      id: 'devnet',
      displayName: 'Devnet',
      chainId: node.chainId,
      rpcUrls: [node.url],
      startBlock: market.factoryBlock,
      confirmations: 0,
      logBatchBlocks: BATCH_BLOCKS,
      stablecoins: FAMILY === 'solidly_stable' ? [market.usdc, market.a] : [market.usdc],
      // The stable pool holds no wrapped native token: an address that is no token on this chain.
      wrappedNative: FAMILY === 'solidly_stable' ? '0x4200000000000000000000000000000000000006' : market.a,
      factories: [market.factoryConfig],
    });
    const raw: [number[], number[]] = [[], []];
    const pipeline: number[] = [];
    let rawLogs = 0;
    let events = 0;
    const dirs: string[] = [];
    let engine: Awaited<ReturnType<typeof startEngine>> | null = null;
    const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    try {
      for (let run = 0; run < RUNS; run++) {
        for (const [k, concurrency] of [1, 4].entries()) {
          const reader = createLogReader(rpc, BATCH_BLOCKS, concurrency);
          const started = performance.now();
          const logs = await reader.read(market.factoryBlock, head, filter);
          raw[k]!.push(logs.length / ((performance.now() - started) / 1000));
          rawLogs = logs.length;
        }
        await engine?.stop();
        const dir = mkdtempSync(join(tmpdir(), 'evm-bench-'));
        dirs.push(dir);
        let sourceMs = 0;
        let firstRead = 0;
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
              if (firstRead === 0) firstRead = t;
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
        events = engine.status().eventsIngested;
        pipeline.push(events / seconds);
        print(
          `run ${run + 1}: raw ${Math.round(raw[0]![run]!)} logs/s one page at a time, ${Math.round(raw[1]![run]!)} four in flight; pipeline ${events} events in ${seconds.toFixed(2)} s = ${Math.round(events / seconds)} events/s ` +
            `(engine start before it ${((firstRead - begun) / 1000).toFixed(2)} s; waiting for the source ${(sourceMs / 1000).toFixed(2)} s)`,
        );
      }
      const rawOne = median(raw[0]!);
      const rawFour = median(raw[1]!);
      const rate = median(pipeline);
      print(`raw eth_getLogs (${rawLogs} logs, pages of ${BATCH_BLOCKS} blocks), median of ${RUNS}: ${Math.round(rawOne)} logs/s one page at a time, ${Math.round(rawFour)} logs/s four in flight`);
      print(`pipeline backfill, median of ${RUNS}: ${Math.round(rate)} events/s (${events} events: block, pool, sync, swap, mint)`);
      print(`ratio to the raw eth_getLogs ceiling: ${((100 * rate) / rawOne).toFixed(0)} % of one page at a time, ${((100 * rate) / rawFour).toFixed(0)} % of four in flight (target at least 50 %)`);

      // (3) A reorganisation of the newest blocks under the live engine: 200 swaps ingested, then
      // replaced by 100 others; the engine rolls the chain back and rebuilds its views from the log.
      const live = engine!;
      const fork = Number(await node.rpc<string>('eth_blockNumber'));
      const snapshot = await node.rpc<string>('evm_snapshot');
      const ingested = live.status().eventsIngested;
      await mineAt(node, (t += 12));
      await send(node, churn, f.V2Churn.abi, 'churn', [pair, 200n, in0, in1], market.churnGas);
      const deadline = Date.now() + 60_000;
      while (live.status().eventsIngested < ingested + 400 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await node.rpc('evm_revert', [snapshot]);
      await mineAt(node, (t += 13));
      await send(node, churn, f.V2Churn.abi, 'churn', [pair, 100n, in0, in1], market.churnGas);
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
      return { swaps: SWAPS, logs: rawLogs, rawOne, rawFour, events, eventsPerSecond: rate, ratioOne: rate / rawOne, ratioFour: rate / rawFour, rollback: rb };
    } finally {
      await engine?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await node.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { swaps: { type: 'string' }, 'batch-blocks': { type: 'string' }, 'per-tx': { type: 'string' }, runs: { type: 'string' }, family: { type: 'string' } } });
  if (values.family !== undefined && !BENCH_FAMILIES.includes(values.family as BenchFamily)) {
    process.stderr.write(`--family must be one of ${BENCH_FAMILIES.join(', ')}\n`);
    process.exit(2);
  }
  benchEvmBackfill({
    ...(values.family !== undefined ? { family: values.family as BenchFamily } : {}),
    ...(values.swaps !== undefined ? { swaps: Number(values.swaps) } : {}),
    ...(values['per-tx'] !== undefined ? { perTx: Number(values['per-tx']) } : {}),
    ...(values['batch-blocks'] !== undefined ? { batchBlocks: Number(values['batch-blocks']) } : {}),
    ...(values.runs !== undefined ? { runs: Number(values.runs) } : {}),
  }).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
