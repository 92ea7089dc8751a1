/**
 * The streams of the real service (`dexdata serve`: shard threads, simulator trading live): a paid
 * key streams the swaps and the reserves of the busiest pool as the shard threads apply them, and a
 * streamed price shows the same digits as the REST answers for the same token at a settled moment.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, startService, type RunningService } from './support/service.js';
import { openRaw, sleep, type Frame, type RawStream } from './support/streams.js';

let dir = '';
let service: RunningService | null = null;
const streams: RawStream[] = [];
let key = '';
let paid = '';
let paidRest = '';
let pool = '';

afterAll(async () => {
  for (const s of streams) s.close();
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('streams of the running service', () => {
  it('delivers live swaps and reserves from the shard threads to a paid key on the paid stream host', async () => {
    dir = mkdtempSync(join(tmpdir(), 'dexdata-streams-service-'));
    const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'dev', '--label', 'streams test', '--data-dir', dir], { encoding: 'utf8' });
    key = /key: (api_\w+)/.exec(created)![1]!;
    service = await startService(['--data-dir', dir, '--pools', '200', '--swaps-per-second', '60', '--backfill-days', '0.05', '--shards', '2']);
    const line = await service.waitFor(/streams listening on http:\/\/[\d.]+:(\d+) \(free\) and http:\/\/[\d.]+:(\d+) \(paid\)/);
    paid = `http://127.0.0.1:${/\(free\) and http:\/\/[\d.]+:(\d+)/.exec(line)![1]}`;
    paidRest = `http://127.0.0.1:${/paid REST listening on http:\/\/[\d.]+:(\d+)/.exec(await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/))![1]}`;
    await service.waitFor(/caught up/);
    const top = (await (await fetch(`${service.url}/networks/ethereum/pools/search?order_by=txns_24h&limit=1`)).json()) as { results: { id: string }[] };
    pool = top.results[0]!.id;

    const swaps = await openRaw(`${paid}/sse/transactions?method=pool&chain=ethereum&address=${pool}&request_id=1`, { key });
    const reserves = await openRaw(`${paid}/sse/reserves?method=pool_reserves&chain=ethereum&address=${pool}&request_id=2`, { key });
    streams.push(swaps, reserves);
    expect(swaps.status).toBe(200);
    expect(reserves.status).toBe(200);
    const [swap] = await swaps.waitFrames(1, undefined, 40_000);
    expect(swap!.event).toBe('pool');
    expect(swap!.requestId).toBe('1');
    const s = JSON.parse(swap!.data) as Record<string, unknown>;
    expect(s['pool_id']).toBe(pool);
    expect(s['block_number']).toMatch(/^[0-9]+$/);
    expect(typeof s['volume_usd']).toBe('number');
    const [snapshot] = await reserves.waitFrames(1, undefined, 40_000);
    expect(snapshot!.event).toBe('pool_reserves');
    const r = JSON.parse(snapshot!.data) as { pool_id: string; tokens: { reserve: string }[] };
    expect(r.pool_id).toBe(pool);
    expect(r.tokens).toHaveLength(2);
    for (const t of r.tokens) expect(t.reserve).toMatch(/^[0-9]+(\.[0-9]+)?$/);
  }, 120_000);

  it('streams a token price with the digits the REST token details and batch prices show at the same settled moment', async () => {
    expect(pool).not.toBe('');
    const details = (await (await fetch(`${paidRest}/networks/ethereum/pools/${pool}`, { headers: { authorization: key } })).json()) as { token_reserves: { token_id: string }[] };
    const tokens = details.token_reserves.map((t) => t.token_id);
    expect(tokens).toHaveLength(2);
    const body = JSON.stringify(tokens.map((address, i) => ({ chain: 'ethereum', address, method: 'token_price', request_id: i })));
    const prices = await openRaw(`${paid}/sse/prices`, { method: 'POST', key, body });
    streams.push(prices);
    expect(prices.status).toBe(200);

    /** The price_usd digits exactly as the JSON text carries them (a float parse would hide a difference). */
    const restPrice = async (path: string): Promise<string> => {
      const text = await (await fetch(`${paidRest}${path}`, { headers: { authorization: key } })).text();
      const m = /"price_usd":(-?[0-9][0-9.eE+-]*)/.exec(text);
      if (m === null) throw new Error(`no price_usd in ${path}: ${text.slice(0, 300)}`);
      return m[1]!;
    };
    // A settled moment: no price event for the token after the one compared, and REST answering the
    // same before and after a pause (its route's other pools did not move either).
    const settled: { address: string; stream: string; details: string; batch: string }[] = [];
    const priceEvents = (address: string) => prices.frames.filter((f: Frame) => f.event === 'token_price' && JSON.parse(f.data).address === address);
    for (let seen = 1; seen <= 200 && settled.length < 3; seen++) {
      const [e] = (await prices.waitFrames(seen, (f) => f.event === 'token_price', 40_000)).slice(-1);
      const ev = JSON.parse(e!.data) as { address: string; price: string };
      const d1 = await restPrice(`/networks/ethereum/tokens/${ev.address}`);
      const b1 = await restPrice(`/networks/ethereum/multi/prices?tokens=${ev.address}`);
      await sleep(300);
      const d2 = await restPrice(`/networks/ethereum/tokens/${ev.address}`);
      const last = priceEvents(ev.address).slice(-1)[0]!;
      if (last !== e || d1 !== d2) continue;
      settled.push({ address: ev.address, stream: ev.price, details: d1, batch: b1 });
      seen = prices.frames.filter((f) => f.event === 'token_price').length;
    }
    expect(settled.length).toBeGreaterThanOrEqual(3);
    for (const s of settled) {
      expect(s.details, `token details of ${s.address}`).toBe(s.stream);
      expect(s.batch, `batch price of ${s.address}`).toBe(s.stream);
    }
  }, 120_000);
});
