/**
 * How the process's memory is laid out and handed back (Linux with glibc only; elsewhere nothing is
 * done). Large shared columns are backed by transparent huge pages where the kernel offers them on
 * request (`madvise` mode, the common default): touching fresh memory costs a fault per 4 KiB page
 * otherwise, 7 to 12 s per GiB on some virtual machines, which a start at millions of pools pays
 * for every column it loads. Then the C library's allocator: glibc keeps what the process freed in its arenas for reuse: buffers under its
 * dynamic mmap threshold (which rises up to 32 MiB as large blocks are freed) come from the arenas,
 * and once freed stay resident. A snapshot cut's copies and the backfill's buffers are hundreds of
 * MiB at a few hundred thousand pools, freed in one go and not needed again soon.
 */
import koffi from 'koffi';

/** mallopt parameter number of the mmap threshold (malloc.h). */
const M_MMAP_THRESHOLD = -3;
/** Buffers of this size or more get a mapping of their own, returned to the system when freed (1 MiB was tried: the arenas kept almost as much). */
export const MMAP_THRESHOLD_BYTES = 128 * 1024;

/** madvise advice asking for transparent huge pages on a range (linux/mman.h). */
const MADV_HUGEPAGE = 14;
/** madvise advice dropping a range's pages: private anonymous memory (the shared columns') reads zero after it and holds no memory until written. */
const MADV_DONTNEED = 4;
/** The base page size of x86-64 and of most arm64 kernels. */
const PAGE_BYTES = 4096;
/** The huge page size of x86-64 and of arm64 with 4 KiB pages. */
export const HUGE_PAGE_BYTES = 2 * 1024 * 1024;
/**
 * Buffers of at least this size are advised: the huge page holding the end of a column's rows in
 * use is partly used (at most 2 MiB of a 32 MiB or larger column, 6 %); smaller buffers stay on 4 KiB pages.
 */
export const HUGE_PAGE_MIN_BYTES = 32 * 1024 * 1024;

interface Glibc {
  readonly mallopt: (param: number, value: number) => number;
  readonly mallocTrim: (pad: number) => number;
  readonly madvise: (address: number, length: number, advice: number) => number;
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
    glibc = {
      mallopt: lib.func('int mallopt(int, int)') as Glibc['mallopt'],
      mallocTrim: lib.func('int malloc_trim(size_t)') as Glibc['mallocTrim'],
      madvise: lib.func('int madvise(uintptr_t, size_t, int)') as Glibc['madvise'],
    };
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

/**
 * Asks for huge pages on the whole huge pages inside each buffer of at least HUGE_PAGE_MIN_BYTES,
 * before anything touches them (fresh, untouched shared columns). Returns the bytes advised (0
 * without glibc, or where the kernel refuses: huge pages off).
 */
export function adviseHugePages(buffers: Iterable<ArrayBufferView>): number {
  let advised = 0;
  for (const b of buffers) advised += advise(b, b.byteLength);
  return advised;
}

/**
 * As adviseHugePages, for growable shared buffers (the catalog's parts): the whole range they may
 * grow to, reserved up front, so the pages a start or a backfill grows into fault in 2 MiB at a time.
 */
export function adviseGrowableHugePages(buffers: Iterable<SharedArrayBuffer & { readonly maxByteLength: number }>): number {
  let advised = 0;
  for (const b of buffers) advised += advise(new Uint8Array(b), b.maxByteLength);
  return advised;
}

/**
 * Gives the system back the memory of bytes [from, to) of `view`'s memory: the whole pages inside
 * that range read zero afterwards and hold no memory until written. The pages are huge ones where
 * the view was advised to huge pages (adviseHugePages), else 4 KiB ones: dropping part of a huge
 * page would let the kernel's collapsing thread fill it whole again. With `freeToEnd` the bytes from
 * `to` to the view's end hold nothing wanted either, so the page holding `to` goes too. Returns the
 * bytes given back (0 without glibc, or for a range holding no whole page).
 */
export function releasePages(view: ArrayBufferView, from: number, to: number, freeToEnd = false): number {
  const libc = load();
  if (libc === null || to <= from) return 0;
  const page = BigInt(view.byteLength >= HUGE_PAGE_MIN_BYTES ? HUGE_PAGE_BYTES : PAGE_BYTES);
  const at = BigInt(koffi.address(view) as bigint | number);
  const first = ((at + BigInt(Math.ceil(from)) + page - 1n) / page) * page;
  const viewEnd = ((at + BigInt(view.byteLength)) / page) * page;
  let end = ((at + BigInt(Math.floor(to))) / page) * page;
  if (freeToEnd && end < viewEnd) end += page;
  if (end <= first) return 0;
  return libc.madvise(Number(first), Number(end - first), MADV_DONTNEED) === 0 ? Number(end - first) : 0;
}

/** madvise(MADV_HUGEPAGE) on the whole huge pages of the `bytes` from the start of `view`'s memory; the bytes advised. */
function advise(view: ArrayBufferView, bytes: number): number {
  if (bytes < HUGE_PAGE_MIN_BYTES) return 0;
  const libc = load();
  if (libc === null) return 0;
  const huge = BigInt(HUGE_PAGE_BYTES);
  const at = BigInt(koffi.address(view) as bigint | number);
  const first = ((at + huge - 1n) / huge) * huge;
  const end = ((at + BigInt(bytes)) / huge) * huge;
  if (end <= first) return 0;
  return libc.madvise(Number(first), Number(end - first), MADV_HUGEPAGE) === 0 ? Number(end - first) : 0;
}
