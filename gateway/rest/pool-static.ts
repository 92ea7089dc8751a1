/**
 * JSON fragments of what never changes about a pool (addresses, names, DEX, creation, fee, tokens),
 * rendered once per pool on first use (pool details are the hottest read: rendering them from the
 * catalog's bytes on every answer would cost more than the cache). What the catalog holds of a pool
 * never changes once created, so a fragment never goes stale.
 */
import type { Catalog, TokenRecord } from '../../engine/read/index.js';
import { str, timeOrNull } from '../http/json.js';

export interface PoolStatic {
  /** `{"id":…,"chain":…,"dex_id":…,…,"tokens":[…],` of pool details: token order as stored, then inversed. */
  readonly detailsHead: readonly [string, string];
  /** Token addresses as JSON strings: token 0, token 1. */
  readonly tokenIds: readonly [string, string];
  /** A search row up to `"chain":…,` and from `"created_at":…` to its end. */
  readonly rowHead: string;
  readonly rowTail: string;
  /** `rowTail` of a GET /search pool row: its tokens in full, with `decimals` and `added_at`. */
  readonly fullRowTail: string;
}

export class PoolStatics {
  private readonly registry: Catalog;
  private readonly byPool: (PoolStatic | undefined)[] = [];

  constructor(registry: Catalog) {
    this.registry = registry;
  }

  get(p: number): PoolStatic {
    return this.byPool[p] ?? (this.byPool[p] = this.render(p));
  }

  private render(p: number): PoolStatic {
    const reg = this.registry;
    const pool = reg.pool(p);
    const dex = reg.dexes[pool.dex]!;
    const chain = str(reg.networks[pool.chain]!.id);
    const t0 = reg.token(pool.token0);
    const t1 = reg.token(pool.token1);
    const full = (t: TokenRecord) =>
      `{"id":${str(t.address)},"name":${str(t.name)},"symbol":${str(t.symbol)},"chain":${chain},"decimals":${t.decimals},"added_at":${timeOrNull(t.addedAt)}}`;
    const short = (t: TokenRecord) => `{"id":${str(t.address)},"name":${str(t.name)},"symbol":${str(t.symbol)},"chain":${chain}}`;
    const created = `"created_at":${timeOrNull(pool.createdAt)},"created_at_block_number":${pool.createdBlock},"fee":${pool.feePpm}`;
    const head = `{"id":${str(pool.address)},"chain":${chain},"dex_id":${str(dex.id)},"dex_name":${str(dex.name)},"factory_id":${str(dex.factory)},${created},"tokens":`;
    return {
      detailsHead: [`${head}[${full(t0)},${full(t1)}],`, `${head}[${full(t1)},${full(t0)}],`],
      tokenIds: [str(t0.address), str(t1.address)],
      rowHead: `{"id":${str(pool.address)},"dex_id":${str(dex.id)},"dex_name":${str(dex.name)},"chain":${chain},`,
      rowTail: `${created},"tokens":[${short(t0)},${short(t1)}]}`,
      fullRowTail: `${created},"tokens":[${full(t0)},${full(t1)}]}`,
    };
  }
}
