/**
 * Reading a snapshot's ring blocks on a thread of its own at a start. Filling them touches fresh
 * shared memory (hundreds of MiB on a busy universe, seconds on some machines), more than any other
 * part of a start; on its own thread it runs while the main thread reads the catalog, opens the
 * source and binds the listeners. The start waits for it before any batch is applied and before it
 * listens, so no shard and no reader sees a block before its rows are in.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EngineViews } from '../state/views.js';
import type { BlocksSection } from './format.js';
import { markBlockRows } from '../state/ring-blocks.js';

const THREAD = new URL('./block-loader-thread.js', import.meta.url);

export interface BlockLoadJob {
  readonly path: string;
  readonly section: BlocksSection;
}

/** A thread attached to the views, started early (its module loading overlaps the start's), given one job or none. */
export class BlockLoader {
  private readonly worker: Worker | null;
  private done = false;

  constructor(views: EngineViews) {
    // Run from TypeScript sources (unit tests) there is no compiled thread entry: loads run inline then.
    this.worker = existsSync(fileURLToPath(THREAD)) ? new Worker(THREAD, { workerData: views.buffers }) : null;
    this.worker?.unref();
  }

  /** Whether jobs run on the thread (false: the caller loads inline). */
  get threaded(): boolean {
    return this.worker !== null && !this.done;
  }

  /** Reads the blocks' rows on the thread; settles once they are in the shared memory. The thread ends afterwards. */
  load(job: BlockLoadJob, views: EngineViews): Promise<void> {
    const worker = this.worker;
    if (worker === null || this.done) return Promise.reject(new Error('the block loader has no thread'));
    this.done = true;
    return new Promise<void>((resolve, reject) => {
      const fail = (err: Error) => {
        // Readers waiting for the rows fail instead (the thread ended without saying so).
        markBlockRows(views, 'failed');
        void worker.terminate();
        reject(err);
      };
      worker.once('error', fail);
      worker.once('exit', (code) => fail(new Error(`the block loader thread exited (${code}) before it read the ring blocks`)));
      worker.once('message', (m: { error?: string }) => {
        worker.removeAllListeners('exit');
        void worker.terminate();
        if (m.error !== undefined) reject(new Error(m.error));
        else resolve();
      });
      worker.postMessage(job);
    });
  }

  /** Ends the thread when no job was given. */
  close(): void {
    if (this.done) return;
    this.done = true;
    void this.worker?.terminate();
  }
}
