/**
 * How a token's USD price is routed, over the real REST host of a real engine: a fresh route wins
 * over a stale one (no swap for a day, or under 1,000 USD on its weakest hop), then the route with
 * the most USD liquidity on its weakest hop; a second stablecoin is priced by its market unless it
 * is pegged (configured as a reference). Expected prices are computed here from the reserves fed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenInfo } from '../engine/events/model.js';
import { plansWith } from './support/access.js';
import { E18, E6, PEPE, POOL_P, START, startStreamFixture, USDC, WETH, wethTrade, type StreamFixture } from './support/streams.js';

const DAY = 86_400;
const FOO: TokenInfo = { address: '0x00000000000000000000000000000000000f0001', name: 'Foo', symbol: 'FOO', decimals: 18, totalSupply: 10n ** 27n, role: 3 };
/** A second stablecoin, priced by its market. */
const DAI: TokenInfo = { address: '0x6B175474E89094C44Da98b954EedeAC495271d0F', name: 'Dai Stablecoin', symbol: 'DAI', decimals: 18, totalSupply: 10n ** 27n, role: 1 };
/** A stablecoin configured as pegged: a reference, 1 USD by definition. */
const USDT: TokenInfo = { address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', name: 'Tether USD', symbol: 'USDT', decimals: 6, totalSupply: 10n ** 15n, role: 0 };

/** PEPE/USDC */
const POOL_U = '0x00000000000000000000000000000000000a0001';
/** FOO/PEPE */
const POOL_FP = '0x00000000000000000000000000000000000a0002';
/** FOO/WETH */
const POOL_FW = '0x00000000000000000000000000000000000a0003';
/** DAI/USDC */
const POOL_D = '0x00000000000000000000000000000000000a0004';
/** USDT/USDC */
const POOL_T = '0x00000000000000000000000000000000000a0005';

let fx: StreamFixture;

beforeAll(async () => {
  fx = await startStreamFixture(plansWith({ dev: { requestsPerMinute: 10_000 } }));
  // WETH at 2000 USD: 1000 WETH against 2,000,000 USDC (4 M USD on the hop).
  await fx.trade([wethTrade(START, 2000)]);
});

afterAll(async () => {
  await fx?.close();
});

/** Token `address`'s price_usd from the paid REST host (whose answers are never older than the state). */
async function priceUsd(token: TokenInfo): Promise<number> {
  const r = await fetch(`${fx.url('paidRest')}/networks/ethereum/tokens/${token.address}`, { headers: { authorization: fx.key('dev') } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { price_usd: number }).price_usd;
}

/** A swap leaving reserves r0, r1 (raw) in `pool` at time t. */
function at(pool: string, t: number, r0: bigint, r1: bigint) {
  return { pool, t, r0, r1, a0: -E18, a1: 1n };
}

describe('routing by freshness and depth', () => {
  it('prices through a fresh pool before a stale shallow stablecoin pool, then through the deeper weakest hop', async () => {
    let t = START;
    fx.now = t;
    await fx.createPool(POOL_U, PEPE, USDC);
    // PEPE/USDC: 150,500 PEPE against 150.5 USDC: 0.001 USD, 301 USD on the hop. Its only route.
    await fx.trade([at(POOL_U, t, 150_500n * E18, 150_500_000n)]);
    expect(await priceUsd(PEPE)).toBe(0.001);

    // Three days later PEPE/WETH trades: 502,500 PEPE against 0.3015 WETH: 6e-7 WETH, 0.0012 USD,
    // 1,206 USD on the hop (WETH's own route holds 4 M). PEPE/USDC has not traded since: stale, and
    // under 1,000 USD anyway. (A rule preferring any stablecoin pool would keep 0.001.)
    t += 3 * DAY;
    fx.now = t;
    await fx.trade([at(POOL_P, t, 502_500n * E18, 301_500_000_000_000_000n)]);
    expect(await priceUsd(PEPE)).toBe(0.0012);

    // PEPE/USDC trades again, fresh now, but with 301 USD on its hop it does not set the price.
    t += 60;
    fx.now = t;
    await fx.trade([at(POOL_U, t, 150_500n * E18, 150_500_000n)]);
    expect(await priceUsd(PEPE)).toBe(0.0012);

    // Deepened to 10,000 USDC against 8,000,000 PEPE (0.00125 USD, 20,000 USD on the hop): more than
    // the 1,206 of PEPE/WETH's weakest hop, so it takes over.
    t += 60;
    fx.now = t;
    await fx.trade([at(POOL_U, t, 8_000_000n * E18, 10_000n * E6)]);
    expect(await priceUsd(PEPE)).toBe(0.00125);

    // FOO/PEPE holds 1,000,000 USD on its own hop, but its route goes on through PEPE's, whose
    // weakest hop holds 20,000: FOO/PEPE weighs 20,000. 1,000,000 FOO against 400,000,000 PEPE: 0.5 USD.
    t += 60;
    fx.now = t;
    await fx.createPool(POOL_FP, FOO, PEPE);
    await fx.trade([at(POOL_FP, t, 1_000_000n * E18, 400_000_000n * E18)]);
    expect(await priceUsd(FOO)).toBe(0.5);
    // FOO/WETH: 50,000 FOO against 13 WETH (26,000 USD a side, 52,000 on the hop, WETH's route 4 M):
    // the weakest hop weighs 52,000 against 20,000, so FOO is priced here: 13 x 2000 / 50,000.
    t += 60;
    fx.now = t;
    await fx.createPool(POOL_FW, FOO, WETH);
    await fx.trade([at(POOL_FW, t, 50_000n * E18, 13n * E18)]);
    expect(await priceUsd(FOO)).toBe(0.52);

    // A route two hops long follows the market: WETH to 2500 reprices FOO (through FOO/WETH) at once.
    t += 60;
    fx.now = t;
    await fx.trade([wethTrade(t, 2500)]);
    expect(await priceUsd(FOO)).toBe(0.65);
    // PEPE is routed through PEPE/USDC: WETH does not move it.
    expect(await priceUsd(PEPE)).toBe(0.00125);
  });
});

describe('stablecoins', () => {
  it('prices a second stablecoin by its market and a pegged one at 1 USD', async () => {
    const t = fx.now + 60;
    fx.now = t;
    await fx.createPool(POOL_D, DAI, USDC);
    await fx.createPool(POOL_T, USDT, USDC);
    // 1,000,000 DAI against 1,018,100 USDC: DAI at 1.0181. 1,000,000 USDT against 998,000 USDC.
    await fx.trade([at(POOL_D, t, 1_000_000n * E18, 1_018_100n * E6), at(POOL_T, t, 1_000_000n * E6, 998_000n * E6)]);
    expect(await priceUsd(DAI)).toBe(1.0181);
    expect(await priceUsd(USDT)).toBe(1);
    expect(await priceUsd(USDC)).toBe(1);
  });
});
