/** The snapshot writer's thread (writer-thread.ts): writes each captured snapshot it is given, one at a time, and answers with its path or the error. */
import { parentPort } from 'node:worker_threads';
import { writeSnapshot, type CapturedViews } from './write.js';

export interface WriteJob {
  readonly dir: string;
  readonly captured: CapturedViews;
}

parentPort!.on('message', (job: WriteJob) => {
  writeSnapshot(job.dir, job.captured).then(
    (path) => parentPort!.postMessage({ path }),
    (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) }),
  );
});
