/** What a data directory holds, read back for comparisons between runs of the service. */
import { expect } from 'vitest';
import { decodeBatch } from '../../engine/events/codec.js';
import { allStoredCandles } from '../../engine/store/candles.js';
import { metaKeys, openStore, type Checkpoint } from '../../engine/store/store.js';

export interface StoreDump {
  head: number;
  checkpoints: Map<string, Checkpoint>;
  candles: Map<string, string>;
  /** The log batches still held (the log behind the oldest snapshot kept is pruned by default). */
  log: Map<number, string>;
  /** Log batches up to this one were pruned (0: the log is whole). */
  prunedThrough: number;
  /** Stored transactions, `pool/block/tx/log` -> record as JSON: what the trades endpoints serve. */
  txs: Map<string, string>;
  /** Pool id -> its chain's id. */
  poolChain: Map<number, string>;
}

export async function storeDump(dir: string): Promise<StoreDump> {
  const store = openStore(dir);
  try {
    const checkpoints = new Map<string, Checkpoint>();
    for (const { key, value } of store.meta.getRange()) if (key.startsWith('checkpoint.')) checkpoints.set(key.slice(11), value as Checkpoint);
    const candles = new Map<string, string>();
    for (const { key, record } of allStoredCandles(store)) candles.set(key.join('/'), JSON.stringify(record));
    const log = new Map<number, string>();
    for (const { key, value } of store.log.getRange()) log.set(key, Buffer.from(value).toString('base64'));
    const txs = new Map<string, string>();
    for (const { key, value } of store.txs.getRange()) txs.set(key.join('/'), JSON.stringify(value));
    const chains = new Map<number, string>();
    for (const { value } of store.networks.getRange()) chains.set(value.index, value.id);
    const poolChain = new Map<number, string>();
    for (const { value } of store.pools.getRange()) poolChain.set(value.id, chains.get(value.chain)!);
    const prunedThrough = (store.meta.get(metaKeys.logPrunedThrough) as number | undefined) ?? 0;
    return { head: (store.meta.get(metaKeys.logHead) as number) ?? 0, checkpoints, candles, log, prunedThrough, txs, poolChain };
  } finally {
    await store.close();
  }
}

/** `pool/block/tx/log` of every swap, mint and burn at or after `since` (Unix s) in the log batches a dump holds. */
export function loggedTransactionKeys(dump: StoreDump, since: number): string[] {
  const out: string[] = [];
  for (const bytes of dump.log.values()) {
    for (const e of decodeBatch(Buffer.from(bytes, 'base64')).events) {
      if ((e.kind !== 'swap' && e.kind !== 'mint' && e.kind !== 'burn') || e.timestamp < since) continue;
      out.push(`${e.poolId}/${e.key.blockNumber}/${e.key.txIndex}/${e.key.logIndex}`);
    }
  }
  return out;
}

function atOrBefore(block: number, tx: number, log: number, ck: Checkpoint): boolean {
  return block < ck.block || (block === ck.block && (tx < ck.tx || (tx === ck.tx && log <= ck.log)));
}

/** A dump's transactions on each chain up to (and including) that chain's checkpoint in `upTo`, as `key record` lines in key order. */
function transactionsUpTo(dump: StoreDump, upTo: Map<string, Checkpoint>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, record] of dump.txs) {
    const [pool, block, tx, log] = key.split('/').map(Number) as [number, number, number, number];
    const chain = dump.poolChain.get(pool)!;
    const limit = upTo.get(chain);
    if (!limit || !atOrBefore(block, tx, log, limit)) continue;
    const list = out.get(chain) ?? [];
    list.push(`${key} ${record}`);
    out.set(chain, list);
  }
  return out;
}

/**
 * Two data directories of the same simulation (one interrupted, one not) hold the same history: the
 * same transactions per chain up to the older of their checkpoints (the simulated history is shorter
 * than their 7-day retention, so every swap, mint and burn is one), none lost and none twice, and
 * the same sealed candles of that common past. Both are what the service serves, whether or not the
 * log behind the snapshots was pruned.
 */
export async function expectSameHistory(after: StoreDump, reference: StoreDump): Promise<void> {
  const common = new Map<string, Checkpoint>();
  for (const [chain, ck] of after.checkpoints) {
    const other = reference.checkpoints.get(chain)!;
    common.set(chain, ck.block < other.block || (ck.block === other.block && ck.tx <= other.tx) ? ck : other);
  }
  const a = transactionsUpTo(after, common);
  const b = transactionsUpTo(reference, common);
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  for (const [chain, list] of a) {
    expect(list.length, `${chain} transaction count`).toBe(b.get(chain)!.length);
    expect(list).toEqual(b.get(chain));
  }
  // Sealed candles of the common past agree too. A candle is stored once it leaves its ring, when a
  // later one of its pool and interval opens, which depends on trades after the common checkpoint:
  // each candle the restarted run must have stored (it stored a later one of the same series) is there, unchanged.
  const cutoff = Math.min(...[...common.values()].map((c) => c.time)) - 86_400;
  const newestStored = new Map<string, number>();
  for (const key of after.candles.keys()) {
    const [pool, interval, time] = key.split('/');
    const series = `${pool}/${interval}`;
    newestStored.set(series, Math.max(newestStored.get(series) ?? -Infinity, Number(time)));
  }
  let compared = 0;
  for (const [key, value] of reference.candles) {
    const [pool, interval, time] = key.split('/');
    if (Number(time) + 86_400 > cutoff || Number(time) > (newestStored.get(`${pool}/${interval}`) ?? -Infinity)) continue;
    expect(after.candles.get(key), `candle ${key}`).toBe(value);
    compared++;
  }
  expect(compared).toBeGreaterThan(1000);
}
