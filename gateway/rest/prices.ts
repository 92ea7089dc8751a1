/**
 * GET /networks/{network}/multi/prices?tokens=a,b,...: the USD price of 1 to 10 tokens, in the order
 * asked, each once. Unknown tokens and tokens without a price are left out, so the answer may be [].
 * Each price has the digits the price streams show (engine/state/exact-price.ts), as a JSON number.
 */
import { createTokenPriceState } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { str } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { networkOrNotFound } from './resolve.js';
import { multiPricesQuery } from './schemas.js';

export function createMultiPrices(ctx: ServeContext): (network: string, query: string) => Buffer {
  const parser = new QueryParser(multiPricesQuery);
  const price = createTokenPriceState();
  const texts = ctx.read.priceTexts();
  return (network, query) => {
    const net = networkOrNotFound(ctx.read.catalog, network);
    const { tokens } = parser.parse(query);
    const seen = new Set<number>();
    const rows: string[] = [];
    for (const address of tokens) {
      const t = ctx.read.catalog.tokenId(net.index, address);
      if (t < 0 || seen.has(t)) continue;
      seen.add(t);
      if (!ctx.read.readTokenPrice(t, price)) throw new Error(`token ${t} price did not settle`);
      if (!(price.priceUsd > 0)) continue;
      rows.push(`{"id":${str(ctx.read.catalog.tokenAddress(t))},"chain":${str(net.id)},"price_usd":${texts.text(t)}}`);
    }
    return Buffer.from(`[${rows.join(',')}]`, 'utf8');
  };
}
