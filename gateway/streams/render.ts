/**
 * Payloads of the stream events, rendered once per asset event and shared by every subscriber.
 *
 * Prices are decimal strings by the rule of engine/state/exact-price.ts (the one REST shows too).
 * Reserves and deltas are exact decimal strings of the raw integers with the token's decimals applied.
 */
import { Decimal } from 'decimal.js';
import type { Catalog, FeedSwap, SecondCandle } from '../../engine/read/index.js';
import { integerJson, num, str } from '../http/json.js';
import { rfc3339 } from '../http/time.js';

const Exact = Decimal.clone({ precision: 60, toExpNeg: -100, toExpPos: 100 });
const POW10: readonly Decimal[] = Array.from({ length: 78 }, (_, i) => new Exact(10).pow(i));

/** A raw integer with `decimals` applied, exact, plain notation. */
export function scaled(raw: bigint, decimals: number): string {
  return new Exact(raw.toString()).div(POW10[decimals]!).toFixed();
}

/** token_price data, POST form (Unix seconds and `token_price`) and GET form (ISO 8601). */
export function tokenPricePayloads(address: string, chain: string, price: string, now: number, priceTime: number): { post: string; get: string } {
  const head = `{"address":${str(address)},"chain":${str(chain)},"price":"${price}"`;
  const ts = Math.floor(now);
  const tp = Math.floor(priceTime);
  return {
    post: `${head},"timestamp":${ts},"timestamp_price":${tp},"token_price":${tp}}`,
    get: `${head},"timestamp":"${rfc3339(ts)}","timestamp_price":"${rfc3339(tp)}"}`,
  };
}

/** One side of a pool's reserve change. */
export interface ReserveSide {
  address: string;
  reserve: string;
  delta: string;
  priceUsd: number;
  reserveUsd: number;
  deltaUsd: number;
}

export function reserveSide(address: string, raw: bigint, base: bigint, decimals: number, priceUsd: number): ReserveSide {
  const reserve = scaled(raw, decimals);
  const delta = scaled(raw - base, decimals);
  return { address, reserve, delta, priceUsd, reserveUsd: Number(reserve) * priceUsd, deltaUsd: Number(delta) * priceUsd };
}

export function poolReservesPayload(chain: string, pool: string, block: number, previousBlock: number, sides: readonly ReserveSide[], now: number, blockTime: number): string {
  let tokens = '';
  let total = 0;
  let totalDelta = 0;
  for (const s of sides) {
    if (tokens !== '') tokens += ',';
    tokens += `{"token_id":${str(s.address)},"reserve":"${s.reserve}","delta":"${s.delta}","price_usd":${num(s.priceUsd)},"reserve_usd":${num(s.reserveUsd)},"delta_usd":${num(s.deltaUsd)}}`;
    total += s.reserveUsd;
    totalDelta += s.deltaUsd;
  }
  const prev = previousBlock > 0 ? `,"previous_block":"${previousBlock}"` : '';
  return (
    `{"chain":${str(chain)},"pool_id":${str(pool)},"block":"${block}"${prev},"tokens":[${tokens}]` +
    `,"total_reserve_usd":${num(total)},"total_delta_usd":${num(totalDelta)},"timestamp":${Math.floor(now)},"block_timestamp":${Math.floor(blockTime)}}`
  );
}

export function tokenReservesPayload(chain: string, pool: string, block: number, side: ReserveSide, now: number, blockTime: number): string {
  return (
    `{"chain":${str(chain)},"token_id":${str(side.address)},"pool_id":${str(pool)},"reserve":"${side.reserve}","delta":"${side.delta}","block":"${block}"` +
    `,"price_usd":${num(side.priceUsd)},"reserve_usd":${num(side.reserveUsd)},"delta_usd":${num(side.deltaUsd)},"updated_at":${Math.floor(blockTime)},"timestamp":${Math.floor(now)}}`
  );
}

/**
 * pool / token swap data. Amounts are the trader's view: negative when tokens left the trader's
 * wallet (went into the pool), positive when they came in; the feed holds the pool's view.
 */
export function swapPayload(registry: Catalog, s: FeedSwap): string {
  const p = s.pool;
  const [t0, t1] = [registry.poolToken0(p), registry.poolToken1(p)];
  const chain = registry.networks[registry.poolChain(p)]!.id;
  const a0 = negate(s.amount0);
  const a1 = negate(s.amount1);
  const usd0 = (Number(a0) / 10 ** registry.tokenDecimals(t0)) * s.price0Usd;
  const usd1 = (Number(a1) / 10 ** registry.tokenDecimals(t1)) * s.price1Usd;
  return (
    `{"chain":${str(chain)},"pool_id":${str(registry.poolAddress(p))},"block_number":"${s.block}","block_timestamp":"${rfc3339(s.time)}"` +
    `,"tx_hash":${str(s.txHash)},"tx_index":${s.txIndex},"log_index":${s.logIndex},"sender":${str(s.sender)},"recipient":${str(s.recipient)}` +
    `,"token_0":${str(registry.tokenAddress(t0))},"token_1":${str(registry.tokenAddress(t1))},"amount_0":${integerJson(a0)},"amount_1":${integerJson(a1)}` +
    `,"amount_0_usd":${num(usd0)},"amount_1_usd":${num(usd1)},"price_0_usd":${num(s.price0Usd)},"price_1_usd":${num(s.price1Usd)},"volume_usd":${num(s.volumeUsd)}}`
  );
}

function negate(decimalText: string): string {
  if (decimalText === '0') return '0';
  return decimalText.startsWith('-') ? decimalText.slice(1) : `-${decimalText}`;
}


export function ohlcvPayload(chain: string, token: string, c: SecondCandle): string {
  return (
    `{"chain":${str(chain)},"token_id":${str(token)},"interval":"1s","timestamp":"${rfc3339(c.time)}"` +
    `,"open":${num(c.open)},"high":${num(c.high)},"low":${num(c.low)},"close":${num(c.close)},"avg":${num(c.txns > 0 ? c.priceSum / c.txns : c.close)}` +
    `,"volume_usd":${num(c.volumeUsd)},"txns":${c.txns}}`
  );
}
