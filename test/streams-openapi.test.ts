/**
 * /openapi.json documents the six stream operations (parameters, bodies, event frames), and what the
 * stream hosts really send matches it: payloads read off real streams are validated against the
 * published schemas.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plansWith } from './support/access.js';
import { openRaw, POOL_A, START, startStreamFixture, WETH, wethTrade, type Frame, type StreamFixture } from './support/streams.js';

let fx: StreamFixture;
let doc: any;
let t = START;

beforeAll(async () => {
  fx = await startStreamFixture(plansWith({ dev: { requestsPerMinute: 1_000 } }));
  await fx.trade([wethTrade(t, 2000)]);
  doc = await (await fetch(`${fx.url('freeRest')}/openapi.json`)).json();
});

afterAll(async () => {
  await fx?.close();
});

function validator(payload: string): (data: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const check = ajv.compile(doc.components.schemas[`StreamEvent_${payload}`]);
  return (data) => (check(data) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
}

/** The payload schema the document names for `event` on an operation. */
function payloadOf(op: any, event: string): string {
  const frame = op.responses['200'].content['text/event-stream'].schema.oneOf.find((f: any) => f.properties.event.const === event);
  return (frame.properties.data.$ref as string).replace('#/components/schemas/StreamEvent_', '');
}

describe('the stream operations in /openapi.json', () => {
  it('lists the six operations with their parameters, bodies, refusals and event frames', () => {
    const ops = Object.entries(doc.paths as Record<string, any>).flatMap(([path, item]) =>
      ['get', 'post'].filter((m) => item[m] !== undefined && path.startsWith('/sse/')).map((m) => `${m.toUpperCase()} ${path} ${item[m].operationId}`),
    );
    expect(ops.sort()).toEqual(
      [
        'GET /sse/ohlcv streamOhlcv',
        'GET /sse/prices streamPrice',
        'GET /sse/reserves streamReserves',
        'GET /sse/transactions streamTransactions',
        'POST /sse/prices streamPrices',
        'POST /sse/reserves streamReservesBatch',
      ].sort(),
    );
    const reserves = doc.paths['/sse/reserves'];
    expect(reserves.servers[0].variables.port.enum).toEqual(['8082', '8083']);
    const param = (op: any, name: string) => op.parameters.find((p: any) => p.name === name);
    expect(param(reserves.get, 'method').schema.enum).toEqual(['pool_reserves', 'token_reserves']);
    expect(param(reserves.get, 'method').required).toBe(true);
    expect(param(reserves.get, 'limit').required).toBe(false);
    expect(param(reserves.get, 'request_id').required).toBe(false);
    expect(param(reserves.get, 'Last-Event-ID').in).toBe('header');
    expect(param(doc.paths['/sse/ohlcv'].get, 'interval').schema.enum).toEqual(['1s']);
    const body = doc.paths['/sse/prices'].post.requestBody.content['application/json'].schema;
    expect(body).toMatchObject({ type: 'array', minItems: 1, maxItems: 25 });
    expect(body.items.required.sort()).toEqual(['address', 'chain', 'method']);
    expect(body.items.properties.request_id).toMatchObject({ minimum: 0, maximum: 4_294_967_295 });
    const tx = doc.paths['/sse/transactions'].get;
    expect(Object.keys(tx.responses).sort()).toEqual(['200', '400', '401', '402', '403', '429']);
    expect(payloadOf(tx, 'pool')).toBe('swap');
    expect(payloadOf(tx, 'token')).toBe('swap');
    const ping = tx.responses['200'].content['text/event-stream'].schema.oneOf.find((f: any) => f.properties.event.const === 'ping');
    expect(ping.required).toEqual(['event', 'data']);
    expect(payloadOf(doc.paths['/sse/prices'].post, 'token_price')).toBe('token_price_post');
    expect(payloadOf(doc.paths['/sse/prices'].get, 'token_price')).toBe('token_price_get');
  });

  it('describes the payloads the stream hosts really send', async () => {
    const key = fx.key('dev');
    const paid = fx.url('paidStream');
    const streams = {
      priceGet: await openRaw(`${paid}/sse/prices?chain=ethereum&address=${WETH.address}`, { key }),
      pricePost: await openRaw(`${paid}/sse/prices`, { key, method: 'POST', body: JSON.stringify([{ chain: 'ethereum', address: WETH.address, method: 'token_price' }]) }),
      pool: await openRaw(`${paid}/sse/reserves?chain=ethereum&address=${POOL_A}&method=pool_reserves`, { key }),
      token: await openRaw(`${paid}/sse/reserves?chain=ethereum&address=${WETH.address}&method=token_reserves`, { key }),
      swaps: await openRaw(`${paid}/sse/transactions?chain=ethereum&address=${WETH.address}&method=token`, { key }),
      candles: await openRaw(`${paid}/sse/ohlcv?chain=ethereum&token_id=${WETH.address}`, { key }),
    };
    t += 10;
    fx.now = t;
    await fx.trade([wethTrade(t, 2100)]);
    await fx.trade([wethTrade(t + 1, 2101)]);
    const checks: [Frame, any, string][] = [];
    const take = async (s: (typeof streams)[keyof typeof streams], op: any) => {
      const [f] = await s.waitFrames(1);
      checks.push([f!, op, payloadOf(op, f!.event)]);
    };
    await take(streams.priceGet, doc.paths['/sse/prices'].get);
    await take(streams.pricePost, doc.paths['/sse/prices'].post);
    await take(streams.pool, doc.paths['/sse/reserves'].get);
    await take(streams.token, doc.paths['/sse/reserves'].get);
    await take(streams.swaps, doc.paths['/sse/transactions'].get);
    await take(streams.candles, doc.paths['/sse/ohlcv'].get);
    for (const [f, , payload] of checks) expect(validator(payload)(JSON.parse(f.data)), `${f.event}: ${f.data}`).toEqual([]);
    // The schemas are not so loose that anything passes.
    expect(validator('token_price_get')({ address: 'x', chain: 'ethereum', price: 3012.5, timestamp: 1, timestamp_price: 1 })).not.toEqual([]);
    for (const s of Object.values(streams)) s.close();
  });
});
