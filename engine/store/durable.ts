/**
 * Writes that outlive a full disk. A commit that fails for lack of space (or any other write error)
 * is not thrown at the process: it is tried again every WRITE_RETRY_MS until it commits, and the
 * promise of its write resolves only then, so whatever waits on it (ingest's acknowledgement, the
 * shards' durable candles) pauses and resumes by itself when space returns, and nothing is called
 * durable that is not. Once one write waits for a retry, later writes queue behind it, so they commit
 * in the order they were made (a checkpoint never moves back). `fault` says what is wrong meanwhile.
 *
 * LMDB reports a write that did not fit as EIO ("Input/output error": a short write), so the free
 * space of the data directory decides whether a failed write is called "disk full".
 */
import { statfs } from 'node:fs/promises';
import type { RootDatabase } from 'lmdb';

/** How often a failed write is tried again. */
export const WRITE_RETRY_MS = 1_000; // 1 s
/** Below this much free space (or 1/16 of a small filesystem) a failed write is put down to a full disk. */
export const DISK_FULL_MARGIN_BYTES = 64 * 1024 * 1024; // 64 MiB

export interface WriteFault {
  /** The cause as an operator reads it: "disk full: <dir> has N bytes free ..." or "write error on <dir>: ...". */
  readonly message: string;
  readonly diskFull: boolean;
  /** Unix milliseconds of the first failure. */
  readonly sinceMs: number;
}

/** Bytes free for this process on the filesystem holding `path`; Infinity when that cannot be read. */
export async function freeBytes(path: string): Promise<number> {
  try {
    const s = await statfs(path);
    return s.bavail * s.bsize;
  } catch {
    return Infinity;
  }
}

/** Free space below which the filesystem of `path` counts as full: DISK_FULL_MARGIN_BYTES, or 1/16 of a small filesystem. */
async function fullMargin(path: string): Promise<number> {
  try {
    const s = await statfs(path);
    return Math.min(DISK_FULL_MARGIN_BYTES, (s.blocks * s.bsize) / 16);
  } catch {
    return DISK_FULL_MARGIN_BYTES;
  }
}

/** The errno-style code of an LMDB write error (lmdb-js wraps the cause of a failed commit in `commitError`). */
async function causeOf(err: unknown): Promise<{ code: string | number | undefined; message: string }> {
  let e: unknown = err;
  const inner = (err as { commitError?: Promise<unknown> } | null)?.commitError;
  if (inner !== undefined) e = await inner.then(() => err, (x: unknown) => x);
  const code = (e as { code?: string | number } | null)?.code;
  return { code, message: e instanceof Error ? e.message : String(e) };
}

export async function describeWriteFailure(err: unknown, path: string, sinceMs: number): Promise<WriteFault> {
  const { code, message } = await causeOf(err);
  const free = await freeBytes(path);
  const diskFull = code === 'ENOSPC' || code === 28 || code === 'MDB_MAP_FULL' || free < (await fullMargin(path));
  return {
    diskFull,
    sinceMs,
    message: diskFull
      ? `disk full: ${path} has ${free === Infinity ? 'no readable' : free} bytes free; new data is held and written when space is freed`
      : `write error on ${path}: ${message}; retrying every ${WRITE_RETRY_MS / 1000} s`,
  };
}

/**
 * lmdb-js leaves the promise of a failed commit's batch without a handler (a write it makes for
 * itself), which would end the process; such a failure is the writers' to report and retry. Any
 * other unhandled rejection is thrown as Node does by default. Installed once per thread that
 * opens a store.
 */
