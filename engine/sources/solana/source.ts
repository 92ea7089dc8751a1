/**
 * The Solana JSON-RPC source: one SlotFollower per configured cluster behind the engine's Source
 * interface. Resuming after a restart starts at the slot after the chain's ingest checkpoint with the
 * pools and tokens already stored (ingest drops anything at or before the checkpoint).
 */
import { stepFollowers } from '../followers.js';
import type { ChainEventBatch, NetworkInfo } from '../../events/model.js';
import type { Store } from '../../store/store.js';
import { resumeFromStore, type SourceHealth } from '../evm/source.js';
import type { Source } from '../source.js';
import { SlotFollower, solanaNetworkInfo, type SlotProgress } from './chain.js';
import type { SolanaChainConfig } from './config.js';

export interface SolanaSourceOptions {
  readonly chains: readonly SolanaChainConfig[];
  readonly store?: Store;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
}

export interface SolanaSource extends Source {
  readonly followers: readonly SlotFollower[];
  progress(): SlotProgress[];
  health(): SourceHealth[];
}


export function createSolanaSource(options: SolanaSourceOptions): SolanaSource {
  const now = options.now ?? (() => Date.now() / 1000);
  const log = options.log ?? (() => {});
  const followers = options.chains.map((config) => new SlotFollower({ config, now, log, ...(options.store ? { resume: resumeFromStore(options.store, config.id) } : {}) }));
  const networks: NetworkInfo[] = options.chains.map(solanaNetworkInfo);
  const down: (number | null)[] = followers.map(() => null);
  return {
    name: 'solana',
    networks,
    followers,
    progress: () => followers.map((f) => f.progress()),
    health: () =>
      followers.map((f, i): SourceHealth => {
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
        };
      }),
    pricingAnchors(chain) {
      const c = options.chains.find((x) => x.id === chain);
      if (!c) throw new Error(`unknown network ${chain}`);
      return { stablecoins: c.stablecoins, wrappedNative: c.wrappedNative };
    },
    get time() {
      return followers.length === 0 ? now() : Math.min(...followers.map((f) => f.time));
    },
    async advance(_until: number): Promise<ChainEventBatch[]> {
      const batches = await stepFollowers(followers, down, log);
      return batches;
    },
  };
}
