/**
 * The EVM JSON-RPC source: one ChainFollower per configured chain behind the engine's Source
 * interface. Each `advance` reads one step of confirmed blocks on every chain that is behind (and
 * polls the head of those that are live). Resuming after a restart starts at the block after the
 * chain's ingest checkpoint with the pools and tokens already stored; ingest drops anything at or
 * before the checkpoint, so a step read twice is counted once.
 */
import { stepFollowers } from '../followers.js';
import type { ChainEventBatch, NetworkInfo, TokenInfo } from '../../events/model.js';
import { metaKeys, type Checkpoint, type Store } from '../../store/store.js';
import type { Source } from '../source.js';
import { ChainFollower, networkInfo, type ChainProgress, type ChainResume, type KnownPool } from './chain.js';
import type { EvmChainConfig } from './config.js';

export interface EvmSourceOptions {
  readonly chains: readonly EvmChainConfig[];
  /** Where to resume from; a fresh start at each chain's startBlock without it. */
  readonly store?: Store;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  /** Milliseconds between backfill progress lines (0 = none). */
  readonly progressIntervalMs?: number;
  /** A terminal to draw a progress bar on (redrawn in place) instead of printing progress lines. */
  readonly progressBar?: NodeJS.WriteStream;
}

export interface EvmSource extends Source {
  readonly followers: readonly ChainFollower[];
  /** Per chain: position, rates and RPC health (`nodeDownSince`: Unix ms, null while the node answers). */
  progress(): (ChainProgress & { readonly nodeDownSince: number | null })[];
  health(): SourceHealth[];
  /** Per chain, what /stats shows of the backfill: blocks done of total, pools found per factory. */
  backfill(): BackfillProgress[];
}

/** One chain's backfill as /stats shows it (wire names). */
export interface BackfillProgress {
  readonly chain: string;
  readonly state: 'backfilling' | 'live';
  /** First block of this run's scan, the next block to read and the newest confirmed block seen (-1 before the first poll). */
  readonly start_block: number;
  readonly next_block: number;
  readonly safe_block: number;
  readonly blocks_done: number;
  readonly blocks_total: number;
  readonly pools: number;
  /** Pools created before the start block, taken up at their first log. */
  readonly pools_taken_up: number;
  readonly factories: readonly { readonly dex_id: string; readonly start_block: number; readonly pools: number }[];
}

/** One chain's ingest health as /health and `dexdata status` show it. */
export interface SourceHealth {
  readonly chain: string;
  /** `node_down`: the node has not answered through the client's retries; ingestion resumes when it does. */
  readonly state: 'backfilling' | 'live' | 'node_down';
  readonly node_down_since: string | null;
  readonly last_error: string | null;
  /** Last time (ISO 8601) the node answered a request. */
  readonly last_success_at: string | null;
  /** Head block seen at the last successful poll, and confirmed blocks not yet ingested. */
  readonly head_block: number | null;
  readonly next_block: number;
  readonly blocks_behind: number | null;
  readonly reorgs: number;
  readonly last_reorg_block: number | null;
  readonly rpc_retries: number;
}

const DEFAULT_PROGRESS_INTERVAL_MS = 5_000; // 5 s
const BAR_REDRAW_MS = 200;

/** Per factory: pools found, or the block its scan starts at while the chain has not reached it. */
function factoryProgress(p: ChainProgress): string {
  return p.factories.map((f) => (p.nextBlock <= f.startBlock && f.pools === 0 ? `${f.dexId} from block ${f.startBlock}` : `${f.dexId} ${f.pools} pools`)).join(', ');
}

/** Pools, tokens and the next block of a chain from what the store holds. */
export function resumeFromStore(store: Store, chain: string): ChainResume | undefined {
  let index = -1;
  for (const { value } of store.networks.getRange()) if (value.id === chain) index = value.index;
  if (index < 0) return undefined;
  const ck = store.meta.get(metaKeys.checkpoint(chain)) as Checkpoint | undefined;
  // Each pool's factory (its DEX's), whose family decodes its logs.
  const factories = new Map<number, string>();
  for (const { value } of store.dexes.getRange()) if (value.chain === index) factories.set(value.index, value.factory);
  const pools: KnownPool[] = [];
  for (const { value } of store.pools.getRange())
    if (value.chain === index) pools.push({ address: value.address, protocol: value.protocol as KnownPool['protocol'], createdBlock: value.createdBlock, factory: factories.get(value.dex) });
  const tokens: TokenInfo[] = [];
  for (const { value } of store.tokens.getRange())
    if (value.chain === index)
      tokens.push({ address: value.address, name: value.name, symbol: value.symbol, decimals: value.decimals, totalSupply: BigInt(value.totalSupply), role: value.role as TokenInfo['role'] });
  // Every event of blocks up to the checkpoint's block is committed (a step is committed in one transaction).
  const nextBlock = ck ? Math.max(ck.block, ck.blockEvent) + 1 : 0;
  const recentBlocks = (store.meta.get(metaKeys.recentBlocks(chain)) as [number, string][] | undefined) ?? [];
  return { nextBlock, pools, tokens, recentBlocks };
}

