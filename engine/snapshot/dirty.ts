/**
 * The rows a shard changed since its last snapshot cut, so that a cut copies only those (a delta:
 * capture.ts) and the file is the previous snapshot with them written over it (write.ts).
 *
 * Invariant: bit p of `pools` (word p >>> 5) is set, by the shard that owns pool p and no other
 * thread, whenever that shard writes a kept column of pool p's row or ring block, from the previous
 * cut's capture on; a capture clears every bit. Writes happen under the row's seqlock, so marking
 * where the seqlock word moves marks every write. Tokens likewise. Bit p of `candles` is set, by the
 * same shard, whenever it writes a candle column (ColumnSpec.candles) of pool p's ring block, where
 * those writes happen (the few places ColumnSpec.candles names); a capture clears it too.
 */

/** One bit per id, set while the row changed since the last capture. */
export class DirtyBits {
  private words: Uint32Array;
  constructor(ids: number) {
    this.words = new Uint32Array(Math.ceil(Math.max(1, ids) / 32));
  }

  mark(id: number): void {
    const w = id >>> 5;
    if (w >= this.words.length) this.grow(w);
    this.words[w] = this.words[w]! | (1 << (id & 31));
  }

  unmark(id: number): void {
    const w = id >>> 5;
    if (w < this.words.length) this.words[w] = this.words[w]! & ~(1 << (id & 31));
  }

  markAll(ids: readonly number[]): void {
    for (const id of ids) this.mark(id);
  }

  has(id: number): boolean {
    const w = id >>> 5;
    return w < this.words.length && (this.words[w]! & (1 << (id & 31))) !== 0;
  }

  /** The ids marked inside the [first, end) pairs of `runs`, ascending (runs ascending). */
  within(runs: readonly number[]): Int32Array {
    // Counted first, so the ids go straight into their array.
    let n = 0;
    this.eachWithin(runs, () => n++);
    const out = new Int32Array(n);
    let i = 0;
    this.eachWithin(runs, (id) => (out[i++] = id));
    return out;
  }

  private eachWithin(runs: readonly number[], f: (id: number) => void): void {
    const words = this.words;
    for (let i = 0; i < runs.length; i += 2) {
      const first = runs[i]!;
      const end = runs[i + 1]!;
      for (let w = first >>> 5, last = Math.min(words.length, ((end - 1) >>> 5) + 1); w < last; w++) {
        let bits = words[w]!;
        while (bits !== 0) {
          const low = bits & -bits;
          const id = (w << 5) + 31 - Math.clz32(low);
          if (id >= first && id < end) f(id);
          bits ^= low;
        }
      }
    }
  }

  /** Marks exactly the ids `other` marks. */
  copyFrom(other: DirtyBits): void {
    if (this.words.length < other.words.length) this.words = new Uint32Array(other.words.length);
    this.words.set(other.words);
    this.words.fill(0, other.words.length);
  }

  clear(): void {
    this.words.fill(0);
  }

  private grow(word: number): void {
    const next = new Uint32Array(Math.max(word + 1, this.words.length * 2));
    next.set(this.words);
    this.words = next;
  }
}

/**
 * The pools and tokens a shard changed since its last cut; of the pools, those whose candle columns
 * it wrote (`candles`: state/views.ts ColumnSpec.candles, a subset of `pools`).
 */
export class DirtyRows {
  readonly pools: DirtyBits;
  readonly tokens: DirtyBits;
  readonly candles: DirtyBits;
  constructor(pools: number, tokens: number) {
    this.pools = new DirtyBits(pools);
    this.tokens = new DirtyBits(tokens);
    this.candles = new DirtyBits(pools);
  }

  clear(): void {
    this.pools.clear();
    this.tokens.clear();
    this.candles.clear();
  }
}
