/**
 * The size of libuv's thread pool, which every thread of the process shares: file writes (a
 * snapshot's file), DNS lookups, compression, and each store writer. An LMDB writer (lmdb-js: one per
 * thread that writes, the main thread and every shard) holds a pool thread for as long as a write
 * transaction waits on its own thread, and while another one holds the store's write lock. With
 * Node's default of 4 and two shards, three writers can hold three threads for the length of a
 * catch-up, and a snapshot's file writes waited minutes for the fourth. CommonJS, so the launcher
 * (dexdata.cts) can size the pool before Node's module loader first uses it; libuv reads
 * UV_THREADPOOL_SIZE once, then.
 */

/** Pool threads kept for what is not a store writer (file writes, DNS, compression, LMDB's own syncs). */
const THREAD_POOL_RESERVE = 4;
/** The smallest pool the command sizes. */
const THREAD_POOL_MIN = 8;
/** Shards when neither --shards nor DEXDATA_SHARDS says (engine/config.ts has the same default). */
const DEFAULT_SHARDS = 2;

/** Threads the pool needs for `shards` shard threads: a writer each, the main thread's, and the reserve. */
export function threadPoolSize(shards: number): number {
  return Math.max(THREAD_POOL_MIN, shards + 1 + THREAD_POOL_RESERVE);
}

/** The shard count a command line or the environment asks for (a config file's is seen later: the start warns then if the pool is short). */
export function shardsAskedFor(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  let text = env.DEXDATA_SHARDS;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--shards') text = argv[i + 1];
    else if (argv[i]!.startsWith('--shards=')) text = argv[i]!.slice('--shards='.length);
  }
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_SHARDS;
}

/** The pool's size as libuv reads it (Node's default of 4 when unset or not a positive number; at most 1024). */
export function threadPoolSizeOf(env: NodeJS.ProcessEnv): number {
  const n = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '', 10);
  return n > 0 ? Math.min(n, 1024) : 4;
}
