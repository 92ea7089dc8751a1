/**
 * The store on disk: transactions and candles are written in their binary form, and a store whose
 * records are msgpack (as versions before it wrote them) answers byte for byte the same; the log
 * behind the snapshots is pruned by default, and a start that then cannot rebuild its views (its
 * snapshots do not fit the version) says what it needs instead of serving something wrong; a stop
 * gives the file's free pages back and the store serves the same afterwards.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack } from 'msgpackr';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPACT_MIN_UNUSED_BYTES } from '../engine/store/compact.js';
import { databaseBytes, openStore } from '../engine/store/store.js';
import { logPrunedThrough } from '../engine/snapshot/prune-log.js';
import { CLI, startService, type RunningService } from './support/service.js';

const SERVICE_ARGS = ['--pools', '80', '--backfill-days', '1', '--shards', '1', '--stream-threads', '0'];
const BINARY_MARK = 0xc1;
const dirs: string[] = [];
const services: RunningService[] = [];

afterAll(async () => {
  for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill9();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'dexdata-records-'));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, extra: readonly string[] = []): Promise<{ service: RunningService; paid: string }> {
  const service = await startService(['--data-dir', dataDir, ...SERVICE_ARGS, ...extra]);
  services.push(service);
  await service.waitFor(/caught up/, 60_000);
  const line = await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/);
  return { service, paid: `http://127.0.0.1:${/:(\d+)$/.exec(line)![1]}` };
}

/** The first byte of every value of a database, counted: binary records against the rest. */
async function valueForms(dataDir: string, name: 'txs' | 'candles'): Promise<{ binary: number; other: number }> {
  const store = openStore(dataDir);
  try {
    const raw = store.root.openDB<Uint8Array, (string | number)[]>({ name, encoding: 'binary' });
    let binary = 0;
    let other = 0;
    for (const { value } of raw.getRange()) {
      if (value[0] === BINARY_MARK) binary++;
      else other++;
    }
    return { binary, other };
  } finally {
    await store.close();
  }
}

/** Transactions and candles up to a past hour for a few pools of two networks: live trading after the start does not change them. */
async function pastUrls(paid: string, key: string): Promise<string[]> {
  const end = Math.floor(Date.now() / 1000) - 3600;
  const urls: string[] = [];
  for (const network of ['ethereum', 'solana']) {
    const search = (await (await fetch(`${paid}/networks/${network}/pools/search?limit=3`, { headers: { authorization: key } })).json()) as {
      results: { id: string }[];
    };
    expect(search.results.length).toBeGreaterThan(0);
    for (const { id } of search.results) {
      const pool = `/networks/${network}/pools/${id}`;
      urls.push(`${pool}/transactions?to=${end}&limit=100`);
      for (const interval of ['1m', '15m', '1h']) urls.push(`${pool}/ohlcv?interval=${interval}&start=${end - 20 * 3600}&end=${end}&limit=1000`);
    }
  }
  return urls;
}

async function fetchAll(paid: string, key: string, urls: readonly string[]): Promise<string[]> {
  return Promise.all(
    urls.map(async (u) => {
      const r = await fetch(`${paid}${u}`, { headers: { authorization: key } });
      expect(r.status, u).toBe(200);
      return r.text();
    }),
  );
}

describe('records on disk', () => {
  it('serves the same transactions and candles from binary records and from the msgpack records of an older store', async () => {
    const dataDir = tempDir();
    const key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', dataDir], { encoding: 'utf8' }))![1]!;
    let { service, paid } = await start(dataDir);
    const urls = await pastUrls(paid, key);
    const fromBinary = await fetchAll(paid, key, urls);
    // Real history: every pool answers with transactions and candles.
    for (const body of fromBinary) expect(JSON.parse(body).length ?? JSON.parse(body).data?.length, body.slice(0, 200)).toBeGreaterThan(0);
    expect(await service.stop()).toBe(0);

    const txForms = await valueForms(dataDir, 'txs');
    const candleForms = await valueForms(dataDir, 'candles');
    expect(txForms.binary).toBeGreaterThan(1000);
    expect(candleForms.binary).toBeGreaterThan(1000);
    expect(txForms.other + candleForms.other).toBe(0);

    // Every record rewritten as msgpack, what the versions before the binary form wrote.
    const store = openStore(dataDir);
    await store.root.transaction(() => {
      for (const name of ['txs', 'candles'] as const) {
        const raw = store.root.openDB<Uint8Array, (string | number)[]>({ name, encoding: 'binary' });
        for (const { key: k, value } of store[name].getRange()) raw.put(k as (string | number)[], pack(value));
      }
    });
    await store.close();
    expect(await valueForms(dataDir, 'txs')).toEqual({ binary: 0, other: txForms.binary });
    expect(await valueForms(dataDir, 'candles')).toEqual({ binary: 0, other: candleForms.binary });

    ({ service, paid } = await start(dataDir));
    const fromMsgpack = await fetchAll(paid, key, urls);
    for (let i = 0; i < urls.length; i++) expect(fromMsgpack[i], urls[i]).toBe(fromBinary[i]);
    expect(await service.stop()).toBe(0);
  }, 180_000);
});

