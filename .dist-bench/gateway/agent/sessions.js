/**
 * Live agent-protocol sessions, bounded so that no one client can lock out the others:
 *  - at most `maxPerOwner` per caller (an account, or the address of a keyless caller) and at most
 *    `maxPerAddress` per peer address whatever the keys: past either, that owner's or address's
 *    least recently used session is closed to make room;
 *  - at most `maxSessions` in all: to make room, the least recently used session without an open
 *    stream is closed; when every session holds a stream, the address holding the most sessions
 *    gives up its least recently used one, as long as it holds at least two more than the
 *    newcomer's address (fair shares: a newcomer is refused only when every address holds about as
 *    many as it would);
 *  - none idle longer than `idleMs` without an open stream (closed by `sweep`).
 * Map order is use order: touching a session moves it to the end.
 */
export const DEFAULT_SESSION_LIMITS = {
    maxSessions: 4096,
    maxPerOwner: 32,
    // Room for several keys behind one address (an office, a NAT).
    maxPerAddress: 128,
    idleMs: 30 * 60_000, // 30 min
};
const NOOP = () => { };
function uncount(counts, key) {
    const n = (counts.get(key) ?? 1) - 1;
    if (n <= 0)
        counts.delete(key);
    else
        counts.set(key, n);
}
export class SessionTable {
    byId = new Map();
    perOwner = new Map();
    perAddress = new Map();
    limits;
    constructor(limits) {
        this.limits = limits;
    }
    get size() {
        return this.byId.size;
    }
    get(id) {
        return this.byId.get(id);
    }
    /** Marks a session used now. */
    touch(s, nowMs) {
        s.lastActiveMs = nowMs;
        if (this.byId.get(s.id) !== s)
            return;
        this.byId.delete(s.id);
        this.byId.set(s.id, s);
    }
    /** Frees a place for a new session of `owner` from `address`; false when none can fairly be had. */
    makeRoom(owner, address) {
        if ((this.perOwner.get(owner) ?? 0) >= this.limits.maxPerOwner)
            this.evictFirst((s) => s.owner === owner);
        if ((this.perAddress.get(address) ?? 0) >= this.limits.maxPerAddress)
            this.evictFirst((s) => s.address === address);
        if (this.byId.size < this.limits.maxSessions)
            return true;
        if (this.evictFirst((s) => s.openStreams === 0))
            return true;
        let largest = '';
        let most = 0;
        for (const [a, n] of this.perAddress) {
            if (n > most) {
                largest = a;
                most = n;
            }
        }
        if (most < (this.perAddress.get(address) ?? 0) + 2)
            return false;
        return this.evictFirst((s) => s.address === largest);
    }
    add(s) {
        this.makeRoom(s.owner, s.address);
        this.byId.set(s.id, s);
        this.perOwner.set(s.owner, (this.perOwner.get(s.owner) ?? 0) + 1);
        this.perAddress.set(s.address, (this.perAddress.get(s.address) ?? 0) + 1);
    }
    /** Drops a session from the table (its own close calls this; closing is the caller's business). */
    remove(id) {
        const s = this.byId.get(id);
        if (s === undefined)
            return;
        this.byId.delete(id);
        uncount(this.perOwner, s.owner);
        uncount(this.perAddress, s.address);
    }
    /** Closes every session `closes` picks; returns how many. */
    closeWhere(closes) {
        const gone = [];
        for (const s of this.byId.values())
            if (closes(s))
                gone.push(s);
        for (const s of gone)
            this.evict(s);
        return gone.length;
    }
    /** Closes sessions idle for longer than the limit; returns how many. */
    sweep(nowMs) {
        const idle = [];
        for (const s of this.byId.values())
            if (s.openStreams === 0 && nowMs - s.lastActiveMs > this.limits.idleMs)
                idle.push(s);
        for (const s of idle)
            this.evict(s);
        return idle.length;
    }
    async closeAll() {
        const all = [...this.byId.values()];
        for (const s of all)
            this.remove(s.id);
        await Promise.all(all.map((s) => s.close().catch(NOOP)));
    }
    /** Closes the least recently used session `pick` accepts; false when there is none. */
    evictFirst(pick) {
        for (const s of this.byId.values()) {
            if (pick(s)) {
                this.evict(s);
                return true;
            }
        }
        return false;
    }
    evict(s) {
        this.remove(s.id);
        s.close().catch(NOOP);
    }
}
//# sourceMappingURL=sessions.js.map