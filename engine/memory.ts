/**
 * How the C library's allocator hands memory back to the system (Linux with glibc only; elsewhere
 * nothing is done). glibc keeps what the process freed in its arenas for reuse: buffers under its
 * dynamic mmap threshold (which rises up to 32 MiB as large blocks are freed) come from the arenas,
 * and once freed stay resident. A snapshot cut's copies and the backfill's buffers are hundreds of
 * MiB at a few hundred thousand pools, freed in one go and not needed again soon.
 */
import koffi from 'koffi';

/** mallopt parameter number of the mmap threshold (malloc.h). */
const M_MMAP_THRESHOLD = -3;
/** Buffers of this size or more get a mapping of their own, returned to the system when freed (1 MiB was tried: the arenas kept almost as much). */
export const MMAP_THRESHOLD_BYTES = 128 * 1024;

interface Glibc {
  readonly mallopt: (param: number, value: number) => number;
  readonly mallocTrim: (pad: number) => number;
}

let glibc: Glibc | null | undefined;

function load(): Glibc | null {
  if (glibc !== undefined) return glibc;
  glibc = null;
  // Only glibc has these calls with these meanings (musl's malloc has neither setting).
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  if (process.platform !== 'linux' || header?.glibcVersionRuntime === undefined) return null;
  try {
    const lib = koffi.load('libc.so.6');
    glibc = { mallopt: lib.func('int mallopt(int, int)') as Glibc['mallopt'], mallocTrim: lib.func('int malloc_trim(size_t)') as Glibc['mallocTrim'] };
  } catch {
    glibc = null;
  }
  return glibc;
}

/** At start, before the large buffers: a fixed mmap threshold (per process). Returns whether it was set. */
export function fixMmapThreshold(): boolean {
  return load()?.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) === 1;
}

/** Returns the arenas' free pages to the system now (all threads' arenas); its milliseconds, or null without glibc. */
export function trimMalloc(): number | null {
  const libc = load();
  if (libc === null) return null;
  const t0 = performance.now();
  libc.mallocTrim(0);
  return performance.now() - t0;
}
