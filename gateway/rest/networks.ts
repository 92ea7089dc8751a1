/**
 * GET /networks and GET /networks/{network}/dexes: 24 h sums over every pool of a network or DEX.
 * One pass over all pools computes both, at most once per NETWORK_STATS_TTL_MS, so the cost stays
 * flat however often they are asked for.
 */
import { Win } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { QueryParser } from '../http/params.js';
import { networkOrNotFound } from './resolve.js';
import { dexListQuery } from './schemas.js';

/** Longest the network and DEX aggregates are reused. */
export const NETWORK_STATS_TTL_MS = 1000; // 1 s

const finite = (x: number): number => (x - x === 0 ? x : 0);

class NetworkStats {
  private readonly ctx: ServeContext;
  private atMs = -Infinity;
  chainVolumeUsd = new Float64Array(0);
  chainTxns = new Float64Array(0);
  chainPools = new Float64Array(0);
  dexVolumeUsd = new Float64Array(0);
  dexTxns = new Float64Array(0);
  dexPools = new Float64Array(0);
  /** GET /networks body as of the last refresh. */
  networksBody: Buffer = Buffer.alloc(0);

  constructor(ctx: ServeContext) {
    this.ctx = ctx;
  }

  refresh(): void {
    const nowMs = performance.now();
    if (nowMs - this.atMs < NETWORK_STATS_TTL_MS) return;
    const { read } = this.ctx;
    const registry = read.catalog;
    const chains = registry.networks.length;
    const dexes = registry.dexes.length;
    const cv = new Float64Array(chains);
    const ct = new Float64Array(chains);
    const cp = new Float64Array(chains);
    const dv = new Float64Array(dexes);
    const dt = new Float64Array(dexes);
    const dp = new Float64Array(dexes);
    const n = read.poolCount;
    // Unlocked reads: an aggregate may mix a pool's state from either side of one update.
    for (let p = 0; p < n; p++) {
      if (!read.poolExists(p)) continue;
      const c = read.poolChain(p);
      const d = read.poolDex(p);
      const v = finite(read.volumeUsd(p, Win.H24));
      const t = finite(read.txns(p, Win.H24));
      cv[c] = cv[c]! + v;
      ct[c] = ct[c]! + t;
      cp[c] = cp[c]! + 1;
      dv[d] = dv[d]! + v;
      dt[d] = dt[d]! + t;
      dp[d] = dp[d]! + 1;
    }
    this.chainVolumeUsd = cv;
    this.chainTxns = ct;
    this.chainPools = cp;
    this.dexVolumeUsd = dv;
    this.dexTxns = dt;
    this.dexPools = dp;
    const list = registry.networks.map((net) => ({
      id: net.id,
      display_name: net.displayName,
      volume_usd_24h: cv[net.index]!,
      txns_24h: ct[net.index]!,
      pools_count: cp[net.index]!,
    }));
    this.networksBody = Buffer.from(JSON.stringify(list), 'utf8');
    this.atMs = nowMs;
  }
}

export interface NetworkHandlers {
  networks(): Buffer;
  dexes(network: string, query: string): Buffer;
}

export function createNetworkHandlers(ctx: ServeContext): NetworkHandlers {
  const stats = new NetworkStats(ctx);
  const dexQuery = new QueryParser(dexListQuery);
  return {
    networks(): Buffer {
      stats.refresh();
      return stats.networksBody;
    },

    dexes(network: string, query: string): Buffer {
      const net = networkOrNotFound(ctx.read.catalog, network);
      const { page, limit } = dexQuery.parse(query);
      stats.refresh();
      const vol = (i: number) => stats.dexVolumeUsd[i] ?? 0;
      const ranked = [...net.dexes].sort((a, b) => vol(b.index) - vol(a.index) || a.index - b.index);
      const total = ranked.length;
      const dexes = ranked.slice((page - 1) * limit, page * limit).map((d) => ({
        dex_id: d.id,
        dex_name: d.name,
        chain: net.id,
        protocol: d.protocol,
        volume_usd_24h: vol(d.index),
        txns_24h: stats.dexTxns[d.index] ?? 0,
        pools_count: stats.dexPools[d.index] ?? 0,
      }));
      const body = { dexes, page_info: { limit, page, total_items: total, total_pages: Math.ceil(total / limit) } };
      return Buffer.from(JSON.stringify(body), 'utf8');
    },
  };
}
