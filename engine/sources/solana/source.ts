/**
 * The Solana JSON-RPC source: one SlotFollower per configured cluster behind the engine's Source
 * interface. Resuming after a restart starts at the slot after the chain's ingest checkpoint with the
 * pools and tokens already stored (ingest drops anything at or before the checkpoint).
 */
import { stepFollowers } from '../followers.js';
import type { ChainEventBatch, NetworkInfo } from '../../events/model.js';
import { sourceRecords, type Store } from '../../store/store.js';
import { resumeFromStore, type BackfillProgress, type SourceHealth } from '../evm/source.js';
import type { Source } from '../source.js';
import { SlotFollower, solanaNetworkInfo, type SlotProgress } from './chain.js';
import type { SolanaChainConfig } from './config.js';
import type { FollowMode } from './subscribe.js';

export interface SolanaSourceOptions {
  readonly chains: readonly SolanaChainConfig[];
  readonly store?: Store;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  /** Milliseconds between backfill progress lines (0 = none). */
  readonly progressIntervalMs?: number;
}

export interface SolanaSource extends Source {
  readonly followers: readonly SlotFollower[];
  progress(): SlotProgress[];
  health(): SolanaSourceHealth[];
  /** Per network, what /stats shows of the backfill (slots as its blocks, programs as its factories). */
  backfill(): BackfillProgress[];
  /** Closes the nodes' subscriptions. */
  close(): Promise<void>;
}

/** One cluster's ingest health: the EVM chains' fields, and how new slots are learnt of. */
export interface SolanaSourceHealth extends SourceHealth {
  /** `block_subscription` / `slot_subscription`: the node's PubSub announces new slots; `polling`: getSlot every poll interval. */
  readonly follow: FollowMode;
  readonly subscription_notifications: number;
  /** Subscriptions lost once up (socket closed or silent), and why the last attempt or subscription failed: polling meanwhile. */
  readonly subscription_fallbacks: number;
  readonly subscription_last_error: string | null;
}

const DEFAULT_PROGRESS_INTERVAL_MS = 5_000;

/** Slots done and slots to read of this run, from its first slot to the node's slot. */
function slotsOf(p: SlotProgress): { done: number; total: number } {
  if (p.startSlot < 0 || p.headSlot < 0) return { done: 0, total: 0 };
  const total = Math.max(0, p.headSlot + 1 - p.startSlot);
  return { done: Math.min(total, Math.max(0, p.nextSlot - p.startSlot)), total };
}

export function createSolanaSource(options: SolanaSourceOptions): SolanaSource {
  const now = options.now ?? (() => Date.now() / 1000);
  const log = options.log ?? (() => {});
  const store = options.store;
  const followers = options.chains.map((config) => new SlotFollower({ config, now, log, ...(store ? { resume: resumeFromStore(store, config.id), records: sourceRecords(store, config.id) } : {}) }));
  const networks: NetworkInfo[] = options.chains.map(solanaNetworkInfo);
  const down: (number | null)[] = followers.map(() => null);
  const progressMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  const started = performance.now();
  let lastProgress = started;
  let allCaughtUp = false;
  const report = () => {
    const elapsed = Math.max((performance.now() - started) / 1000, 1e-3);
    for (const f of followers) {
      const p = f.progress();
      const { done, total } = slotsOf(p);
      const rate = done / elapsed;
      const eta = rate > 0 ? Math.round((total - done) / rate) : NaN;
      log(
        `${p.chain}: backfill at slot ${p.nextSlot - 1} of ${p.headSlot}, ${Math.round(rate)} slots/s, ${Math.round(p.transactions / elapsed)} transactions/s, ${Math.round(p.events / elapsed)} events/s, ` +
          `${done} of ${total} slots done, ${p.blocks} blocks, ${p.swaps} swaps, ${p.pools} pools, ETA ${Number.isFinite(eta) ? `${eta} s` : 'unknown'}${p.rpcRetries > 0 ? `, ${p.rpcRetries} RPC retries` : ''}; ` +
          p.programs.map((x) => `${x.dexId} ${x.pools} pools`).join(', '),
      );
    }
  };
  return {
    name: 'solana',
    networks,
    followers,
    progress: () => followers.map((f) => f.progress()),
    backfill: () =>
      followers.map((f): BackfillProgress => {
        const p = f.progress();
        const { done, total } = slotsOf(p);
        return {
          chain: p.chain,
          state: p.caughtUp ? 'live' : 'backfilling',
          start_block: p.startSlot,
          next_block: p.nextSlot,
          safe_block: p.headSlot,
          blocks_done: done,
          blocks_total: total,
          pools: p.pools,
          pools_taken_up: 0,
          factories: f.config.programs.map((x, i) => ({ dex_id: x.dexId, start_block: p.startSlot, pools: p.programs[i]!.pools })),
        };
      }),
    health: () =>
      followers.map((f, i): SolanaSourceHealth => {
        const p = f.progress();
        const iso = (ms: number) => new Date(ms).toISOString();
        return {
          chain: p.chain,
          state: down[i] !== null ? 'node_down' : p.caughtUp ? 'live' : 'backfilling',
          node_down_since: down[i] !== null ? iso(down[i]!) : null,
          last_error: p.rpcLastError === '' ? null : p.rpcLastError,
          last_success_at: p.rpcLastSuccessAt > 0 ? iso(p.rpcLastSuccessAt) : null,
          head_block: p.headSlot >= 0 ? p.headSlot : null,
          next_block: p.nextSlot,
          blocks_behind: p.headSlot >= 0 ? Math.max(0, p.headSlot + 1 - p.nextSlot) : null,
          reorgs: p.reorgs,
          last_reorg_block: p.lastReorgSlot >= 0 ? p.lastReorgSlot : null,
          rpc_retries: p.rpcRetries,
          follow: p.follow,
          subscription_notifications: p.notifications,
          subscription_fallbacks: p.subscriptionFallbacks,
          subscription_last_error: p.subscriptionLastError === '' ? null : p.subscriptionLastError,
        };
      }),
    pricingAnchors(chain) {
      const c = options.chains.find((x) => x.id === chain);
      if (!c) throw new Error(`unknown network ${chain}`);
      return { stablecoins: c.stablecoins, wrappedNative: c.wrappedNative };
    },
    setWakeup(wake: () => void) {
      for (const f of followers) f.wake = wake;
    },
    async close() {
      await Promise.all(followers.map((f) => f.close()));
    },
    get time() {
      return followers.length === 0 ? now() : Math.min(...followers.map((f) => f.time));
    },
    async advance(_until: number): Promise<ChainEventBatch[]> {
      const batches = await stepFollowers(followers, down, log);
      if (progressMs > 0 && !allCaughtUp && performance.now() - lastProgress >= progressMs) {
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
