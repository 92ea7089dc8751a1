/**
 * Rendered response bodies, bounded by bytes, least recently used evicted first. An entry is valid
 * for one data version (a pool's seqlock word) and, when it also depends on data outside that
 * version, until an expiry time.
 */
/** Bookkeeping charged per entry on top of key and body bytes. */
const ENTRY_OVERHEAD_BYTES = 96;
export class ResponseCache {
    maxBytes;
    entries = new Map();
    bytes = 0;
    /** false: evict in insertion order (no bookkeeping per hit), for short-lived entries. */
    lru;
    constructor(maxBytes, options = {}) {
        this.maxBytes = maxBytes;
        this.lru = options.lru ?? true;
    }
    get size() {
        return this.entries.size;
    }
    get usedBytes() {
        return this.bytes;
    }
    get(key, version) {
        const e = this.entries.get(key);
        if (e === undefined)
            return undefined;
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
    set(key, version, body, expiresAtMs = 0, items = 0) {
        const bytes = body.length + key.length * 2 + ENTRY_OVERHEAD_BYTES;
        if (bytes > this.maxBytes)
            return;
        const old = this.entries.get(key);
        if (old !== undefined)
            this.drop(key, old);
        while (this.bytes + bytes > this.maxBytes) {
            const oldest = this.entries.entries().next().value;
            if (oldest === undefined)
                break;
            this.drop(oldest[0], oldest[1]);
        }
        this.entries.set(key, { version, expiresAtMs, body, items, bytes });
        this.bytes += bytes;
    }
    drop(key, e) {
        this.entries.delete(key);
        this.bytes -= e.bytes;
    }
}
//# sourceMappingURL=cache.js.map