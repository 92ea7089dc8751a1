/**
 * The JS heap of one thread, as operators read it in /stats: what V8 holds for objects (used and
 * reserved) and what sits outside the heap in ArrayBuffers this thread made (not the shared views).
 */
import { getHeapStatistics } from 'node:v8';

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
