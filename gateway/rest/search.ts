/**
 * GET /networks/{network}/pools/search and GET /pools/search: pools filtered by range bounds, DEX
 * and token, ranked by one column (`order_by`), served in pages through a keyset cursor. The cursor
 * holds order_by, sort, the last row's sort value and pool id, so the next page starts strictly
 * after it: for unchanged data no row repeats and none is skipped.
 *
 * Per request: one pass over the candidate pools reading shared columns directly (unlocked: a pool
 * being updated may be judged on either side of the update), a bounded top-k of limit + 1, then a
 * consistent read of the rows served. Nothing is allocated per pool.
 */
import { normalizeAddress, type NetworkEntry, type Registry } from '../../engine/ingest/registry.js';
import { Win } from '../../engine/state/layout.js';
import { createPoolState, readPool } from '../../engine/state/read.js';
import type { EngineViews } from '../../engine/state/views.js';
import type { GatewayContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import { num, str } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { resolveTime, rfc3339, type TimeSpec } from '../http/time.js';
import type { PoolStatics } from './pool-static.js';
import { networkOrNotFound } from './resolve.js';
import { SEARCH_LIMIT_MAX, globalPoolSearchQuery, poolSearchQuery, type POOL_ORDER_BY, type PoolSearchQuery } from './schemas.js';
import { TopK } from './top-k.js';

const CURSOR_VERSION = 'v1';
const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,400}$/;
const CURSOR_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/;

