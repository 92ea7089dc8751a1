import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from './store.js';

describe('openStore', () => {
  it('opens a data directory whose name has a dot, and reopens what it wrote', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'dexdata-store-'));
    const dir = join(parent, 'data.v1');
    try {
      const store = openStore(dir);
      await store.meta.put('probe', 42);
      await store.close();
      expect(statSync(dir).isDirectory()).toBe(true);
      const again = openStore(dir);
      expect(again.meta.get('probe')).toBe(42);
      await again.close();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
