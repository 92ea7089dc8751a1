/**
 * Compaction of the LMDB file at a stop. LMDB never shrinks its file: pages freed by copy-on-write,
 * by the 7-day transaction retention and by the pruned log stay in it as free pages, so after a
 * backfill the file keeps the backfill's high-water mark (bench/RESULTS.md). A stop whose file is
 * mostly free pages copies every database into a new file, each in key order with its pages filled
 * (copyPacked), and puts it in place of the old one.
 *
 * Invariants: the old file is replaced only by a complete, synced copy taken while no commit
 * happened (the last transaction id is the same before the copy and at the rename, and the rename
 * happens inside a write transaction, so no commit can slip in between); a stop killed at any point
 * leaves the old file whole and at most a leftover copy folder, which the next start or stop removes.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../log.js';
import { freeBytes } from './durable.js';
import { open } from 'lmdb';
import { databaseBytes, openStore, STORE_MAP_SIZE_BYTES, STORE_MAX_DBS, STORE_PAGE_SIZE_BYTES, type Store } from './store.js';

/** Compact when free pages are at least this share of the file... */
export const COMPACT_MIN_UNUSED_SHARE = 0.25;
/** ...and at least this many bytes. */
export const COMPACT_MIN_UNUSED_BYTES = 64 * 1024 * 1024; // 64 MiB
/** Folder of the copy being made, inside the data directory. */
const COPY_DIR = 'compact.tmp';
const DATA_FILE = 'data.mdb';

export interface Compaction {
  readonly beforeBytes: number;
  readonly afterBytes: number;
  readonly seconds: number;
}

/** Removes what a compaction cut short left behind. */
export function removeCompactionLeftover(dataDir: string): void {
  rmSync(join(dataDir, COPY_DIR), { recursive: true, force: true });
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const MIB = 2 ** 20;

/**
 * Copies every database of the store into a new environment in `dir`, each in key order with
 * MDB_APPEND: LMDB then fills each page before starting the next, where entries put in the middle
 * of a tree (each pool's candles and transactions are appended at the end of its own key range)
 * leave pages about half full. Keys and values are copied as their bytes.
 */
async function copyPacked(store: Store, dir: string): Promise<void> {
  // No sync per commit: the caller syncs the finished file before it counts.
  const target = open({ path: dir, mapSize: STORE_MAP_SIZE_BYTES, maxDbs: STORE_MAX_DBS, noSubdir: false, pageSize: STORE_PAGE_SIZE_BYTES, noSync: true });
  try {
    // The main database lists the named ones (nothing else is put in it).
    const names = [...store.root.getKeys()].map(String);
    for (const name of names) {
      const from = store.root.openDB<Uint8Array, Uint8Array>({ name, encoding: 'binary', keyEncoding: 'binary' });
      const to = target.openDB<Uint8Array, Uint8Array>({ name, encoding: 'binary', keyEncoding: 'binary' });
      // One write transaction per database, fed straight from the read cursor (LMDB spills the
      // dirty pages of a large transaction to the file).
      target.transactionSync(() => {
        for (const { key, value } of from.getRange()) to.putSync(key, value, { append: true });
      });
      const entries = (db: { getStats(): unknown }) => (db.getStats() as { entryCount: number }).entryCount;
      if (entries(to) !== entries(from)) throw new Error(`the copy of ${name} holds ${entries(to)} entries, not ${entries(from)}`);
    }
  } finally {
    await target.close();
  }
}

/**
 * Compacts the store in `dataDir` when it is worth it (COMPACT_MIN_UNUSED_*) and the filesystem has
 * room for the copy, and logs what it did; null when it did not (a warning says why, unless there
 * was too little to gain). Call only once nothing else has the store open (the engine's stop, after
 * its shards closed theirs).
 */
export async function compactStore(dataDir: string, log: Log): Promise<Compaction | null> {
  removeCompactionLeftover(dataDir);
  const started = performance.now();
  const store = openStore(dataDir);
  const file = join(dataDir, DATA_FILE);
  const copyDir = join(dataDir, COPY_DIR);
  const skip = (why: string) => {
    log.warn(`store not compacted: ${why}`);
    return null;
  };
  try {
    const beforeBytes = statSync(file).size;
    const { unused } = databaseBytes(store);
    if (unused < COMPACT_MIN_UNUSED_BYTES || unused < beforeBytes * COMPACT_MIN_UNUSED_SHARE) return null;
    const live = beforeBytes - unused;
    if ((await freeBytes(dataDir)) < live * 1.1) return skip(`${(unused / MIB).toFixed(0)} MiB of free pages, but no room for a ${(live / MIB).toFixed(0)} MiB copy`);
    const lastTxn = () => (store.root.getStats() as { lastTxnId: number }).lastTxnId;
    const txnBefore = lastTxn();
    mkdirSync(copyDir);
    await copyPacked(store, copyDir);
    const copy = join(copyDir, DATA_FILE);
    fsyncPath(copy);
    let replaced = false;
    store.root.transactionSync(() => {
      if (lastTxn() !== txnBefore) return;
      renameSync(copy, file);
      fsyncPath(dataDir);
      replaced = true;
    });
    if (!replaced) return skip('another process wrote to it during the copy');
    const done = { beforeBytes, afterBytes: statSync(file).size, seconds: (performance.now() - started) / 1000 };
    log.info(`compacted the store from ${(done.beforeBytes / MIB).toFixed(0)} MiB to ${(done.afterBytes / MIB).toFixed(0)} MiB in ${done.seconds.toFixed(1)} s`);
    return done;
  } catch (err) {
    return skip(`the copy failed (${err instanceof Error ? err.message : String(err)})`);
  } finally {
    await store.close();
    removeCompactionLeftover(dataDir);
  }
}
