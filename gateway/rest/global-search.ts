/**
 * GET /search?query=: tokens, pools and DEXes whose name, symbol or address matches the text,
 * case-insensitively. Rank: exact symbol, name or address first, then prefix, then substring; ties
 * by 24 h USD volume, then id. Each list keeps the best GLOBAL_SEARCH_MAX (bounded selection).
 * A pool matches through its address or either of its tokens.
 */
import { createPoolState, SearchText, TextMatch, Win } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import { integerJson, num, str, timeOrNull } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import type { PoolStatics } from './pool-static.js';
import { globalSearchQuery } from './schemas-search.js';
import { TokenFigure, TokenFigures } from './token-search.js';

/** Entries per list in a /search answer. */
export const GLOBAL_SEARCH_MAX = 10;

/** How well `text` (lower case) matches `q` (lower case): exact, prefix, substring (the catalog matches names, symbols and addresses alike). */
function matchText(text: string, q: string): TextMatch {
  if (text === q) return TextMatch.Exact;
  const at = text.indexOf(q);
  return at === 0 ? TextMatch.Prefix : at > 0 ? TextMatch.Substring : TextMatch.None;
}

/** The best `capacity` (score desc, volume desc, id asc) of what is offered; insertion into a short sorted list. */
class Best {
  readonly score: Float64Array;
  readonly volume: Float64Array;
  readonly id: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.score = new Float64Array(capacity);
    this.volume = new Float64Array(capacity);
    this.id = new Int32Array(capacity);
  }

  private before(s: number, v: number, i: number, k: number): boolean {
    const ks = this.score[k]!;
    if (s !== ks) return s > ks;
    const kv = this.volume[k]!;
    if (v !== kv) return v > kv;
    return i < this.id[k]!;
  }

  offer(s: number, v: number, i: number): void {
    const cap = this.id.length;
    let at = this.size;
    if (at === cap) {
      if (!this.before(s, v, i, cap - 1)) return;
      at = cap - 1;
    } else this.size++;
    while (at > 0 && this.before(s, v, i, at - 1)) {
      this.score[at] = this.score[at - 1]!;
      this.volume[at] = this.volume[at - 1]!;
      this.id[at] = this.id[at - 1]!;
      at--;
    }
    this.score[at] = s;
    this.volume[at] = v;
    this.id[at] = i;
  }
}

