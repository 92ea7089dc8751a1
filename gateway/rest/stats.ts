import type { GatewayContext } from '../context.js';

/** GET /stats: how much the service holds, `{chains, factories, pools, tokens}`. */
export function createStats(ctx: GatewayContext): () => Buffer {
  return () => {
    const { registry } = ctx;
    const factories = new Set(registry.dexes.map((d) => `${d.chain}:${d.factory}`)).size;
    const body = { chains: registry.networks.length, factories, pools: registry.poolCount, tokens: registry.tokenCount };
    return Buffer.from(JSON.stringify(body), 'utf8');
  };
}
