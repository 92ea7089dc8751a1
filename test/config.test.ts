import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, engineCapacity, loadConfig } from '../engine/config.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dexdata-config-'));
  dirs.push(dir);
  return dir;
}

describe('configuration', () => {
  it('has working defaults: simulator with 20,000 pools over 30 days on 127.0.0.1:8080', () => {
    const c = loadConfig({}, {});
    expect(c.simulator.pools).toBe(20_000);
    expect(c.simulator.backfillDays).toBe(30);
    expect(c.gateway).toEqual({ host: '127.0.0.1', port: 8080, front: 'off' });
    expect(c.shards).toBe(2);
    expect(engineCapacity(c).pools).toBeGreaterThanOrEqual(25_000);
    expect(Object.isFrozen(c.simulator)).toBe(true);
  });

  it('takes the file, then environment variables, then flags, each over the one before', () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ dataDir: '/from/file', gateway: { port: 7000 }, simulator: { seed: 1 } }));
    const c = loadConfig({ config: file, seed: '3' }, { DEXDATA_PORT: '7100', DEXDATA_SEED: '2' });
    expect(c.dataDir).toBe('/from/file');
    expect(c.gateway.port).toBe(7100);
    expect(c.simulator.seed).toBe(3);
  });

  it('lists every problem at once, naming where each came from', () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ shards: 0, gateway: { port: 70_000 }, unknownKey: true }));
    let error: unknown;
    try {
      loadConfig({ config: file, pools: 'many' }, { DEXDATA_SEED: '-1' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/flag --pools must be a number/);
    expect(problems).toMatch(/^shards:/m);
    expect(problems).toMatch(/^gateway\.port:/m);
    expect(problems).toMatch(/^simulator\.seed:/m);
    expect(problems).toMatch(/unknownKey/);
    expect((error as ConfigError).problems.length).toBeGreaterThanOrEqual(5);
  });

  it('reports an unreadable config file instead of ignoring it', () => {
    expect(() => loadConfig({ config: '/nonexistent/dexdata.json' }, {})).toThrow(/nonexistent/);
  });
});