export function createGlobalSearch(ctx: ServeContext, statics: PoolStatics): (query: string) => Buffer {
  const parser = new QueryParser(globalSearchQuery);
  const figures = new TokenFigures(ctx);
  const tokenBest = new Best(GLOBAL_SEARCH_MAX);
  const poolBest = new Best(GLOBAL_SEARCH_MAX);
  const dexBest = new Best(GLOBAL_SEARCH_MAX);
  const state = createPoolState();
  /** Match score of each token in this request (reset per request, grown with the catalog). */
  let tokenScore = new Uint8Array(0);

  return (query) => {
    const { read } = ctx;
    const registry = read.catalog;
    const raw = parser.parse(query).query.trim();
    if (raw === '') throw invalidParameter('query', 'is required: the text to search for');
    const q = raw.toLowerCase();
    tokenBest.size = poolBest.size = dexBest.size = 0;

    const text = new SearchText(q);
    const bound = registry.tokenBound;
    if (tokenScore.length < bound) tokenScore = new Uint8Array(Math.max(bound, 2 * tokenScore.length));
    else tokenScore.fill(0);
    for (let t = 0; t < bound; t++) {
      if (!registry.tokenLive(t)) continue;
      const s = registry.tokenMatch(t, text);
      tokenScore[t] = s;
      if (s === TextMatch.None) continue;
      tokenBest.offer(s, figures.compute(t, false)[TokenFigure.VolumeUsd24h]!, t);
    }

    for (const net of registry.networks) {
      for (let p = registry.firstPoolOfChain(net.index); p >= 0; p = registry.nextPoolOfChain(p)) {
        const s = Math.max(registry.poolAddressMatch(p, text), tokenScore[read.poolToken0(p)]!, tokenScore[read.poolToken1(p)]!);
        if (s === 0) continue;
        const v = read.volumeUsd(p, Win.H24);
        poolBest.offer(s, v - v === 0 ? v : 0, p);
      }
    }

    // DEXes: match first, then one pass over the pools of the chains holding a match.
    const dexes = registry.dexes;
    const dexScore = new Uint8Array(dexes.length);
    const chains = new Set<number>();
    for (const d of dexes) {
      const s = Math.max(matchText(d.id.toLowerCase(), q), matchText(d.name.toLowerCase(), q));
      dexScore[d.index] = s;
      if (s > 0) chains.add(d.chain);
    }
    const dexVolume = new Float64Array(dexes.length);
    const dexTxns = new Float64Array(dexes.length);
    const dexPools = new Float64Array(dexes.length);
    const dexCreated = new Float64Array(dexes.length).fill(Infinity);
    for (const c of chains) {
      for (let p = registry.firstPoolOfChain(c); p >= 0; p = registry.nextPoolOfChain(p)) {
        const d = read.poolDex(p);
        if (dexScore[d] === 0) continue;
        const v = read.volumeUsd(p, Win.H24);
        const n = read.txns(p, Win.H24);
        dexVolume[d] = dexVolume[d]! + (v - v === 0 ? v : 0);
        dexTxns[d] = dexTxns[d]! + (n - n === 0 ? n : 0);
        dexPools[d] = dexPools[d]! + 1;
        dexCreated[d] = Math.min(dexCreated[d]!, read.poolCreatedAt(p));
      }
    }
    for (const d of dexes) if (dexScore[d.index]! > 0) dexBest.offer(dexScore[d.index]!, dexVolume[d.index]!, d.index);

    let body = '{"tokens":[';
    for (let i = 0; i < tokenBest.size; i++) {
      const t = tokenBest.id[i]!;
      const f = figures.compute(t, true);
      if (i > 0) body += ',';
      body +=
        `{"id":${str(registry.tokenAddress(t))},"name":${str(registry.tokenName(t))},"symbol":${str(registry.tokenSymbol(t))},"chain":${str(registry.networks[registry.tokenChain(t)]!.id)}` +
        `,"decimals":${registry.tokenDecimals(t)},"total_supply":${integerJson(registry.tokenTotalSupply(t))},"price_usd":${num(f[TokenFigure.PriceUsd]!)}` +
        `,"fdv":${num(f[TokenFigure.FdvUsd]!)},"liquidity_usd":${num(f[TokenFigure.LiquidityUsd]!)}` +
        `,"volume_usd":${num(f[TokenFigure.VolumeUsd24h]!)},"price_usd_change":${num(f[TokenFigure.PriceChange24h]!)}}`;
    }
    body += '],"pools":[';
    for (let i = 0; i < poolBest.size; i++) {
      const p = poolBest.id[i]!;
      if (!read.readPool(p, state, false, 'row')) throw new Error(`pool ${p} state did not settle`);
      const st = statics.get(p);
      if (i > 0) body += ',';
      body +=
        `${st.rowHead}"volume_usd":${num(state.winVolumeUsd[Win.H24]!)},"transactions":${num(state.winTxns[Win.H24]!)}` +
        `,"price_usd":${num(state.priceUsd0)},"last_price_change_usd_5m":${num(state.winPriceChange[Win.M5]!)}` +
        `,"last_price_change_usd_1h":${num(state.winPriceChange[Win.H1]!)},"last_price_change_usd_24h":${num(state.winPriceChange[Win.H24]!)}` +
        `,${st.fullRowTail}`;
    }
    body += '],"dexes":[';
    for (let i = 0; i < dexBest.size; i++) {
      const d = dexes[dexBest.id[i]!]!;
      const created = dexCreated[d.index]!;
      if (i > 0) body += ',';
      body +=
        `{"id":${str(d.id)},"dex_id":${str(d.id)},"dex_name":${str(d.name)},"chain":${str(registry.networks[d.chain]!.id)}` +
        `,"protocol":${str(d.protocol)},"volume_usd_24h":${num(dexVolume[d.index]!)},"txns_24h":${num(dexTxns[d.index]!)}` +
        `,"pools_count":${dexPools[d.index]!},"created_at":${timeOrNull(created)}}`;
    }
    body += ']}';
    return Buffer.from(body, 'utf8');
  };
}