export function createEvmSource(options: EvmSourceOptions): EvmSource {
  const now = options.now ?? (() => Date.now() / 1000);
  const log = options.log ?? (() => {});
  const followers = options.chains.map(
    (config) => new ChainFollower({ config, now, log, ...(options.store ? { resume: resumeFromStore(options.store, config.id) } : {}) }),
  );
  const networks: NetworkInfo[] = options.chains.map(networkInfo);
  const progressMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  const started = performance.now();
  let lastProgress = started;
  let allCaughtUp = false;
  /** Per chain: Unix ms since when its node is unreachable, null while it answers. */
  const down: (number | null)[] = followers.map(() => null);

  const bar = options.progressBar;
  const report = () => {
    const elapsed = (performance.now() - started) / 1000;
    if (bar) {
      const parts = followers.map((f, i) => {
        const p = f.progress();
        const total = Math.max(1, p.safeBlock + 1 - p.startBlock);
        const done = Math.min(total, p.nextBlock - p.startBlock);
        const width = 20;
        const filled = Math.round((width * done) / total);
        const bps = done / Math.max(elapsed, 1e-3);
        const eta = bps > 0 ? Math.round((total - done) / bps) : NaN;
        return `${p.chain} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor((100 * done) / total)}% ${Math.round(bps)} blocks/s ${Math.round(p.events / Math.max(elapsed, 1e-3))} events/s ETA ${Number.isFinite(eta) ? `${eta}s` : '?'}`;
      });
      bar.write(`\r${parts.join('  ')}\x1b[K${allCaughtUp ? '\n' : ''}`);
      return;
    }
    for (const f of followers) {
      const p = f.progress();
      const done = p.nextBlock - p.startBlock;
      const left = Math.max(0, p.safeBlock + 1 - p.nextBlock);
      const bps = done / Math.max(elapsed, 1e-3);
      const eta = bps > 0 ? Math.round(left / bps) : NaN;
      log(
        `${p.chain}: backfill at block ${p.nextBlock - 1} of ${p.safeBlock}, ${Math.round(bps)} blocks/s, ${Math.round(p.events / Math.max(elapsed, 1e-3))} events/s, ` +
          `${p.nextBlock - p.startBlock} of ${Math.max(0, p.safeBlock + 1 - p.startBlock)} blocks done, ${p.pools} pools${p.takenUp > 0 ? ` (${p.takenUp} taken up at their first trade)` : ''}, ETA ${Number.isFinite(eta) ? `${eta} s` : 'unknown'}${p.rpcRetries > 0 ? `, ${p.rpcRetries} RPC retries` : ''}; ${factoryProgress(p)}`,
      );
    }
  };

  return {
    name: 'evm',
    networks,
    followers,
    progress: () => followers.map((f, i) => ({ ...f.progress(), nodeDownSince: down[i] ?? null })),
    backfill: () =>
      followers.map((f): BackfillProgress => {
        const p = f.progress();
        const total = p.safeBlock < 0 ? 0 : Math.max(0, p.safeBlock + 1 - p.startBlock);
        return {
          chain: p.chain,
          state: p.caughtUp ? 'live' : 'backfilling',
          start_block: p.startBlock,
          next_block: p.nextBlock,
          safe_block: p.safeBlock,
          blocks_done: Math.min(total, p.nextBlock - p.startBlock),
          blocks_total: total,
          pools: p.pools,
          pools_taken_up: p.takenUp,
          factories: p.factories.map((x) => ({ dex_id: x.dexId, start_block: x.startBlock, pools: x.pools })),
        };
      }),
    health: () =>
      followers.map((f, i): SourceHealth => {
        const p = f.progress();
        const iso = (ms: number) => new Date(ms).toISOString();
        const known = p.safeBlock >= 0;
        return {
          chain: p.chain,
          state: down[i] !== null ? 'node_down' : p.caughtUp ? 'live' : 'backfilling',
          node_down_since: down[i] !== null ? iso(down[i]!) : null,
          last_error: p.rpcLastError === '' ? null : p.rpcLastError,
          last_success_at: p.rpcLastSuccessAt > 0 ? iso(p.rpcLastSuccessAt) : null,
          head_block: known ? p.safeBlock + f.config.confirmations : null,
          next_block: p.nextBlock,
          blocks_behind: known ? Math.max(0, p.safeBlock + 1 - p.nextBlock) : null,
          reorgs: p.reorgs,
          last_reorg_block: p.lastReorgBlock >= 0 ? p.lastReorgBlock : null,
          rpc_retries: p.rpcRetries,
        };
      }),
    pricingAnchors(chain) {
      const c = options.chains.find((x) => x.id === chain);
      if (!c) throw new Error(`unknown network ${chain}`);
      return { stablecoins: c.stablecoins.map((a) => a.toLowerCase()), wrappedNative: c.wrappedNative.toLowerCase() };
    },
    get time() {
      return followers.length === 0 ? now() : Math.min(...followers.map((f) => f.time));
    },
    async advance(_until: number): Promise<ChainEventBatch[]> {
      const batches = await stepFollowers(followers, down, log);
      if (progressMs > 0 && !allCaughtUp && performance.now() - lastProgress >= (bar ? BAR_REDRAW_MS : progressMs)) {
        lastProgress = performance.now();
        report();
      }
      if (!allCaughtUp && followers.every((f) => f.caughtUp)) {
        allCaughtUp = true;
        if (progressMs > 0) report();
      }
      return batches;
    },
  };
}
