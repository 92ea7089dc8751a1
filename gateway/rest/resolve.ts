/** Path segments to catalog entries (networks, pool and token ids); anything unknown is not_found. */
import type { Catalog, NetworkEntry } from '../../engine/read/index.js';
import { notFound } from '../errors.js';

export function networkOrNotFound(registry: Catalog, id: string): NetworkEntry {
  const net = registry.networkOf(id);
  if (net === undefined) throw notFound('network', id);
  return net;
}

/** The pool id. EVM hex addresses match in any case (`0X` prefix included); others (base58) exactly. */
export function poolOrNotFound(registry: Catalog, network: NetworkEntry, address: string): number {
  const pool = registry.poolId(network.index, address);
  if (pool < 0) throw notFound('pool', address, network.id);
  return pool;
}

/** The token id. */
export function tokenOrNotFound(registry: Catalog, network: NetworkEntry, address: string): number {
  const token = registry.tokenId(network.index, address);
  if (token < 0) throw notFound('token', address, network.id);
  return token;
}
