/**
 * Rendered response bodies, bounded by bytes, least recently used evicted first. An entry is valid
 * for one data version (a pool's seqlock word) and, when it also depends on data outside that
 * version, until an expiry time.
 */

/** Bookkeeping charged per entry on top of key and body bytes. */
const ENTRY_OVERHEAD_BYTES = 96;

export interface CachedBody {
  readonly version: number;
  /** performance.now() after which the entry is stale; 0 = only the version decides. */
  readonly expiresAtMs: number;
  readonly body: Buffer;
  /** Items rendered in the body, for bodies that are pieces of a larger one. */
  readonly items: number;
  /** A small number the owner files with the body (the free host: the route id of its path). */
  readonly tag: number;
  readonly bytes: number;
}

export class ResponseCache {
  readonly maxBytes: number;
  private readonly entries = new Map<string, CachedBody>();
  private bytes = 0;
  /** false: evict in insertion order (no bookkeeping per hit), for short-lived entries. */
  private readonly lru: boolean;

  constructor(maxBytes: number, options: { readonly lru?: boolean } = {}) {
    this.maxBytes = maxBytes;
    this.lru = options.lru ?? true;
  }

  get size(): number {
    return this.entries.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  get(key: string, version: number): CachedBody | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.version !== version || (e.expiresAtMs !== 0 && performance.now() > e.expiresAtMs)) {
      this.drop(key, e);
      return undefined;
    }
    if (this.lru) {
      // Map iteration order is insertion order: re-inserting marks the entry most recently used.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e;
  }

  set(key: string, version: number, body: Buffer, expiresAtMs = 0, items = 0, tag = 0): void {
    const bytes = body.length + key.length * 2 + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    while (this.bytes + bytes > this.maxBytes) {
      const oldest = this.entries.entries().next().value;
      if (oldest === undefined) break;
      this.drop(oldest[0], oldest[1]);
    }
    this.entries.set(key, { version, expiresAtMs, body, items, tag, bytes });
    this.bytes += bytes;
  }

  private drop(key: string, e: CachedBody): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }
}
