/**
 * Solana decoding and ingest throughput on the recorded mainnet transactions
 * (../shared/fixtures/solana), on one core:
 *  1. decode: SwapDecoder over the recorded transactions, repeated (transactions/s, swaps/s);
 *  2. follow: the Solana source reading blocks of `perBlock` transactions from a local replay node
 *     over HTTP (JSON-RPC `getBlock` parsed, swaps decoded, tokens read) and the engine ingesting
 *     them (LMDB log, shard state): transactions/s and swaps/s end to end. The node runs in the same
 *     process (its answers made ahead, their writes to the socket included).
 * Run: node dist/bench/solana-decode.js [--seconds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { SolanaChainSchema } from '../engine/sources/solana/config.js';
import { SwapDecoder } from '../engine/sources/solana/decode.js';
import { SOLANA_PRESET } from '../engine/sources/solana/preset.js';
import { createSolanaSource } from '../engine/sources/solana/source.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore } from '../engine/store/store.js';
import { loadFixtureTransactions, startReplayNode } from '../test/support/solana-replay.js';

export interface SolanaBenchResult {
  readonly decodeTxPerSecond: number;
  /** Transactions per second of the process's CPU time (on a loaded machine, what one core does while it runs). */
  readonly decodeTxPerCpuSecond: number;
  readonly decodeSwapsPerSecond: number;
  readonly followTxPerSecond: number;
  readonly followSwapsPerSecond: number;
  readonly transactions: number;
  readonly swaps: number;
}

export async function benchSolana(options: { seconds?: number; blocks?: number; perBlock?: number } = {}): Promise<SolanaBenchResult | string> {
  const loaded = loadFixtureTransactions();
  if (typeof loaded === 'string') return loaded;
  const decoder = new SwapDecoder({ families: new Map(SOLANA_PRESET.programs.map((p) => [p.programId, p.family])), wrappedNative: SOLANA_PRESET.wrappedNative.address });
  // Decoding: the recorded transactions over and over for `seconds`.
  const seconds = options.seconds ?? 3;
  let txs = 0;
  let swaps = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    for (const t of loaded) for (const d of decoder.decode(t.tx)) if (d.kind === 'swap') swaps++;
    txs += loaded.length;
  }
  const decodeS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  const decodeCpuS = (cpu.user + cpu.system) / 1e6;

  // Following: blocks of `perBlock` transactions (the recordings cycled) served over HTTP.
  const blocks = options.blocks ?? 40;
  const perBlock = options.perBlock ?? 1_000;
  const all = Array.from({ length: blocks * perBlock }, (_, i) => loaded[i % loaded.length]!);
  const node = await startReplayNode({ transactions: all, firstTime: 1_760_000_000, spacingSeconds: 1, perBlock });
  node.prepare();
  const dir = mkdtempSync(join(tmpdir(), 'solana-bench-'));
  const store = openStore(dir);
  let source: ReturnType<typeof createSolanaSource> | null = null;
  try {
    const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 4 });
    const shards = new LocalShards(views, store);
    const ingest = new Ingest(store, views, shards);
    const now = 1_760_000_000 + blocks + 60;
    source = createSolanaSource({ chains: [SolanaChainSchema.parse({ rpcUrls: [node.url], startSlot: node.slots[0]!, stepBlocks: 8, subscribe: false })], store, now: () => now });
    await ingest.registerNetworks(source.networks);
    const f0 = performance.now();
    for (let i = 0; i < 10_000 && !source.followers[0]!.caughtUp; i++) await (await ingest.ingest(await source.advance(now))).applied;
    await shards.flush();
    const followS = (performance.now() - f0) / 1000;
    const p = source.followers[0]!.progress();
    return {
      decodeTxPerSecond: txs / decodeS,
      decodeTxPerCpuSecond: txs / decodeCpuS,
      decodeSwapsPerSecond: swaps / decodeS,
      followTxPerSecond: p.transactions / followS,
      followSwapsPerSecond: p.swaps / followS,
      transactions: p.transactions,
      swaps: p.swaps,
    };
  } finally {
    await source?.close();
    await node.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatSolanaBench(r: SolanaBenchResult | string): string[] {
  if (typeof r === 'string') return [`solana: skipped (${r})`];
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    `solana decode (one core, recorded transactions repeated): ${n(r.decodeTxPerSecond)} transactions/s, ${n(r.decodeSwapsPerSecond)} swaps/s; ${n(r.decodeTxPerCpuSecond)} transactions per CPU second`,
    `solana follow + ingest (replay node over HTTP, ${n(r.transactions)} transactions, ${n(r.swaps)} swaps): ${n(r.followTxPerSecond)} transactions/s, ${n(r.followSwapsPerSecond)} swaps/s`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--seconds');
  const r = await benchSolana({ seconds: i > 0 ? Number(process.argv[i + 1]) : 3 });
  for (const line of formatSolanaBench(r)) process.stdout.write(`${line}\n`);
}
