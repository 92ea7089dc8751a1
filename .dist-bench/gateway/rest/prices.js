/**
 * GET /networks/{network}/multi/prices?tokens=a,b,...: the USD price of 1 to 10 tokens, in the order
 * asked, each once. Unknown tokens and tokens without a price are left out, so the answer may be [].
 * Each price has the digits the price streams show (engine/state/exact-price.ts), as a JSON number.
 */
import { PriceTexts } from '../../engine/state/exact-price.js';
import { createTokenPriceState, readTokenPrice } from '../../engine/state/read.js';
import { str } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { networkOrNotFound } from './resolve.js';
import { multiPricesQuery } from './schemas.js';
export function createMultiPrices(ctx) {
    const parser = new QueryParser(multiPricesQuery);
    const price = createTokenPriceState();
    const texts = new PriceTexts(ctx.views);
    return (network, query) => {
        const net = networkOrNotFound(ctx.registry, network);
        const { tokens } = parser.parse(query);
        const seen = new Set();
        const rows = [];
        for (const address of tokens) {
            const token = ctx.registry.tokenOf(net.index, address);
            if (token === undefined || seen.has(token.id))
                continue;
            seen.add(token.id);
            if (!readTokenPrice(ctx.views, token.id, price))
                throw new Error(`token ${token.id} price did not settle`);
            if (!(price.priceUsd > 0))
                continue;
            rows.push(`{"id":${str(token.address)},"chain":${str(net.id)},"price_usd":${texts.text(token.id)}}`);
        }
        return Buffer.from(`[${rows.join(',')}]`, 'utf8');
    };
}
//# sourceMappingURL=prices.js.map