describe('log pruning', () => {
  it('removes the log behind the snapshots by default, and a start whose snapshots do not fit the version then says what it needs', async () => {
    const dataDir = tempDir();
    const { service } = await start(dataDir);
    expect(await service.stop()).toBe(0);
    const store = openStore(dataDir);
    const pruned = logPrunedThrough(store);
    const head = store.meta.get('log.head') as number;
    const left = store.log.getCount();
    await store.close();
    // The snapshot written at the stop holds everything: the log before it is gone.
    expect(pruned).toBeGreaterThan(0);
    expect(left).toBe(head - pruned);

    // Snapshots of another column table (another version): nothing can rebuild the views.
    const snapDir = join(dataDir, 'snapshots');
    for (const name of readdirSync(snapDir)) {
      const path = join(snapDir, name);
      const bytes = readFileSync(path);
      const at = bytes.indexOf('"tableHash":"') + '"tableHash":"'.length;
      bytes[at] = bytes[at] === 0x30 ? 0x31 : 0x30;
      writeFileSync(path, bytes);
    }
    const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', ...SERVICE_ARGS], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(1);
    expect(out).toContain('written with another column table');
    expect(out).toContain(`the log is pruned through batch ${pruned} and no snapshot there fits this version`);
    expect(out).toContain('start the version that wrote the snapshots, or start on an empty data directory');
    expect(out).toContain('"pruneLog": false');
    expect(out).not.toMatch(/REST listening/);
  }, 120_000);

  it('keeps the whole log with "pruneLog": false', async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'keep-log.json');
    writeFileSync(config, JSON.stringify({ snapshots: { pruneLog: false } }));
    const { service } = await start(dataDir, ['--config', config]);
    expect(await service.stop()).toBe(0);
    expect(readdirSync(join(dataDir, 'snapshots')).length).toBeGreaterThan(0);
    const store = openStore(dataDir);
    const pruned = logPrunedThrough(store);
    const head = store.meta.get('log.head') as number;
    const first = [...store.log.getKeys({ limit: 1 })][0];
    const left = store.log.getCount();
    await store.close();
    expect(pruned).toBe(0);
    expect(first).toBe(1);
    expect(left).toBe(head);
  }, 120_000);
});

describe('compaction at a stop', () => {
  it('gives the free pages of the file back at a stop, and the store serves the same afterwards', async () => {
    const dataDir = tempDir();
    const key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', dataDir], { encoding: 'utf8' }))![1]!;
    let { service } = await start(dataDir);
    expect(await service.stop()).toBe(0);
    // Pages written and freed again, as a backfill's pruned transactions and log leave them.
    const store = openStore(dataDir);
    const junk = Buffer.alloc(1024 * 1024, 7);
    for (let i = 0; i < 96; i++) await store.meta.put(`junk.${i}`, junk);
    await store.root.transaction(() => {
      for (let i = 0; i < 96; i++) store.meta.remove(`junk.${i}`);
    });
    const { unused } = databaseBytes(store);
    await store.close();
    const bloated = statSync(join(dataDir, 'data.mdb')).size;
    expect(unused).toBeGreaterThan(COMPACT_MIN_UNUSED_BYTES);
    // A copy a killed stop left behind goes at the next start.
    mkdirSync(join(dataDir, 'compact.tmp'));
    writeFileSync(join(dataDir, 'compact.tmp', 'data.mdb'), 'cut short');

    let paid: string;
    ({ service, paid } = await start(dataDir));
    expect(existsSync(join(dataDir, 'compact.tmp'))).toBe(false);
    const urls = await pastUrls(paid, key);
    const before = await fetchAll(paid, key, urls);
    expect(await service.stop()).toBe(0);
    expect(service.output()).toMatch(/compacted the store from \d+ MiB to \d+ MiB/);
    const compacted = statSync(join(dataDir, 'data.mdb')).size;
    expect(compacted).toBeLessThan(bloated - COMPACT_MIN_UNUSED_BYTES);
    expect(existsSync(join(dataDir, 'compact.tmp'))).toBe(false);

    ({ service, paid } = await start(dataDir));
    expect(await fetchAll(paid, key, urls)).toEqual(before);
    expect(await service.stop()).toBe(0);
    // Too little to gain: the next stop leaves the file as it is.
    expect(service.output()).not.toMatch(/compacted the store/);
  }, 180_000);
});
