import { describe, expect, it } from 'vitest';
import { fixMmapThreshold, trimMalloc } from './memory.js';

const glibc = process.platform === 'linux' && (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime !== undefined;

describe('malloc settings', () => {
  it.runIf(glibc)('sets the mmap threshold and trims the arenas through glibc', () => {
    expect(fixMmapThreshold()).toBe(true);
    expect(trimMalloc()).toBeTypeOf('number');
  });

  it.skipIf(glibc)('does nothing without glibc', () => {
    expect(fixMmapThreshold()).toBe(false);
    expect(trimMalloc()).toBeNull();
  });
});
