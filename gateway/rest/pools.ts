/**
 * GET /networks/{network}/pools/{pool_address}: one pool's prices, reserves, liquidity and window
 * figures. A rendered body is reused while the pool's seqlock version is unchanged: every figure
 * in it comes from that version (the windows are as of the pool's last update or sweep).
 *
 * `inversed=true` swaps the roles of the tokens everywhere: token order, the price ratio, the USD
 * price and its window changes (token 1's, derived from the rings), buys with sells.
 */
import { createPoolState, type PoolState, Win } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import type { ResponseCache } from '../http/cache.js';
import { num, timeOrNull, u128Text } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import type { PoolStatic, PoolStatics } from './pool-static.js';
import { networkOrNotFound, poolOrNotFound } from './resolve.js';
import { poolDetailsQuery } from './schemas.js';

/** Window objects of the details body, in output order. */
const DETAIL_WINDOWS: readonly (readonly [string, Win])[] = [
  ['24h', Win.H24],
  ['6h', Win.H6],
  ['1h', Win.H1],
  ['30m', Win.M30],
  ['15m', Win.M15],
  ['5m', Win.M5],
];

function reserveEntry(tokenId: string, s: PoolState, side: 0 | 1): string {
  const normalized = side === 0 ? s.reserve0 : s.reserve1;
  const priceUsd = side === 0 ? s.priceUsd0 : s.priceUsd1;
  return `{"token_id":${tokenId},"reserve":"${u128Text(s.reserveRaw, side * 4)}","reserve_normalized":${num(normalized)},"reserve_usd":${num(normalized * priceUsd)}}`;
}

export function renderPoolDetails(st: PoolStatic, s: PoolState, inversed: boolean): string {
  const first = inversed ? 1 : 0;
  const second = inversed ? 0 : 1;
  const lastPrice = inversed ? (s.ratio > 0 ? 1 / s.ratio : 0) : s.ratio;
  let body =
    `${st.detailsHead[first]}"last_price":${num(lastPrice)},"last_price_usd":${num(inversed ? s.priceUsd1 : s.priceUsd0)}` +
    `,"volume_usd":${num(s.winVolumeUsd[Win.H24]!)},"price_time":${timeOrNull(s.lastEventTime)}` +
    `,"token_reserves":[${reserveEntry(st.tokenIds[first]!, s, first)},${reserveEntry(st.tokenIds[second]!, s, second)}]` +
    `,"liquidity_usd":${num(s.liquidityUsd)},"transactions":${num(s.txnsTotal)}`;
  const changes = inversed ? s.winPriceChange1 : s.winPriceChange;
  for (const [name, w] of DETAIL_WINDOWS) {
    const volume = s.winVolumeUsd[w]!;
    const bought = s.winBuyVolumeUsd[w]!;
    const sold = volume > bought ? volume - bought : 0;
    const txns = s.winTxns[w]!;
    const buys = s.winBuys[w]!;
    const sells = txns > buys ? txns - buys : 0;
    body +=
      `,"${name}":{"last_price_usd_change":${num(changes[w]!)},"volume_usd":${num(volume)}` +
      `,"buy_usd":${num(inversed ? sold : bought)},"sell_usd":${num(inversed ? bought : sold)}` +
      `,"buys":${num(inversed ? sells : buys)},"sells":${num(inversed ? buys : sells)},"txns":${num(txns)}}`;
  }
  return `${body}}`;
}

export function createPoolDetails(ctx: ServeContext, cache: ResponseCache, statics: PoolStatics): (network: string, address: string, query: string) => Buffer {
  const parser = new QueryParser(poolDetailsQuery);
  const state = createPoolState();
  return (network, address, query) => {
    const p = poolOrNotFound(ctx.read.catalog, networkOrNotFound(ctx.read.catalog, network), address);
    const { inversed } = parser.parse(query);
    const key = inversed ? `d:${p}:i` : `d:${p}`;
    // The details carry USD figures that follow the pool's tokens' routes: their versions count too.
    const version = ctx.read.poolFiguresVersion(p);
    const cached = version < 0 ? undefined : cache.get(key, version);
    if (cached !== undefined) return cached.body;
    if (!ctx.read.readPool(p, state, inversed)) throw new Error(`pool ${p} state did not settle`);
    const body = Buffer.from(renderPoolDetails(statics.get(p), state, inversed), 'utf8');
    if (version >= 0) cache.set(key, version, body);
    return body;
  };
}
