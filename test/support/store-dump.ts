/** What a data directory holds, read back for comparisons between runs of the service. */
import { expect } from 'vitest';
import { decodeBatch } from '../../engine/events/codec.js';
import { allStoredCandles } from '../../engine/store/candles.js';
import { metaKeys, openStore, type Checkpoint } from '../../engine/store/store.js';

export interface StoreDump {
  head: number;
  checkpoints: Map<string, Checkpoint>;
  candles: Map<string, string>;
  log: Map<number, string>;
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
    return { head: (store.meta.get(metaKeys.logHead) as number) ?? 0, checkpoints, candles, log };
  } finally {
    await store.close();
  }
}

/** Each chain's on-chain events, in order, as canonical text, up to (and including) a checkpoint. */
export async function chainEvents(dir: string, upTo: Map<string, Checkpoint>): Promise<Map<string, string[]>> {
  const store = openStore(dir);
  const out = new Map<string, string[]>();
  try {
    for (const { value } of store.log.getRange()) {
      const { chain, events } = decodeBatch(value);
      const limit = upTo.get(chain);
      if (!limit) continue;
      const list = out.get(chain) ?? [];
      for (const e of events) {
        if (e.kind === 'block' || e.kind === 'reorg') continue;
        const k = e.key;
        if (k.blockNumber > limit.block || (k.blockNumber === limit.block && (k.txIndex > limit.tx || (k.txIndex === limit.tx && k.logIndex > limit.log)))) continue;
        list.push(JSON.stringify(e, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      }
      out.set(chain, list);
    }
  } finally {
    await store.close();
  }
  return out;
}


/**
 * Two data directories of the same simulation (one interrupted, one not) hold the same history: the
 * same events per chain up to the older of their checkpoints, none lost and none twice, and the same
 * sealed candles of that common past.
 */
export async function expectSameHistory(dir: string, after: StoreDump, cleanDir: string, reference: StoreDump): Promise<void> {
  const common = new Map<string, Checkpoint>();
  for (const [chain, ck] of after.checkpoints) {
    const other = reference.checkpoints.get(chain)!;
    common.set(chain, ck.block < other.block || (ck.block === other.block && ck.tx <= other.tx) ? ck : other);
  }
  const a = await chainEvents(dir, common);
  const b = await chainEvents(cleanDir, common);
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  for (const [chain, list] of a) {
    expect(list.length, `${chain} event count`).toBe(b.get(chain)!.length);
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
