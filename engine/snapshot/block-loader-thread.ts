/** The block loader's thread (block-loader.ts): attaches to the views, reads one snapshot's ring block rows into them. */
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { EngineViews, type EngineBuffers } from '../state/views.js';
import { loadBlockRows } from './blocks.js';
import { markBlockRows } from '../state/ring-blocks.js';
import type { BlockLoadJob } from './block-loader.js';

const views = EngineViews.attach(workerData as EngineBuffers);
parentPort!.once('message', (job: BlockLoadJob) => {
  try {
    const fd = openSync(job.path, 'r');
    try {
      loadBlockRows(fd, job.section, views);
    } finally {
      closeSync(fd);
    }
    // Readers waiting for the rows go on now.
    markBlockRows(views, 'loaded');
    parentPort!.postMessage({});
  } catch (err) {
    // They fail instead of waiting: the start fails and the service stops.
    markBlockRows(views, 'failed');
    parentPort!.postMessage({ error: `${job.path}: ring blocks: ${err instanceof Error ? err.message : String(err)}` });
  }
});
