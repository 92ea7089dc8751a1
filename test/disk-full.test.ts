/**
 * A full disk, for real: the service runs with its data directory on a small tmpfs that a filler file
 * then fills. It must stay up and degrade: reads go on, /health says `degraded` with "disk full" and
 * the directory, streams get a `warning`, ingest pauses and resumes by itself once the filler is
 * removed; stopped on the full disk it exits, and started on it again it serves what it has. Mounting needs root: without it the test is skipped with the reason printed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, writeSync, rmSync, rmdirSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from './support/service.js';

const FS_BYTES = 160 * 1024 * 1024; // 160 MiB: a 1-day backfill of 20 pools takes about 75 MiB
const SERVICE_ARGS = ['--pools', '20', '--backfill-days', '1', '--shards', '1', '--stream-threads', '0'];

let mountPoint = '';
let skipReason = '';

beforeAll(() => {
  mountPoint = mkdtempSync(join(tmpdir(), 'dexdata-diskfull-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_BYTES}`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (err) {
    skipReason = `a small tmpfs cannot be mounted here (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); run as root to test a full disk`;
    console.warn(`disk-full test skipped: ${skipReason}`);
  }
});

afterAll(() => {
  if (skipReason === '' && mountPoint !== '') {
    for (let i = 0; i < 20; i++) {
      try {
        execFileSync('umount', [mountPoint], { stdio: 'pipe' });
        break;
      } catch {
        execFileSync('sleep', ['0.25']);
      }
    }
  }
  try {
    rmdirSync(mountPoint);
  } catch {
    // still mounted: left for the operator
  }
});

/** Fills the filesystem with one file until the kernel refuses more; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'a');
  const chunk = Buffer.alloc(1024 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    // The last partial megabyte too.
    const small = Buffer.alloc(4096, 1);
    try {
      for (;;) writeSync(fd, small);
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

async function json(url: string): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  return { status: r.status, body: await r.json() };
}

async function until<T>(what: string, probe: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A keyless price stream on the free stream host; its text so far. */
function openStream(port: number, path: string): { text: () => string; close: () => void } {
  let text = '';
  const req = request({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream' } }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
  });
  req.on('error', () => undefined);
  req.end();
  return { text: () => text, close: () => req.destroy() };
}

describe('a full disk', () => {
  let service: RunningService | null = null;

  afterAll(async () => {
    if (service !== null) await service.kill9();
  });

  it('degrades the service instead of ending it, and it recovers by itself', async (ctx) => {
    if (skipReason !== '') ctx.skip();
    const dataDir = join(mountPoint, 'data');
    service = await startService(['--data-dir', dataDir, ...SERVICE_ARGS]);
    const base = service.url;
    await service.waitFor(/caught up/, 90_000);
    const streamPort = Number(/streams listening on http:\/\/[\d.]+:(\d+) \(free\)/.exec(service.output())![1]);
    const pools = await json(`${base}/networks/ethereum/pools/search?limit=3`);
    expect(pools.status).toBe(200);
    const pool = pools.body.results[0].id as string;
    const tokens = await json(`${base}/search?query=WETH`);
    const weth = (tokens.body.tokens as { id: string; chain: string }[]).find((t) => t.chain === 'ethereum')!.id;
    const stream = openStream(streamPort, `/sse/prices?chain=ethereum&address=${weth}`);
    await until('stream open', async () => (stream.text().includes('retry:') ? true : null));

    // Full: degraded with the cause and the place, reads served, the stream warned, the process up.
    const filler = fill(mountPoint);
    const degraded = await until('health degraded', async () => {
      const h = await json(`${base}/health`);
      return h.body.status === 'degraded' ? h : null;
    });
    expect(degraded.status).toBe(200);
    expect(degraded.body.reason).toMatch(new RegExp(`^disk full: ${dataDir} `));
    expect((await json(`${base}/networks`)).status).toBe(200);
    expect((await json(`${base}/networks/ethereum/pools/${pool}`)).status).toBe(200);
    expect((await json(`${base}/networks/ethereum/pools/search?limit=3`)).body.results.length).toBeGreaterThan(0);
    await until('stream warned', async () => (/event: warning\ndata: \{"message":"disk full: /.test(stream.text()) ? true : null));
    await service.waitFor(/ingest paused, reads go on/);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(service.child.exitCode).toBeNull();
    expect((await json(`${base}/health`)).body.status).toBe('degraded');

    // Space returns: ingest resumes, health is ok again, the stream is told, the counters are written.
    rmSync(filler);
    await until('health ok again', async () => ((await json(`${base}/health`)).body.status === 'ok' ? true : null));
    await service.waitFor(/store: written again; ingest resumes/);
    await until('stream told', async () => (stream.text().includes('can store data again') ? true : null));
    expect(stream.text()).not.toMatch(/event: error/);
    stream.close();

    // Full again, then stopped: it exits; started on the full disk, it serves what it has.
    const filler2 = fill(mountPoint);
    await until('health degraded again', async () => ((await json(`${base}/health`)).body.status === 'degraded' ? true : null));
    const code = await Promise.race([service.stop(), new Promise<string>((r) => setTimeout(() => r('no exit within 20 s'), 20_000))]);
    expect(code).not.toBe('no exit within 20 s');
    service = await startService(['--data-dir', dataDir, ...SERVICE_ARGS]);
    const restarted = service.url;
    const h = await json(`${restarted}/health`);
    expect(h.body.status).toBe('degraded');
    expect(h.body.reason).toMatch(/^disk full: /);
    expect((await json(`${restarted}/networks/ethereum/pools/${pool}`)).status).toBe(200);
    expect((await json(`${restarted}/networks/ethereum/pools/search?limit=3`)).body.results.map((p: { id: string }) => p.id)).toContain(pool);
    rmSync(filler2);
    await until('health ok after the restart', async () => ((await json(`${restarted}/health`)).body.status === 'ok' ? true : null));
    await service.stop();
    service = null;
  }, 240_000);
});
