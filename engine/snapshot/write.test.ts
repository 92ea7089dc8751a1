/**
 * A cut takes the rows written once per id (static view columns, the catalog's append-only parts)
 * without copying them, while ingest goes on creating pools during the write: the file must hold
 * the catalog and views as of the cut, not the pools made after it in ids of an open block.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog/catalog.js';
import type { NetworkInfo, PoolCreated, TokenInfo } from '../events/model.js';
import { EngineViews } from '../state/views.js';
import { loadViews } from './load.js';
import { cutMain, layoutSnapshot, writeSnapshot } from './write.js';
import { transferables } from './writer-thread.js';

const NETWORKS = [
  { id: 'ethereum', displayName: 'Ethereum', blockTimeSeconds: 12, dexes: [{ id: 'uni', name: 'Uniswap', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0xf0' }] },
  { id: 'solana', displayName: 'Solana', blockTimeSeconds: 0.4, dexes: [{ id: 'ray', name: 'Raydium', protocol: 'raydium', poolProtocol: 0, factory: 'Fact0ry' }] },
] as NetworkInfo[];

const address = (chain: number, n: number) => (chain === 0 ? `0x${n.toString(16).padStart(40, 'a')}` : `So1${n.toString(36)}AbCdEfGhJkLmNpQrStUvWxYz${n}`);
const token = (chain: number, n: number): TokenInfo => ({ address: address(chain, n), name: `Token ${n}`, symbol: `T${n}`, decimals: 18, totalSupply: 10n ** 24n, role: 0 }) as TokenInfo;
let block = 1;
function created(chain: number, n: number): PoolCreated {
  return { kind: 'pool_created', key: { blockNumber: block++, txIndex: 0, logIndex: 0 }, timestamp: 1_700_000_000 + block, pool: address(chain, 1000 + n), dexId: chain === 0 ? 'uni' : 'ray', factory: '', protocol: 0, feePpm: 3000, token0: token(chain, n), token1: token(chain, 1) } as unknown as PoolCreated;
}

const capacity = { pools: 1024, tokens: 1024, chains: 4 };
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('snapshot write', () => {
  it('holds the catalog and static columns as of the cut, not the pools made in open id blocks while it is written', async () => {
    const v = EngineViews.create(capacity);
    const c = new Catalog(v, 64);
    c.syncNetworks(NETWORKS);
    for (let n = 2; n < 12; n++) c.createPool(n % 2, created(n % 2, n));
    const before = Array.from({ length: c.poolBound }, (_, p) => (c.poolLive(p) ? c.pool(p) : null));
    const tokensBefore = Array.from({ length: c.tokenBound }, (_, t) => (c.tokenLive(t) ? c.token(t) : null));
    const cut = cutMain(v, 1, c.export({ viewColumns: false, shareAppendOnly: true }));
    // Ingest goes on while the file is written: new pools and tokens take ids in each chain's open block.
    const later = [c.createPool(0, created(0, 20))!, c.createPool(1, created(1, 21))!];
    expect(later.every((x) => x.pool.id < cut.pools)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-snapshot-write-'));
    dirs.push(dir);
    const path = await writeSnapshot(dir, layoutSnapshot(v, cut, []));

    const v2 = EngineViews.create(capacity);
    const d = new Catalog(v2);
    await loadViews(path, v2, d);
    expect(d.poolCount).toBe(10);
    expect(Array.from({ length: d.poolBound }, (_, p) => (d.poolLive(p) ? d.pool(p) : null))).toEqual(before);
    expect(Array.from({ length: d.tokenBound }, (_, t) => (d.tokenLive(t) ? d.token(t) : null))).toEqual(tokensBefore);
    for (const { pool, tokens } of later) {
      expect(d.poolId(pool.chain, pool.address)).toBe(-1);
      expect(d.poolKnown(pool.id)).toBe(false);
      expect([v2.poolExists[pool.id], v2.poolChain[pool.id], v2.poolToken0[pool.id], v2.poolCreatedAt[pool.id]]).toEqual([0, 0, 0, 0]);
      for (const t of tokens) expect([d.tokenId(t.chain, t.address), v2.tokenChain[t.id], v2.tokenDecimals[t.id]]).toEqual([-1, 0, 0]);
    }
    // The ids handed out next are those the writer handed out after the cut.
    expect(d.createPool(0, created(0, 20))!.pool.id).toBe(later[0]!.pool.id);
  });

  it('moves to the writer thread only the buffers the cut made for itself: whole, not shared, 64 KiB or more', () => {
    const v = EngineViews.create(capacity);
    const c = new Catalog(v, 64);
    c.syncNetworks(NETWORKS);
    for (let n = 2; n < 12; n++) c.createPool(n % 2, created(n % 2, n));
    const state = new Uint8Array(200_000);
    const cut = cutMain(v, 1, c.export({ viewColumns: false, shareAppendOnly: true }), state);
    const moved = transferables(cut);
    expect(moved).toContain(state.buffer);
    const owned = [...cut.copies.values(), ...cut.catalog.sections.map((s) => s.bytes), state];
    for (const b of moved) {
      expect(b).toBeInstanceOf(ArrayBuffer);
      expect(b.byteLength).toBeGreaterThanOrEqual(64 * 1024);
      // Each is the whole buffer of one of the cut's own views.
      expect(owned.some((view) => view.buffer === b && view.byteOffset === 0 && view.byteLength === b.byteLength)).toBe(true);
    }
    // Views of the shared memory (pool and token rows, the catalog's append-only parts) stay where they are.
    const shared = owned.filter((view) => view.buffer instanceof SharedArrayBuffer);
    expect(shared.length).toBeGreaterThan(0);
    // A part of a larger buffer (a pooled Buffer, a packer's output) is copied, not moved.
    const part = new Uint8Array(new ArrayBuffer(300_000), 8, 200_000);
    expect(transferables({ ...cut, sourceState: part })).not.toContain(part.buffer);
  });
});
