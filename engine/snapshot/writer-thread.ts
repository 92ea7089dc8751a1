/**
 * Writing snapshot files on a thread of their own. Each of a file's writes waits for an event-loop
 * turn of the thread that issued it, and the main thread's turns are long while it ingests (a catch-up
 * step, pools being created): at 10 M pools a 1.45 GiB file took 52 s on it (bench/RESULTS.md). This
 * thread does nothing else, so its turns are short. The capture's bytes reach it without a copy: views
 * of shared memory are shared, and the main thread's own copies made for this cut (`transferables`)
 * are moved, so nothing may use them once handed over.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { writeSnapshot, type CapturedViews, type MainCut } from './write.js';
import type { WriteJob } from './write-thread.js';

const THREAD = new URL('./write-thread.js', import.meta.url);

/** Buffers moved rather than copied to the thread from this size up (smaller ones are copied: a copy is cheaper than the move's bookkeeping). */
const MOVE_FROM_BYTES = 64 * 1024; // 64 KiB

/**
 * The buffers of a cut made for it alone on the main thread (its column copies, the catalog's copied
 * sections, the source's saved state), each whole and not shared: they can move to the writer.
 */
export function transferables(cut: MainCut): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (view: Uint8Array | undefined) => {
    if (view === undefined || !(view.buffer instanceof ArrayBuffer)) return;
    if (view.byteOffset !== 0 || view.byteLength !== view.buffer.byteLength || view.byteLength < MOVE_FROM_BYTES) return;
    out.add(view.buffer);
  };
  for (const copy of cut.copies.values()) add(copy);
  for (const { bytes } of cut.catalog.sections) add(bytes);
  add(cut.sourceState);
  return [...out];
}

export class SnapshotWriter {
  /**
   * Started at the first write (not at a start, whose own threads load meanwhile). Null when run
   * from TypeScript sources (unit tests: no compiled thread entry), after the thread failed, or once
   * closed: files are written on the calling thread then.
   */
  private worker: Worker | null | undefined = undefined;
  private writing: { resolve: (path: string) => void; reject: (err: Error) => void } | null = null;

  private thread(): Worker | null {
    if (this.worker !== undefined) return this.worker;
    if (!existsSync(fileURLToPath(THREAD))) return (this.worker = null);
    const worker = new Worker(THREAD);
    this.worker = worker;
    worker.unref();
    worker.on('message', (m: { path?: string; error?: string }) => {
      const w = this.writing;
      this.writing = null;
      worker.unref();
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.path!);
    });
    const lost = (why: string) => {
      if (this.worker === worker) this.worker = null;
      const w = this.writing;
      this.writing = null;
      w?.reject(new Error(`the snapshot writer thread ${why}`));
    };
    worker.once('error', (err) => lost(`failed: ${err.message}`));
    worker.once('exit', (code) => lost(`exited (${code})`));
    return worker;
  }

  /**
   * Writes `captured` into `dir` (writeSnapshot), one file at a time; resolves with its path once it
   * is durable. `cut`'s own buffers move to the thread: the caller uses neither them nor `captured`'s
   * views of them afterwards.
   */
  write(dir: string, captured: CapturedViews, cut: MainCut): Promise<string> {
    const worker = this.thread();
    if (worker === null) return writeSnapshot(dir, captured);
    if (this.writing !== null) return Promise.reject(new Error('a snapshot is already being written'));
    return new Promise<string>((resolve, reject) => {
      try {
        worker.postMessage({ dir, captured } satisfies WriteJob, transferables(cut));
      } catch (err) {
        // Nothing was handed over (a buffer that cannot be cloned or moved): this write fails alone.
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      this.writing = { resolve, reject };
      // Held while it writes: a stop waits for the file (the thread alone would not keep the process up).
      worker.ref();
    });
  }

  close(): void {
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
  }
}
