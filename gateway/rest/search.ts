/**
 * GET /networks/{network}/pools/search and GET /pools/search: pools filtered by range bounds, DEX
 * and token, ranked by one figure (`order_by`), served in pages through a keyset cursor.
 *
 * The ranking runs on the shard threads (engine/search/rank-index.ts), each over its own chains in
 * parallel, walking a sorted index until its page is full; the gateway merges the shards' pages and
 * renders the rows from a consistent read. The cursor holds order_by, sort, the last entry's rank
 * value and pool id, and the name of each shard's frozen ranking, so the next page continues the
 * same ranking: while figures move underneath, no pool repeats and none is skipped. The shared
 * helpers here (cursor, range filters, envelope) also serve token search.
 */
import { type Catalog, figureIndex, type NetworkEntry, normalizeAddress, POOL_FIGURES, type RankQuery, ROW, ROW_LENGTH } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import { BodyWriter } from '../http/body-writer.js';
import { num, str } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { resolveTime, rfc3339, type TimeSpec } from '../http/time.js';
import type { PoolStatics } from './pool-static.js';
import { networkOrNotFound } from './resolve.js';
import { globalPoolSearchQuery, poolSearchQuery, type PoolSearchQuery } from './schemas.js';

const CURSOR_VERSION = 'v1';
/** Rendered search rows kept for reuse (about 600 B each). */
const ROW_CACHE_MAX = 200_000;
const CURSOR_VERSION_RANKED = 'v2';
const RANKING_NAME = /^(?:[0-9a-f]{8}\.[0-9]{1,15})?$/;
const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,400}$/;
const CURSOR_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/;

export interface Cursor {
  readonly orderBy: string;
  readonly sort: string;
  readonly value: number;
  readonly id: number;
  /** Per shard, the frozen ranking the page came from ('' for none); empty when not ranked by shards. */
  readonly rankings: readonly string[];
}

/** `v1|order_by|sort|value|id`, with `|ranking~ranking...` after it as `v2` when rankings are named. */
export function encodeCursor(c: Cursor): string {
  const head = `${c.orderBy}|${c.sort}|${c.value}|${c.id}`;
  const text = c.rankings.length === 0 ? `${CURSOR_VERSION}|${head}` : `${CURSOR_VERSION_RANKED}|${head}|${c.rankings.join('~')}`;
  return Buffer.from(text, 'utf8').toString('base64url');
}

