/**
 * GET /networks/{network}/tokens/{token_address}: a token's price, fdv and activity. Window figures
 * add up every pool holding the token, seen from the token's side (a pool's sells of its token 0 are
 * buys of its token 1); price changes are those of the pool the token's USD price is routed through.
 * The 1m window is the current one-minute candle at the chain's clock.
 */
import { createPoolState, createRingCandles, createTokenPriceState, Win } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { integerJson, num, str, timeOrNull } from '../http/json.js';
import { networkOrNotFound, tokenOrNotFound } from './resolve.js';

const SUMMARY_WINDOWS: readonly (readonly [string, Win | null])[] = [
  ['24h', Win.H24],
  ['6h', Win.H6],
  ['1h', Win.H1],
  ['30m', Win.M30],
  ['15m', Win.M15],
  ['5m', Win.M5],
  ['1m', null],
];
const MINUTE_INTERVAL = 0; // index of 1m in layout INTERVALS

interface Sums {
  volumeUsd: number;
  buyUsd: number;
  txns: number;
  buys: number;
}

export function createTokenDetails(ctx: ServeContext): (network: string, address: string) => Buffer {
  const pool = createPoolState();
  const ring = createRingCandles();
  const price = createTokenPriceState();
  const texts = ctx.read.priceTexts();
  const sums: Sums[] = SUMMARY_WINDOWS.map(() => ({ volumeUsd: 0, buyUsd: 0, txns: 0, buys: 0 }));
  const changes = new Float64Array(SUMMARY_WINDOWS.length);

  return (network, address) => {
    const { read } = ctx;
    const registry = read.catalog;
    const net = networkOrNotFound(registry, network);
    const t = tokenOrNotFound(registry, net, address);
    if (!read.readTokenPrice(t, price)) throw new Error(`token ${t} price did not settle`);
    const minute = Math.floor(read.chainClock(net.index) / 60) * 60;
    for (const s of sums) s.volumeUsd = s.buyUsd = s.txns = s.buys = 0;
    changes.fill(0);
    let liquidityUsd = 0;
    const routePool = price.routePool - 1;
    for (let p = registry.firstPoolOfToken(t); p >= 0; p = registry.nextPoolOfToken(t, p)) {
      const isToken0 = read.poolToken0(p) === t;
      // Price changes are of the route pool only.
      if (!read.readPool(p, pool, p === routePool && !isToken0, p === routePool ? 'all' : 'sums')) throw new Error(`pool ${p} state did not settle`);
      if (!read.readRing(p, MINUTE_INTERVAL, minute - 60, minute, ring)) throw new Error(`pool ${p} candles did not settle`);
      liquidityUsd += pool.liquidityUsd;
      for (let i = 0; i < SUMMARY_WINDOWS.length; i++) {
        const w = SUMMARY_WINDOWS[i]![1];
        let volumeUsd: number;
        let bought: number;
        let txns: number;
        let buys: number;
        if (w !== null) {
          volumeUsd = pool.winVolumeUsd[w]!;
          bought = pool.winBuyVolumeUsd[w]!;
          txns = pool.winTxns[w]!;
          buys = pool.winBuys[w]!;
        } else {
          const k = ring.count - 1;
          const current = k >= 0 && ring.time[k] === minute;
          volumeUsd = current ? ring.volumeUsd[k]! : 0;
          bought = current ? ring.buyVolumeUsd[k]! : 0;
          txns = current ? ring.txns[k]! : 0;
          buys = current ? ring.buys[k]! : 0;
        }
        const s = sums[i]!;
        s.volumeUsd += volumeUsd;
        s.txns += txns;
        // The pool's buys are of its token 0; for token 1 they are sells.
        s.buyUsd += isToken0 ? bought : volumeUsd - bought;
        s.buys += isToken0 ? buys : txns - buys;
        if (p !== routePool) continue;
        if (w !== null) changes[i] = isToken0 ? pool.winPriceChange[w]! : pool.winPriceChange1[w]!;
        else {
          // 1m: latest price against the close of the minute before the current one (layout rule, one bucket).
          const k = ring.count - 1;
          const previous = k >= 0 && ring.time[k] === minute ? k - 1 : k;
          const ref = previous >= 0 ? (isToken0 ? ring.close0[previous]! : ring.close1[previous]!) : k >= 0 ? (isToken0 ? ring.open0[k]! : ring.open1[k]!) : 0;
          const latest = isToken0 ? pool.priceUsd0 : pool.priceUsd1;
          changes[i] = ref > 0 ? (latest / ref - 1) * 100 : 0;
        }
      }
    }
    const usd = price.priceUsd;
    // The price shown: the same digits as the price streams (engine/state/exact-price.ts), as a JSON number.
    const shown = usd > 0 ? texts.text(t) : '0';
    const totalSupply = registry.tokenTotalSupply(t);
    const decimals = registry.tokenDecimals(t);
    const addedAt = registry.tokenAddedAt(t);
    const fdv = (usd * Number(BigInt(totalSupply))) / 10 ** decimals;
    let windows = '';
    SUMMARY_WINDOWS.forEach(([name], i) => {
      const s = sums[i]!;
      windows +=
        `,"${name}":{"volume":${num(usd > 0 ? s.volumeUsd / usd : 0)},"volume_usd":${num(s.volumeUsd)}` +
        `,"buy_usd":${num(s.buyUsd)},"sell_usd":${num(Math.max(0, s.volumeUsd - s.buyUsd))}` +
        `,"buys":${num(s.buys)},"sells":${num(Math.max(0, s.txns - s.buys))},"txns":${num(s.txns)},"last_price_usd_change":${num(changes[i]!)}}`;
    });
    const body =
      `{"id":${str(registry.tokenAddress(t))},"name":${str(registry.tokenName(t))},"symbol":${str(registry.tokenSymbol(t))},"chain":${str(net.id)}` +
      `,"decimals":${decimals},"total_supply":${integerJson(totalSupply)},"description":"","website":"","explorer":"","telegram":"","twitter":""` +
      `,"has_image":false,"added_at":${timeOrNull(addedAt)},"last_updated":${timeOrNull(price.priceTime || addedAt)}` +
      `,"fdv":${num(fdv)},"price_usd":${shown}` +
      `,"summary":{"price_usd":${shown},"fdv":${num(fdv)},"liquidity_usd":${num(liquidityUsd)},"pools":${registry.tokenPoolCount(t)}${windows}}}`;
    return Buffer.from(body, 'utf8');
  };
}
