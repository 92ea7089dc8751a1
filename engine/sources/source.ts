import type { ChainEventBatch, NetworkInfo } from '../events/model.js';

/**
 * A producer of chain events. Ingest pulls from it; a source never needs to know what was
 * already stored, because ingest drops every on-chain event at or before its checkpoint.
 * Sources must emit each chain's events in strictly increasing key order.
 */
export interface Source {
  readonly name: string;
  /** Networks (with DEXes) this source serves; stable for the life of the store. */
  readonly networks: readonly NetworkInfo[];
  /** Addresses of each chain's stablecoins (the first is the USD reference) and wrapped native token. */
  pricingAnchors(chain: string): { readonly stablecoins: readonly string[]; readonly wrappedNative: string };
  /**
   * Produce the events in the simulated or real time span (previous call, until]; `until`
   * is Unix seconds. Returns one batch per chain that has events, each in chain order.
   */
  advance(until: number): Promise<ChainEventBatch[]> | ChainEventBatch[];
  /** Time up to which events have been produced (Unix seconds). */
  readonly time: number;
  /** Per chain ingest health (sources reading a remote node); shown by /health. */
  health?(): readonly object[];
  /** Per chain backfill progress (sources reading a remote node); shown by /stats as `backfill`. */
  backfill?(): readonly object[];
  close?(): Promise<void>;
  /**
   * A source that learns of new data by itself (a node's subscription) calls `wake` to be advanced
   * at once once live, instead of at the engine's next tick.
   */
  setWakeup?(wake: () => void): void;
  /**
   * The source's whole state as of `time`, kept with each snapshot; a source made from it goes on
   * from there (the simulator). Sources that resume from the store (EVM checkpoints) keep none.
   */
  saveState?(): Uint8Array;
}
