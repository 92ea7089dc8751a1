/**
 * Persists what a shard hands over: candles leaving the rings and the last 7 days of transactions. Entries collected while a
 * batch is applied are written in one LMDB transaction together with the shard's watermark (the last
 * batch whose effects are stored), so after a crash replay rewrites exactly what was not committed.
 */
import { readU128 } from '../events/codec.js';
import type { Burn } from '../events/fb/dex/events/burn.js';
import type { EventKey } from '../events/fb/dex/events/event-key.js';
import type { Mint } from '../events/fb/dex/events/mint.js';
import type { Swap } from '../events/fb/dex/events/swap.js';
import { SwapFlags } from '../events/fb/dex/events/swap-flags.js';
import { U128 } from '../events/fb/dex/events/u128.js';
import type { CandleRing } from '../state/views.js';
import { metaKeys, type CandleKey, type CandleRecord, type Store, type TxKey, type TxRecord } from '../store/store.js';
import type { ShardSink, TxUsd } from './apply.js';

export class LmdbSink implements ShardSink {
  private candles: [CandleKey, CandleRecord][] = [];
  private txs: [TxKey, TxRecord][] = [];
  private readonly u128 = new U128();
  private readonly store: Store;
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(store: Store) {
    this.store = store;
  }

  candleEvicted(pool: number, interval: number, r: CandleRing, s: number): void {
    this.candles.push([
      [pool, interval, r.time[s]!],
      [r.open0[s]!, r.high0[s]!, r.low0[s]!, r.close0[s]!, r.open1[s]!, r.high1[s]!, r.low1[s]!, r.close1[s]!, r.volumeUsd[s]!, r.buyVolumeUsd[s]!, r.txns[s]!, r.buys[s]!],
    ]);
  }

  transaction(kind: 0 | 1 | 2, pool: number, ev: Swap | Mint | Burn, key: EventKey, usd: TxUsd): void {
    const a0 = readU128(ev.amount0(this.u128)!);
    const a1 = readU128(ev.amount1(this.u128)!);
    let s0: bigint;
    let s1: bigint;
    let sender: string;
    let recipient: string;
    if (kind === 0) {
      const s = ev as Swap;
      const flags = s.flags();
      s0 = flags & SwapFlags.Amount0Negative ? -a0 : a0;
      s1 = flags & SwapFlags.Amount1Negative ? -a1 : a1;
      sender = s.sender() ?? '';
      recipient = s.recipient() ?? '';
    } else {
      const m = ev as Mint;
      s0 = kind === 1 ? a0 : -a0;
      s1 = kind === 1 ? a1 : -a1;
      sender = m.owner() ?? '';
      recipient = sender;
    }
    this.txs.push([
      [pool, key.blockNumber(), key.txIndex(), key.logIndex()],
      [kind, ev.txHash() ?? '', sender, recipient, s0.toString(), s1.toString(), usd.price0Usd, usd.price1Usd, usd.volumeUsd, usd.ratio, ev.timestamp()],
    ]);
  }

  /** Writes what the last batch handed over, with the shard watermark, in one transaction (not awaited). */
  commit(shard: number, seq: number): void {
    const candles = this.candles;
    const txs = this.txs;
    this.candles = [];
    this.txs = [];
    const { store } = this;
    this.lastWrite = store.root.transaction(() => {
      for (const [k, v] of candles) store.candles.put(k, v);
      for (const [k, v] of txs) store.txs.put(k, v);
      store.meta.put(metaKeys.shardWatermark(shard), seq);
    });
  }

  /** Resolves when everything committed so far is on disk. */
  flushed(): Promise<unknown> {
    return this.lastWrite;
  }
}