let guarded = false;
export function guardCommitFailures(): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    const commitError = (reason as { commitError?: Promise<unknown> } | null)?.commitError;
    if (reason instanceof Error && reason.message.startsWith('Commit failed') && commitError !== undefined) {
      commitError.catch(() => undefined);
      return;
    }
    throw reason;
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class RetryingWriter {
  /** What keeps writes from committing, null while they do. */
  fault: WriteFault | null = null;
  private readonly root: RootDatabase;
  private readonly path: string;
  /** Writes waiting for a retry; while any does, new writes queue behind them. */
  private waiting = 0;
  private tail: Promise<unknown> = Promise.resolve();
  private abandoned = false;
  private readonly listeners = new Set<(fault: WriteFault | null) => void>();

  constructor(root: RootDatabase, path: string) {
    this.root = root;
    this.path = path;
    guardCommitFailures();
  }

  /** Calls `fn` whenever writes start failing or commit again; returns the unsubscribe. */
  onChange(fn: (fault: WriteFault | null) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Looks at the free space: a full disk is reported before any write of this thread failed (a start
   * on a full disk; another thread's writes failing), and no longer once space returned and no write
   * of this thread waits.
   */
  async checkSpace(): Promise<void> {
    const free = await freeBytes(this.path);
    if (free < (await fullMargin(this.path))) {
      if (this.fault === null) this.setFault({ diskFull: true, sinceMs: Date.now(), message: `disk full: ${this.path} has ${free} bytes free; new data is held and written when space is freed` });
    } else if (this.fault !== null && this.fault.diskFull && this.waiting === 0) this.setFault(null);
  }

  /**
   * After a write committed: the fault is over once no write waits and, for a full disk, the free
   * space is back above the margin (a small write may fit in the store's free pages on a full disk:
   * that alone does not end it, or the state would flap).
   */
  private async settle(): Promise<void> {
    if (this.waiting > 0 || this.fault === null) return;
    if (this.fault.diskFull) return this.checkSpace();
    this.setFault(null);
  }

  /** Runs `fn` in a write transaction; resolves once it is committed, however many retries that takes. */
  write(fn: () => void): Promise<void> {
    if (this.waiting > 0) return this.queue(fn);
    return this.root.transaction(fn).then(
      () => {
        if (this.fault !== null) void this.settle();
      },
      (err: unknown) => this.failed(err, fn),
    );
  }

  /** Stops retrying (shutdown): writes still waiting reject. */
  abandon(): void {
    this.abandoned = true;
  }

  /** Stops retrying once `check` says so (a shard thread: the main thread sets a shared flag at shutdown). */
  abandonWhen(check: () => boolean): void {
    this.stopCheck = check;
  }

  private stopCheck: () => boolean = () => false;

  private get givenUp(): boolean {
    return this.abandoned || this.stopCheck();
  }

  private async failed(err: unknown, fn: () => void): Promise<void> {
    if (this.givenUp) throw err;
    const fault = await describeWriteFailure(err, this.path, this.fault?.sinceMs ?? Date.now());
    if (this.fault === null || this.fault.diskFull !== fault.diskFull) this.setFault(fault);
    return this.queue(fn);
  }

  private queue(fn: () => void): Promise<void> {
    this.waiting++;
    const p = this.tail.then(() => this.retry(fn));
    this.tail = p.catch(() => undefined);
    return p.finally(() => {
      this.waiting--;
      if (this.fault !== null && !this.givenUp) void this.settle();
    });
  }

  private async retry(fn: () => void): Promise<void> {
    for (;;) {
      if (this.givenUp) throw new Error(`write abandoned at shutdown: ${this.fault?.message ?? 'the store was failing'}`);
      try {
        await this.root.transaction(fn);
        return;
      } catch (err) {
        if (this.givenUp) throw err;
        const fault = await describeWriteFailure(err, this.path, this.fault?.sinceMs ?? Date.now());
        if (this.fault === null || this.fault.diskFull !== fault.diskFull) this.setFault(fault);
        await sleep(WRITE_RETRY_MS);
      }
    }
  }

  private setFault(fault: WriteFault | null): void {
    this.fault = fault;
    for (const fn of this.listeners) {
      try {
        fn(fault);
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}