export interface Cursor {
  readonly orderBy: string;
  readonly sort: string;
  readonly value: number;
  readonly id: number;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${CURSOR_VERSION}|${c.orderBy}|${c.sort}|${c.value}|${c.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(text: string): Cursor | null {
  if (!CURSOR_TEXT.test(text)) return null;
  const parts = Buffer.from(text, 'base64url').toString('utf8').split('|');
  if (parts.length !== 5 || parts[0] !== CURSOR_VERSION) return null;
  const [, orderBy, sort, value, id] = parts as [string, string, string, string, string];
  if (!CURSOR_NUMBER.test(value) || !/^[0-9]{1,10}$/.test(id)) return null;
  const v = Number(value);
  const i = Number(id);
  if (!Number.isFinite(v) || i > 0x7fff_ffff) return null;
  return { orderBy, sort, value: v, id: i };
}

/** The cursor of a request, checked against its order_by and sort; null on the first page. */
export function cursorOf(q: { readonly cursor?: string | undefined; readonly order_by: string; readonly sort: string }): Cursor | null {
  if (q.cursor === undefined) return null;
  const after = decodeCursor(q.cursor);
  if (after === null) throw invalidParameter('cursor', 'is malformed; pass next_cursor of the previous page');
  if (after.orderBy !== q.order_by || after.sort !== q.sort) throw invalidParameter('cursor', `was issued for order_by=${after.orderBy}&sort=${after.sort}`);
  return after;
}

/** `chains`: the network ids asked for, each known, in the order given (duplicates dropped); all when absent. */
export function networksOf(registry: Registry, chains: string | undefined): NetworkEntry[] {
  const all = registry.networks;
  if (chains === undefined) return all;
  const out: NetworkEntry[] = [];
  for (const id of chains.split(',')) {
    const net = registry.networkOf(id);
    if (net === undefined)
      throw invalidParameter(
        'chains',
        `names an unknown network "${id.slice(0, 64)}"`,
        all.map((n) => n.id),
      );
    if (!out.includes(net)) out.push(net);
  }
  return out;
}

/** Unix seconds of a time bound, or 400 naming the parameter when outside the representable range. */
export function timeBound(param: string, spec: TimeSpec, nowSeconds: number): number {
  const t = resolveTime(spec, nowSeconds);
  if (Number.isNaN(t)) throw invalidParameter(param, 'is out of range (before 1970 or after 9999)');
  return t;
}

/** Inclusive [lo, hi] bounds on some figure, applied in one request; `echo` renders the applied parameters. */
export class RangeFilters {
  readonly which: number[] = [];
  readonly lo: number[] = [];
  readonly hi: number[] = [];
  echo = '';

  /** Adds the bounds given for figure `which` (min and/or max); nothing when both are absent. */
  add(which: number, minName: string, min: number | undefined, maxName: string, max: number | undefined, time = false): void {
    if (min === undefined && max === undefined) return;
    this.which.push(which);
    this.lo.push(min ?? -Infinity);
    this.hi.push(max ?? Infinity);
    const show = (x: number) => (time ? `"${rfc3339(x)}"` : num(x));
    if (min !== undefined) this.echo += `,${str(minName)}:${show(min)}`;
    if (max !== undefined) this.echo += `,${str(maxName)}:${show(max)}`;
  }

  /** True when `figure(which)` lies within every bound. */
  accepts(figure: (which: number) => number): boolean {
    for (let i = 0; i < this.which.length; i++) {
      const x = figure(this.which[i]!);
      if (!(x >= this.lo[i]! && x <= this.hi[i]!)) return false;
    }
    return true;
  }
}

type PoolOrderBy = (typeof POOL_ORDER_BY)[number];

/** Pool figures by name: the column each order_by and range filter reads. */
const POOL_COLUMNS: Readonly<Record<PoolOrderBy, (v: EngineViews) => Float64Array>> = {
  volume_usd_24h: (v) => v.winVolumeUsd[Win.H24]!,
  volume_usd_7d: (v) => v.winVolumeUsd[Win.D7]!,
  volume_usd_30d: (v) => v.winVolumeUsd[Win.D30]!,
  liquidity_usd: (v) => v.liquidityUsd,
  txns_24h: (v) => v.winTxns[Win.H24]!,
  created_at: (v) => v.poolCreatedAt,
  price_usd: (v) => v.priceUsd0,
  price_change_percentage_24h: (v) => v.winPriceChange[Win.H24]!,
  price_change_percentage_48h: (v) => v.winPriceChange[Win.H48]!,
  price_change_percentage_6h: (v) => v.winPriceChange[Win.H6]!,
  price_change_percentage_1h: (v) => v.winPriceChange[Win.H1]!,
  price_change_percentage_5m: (v) => v.winPriceChange[Win.M5]!,
};
const POOL_FIGURES = Object.keys(POOL_COLUMNS) as PoolOrderBy[];
/** Figures with plain `{name}_min` / `{name}_max` bounds (created_at has its own names, txns_24h only a min). */
const POOL_RANGED: readonly PoolOrderBy[] = POOL_FIGURES.filter((f) => f !== 'created_at' && f !== 'txns_24h');

/** EVM hex addresses in any case (`0X` included); base58 exactly. */
export function queryAddress(address: string): string {
  return /^0x/i.test(address) ? address.toLowerCase() : normalizeAddress(address);
}

/** A cursor-paged search, per network and over the networks named in `chains` (all by default). */
export interface CursorSearch {
  /** GET /networks/{network}/{pools|tokens}/search */
  network(network: string, query: string): Buffer;
  /** GET /{pools|tokens}/search */
  global(query: string): Buffer;
}

export type PoolSearch = CursorSearch;

/** Routes a search over one network, or over the networks `chains` names (echoed when given). */
export function cursorSearch<Q, G extends Q & { readonly chains?: string | undefined }>(
  ctx: GatewayContext,
  parser: { parse(raw: string): Q },
  globalParser: { parse(raw: string): G },
  search: (nets: readonly NetworkEntry[], q: Q, chainsEcho: string) => Buffer,
): CursorSearch {
  return {
    network(network, query) {
      const net = networkOrNotFound(ctx.registry, network);
      return search([net], parser.parse(query), '');
    },
    global(query) {
      const q = globalParser.parse(query);
      const nets = networksOf(ctx.registry, q.chains);
      return search(nets, q, q.chains === undefined ? '' : `,"chains":[${nets.map((n) => str(n.id)).join(',')}]`);
    },
  };
}

/** What ends a cursor envelope after its rows: has_next_page, next_cursor and the echoed query. */
export function envelopeEnd(
  q: { readonly limit: number; readonly order_by: string; readonly sort: string; readonly cursor?: string | undefined },
  found: number,
  values: Float64Array,
  ids: Int32Array,
  echoFilters: string,
): string {
  const hasNext = found > q.limit;
  const last = (hasNext ? q.limit : found) - 1;
  const next = hasNext ? str(encodeCursor({ orderBy: q.order_by, sort: q.sort, value: values[last]!, id: ids[last]! })) : 'null';
  const echo = `{"limit":${q.limit},"order_by":${str(q.order_by)},"sort":${str(q.sort)}${echoFilters}${q.cursor !== undefined ? `,"cursor":${str(q.cursor)}` : ''}}`;
  return `],"has_next_page":${hasNext},"next_cursor":${next},"query":${echo}}`;
}

export function createPoolSearch(ctx: GatewayContext, statics: PoolStatics): PoolSearch {
  const parser = new QueryParser(poolSearchQuery);
  const globalParser = new QueryParser(globalPoolSearchQuery);
  const top = new TopK(SEARCH_LIMIT_MAX + 1);
  const values = new Float64Array(SEARCH_LIMIT_MAX + 1);
  const ids = new Int32Array(SEARCH_LIMIT_MAX + 1);
  const state = createPoolState();
  const columns: Float64Array[] = POOL_FIGURES.map((f) => POOL_COLUMNS[f](ctx.views));
  const index = (f: PoolOrderBy): number => POOL_FIGURES.indexOf(f);
  const TXNS = index('txns_24h');
  const CREATED = index('created_at');
  let pool = 0;
  const figure = (which: number): number => {
    const x = columns[which]![pool]!;
    return x - x === 0 ? x : 0;
  };

  function filtersOf(q: PoolSearchQuery): RangeFilters {
    const f = new RangeFilters();
    const bounds = q as unknown as Readonly<Record<string, number | undefined>>;
    for (const name of POOL_RANGED) f.add(index(name), `${name}_min`, bounds[`${name}_min`], `${name}_max`, bounds[`${name}_max`]);
    f.add(TXNS, 'txns_24h_min', q.txns_24h_min, '', undefined);
    const now = ctx.now();
    const after = q.created_after === undefined ? undefined : timeBound('created_after', q.created_after, now);
    const before = q.created_before === undefined ? undefined : timeBound('created_before', q.created_before, now);
    f.add(CREATED, 'created_after', after, 'created_before', before, true);
    return f;
  }

  function search(nets: readonly NetworkEntry[], q: PoolSearchQuery, chainsEcho: string): Buffer {
    const { views, registry } = ctx;
    const after = cursorOf(q);
    const filters = filtersOf(q);
    const dexName = q.dex_name?.toLowerCase();
    const tokenAddress = q.token_address === undefined ? undefined : queryAddress(q.token_address);
    const descending = q.sort === 'desc';
    const sortColumn = columns[index(q.order_by)]!;
    top.reset(q.limit + 1, descending);
    for (const net of nets) {
      let dex = -1;
      if (dexName !== undefined) {
        const d = net.dexes.find((x) => x.id.toLowerCase() === dexName);
        if (d === undefined) continue;
        dex = d.index;
      }
      let pools: readonly number[] = net.poolIds;
      if (tokenAddress !== undefined) {
        const token = registry.tokenOf(net.index, tokenAddress);
        if (token === undefined) continue;
        pools = registry.tokenPools[token.id] ?? [];
      }
      for (let i = 0; i < pools.length; i++) {
        const p = pools[i]!;
        if (dex >= 0 && views.poolDex[p] !== dex) continue;
        pool = p;
        if (!filters.accepts(figure)) continue;
        let v = sortColumn[p]!;
        if (v - v !== 0) v = 0;
        if (after !== null && !top.ahead(after.value, after.id, v, p)) continue;
        top.offer(v, p);
      }
    }
    const found = top.drain(values, ids);
    const rows = found > q.limit ? q.limit : found;

    let body = '{"results":[';
    for (let i = 0; i < rows; i++) {
      const p = ids[i]!;
      if (!readPool(views, p, state)) throw new Error(`pool ${p} state did not settle`);
      const st = statics.get(p);
      if (i > 0) body += ',';
      body +=
        `${st.rowHead}"volume_usd_24h":${num(state.winVolumeUsd[Win.H24]!)},"volume_usd_7d":${num(state.winVolumeUsd[Win.D7]!)}` +
        `,"volume_usd_30d":${num(state.winVolumeUsd[Win.D30]!)},"liquidity_usd":${num(state.liquidityUsd)}` +
        `,"price_usd":${num(state.priceUsd0)},"transactions_24h":${num(state.winTxns[Win.H24]!)}` +
        `,"price_change_percentage_24h":${num(state.winPriceChange[Win.H24]!)},"price_change_percentage_48h":${num(state.winPriceChange[Win.H48]!)}` +
        `,"price_change_percentage_6h":${num(state.winPriceChange[Win.H6]!)},"price_change_percentage_1h":${num(state.winPriceChange[Win.H1]!)}` +
        `,"price_change_percentage_5m":${num(state.winPriceChange[Win.M5]!)},${st.rowTail}`;
    }
    const echoFilters =
      `${chainsEcho}${q.token_address !== undefined ? `,"token_address":${str(q.token_address)}` : ''}` +
      `${q.dex_name !== undefined ? `,"dex_name":${str(q.dex_name)}` : ''}${filters.echo}`;
    return Buffer.from(body + envelopeEnd(q, found, values, ids, echoFilters), 'utf8');
  }

  return cursorSearch(ctx, parser, globalParser, search);
}
