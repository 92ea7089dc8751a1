/**
 * GET /networks/{network}/tokens/search and GET /tokens/search: tokens filtered by range bounds and
 * ranked by one figure, in pages through the same keyset cursor as pool search.
 *
 * Rankings are frozen like pool search's: a first page that has a next one keeps the ranked figure
 * of every token as it stood (one number per token) and names it in next_cursor; later pages rank
 * by those values and filter by the current ones, so no token repeats or is skipped while figures
 * move. Kept RANKING_TTL_MS after last use, within TOKEN_RANKINGS_MAX_BYTES; a page whose ranking
 * is gone ranks by current values.
 *
 * A token's figures add up every pool holding it (volumes, transactions, liquidity); its price is
 * the token price column, fdv = price x total_supply / 10^decimals, and its price change is that of
 * the pool its USD price is routed through, from the token's side. Reads are unlocked while
 * ranking (a pool mid-update may count on either side of it); nothing is allocated per token.
 */
import { createPoolState, type NetworkEntry, RANKING_TTL_MS, TopK, Win } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { num, str, timeOrNull } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { RangeFilters, cursorOf, cursorSearch, envelopeEnd, timeBound, type CursorSearch } from './search.js';
import { SEARCH_LIMIT_MAX } from './schemas.js';
import { TOKEN_ORDER_BY, globalTokenSearchQuery, tokenSearchQuery, type TokenSearchQuery } from './schemas-search.js';
import { randomBytes } from 'node:crypto';

/** Memory for frozen token rankings (8 bytes per token each). */
const TOKEN_RANKINGS_MAX_BYTES = 64 * 1024 ** 2; // 64 MiB

/** Figure slots: TOKEN_ORDER_BY's eight in order, then the price. */
export const enum TokenFigure {
  VolumeUsd24h = 0,
  VolumeUsd7d = 1,
  VolumeUsd30d = 2,
  LiquidityUsd = 3,
  Txns24h = 4,
  PriceChange24h = 5,
  CreatedAt = 6,
  FdvUsd = 7,
  PriceUsd = 8,
}
const FIGURE_COUNT = 9;

const finite = (x: number): number => (x - x === 0 ? x : 0);

/** Computes one token's figures into `out`, reusing its buffers. */
export class TokenFigures {
  readonly out = new Float64Array(FIGURE_COUNT);
  private readonly ctx: ServeContext;
  private readonly state = createPoolState();
  /** total_supply / 10^decimals per token id (NaN: not computed yet; a token's supply never changes). */
  private supply = new Float64Array(0);

  constructor(ctx: ServeContext) {
    this.ctx = ctx;
  }

  /** Fills `out` for token t; the price change (a ring scan when the token is its route pool's token 1) only with `change`. */
  compute(t: number, change: boolean): Float64Array {
    const { read } = this.ctx;
    const registry = read.catalog;
    const out = this.out;
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    let e = 0;
    for (let p = registry.firstPoolOfToken(t); p >= 0; p = registry.nextPoolOfToken(t, p)) {
      a += finite(read.volumeUsd(p, Win.H24));
      b += finite(read.volumeUsd(p, Win.D7));
      c += finite(read.volumeUsd(p, Win.D30));
      d += finite(read.liquidityUsd(p));
      e += finite(read.txns(p, Win.H24));
    }
    const price = finite(read.tokenPriceUsd(t));
    if (t >= this.supply.length) {
      const grown = new Float64Array(Math.max(registry.tokenBound, 2 * this.supply.length)).fill(Number.NaN);
      grown.set(this.supply);
      this.supply = grown;
    }
    let scale = this.supply[t]!;
    if (Number.isNaN(scale)) scale = this.supply[t] = Number(BigInt(registry.tokenTotalSupply(t))) / 10 ** registry.tokenDecimals(t);
    out[TokenFigure.VolumeUsd24h] = a;
    out[TokenFigure.VolumeUsd7d] = b;
    out[TokenFigure.VolumeUsd30d] = c;
    out[TokenFigure.LiquidityUsd] = d;
    out[TokenFigure.Txns24h] = e;
    out[TokenFigure.CreatedAt] = registry.tokenAddedAt(t);
    out[TokenFigure.FdvUsd] = finite(price * scale);
    out[TokenFigure.PriceUsd] = price;
    out[TokenFigure.PriceChange24h] = change ? this.change24h(t) : 0;
    return out;
  }