export function decodeCursor(text: string): Cursor | null {
  if (!CURSOR_TEXT.test(text)) return null;
  const parts = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const ranked = parts[0] === CURSOR_VERSION_RANKED;
  if (parts.length !== (ranked ? 6 : 5) || (!ranked && parts[0] !== CURSOR_VERSION)) return null;
  const [, orderBy, sort, value, id] = parts as [string, string, string, string, string];
  if (!CURSOR_NUMBER.test(value) || !/^[0-9]{1,10}$/.test(id)) return null;
  const v = Number(value);
  const i = Number(id);
  if (!Number.isFinite(v) || i > 0x7fff_ffff) return null;
  const rankings = ranked ? parts[5]!.split('~') : [];
  if (!rankings.every((r) => RANKING_NAME.test(r))) return null;
  return { orderBy, sort, value: v, id: i, rankings };
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
export function networksOf(registry: Catalog, chains: string | undefined): NetworkEntry[] {
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

/** EVM hex addresses in any case (`0X` included); base58 exactly. */
export function queryAddress(address: string): string {
  return /^0x/i.test(address) ? address.toLowerCase() : normalizeAddress(address);
}

/** A cursor-paged search, per network and over the networks named in `chains` (all by default). */
export interface CursorSearch<R = Buffer> {
  /** GET /networks/{network}/{pools|tokens}/search */
  network(network: string, query: string): R;
  /** GET /{pools|tokens}/search */
  global(query: string): R;
}

/** Pool search answers once the shards have ranked; bad input throws before anything is asked. */
export type PoolSearch = CursorSearch<Promise<Buffer>>;

/** Routes a search over one network, or over the networks `chains` names (echoed when given). */
export function cursorSearch<Q, G extends Q & { readonly chains?: string | undefined }, R = Buffer>(
  ctx: ServeContext,
  parser: { parse(raw: string): Q },
  globalParser: { parse(raw: string): G },
  search: (nets: readonly NetworkEntry[], q: Q, chainsEcho: string) => R,
): CursorSearch<R> {
  return {
    network(network, query) {
      const net = networkOrNotFound(ctx.read.catalog, network);
      return search([net], parser.parse(query), '');
    },
    global(query) {
      const q = globalParser.parse(query);
      const nets = networksOf(ctx.read.catalog, q.chains);
      return search(nets, q, q.chains === undefined ? '' : `,"chains":[${nets.map((n) => str(n.id)).join(',')}]`);
    },
  };
}

/** What ends a cursor envelope after its rows: has_next_page, next_cursor and the echoed query. */
export function envelopeEnd(
  q: { readonly limit: number; readonly order_by: string; readonly sort: string; readonly cursor?: string | undefined },
  found: number,
  values: ArrayLike<number>,
  ids: ArrayLike<number>,
  echoFilters: string,
  rankings: readonly string[] = [],
): string {
  const hasNext = found > q.limit;
  const last = (hasNext ? q.limit : found) - 1;
  const next = hasNext ? str(encodeCursor({ orderBy: q.order_by, sort: q.sort, value: values[last]!, id: ids[last]!, rankings })) : 'null';
  const echo = `{"limit":${q.limit},"order_by":${str(q.order_by)},"sort":${str(q.sort)}${echoFilters}${q.cursor !== undefined ? `,"cursor":${str(q.cursor)}` : ''}}`;
  return `],"has_next_page":${hasNext},"next_cursor":${next},"query":${echo}}`;
}

export function createPoolSearch(ctx: ServeContext, statics: PoolStatics): PoolSearch {
  const parser = new QueryParser(poolSearchQuery);
  const globalParser = new QueryParser(globalPoolSearchQuery);
  const row = new Float64Array(ROW_LENGTH);
  const body = new BodyWriter();
  const TXNS = figureIndex('txns_24h');
  const CREATED = figureIndex('created_at');
  /** Figures with plain `{name}_min` / `{name}_max` bounds (created_at has its own names, txns_24h only a min). */
  const RANGED = POOL_FIGURES.filter((f) => f !== 'created_at' && f !== 'txns_24h');

  function filtersOf(q: PoolSearchQuery): RangeFilters {
    const f = new RangeFilters();
    const bounds = q as unknown as Readonly<Record<string, number | undefined>>;
    for (const name of RANGED) f.add(figureIndex(name), `${name}_min`, bounds[`${name}_min`], `${name}_max`, bounds[`${name}_max`]);
    f.add(TXNS, 'txns_24h_min', q.txns_24h_min, '', undefined);
    const now = ctx.now();
    const after = q.created_after === undefined ? undefined : timeBound('created_after', q.created_after, now);
    const before = q.created_before === undefined ? undefined : timeBound('created_before', q.created_before, now);
    f.add(CREATED, 'created_after', after, 'created_before', before, true);
    return f;
  }

  /**
   * A pool's search row as bytes, rendered again only when the pool's version moved: most pools of
   * a large universe change rarely. At most ROW_CACHE_MAX rows are kept; past that the cache starts over.
   */
  const cachedRows: (Buffer | undefined)[] = [];
  const cachedSeq: number[] = [];
  let cachedCount = 0;
  function rowBytes(p: number): Buffer {
    const seq = ctx.read.poolVersion(p);
    const hit = cachedRows[p];
    if (hit !== undefined && cachedSeq[p] === seq && (seq & 1) === 0) return hit;
    const version = ctx.read.readPoolRow(p, row);
    if (version < 0) throw new Error(`pool ${p} state did not settle`);
    const st = statics.get(p);
    const bytes = Buffer.from(
      `${st.rowHead}"volume_usd_24h":${num(row[ROW.volumeUsd24h]!)},"volume_usd_7d":${num(row[ROW.volumeUsd7d]!)},"volume_usd_30d":${num(row[ROW.volumeUsd30d]!)}` +
        `,"liquidity_usd":${num(row[ROW.liquidityUsd]!)},"price_usd":${num(row[ROW.priceUsd]!)},"transactions_24h":${num(row[ROW.txns24h]!)}` +
        `,"price_change_percentage_24h":${num(row[ROW.priceChange24h]!)},"price_change_percentage_48h":${num(row[ROW.priceChange48h]!)}` +
        `,"price_change_percentage_6h":${num(row[ROW.priceChange6h]!)},"price_change_percentage_1h":${num(row[ROW.priceChange1h]!)}` +
        `,"price_change_percentage_5m":${num(row[ROW.priceChange5m]!)},${st.rowTail}`,
      'utf8',
    );
    if (hit === undefined && ++cachedCount > ROW_CACHE_MAX) {
      cachedRows.length = 0;
      cachedSeq.length = 0;
      cachedCount = 1;
    }
    cachedRows[p] = bytes;
    cachedSeq[p] = seq;
    return bytes;
  }

  function render(q: PoolSearchQuery, filters: RangeFilters, chainsEcho: string, found: number, values: number[], ids: number[], rankings: string[]): Buffer {
    const rows = found > q.limit ? q.limit : found;
    const w = body.reset().ascii('{"results":[');
    for (let i = 0; i < rows; i++) {
      if (i > 0) w.ascii(',');
      w.bytes(rowBytes(ids[i]!));
    }
    const echoFilters =
      `${chainsEcho}${q.token_address !== undefined ? `,"token_address":${str(q.token_address)}` : ''}` +
      `${q.dex_name !== undefined ? `,"dex_name":${str(q.dex_name)}` : ''}${filters.echo}`;
    return w.text(envelopeEnd(q, found, values, ids, echoFilters, rankings)).take();
  }

  async function search(nets: readonly NetworkEntry[], q: PoolSearchQuery, chainsEcho: string): Promise<Buffer> {
    const { read } = ctx;
    const registry = read.catalog;
    const after = cursorOf(q);
    const filters = filtersOf(q);
    const dexName = q.dex_name?.toLowerCase();
    const tokenAddress = q.token_address === undefined ? undefined : queryAddress(q.token_address);
    const descending = q.sort === 'desc';
    const figure = figureIndex(q.order_by);
    // Per shard: the chains it owns that can hold a match, with their DEX and token ids.
    const perShard = Array.from({ length: read.searchShards }, () => ({ chains: [] as number[], dexes: [] as number[], tokens: [] as number[] }));
    for (const net of nets) {
      let dex = -1;
      if (dexName !== undefined) {
        const d = net.dexes.find((x) => x.id.toLowerCase() === dexName);
        if (d === undefined) continue;
        dex = d.index;
      }
      let token = -1;
      if (tokenAddress !== undefined) {
        token = registry.tokenId(net.index, tokenAddress);
        if (token < 0) continue;
      }
      const s = perShard[read.searchShardOf(net.index)]!;
      s.chains.push(net.index);
      s.dexes.push(dex);
      s.tokens.push(token);
    }
    const take = q.limit + 1;
    const asked = perShard.map((s, shard) => {
      if (s.chains.length === 0) return null;
      const query: RankQuery = {
        figure,
        descending,
        take,
        chains: s.chains,
        dexes: s.dexes,
        tokens: s.tokens,
        filterFigures: filters.which,
        lo: filters.lo,
        hi: filters.hi,
        after: after === null ? null : { value: after.value, id: after.id, ranking: after.rankings[shard] ?? '' },
      };
      return read.rank(shard, query);
    });
    const answers = await Promise.all(asked);
    // Merge the shards' pages: each is in rank order; value, then id ascending.
    const entries: { v: number; id: number }[] = [];
    for (const a of answers) if (a !== null) for (let i = 0; i < a.count; i++) entries.push({ v: a.values[i]!, id: a.ids[i]! });
    entries.sort((x, y) => (x.v !== y.v ? (descending ? y.v - x.v : x.v - y.v) : x.id - y.id));
    const found = Math.min(entries.length, take);
    const values: number[] = [];
    const ids: number[] = [];
    for (let i = 0; i < found; i++) {
      values.push(entries[i]!.v);
      ids.push(entries[i]!.id);
    }
    const rankings = answers.map((a) => (a === null ? '' : a.ranking));
    return render(q, filters, chainsEcho, found, values, ids, rankings);
  }

  return cursorSearch(ctx, parser, globalParser, search);
}
