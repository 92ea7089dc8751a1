/**
 * The streams of the real service (`dexdata serve`: shard threads, simulator trading live): a paid
 * key streams the swaps and the reserves of the busiest pool as the shard threads apply them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, startService, type RunningService } from './support/service.js';
import { openRaw, type RawStream } from './support/streams.js';

let dir = '';
let service: RunningService | null = null;
const streams: RawStream[] = [];

afterAll(async () => {
  for (const s of streams) s.close();
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('streams of the running service', () => {
  it('delivers live swaps and reserves from the shard threads to a paid key on the paid stream host', async () => {
    dir = mkdtempSync(join(tmpdir(), 'dexdata-streams-service-'));
    const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'dev', '--label', 'streams test', '--data-dir', dir], { encoding: 'utf8' });
    const key = /key: (api_\w+)/.exec(created)![1]!;
    service = await startService(['--data-dir', dir, '--pools', '200', '--swaps-per-second', '60', '--backfill-days', '0.05', '--shards', '2']);
    const line = await service.waitFor(/streams listening on http:\/\/[\d.]+:(\d+) \(free\) and http:\/\/[\d.]+:(\d+) \(paid\)/);
    const paid = `http://127.0.0.1:${/\(free\) and http:\/\/[\d.]+:(\d+)/.exec(line)![1]}`;
    await service.waitFor(/caught up/);
    const top = (await (await fetch(`${service.url}/networks/ethereum/pools/search?order_by=txns_24h&limit=1`)).json()) as { results: { id: string }[] };
    const pool = top.results[0]!.id;

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
});
