/**
 * The durable store: one LMDB environment, values packed with msgpackr (lmdb's default encoding),
 * transactions and candles in a binary form of their own (records.ts).
 *
 *  log       batch sequence -> FlatBuffers EventBatch bytes; the source of truth the views are rebuilt from
 *  meta      string -> value: per-chain checkpoints and recent block hashes, the log head and how far it was pruned, genesis time, shard watermarks
 *  networks  chain index -> network record;  dexes  [chain index, dex id] -> DEX record
 *  pools     pool id -> pool record;  tokens  token id -> token record
 *  candles   [pool id, interval index, chunk start] -> sealed candles that left their shared-memory ring (candles.ts)
 *  txs       [pool id, block, tx index, log index] -> transaction of the last 7 days
 *  parked    [pool id, swap count] -> open candles of a pool that gave its ring block back before they closed (parked.ts)
 *
 * A batch, the checkpoint it advances and the pools and tokens it creates commit in one transaction:
 * once that commit resolves the batch is acknowledged, and a crash after it loses nothing.
 */
import { open, type Database, type RootDatabase } from 'lmdb';
import { RetryingWriter } from './durable.js';
import { candleEncoder, txEncoder } from './records.js';

export interface NetworkRecord {
  readonly index: number;
  readonly id: string;
  readonly displayName: string;
  readonly blockTimeSeconds: number;
}

export interface DexRecord {
  readonly index: number;
  readonly chain: number;
  readonly id: string;
  readonly name: string;
  readonly protocol: string;
  readonly poolProtocol: number;
  readonly factory: string;
}

export interface TokenRecord {
  readonly id: number;
  readonly chain: number;
  readonly address: string;
  readonly name: string;
  readonly symbol: string;
  readonly decimals: number;
  readonly totalSupply: string;
  readonly role: number;
  /** Unix seconds when the token was first seen. */
  readonly addedAt: number;
}

export interface PoolRecord {
  readonly id: number;
  readonly chain: number;
  readonly dex: number;
  readonly address: string;
  readonly token0: number;
  readonly token1: number;
  readonly protocol: number;
  readonly feePpm: number;
  readonly createdAt: number;
  readonly createdBlock: number;
  /** Weighted pools: the normalised weights of token 0 and token 1 as decimal integers (1e18 = 100 %). */
  readonly weights?: readonly [string, string] | undefined;
}

/** Per-chain ingest position: the last on-chain event key and the last block event accepted. */
export interface Checkpoint {
  readonly block: number;
  readonly tx: number;
  readonly log: number;
  readonly blockEvent: number;
  /** Timestamp (Unix s) of the last accepted event. */
  readonly time: number;
}

/** [o0, h0, l0, c0, o1, h1, l1, c1, volumeUsd, buyVolumeUsd, txns, buys]: prices of token 0 then token 1. */
export type CandleRecord = readonly number[];

/** [kind (0 swap, 1 add, 2 remove), txHash, sender, recipient, amount0, amount1 (signed, pool's view, decimal strings), price0Usd, price1Usd, volumeUsd, ratio, time]. */
export type TxRecord = readonly (string | number)[];

/** [pool, interval, chunk start]: see candles.ts. */
export type CandleKey = [pool: number, interval: number, chunkStart: number];
export type TxKey = [pool: number, block: number, tx: number, log: number];

export interface Store {
  readonly path: string;
  readonly root: RootDatabase;
  readonly log: Database<Uint8Array, number>;
  readonly meta: Database<unknown, string>;
  readonly networks: Database<NetworkRecord, number>;
  readonly dexes: Database<DexRecord, number>;
  readonly pools: Database<PoolRecord, number>;
  readonly tokens: Database<TokenRecord, number>;
  /** Chunks of candles: flat arrays, CANDLE_FIELDS numbers per candle (candles.ts). */
  readonly candles: Database<number[], CandleKey>;
  readonly txs: Database<TxRecord, TxKey>;
  /** Versions of quiet pools' open candles (parked.ts). */
  readonly parked: Database<number[], [pool: number, swaps: number]>;
  /** Writes that wait out a full disk (durable.ts): the engine's log commits and the shards' candles. */
  readonly writer: RetryingWriter;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Map size ceiling in bytes; LMDB grows the file lazily up to it. */
  readonly mapSizeBytes?: number;
}