  private change24h(t: number): number {
    const { read } = this.ctx;
    const route = read.tokenRoutePool(t);
    if (route < 0) return 0;
    if (read.poolToken0(route) === t) return finite(read.priceChange(route, Win.H24));
    if (!read.readPool(route, this.state, true)) throw new Error(`pool ${route} state did not settle`);
    return finite(this.state.winPriceChange1[Win.H24]!);
  }
}

export type TokenSearch = CursorSearch;

export function createTokenSearch(ctx: ServeContext): TokenSearch {
  const parser = new QueryParser(tokenSearchQuery);
  const globalParser = new QueryParser(globalTokenSearchQuery);
  const top = new TopK(SEARCH_LIMIT_MAX + 1);
  const values = new Float64Array(SEARCH_LIMIT_MAX + 1);
  const ids = new Int32Array(SEARCH_LIMIT_MAX + 1);
  const figures = new TokenFigures(ctx);
  const onChain = new Uint8Array(ctx.read.chainCapacity);
  /** `{"id":…,"address":…,"chain":…,"name":…,"symbol":…,"decimals":…,` per token id, rendered on first use. */
  const heads: string[] = [];
  const figure = (which: number): number => figures.out[which]!;
  /** Frozen rankings by name, least recently used first. */
  const rankings = new Map<string, { readonly values: Float64Array; lastUsedMs: number }>();
  let rankingBytes = 0;
  const instance = randomBytes(4).toString('hex');
  let serial = 0;
  /** This request's ranked figure per token id (NaN: not searched), kept when a next page exists. */
  let current = new Float64Array(0);

  /** The last ranking kept, reused while a first page finds every value as it was. */
  let lastKept: { readonly order: number; readonly name: string; readonly values: Float64Array } | null = null;

  function sameAsKept(order: number, n: number): boolean {
    if (lastKept === null || lastKept.order !== order || lastKept.values.length !== n || !rankings.has(lastKept.name)) return false;
    const kept = lastKept.values;
    for (let t = 0; t < n; t++) if (!Object.is(kept[t], current[t])) return false;
    return true;
  }

  function keep(order: number, n: number, nowMs: number): string {
    if (sameAsKept(order, n)) return lastKept!.name;
    const values = current.slice(0, n);
    const name = `${instance}.${serial++}`;
    lastKept = { order, name, values };
    rankings.set(name, { values, lastUsedMs: nowMs });
    rankingBytes += values.byteLength;
    for (const [k, r] of rankings) {
      if (rankingBytes <= TOKEN_RANKINGS_MAX_BYTES && nowMs - r.lastUsedMs < RANKING_TTL_MS) break;
      rankings.delete(k);
      rankingBytes -= r.values.byteLength;
    }
    return name;
  }

  function headOf(t: number): string {
    let h = heads[t];
    if (h === undefined) {
      const reg = ctx.read.catalog;
      const address = str(reg.tokenAddress(t));
      const chain = str(reg.networks[reg.tokenChain(t)]!.id);
      h = heads[t] = `{"id":${address},"address":${address},"chain":${chain},"name":${str(reg.tokenName(t))},"symbol":${str(reg.tokenSymbol(t))},"decimals":${reg.tokenDecimals(t)},`;
    }
    return h;
  }

  function filtersOf(q: TokenSearchQuery): RangeFilters {
    const f = new RangeFilters();
    f.add(TokenFigure.VolumeUsd24h, 'volume_usd_24h_min', q.volume_usd_24h_min, 'volume_usd_24h_max', q.volume_usd_24h_max);
    f.add(TokenFigure.VolumeUsd7d, 'volume_usd_7d_min', q.volume_usd_7d_min, 'volume_usd_7d_max', q.volume_usd_7d_max);
    f.add(TokenFigure.VolumeUsd30d, 'volume_usd_30d_min', q.volume_usd_30d_min, 'volume_usd_30d_max', q.volume_usd_30d_max);
    f.add(TokenFigure.LiquidityUsd, 'liquidity_usd_min', q.liquidity_usd_min, 'liquidity_usd_max', q.liquidity_usd_max);
    f.add(TokenFigure.Txns24h, 'txns_24h_min', q.txns_24h_min, 'txns_24h_max', q.txns_24h_max);
    f.add(TokenFigure.PriceUsd, 'price_usd_min', q.price_usd_min, 'price_usd_max', q.price_usd_max);
    f.add(
      TokenFigure.PriceChange24h,
      'price_change_percentage_24h_min',
      q.price_change_percentage_24h_min,
      'price_change_percentage_24h_max',
      q.price_change_percentage_24h_max,
    );
    f.add(TokenFigure.FdvUsd, 'fdv_usd_min', q.fdv_usd_min ?? q.fdv_min, 'fdv_usd_max', q.fdv_usd_max ?? q.fdv_max);
    const now = ctx.now();
    const after = q.created_after === undefined ? undefined : timeBound('created_after', q.created_after, now);
    const before = q.created_before === undefined ? undefined : timeBound('created_before', q.created_before, now);
    f.add(TokenFigure.CreatedAt, 'created_after', after, 'created_before', before, true);
    return f;
  }

  function search(nets: readonly NetworkEntry[], q: TokenSearchQuery, chainsEcho: string): Buffer {
    const { read } = ctx;
    const registry = read.catalog;
    const after = cursorOf(q);
    const filters = filtersOf(q);
    const order = TOKEN_ORDER_BY.indexOf(q.order_by);
    const needChange = order === TokenFigure.PriceChange24h || filters.which.includes(TokenFigure.PriceChange24h);
    onChain.fill(0);
    for (const net of nets) onChain[net.index] = 1;
    top.reset(q.limit + 1, q.sort === 'desc');
    const bound = registry.tokenBound;
    const nowMs = performance.now();
    const name = after?.rankings.length === 1 ? after.rankings[0]! : '';
    const frozen = rankings.get(name);
    if (frozen !== undefined) {
      frozen.lastUsedMs = nowMs;
      rankings.delete(name);
      rankings.set(name, frozen);
    }
    if (current.length < bound) current = new Float64Array(Math.max(bound, 2 * current.length));
    for (let t = 0; t < bound; t++) {
      current[t] = Number.NaN;
      if (onChain[read.tokenChain(t)] !== 1 || !registry.tokenLive(t)) continue;
      const out = figures.compute(t, needChange);
      current[t] = out[order]!;
      if (!filters.accepts(figure)) continue;
      // A token newer than the frozen ranking is not in it.
      const v = frozen === undefined ? out[order]! : t < frozen.values.length ? frozen.values[t]! : Number.NaN;
      if (Number.isNaN(v)) continue;
      if (after !== null && !top.ahead(after.value, after.id, v, t)) continue;
      top.offer(v, t);
    }
    const found = top.drain(values, ids);
    let ranking: string[] = [];
    if (found > q.limit) ranking = [frozen !== undefined ? name : keep(order, bound, nowMs)];
    const rows = found > q.limit ? q.limit : found;

    let body = '{"results":[';
    for (let i = 0; i < rows; i++) {
      const t = ids[i]!;
      const f = figures.compute(t, true);
      if (i > 0) body += ',';
      body +=
        `${headOf(t)}"price_usd":${num(f[TokenFigure.PriceUsd]!)},"fdv_usd":${num(f[TokenFigure.FdvUsd]!)}` +
        `,"liquidity_usd":${num(f[TokenFigure.LiquidityUsd]!)},"volume_usd_24h":${num(f[TokenFigure.VolumeUsd24h]!)}` +
        `,"volume_usd_7d":${num(f[TokenFigure.VolumeUsd7d]!)},"volume_usd_30d":${num(f[TokenFigure.VolumeUsd30d]!)}` +
        `,"txns_24h":${num(f[TokenFigure.Txns24h]!)},"price_change_percentage_24h":${num(f[TokenFigure.PriceChange24h]!)}` +
        `,"created_at":${timeOrNull(registry.tokenAddedAt(t))},"pools_count":${registry.tokenPoolCount(t)}}`;
    }
    return Buffer.from(body + envelopeEnd(q, found, values, ids, `${chainsEcho}${filters.echo}`, ranking), 'utf8');
  }

  return cursorSearch(ctx, parser, globalParser, search);
}
