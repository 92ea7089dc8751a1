/**
 * Live agent-protocol sessions, bounded three ways: at most `maxPerOwner` per caller (an account, or
 * the address of a keyless caller; the owner's least recently used session is closed to make room),
 * at most `maxSessions` in all (the least recently used session without an open stream is closed to
 * make room; with none, a new session is refused), and none idle longer than `idleMs` without an
 * open stream (closed by `sweep`). Map order is use order: touching a session moves it to the end.
 */

export interface Session {
  readonly id: string;
  /** Meter subject of the caller that opened it; later requests must come from the same one. */
  readonly owner: string;
  lastActiveMs: number;
  /** Answers in flight and event streams held open; a session with any is never idle. */
  openStreams: number;
  /** Ends the session's streams and its protocol server; the table has already dropped it. */
  close(): Promise<void>;
}

export interface SessionLimits {
  readonly maxSessions: number;
  readonly maxPerOwner: number;
  readonly idleMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: 4096,
  maxPerOwner: 32,
  idleMs: 30 * 60_000, // 30 min
};

const NOOP = (): void => {};

export class SessionTable<S extends Session> {
  private readonly byId = new Map<string, S>();
  private readonly perOwner = new Map<string, number>();
  private readonly limits: SessionLimits;

  constructor(limits: SessionLimits) {
    this.limits = limits;
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): S | undefined {
    return this.byId.get(id);
  }

  /** Marks a session used now. */
  touch(s: S, nowMs: number): void {
    s.lastActiveMs = nowMs;
    if (this.byId.get(s.id) !== s) return;
    this.byId.delete(s.id);
    this.byId.set(s.id, s);
  }

  /** Frees a place for a new session of `owner`; false when every session holds an open stream. */
  makeRoom(owner: string): boolean {
    if ((this.perOwner.get(owner) ?? 0) >= this.limits.maxPerOwner) {
      for (const s of this.byId.values()) {
        if (s.owner === owner) {
          this.evict(s);
          break;
        }
      }
    }
    if (this.byId.size < this.limits.maxSessions) return true;
    for (const s of this.byId.values()) {
      if (s.openStreams === 0) {
        this.evict(s);
        return true;
      }
    }
    return false;
  }

  add(s: S): void {
    this.makeRoom(s.owner);
    this.byId.set(s.id, s);
    this.perOwner.set(s.owner, (this.perOwner.get(s.owner) ?? 0) + 1);
  }

  /** Drops a session from the table (its own close calls this; closing is the caller's business). */
  remove(id: string): void {
    const s = this.byId.get(id);
    if (s === undefined) return;
    this.byId.delete(id);
    const n = (this.perOwner.get(s.owner) ?? 1) - 1;
    if (n <= 0) this.perOwner.delete(s.owner);
    else this.perOwner.set(s.owner, n);
  }

  /** Closes every session `closes` picks; returns how many. */
  closeWhere(closes: (s: S) => boolean): number {
    const gone: S[] = [];
    for (const s of this.byId.values()) if (closes(s)) gone.push(s);
    for (const s of gone) this.evict(s);
    return gone.length;
  }

  /** Closes sessions idle for longer than the limit; returns how many. */
  sweep(nowMs: number): number {
    const idle: S[] = [];
    for (const s of this.byId.values()) if (s.openStreams === 0 && nowMs - s.lastActiveMs > this.limits.idleMs) idle.push(s);
    for (const s of idle) this.evict(s);
    return idle.length;
  }

  async closeAll(): Promise<void> {
    const all = [...this.byId.values()];
    for (const s of all) this.remove(s.id);
    await Promise.all(all.map((s) => s.close().catch(NOOP)));
  }

  private evict(s: S): void {
    this.remove(s.id);
    s.close().catch(NOOP);
  }
}