export const STORE_MAP_SIZE_BYTES = 64 * 1024 ** 3; // 64 GiB of address space, not of disk
export const STORE_PAGE_SIZE_BYTES = 16 * 1024; // 16 KiB
export const STORE_MAX_DBS = 32;

export function openStore(path: string, options: StoreOptions = {}): Store {
  // Always a directory, even when its name has a dot (lmdb would otherwise take it for a file name).
  // 16 KiB pages (a new store only; an existing one keeps its size): a candle chunk then fits in its
  // leaf instead of needing a run of overflow pages, and the free-page list is a quarter as long.
  // Commits merge that list each time; with 4 KiB pages, after a 30-day backfill, that took 40-60 %
  // of a core for minutes after each start (bench/RESULTS.md).
  const root = open({ path, mapSize: options.mapSizeBytes ?? STORE_MAP_SIZE_BYTES, maxDbs: STORE_MAX_DBS, noSubdir: false, pageSize: STORE_PAGE_SIZE_BYTES });
  const db = <V, K extends import('lmdb').Key>(name: string, extra: Record<string, unknown> = {}) =>
    root.openDB<V, K>({ name, ...extra });
  const store: Store = {
    path,
    root,
    // Batches are large and repetitive (hex hashes and addresses): LZ4 cuts them by about a third.
    log: db<Uint8Array, number>('log', { encoding: 'binary', compression: true }),
    meta: db<unknown, string>('meta'),
    networks: db<NetworkRecord, number>('networks'),
    dexes: db<DexRecord, number>('dexes'),
    pools: db<PoolRecord, number>('pools'),
    tokens: db<TokenRecord, number>('tokens'),
    // Binary records (records.ts); a record written as msgpack by an older version reads as before.
    candles: db<number[], CandleKey>('candles', { encoder: candleEncoder }),
    txs: db<TxRecord, TxKey>('txs', { encoder: txEncoder }),
    parked: db<number[], [number, number]>('parked'),
    writer: new RetryingWriter(root, path),
    close: () => root.close(),
  };
  return store;
}

export const metaKeys = {
  logHead: 'log.head',
  /** Log batches up to this one were removed (they are in a snapshot); absent: the log is whole. */
  logPrunedThrough: 'log.prunedThrough',
  genesis: 'sim.genesis',
  checkpoint: (chain: string) => `checkpoint.${chain}`,
  /** [number, hash][] of the chain's newest blocks ingested, oldest first (written with the checkpoint). */
  recentBlocks: (chain: string) => `blocks.${chain}`,
  shardWatermark: (shard: number) => `shard.${shard}.watermark`,
  /** A source's record about a chain (ChainEventBatch.records). */
  sourceRecord: (chain: string, key: string) => `source.${chain}.${key}`,
} as const;

/** The records a source kept about a chain (ChainEventBatch.records), by their key. */
export function sourceRecords(store: Store, chain: string): Map<string, unknown> {
  const prefix = metaKeys.sourceRecord(chain, '');
  const out = new Map<string, unknown>();
  for (const { key, value } of store.meta.getRange({ start: prefix, end: `${prefix}\uffff` })) {
    if (typeof key !== 'string' || !key.startsWith(prefix)) continue;
    out.set(key.slice(prefix.length), value);
  }
  return out;
}

/** Bytes of pages each database holds (branch, leaf and overflow pages), and `unused`: the rest of the file (free pages, the key and usage databases). */
export function databaseBytes(store: Store): Record<'log' | 'txs' | 'candles' | 'parked' | 'pools' | 'tokens' | 'meta' | 'unused', number> {
  const bytes = (db: Database<unknown, import('lmdb').Key>) => {
    const st = db.getStats() as { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
    return (st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages) * st.pageSize;
  };
  const used = { log: bytes(store.log), txs: bytes(store.txs), candles: bytes(store.candles), parked: bytes(store.parked), pools: bytes(store.pools), tokens: bytes(store.tokens), meta: bytes(store.meta) };
  const env = store.root.getStats() as { pageSize: number; lastPageNumber: number };
  const file = (env.lastPageNumber + 1) * env.pageSize;
  return { ...used, unused: file - Object.values(used).reduce((a, b) => a + b, 0) };
}
