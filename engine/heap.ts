/**
 * The JS heap of one thread, as operators read it in /stats: what V8 holds for objects (used and
 * reserved) and what sits outside the heap in ArrayBuffers this thread made (not the shared views).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface HeapFigures {
  /** Bytes of live and not yet collected objects. */
  readonly used: number;
  /** Bytes V8 holds for the heap (resident once touched). */
  readonly total: number;
  /** Bytes malloc'd for objects outside the heap (ArrayBuffers, strings held by native code). */
  readonly external: number;
}

export function heapFigures(): HeapFigures {
  const h = getHeapStatistics();
  return { used: h.used_heap_size, total: h.total_heap_size, external: h.external_memory };
}

type Collect = () => void;
let collect: Collect | null | undefined;

/**
 * A full collection of this thread's heap, now; returns its milliseconds (null when the runtime
 * allows none). For after the catch-up: what the backfill left (large ArrayBuffers that only small
 * objects of the heap reference) gives V8 no reason to collect, and would stay resident until some
 * later major GC, which a quiet thread may not run for hours.
 */
export function collectGarbage(): number | null {
  if (collect === undefined) {
    const exposed = (globalThis as { gc?: unknown }).gc;
    if (typeof exposed === 'function') collect = exposed as Collect;
    else {
      try {
        // The flag gives new contexts a gc function bound to this isolate.
        setFlagsFromString('--expose-gc');
        collect = runInNewContext('gc') as Collect;
      } catch {
        collect = null;
      }
    }
  }
  if (collect === null) return null;
  const t0 = performance.now();
  // Called bare: a full collection that frees unreferenced ArrayBuffers (the options form of
  // Node 20's V8 left them allocated).
  collect();
  return performance.now() - t0;
}
