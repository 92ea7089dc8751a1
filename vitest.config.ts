import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that run for a minute or more (each starts real services and waits on their backfills):
 * started first, so that on two workers the suite does not end waiting on one of them alone.
 */
const LONG_FIRST = ['test/service.test.ts', 'test/proxy.test.ts', 'test/streams-service.test.ts', 'test/evm-from-block.test.ts', 'test/store-records.test.ts', 'test/cli.test.ts', 'test/simulator-large.test.ts'];

class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((name) => f.moduleId.endsWith(name));
      return i < 0 ? LONG_FIRST.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

const INCLUDE = ['test/**/*.test.ts', 'engine/**/*.test.ts', 'gateway/**/*.test.ts'];
/** Files that hold the service to a time per answer (1 s per malformed request): run alone, after the rest. */
const ALONE = ['test/http-generator.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Two files at a time: most of a file's time is spent waiting on the services it starts.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    sequence: { sequencer: LongFirst },
    projects: [
      { extends: true, test: { name: 'together', include: INCLUDE, exclude: ALONE, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
});
