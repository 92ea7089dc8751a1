/**
 * GET /networks/{network}/pools/search: pools of one network ranked by 24 h volume, served in
 * pages through a keyset cursor. The cursor holds the last row's sort value and pool id, so the
 * next page starts strictly after it: for unchanged data no row repeats and none is skipped.
 */
import { Win } from '../../engine/state/layout.js';
import { createPoolState, readPool } from '../../engine/state/read.js';
import type { GatewayContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import { num, str } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import type { PoolStatics } from './pool-static.js';
import { networkOrNotFound } from './resolve.js';
import { SEARCH_LIMIT_MAX, globalPoolSearchQuery, poolSearchQuery, type PoolSearchQuery } from './schemas.js';
import type { NetworkEntry } from '../../engine/ingest/registry.js';
import { TopK } from './top-k.js';

const CURSOR_VERSION = 'v1';
const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,400}$/;
const CURSOR_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/;

interface Cursor {
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

export interface PoolSearch {
  /** GET /networks/{network}/pools/search */
  network(network: string, query: string): Buffer;
  /** GET /pools/search, over the networks named in `chains` (all by default) */
  global(query: string): Buffer;
}

export function createPoolSearch(ctx: GatewayContext, statics: PoolStatics): PoolSearch {
  const parser = new QueryParser(poolSearchQuery);
  const globalParser = new QueryParser(globalPoolSearchQuery);
  const top = new TopK(SEARCH_LIMIT_MAX + 1);
  const values = new Float64Array(SEARCH_LIMIT_MAX + 1);
  const ids = new Int32Array(SEARCH_LIMIT_MAX + 1);
  const state = createPoolState();

  /** `chains`: the network ids asked for, each known, in the order given (duplicates dropped). */
  function networksOf(chains: string | undefined): NetworkEntry[] {
    const all = ctx.registry.networks;
    if (chains === undefined) return all;
    const out: NetworkEntry[] = [];
    for (const id of chains.split(',')) {
      const net = ctx.registry.networkOf(id);
      if (net === undefined) throw invalidParameter('chains', `names an unknown network "${id.slice(0, 64)}"`, all.map((n) => n.id));
      if (!out.includes(net)) out.push(net);
    }
    return out;
  }

  function search(nets: readonly NetworkEntry[], q: PoolSearchQuery, chainsEcho: string): Buffer {
    let after: Cursor | null = null;
    if (q.cursor !== undefined) {
      after = decodeCursor(q.cursor);
      if (after === null) throw invalidParameter('cursor', 'is malformed; pass next_cursor of the previous page');
      if (after.orderBy !== q.order_by || after.sort !== q.sort)
        throw invalidParameter('cursor', `was issued for order_by=${after.orderBy}&sort=${after.sort}`);
    }
    const descending = q.sort === 'desc';
    const sortValues = ctx.views.winVolumeUsd[Win.H24]!;
    top.reset(q.limit + 1, descending);
    for (const net of nets) {
      const pools = net.poolIds;
      for (let i = 0; i < pools.length; i++) {
        const p = pools[i]!;
        let v = sortValues[p]!;
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
      if (!readPool(ctx.views, p, state)) throw new Error(`pool ${p} state did not settle`);
      const st = statics.get(p);
      if (i > 0) body += ',';
      body +=
        `${st.rowHead}"volume_usd_24h":${num(state.winVolumeUsd[Win.H24]!)},"volume_usd_7d":${num(state.winVolumeUsd[Win.D7]!)}` +
        `,"volume_usd_30d":${num(state.winVolumeUsd[Win.D30]!)},"liquidity_usd":${num(state.liquidityUsd)}` +
        `,"price_usd":${num(state.priceUsd0)},"transactions_24h":${num(state.winTxns[Win.H24]!)}` +
        `,"price_change_percentage_24h":${num(state.winPriceChange[Win.H24]!)},${st.rowTail}`;
    }
    const hasNext = found > q.limit;
    const next = hasNext ? str(encodeCursor({ orderBy: q.order_by, sort: q.sort, value: values[rows - 1]!, id: ids[rows - 1]! })) : 'null';
    const echo = `{"limit":${q.limit},"order_by":${str(q.order_by)},"sort":${str(q.sort)}${chainsEcho}${q.cursor !== undefined ? `,"cursor":${str(q.cursor)}` : ''}}`;
    body += `],"has_next_page":${hasNext},"next_cursor":${next},"query":${echo}}`;
    return Buffer.from(body, 'utf8');
  }

  return {
    network(network, query) {
      const net = networkOrNotFound(ctx.registry, network);
      return search([net], parser.parse(query), '');
    },
    global(query) {
      const q = globalParser.parse(query);
      const nets = networksOf(q.chains);
      return search(nets, q, q.chains === undefined ? '' : `,"chains":[${nets.map((n) => str(n.id)).join(',')}]`);
    },
  };
}
