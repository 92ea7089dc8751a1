/**
 * Several sources behind one Source: the service follows EVM chains and Solana clusters together
 * (each source's networks are its own; a network belongs to exactly one of them).
 */
import type { ChainEventBatch } from '../events/model.js';
import type { Source } from './source.js';

export function combineSources(sources: readonly Source[]): Source {
  if (sources.length === 1) return sources[0]!;
  const owner = new Map<string, Source>();
  for (const s of sources) for (const n of s.networks) owner.set(n.id, s);
  return {
    name: sources.map((s) => s.name).join('+'),
    networks: sources.flatMap((s) => s.networks),
    pricingAnchors(chain) {
      const s = owner.get(chain);
      if (!s) throw new Error(`unknown network ${chain}`);
      return s.pricingAnchors(chain);
    },
    get time() {
      return Math.min(...sources.map((s) => s.time));
    },
    async advance(until: number): Promise<ChainEventBatch[]> {
      const all = await Promise.all(sources.map((s) => s.advance(until)));
      return all.flat();
    },
    health: () => sources.flatMap((s) => (s.health ? s.health() : [])),
    backfill: () => sources.flatMap((s) => (s.backfill ? s.backfill() : [])),
    setWakeup(wake: () => void) {
      for (const s of sources) s.setWakeup?.(wake);
    },
    async close() {
      for (const s of sources) await s.close?.();
    },
  };
}
