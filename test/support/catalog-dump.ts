/**
 * What a catalog answers, read through its public accessors, for comparing two engines' catalogs:
 * every live pool and token by id with its record, the lookups by address (any case for EVM), each
 * chain's and token's pool list, and how searches for a token's own symbol, name and address match.
 * Heap offsets and table slots are left out: two catalogs holding the same entries may lay them out
 * differently (a rebuild from records appends texts in id order, ingest in creation order).
 */
import { SearchText, type Catalog } from '../../engine/catalog/catalog.js';

export interface CatalogDump {
  readonly counts: readonly number[];
  readonly networks: readonly string[];
  readonly pools: readonly unknown[];
  readonly tokens: readonly unknown[];
  readonly chainLists: readonly (readonly number[])[];
}

export function catalogDump(c: Catalog): CatalogDump {
  const pools: unknown[] = [];
  for (let p = 0; p < c.poolBound; p++) {
    if (!c.poolLive(p)) continue;
    const rec = c.pool(p);
    pools.push([rec, c.poolId(rec.chain, rec.address), c.poolId(rec.chain, rec.address.toUpperCase().replace(/^0X/, '0x')), c.poolAddressMatch(p, new SearchText(rec.address.toLowerCase()))]);
  }
  const tokens: unknown[] = [];
  for (let t = 0; t < c.tokenBound; t++) {
    if (!c.tokenLive(t)) continue;
    const rec = c.token(t);
    const match = (q: string) => c.tokenMatch(t, new SearchText(q.toLowerCase()));
    tokens.push([rec, c.tokenId(rec.chain, rec.address), match(rec.symbol), match(rec.name), match(rec.name.slice(1, 4)), match(rec.address), c.poolsOfToken(t)]);
  }
  return {
    counts: [c.poolCount, c.tokenCount, c.poolBound, c.tokenBound],
    networks: c.networks.map((n) => `${n.id}:${n.dexes.map((d) => d.id).join(',')}`),
    pools,
    tokens,
    chainLists: c.networks.map((n) => c.poolsOfChain(n.index)),
  };
}
