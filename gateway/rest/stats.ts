import type { ServeContext } from '../context.js';

/** GET /stats: how much the service holds, `{chains, factories, pools, tokens}`, and `engine` (log and snapshots) when the context has it. */
export function createStats(ctx: ServeContext): () => Buffer {
  return () => {
    const registry = ctx.read.catalog;
    const factories = new Set(registry.dexes.map((d) => `${d.chain}:${d.factory}`)).size;
    const body = { chains: registry.networks.length, factories, pools: registry.poolCount, tokens: registry.tokenCount, ...(ctx.engineStats ? { engine: ctx.engineStats() } : {}) };
    return Buffer.from(JSON.stringify(body), 'utf8');
  };
}
