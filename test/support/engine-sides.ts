/**
 * Two (or more) whole engines fed the same simulated market, each with its real gateway over HTTP:
 * the tests that compare what a tiered engine serves with what an engine that never lets a pool go
 * quiet serves (test/tiers.test.ts, test/windows-minute.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as EngineModule from '../../engine/engine.js';
import type { Engine } from '../../engine/engine.js';
import { createSimulator } from '../../engine/sources/simulator/index.js';
import type { SimulatorOptions } from '../../engine/sources/simulator/simulator.js';
import { startGateway, type Gateway } from '../../gateway/server.js';

// The compiled engine (npm test builds first): its shard threads load their compiled entry.
const { startEngine } = (await import('../../dist/engine/engine.js' as string)) as typeof EngineModule;

export const HOUR = 3600;
export const GENESIS = 1_767_225_600; // 2026-01-01T00:00:00Z
const SIM = { seed: 23, pools: 400, genesisTime: GENESIS, swapsPerSecond: 0.3, newPoolsPerHour: 2 };
export const CAPACITY = { pools: 4096, tokens: 4096, chains: 16, blocks: 4096 };

export interface Side {
  readonly engine: Engine;
  readonly gateway: Gateway;
  get(path: string): Promise<{ status: number; body: string }>;
}

export interface Sides {
  /** An engine on the shared clock, caught up; pools go quiet after `quietAfterSeconds` (null: never). */
  side(clock: { now: number }, quietAfterSeconds: number | null): Promise<Side>;
  /** Stops every engine and gateway started, and removes their data. */
  close(): Promise<void>;
}

/** `market`: the simulated market's options over the default ones (SIM). */
export function engineSides(dirPrefix: string, market: Partial<SimulatorOptions> = {}): Sides {
  const dirs: string[] = [];
  const stops: (() => Promise<unknown>)[] = [];
  return {
    async side(clock, quietAfterSeconds) {
      const dir = mkdtempSync(join(tmpdir(), dirPrefix));
      dirs.push(dir);
      const engine = await startEngine({
        dataDir: dir,
        shards: 2,
        capacity: CAPACITY,
        source: createSimulator({ ...SIM, ...market }),
        now: () => clock.now,
        catchUpStepSeconds: HOUR,
        liveTickMs: 20,
        sweepIntervalMs: 50,
        snapshots: null,
        tiers: quietAfterSeconds === null ? null : { quietAfterSeconds },
      });
      stops.push(() => engine.stop());
      await engine.caughtUp;
      const gateway = await startGateway(
        { views: engine.views, registry: engine.registry, store: engine.store, ranker: engine.shards, now: () => clock.now, swaps: engine.shards.swapFeed },
        { host: '127.0.0.1', port: 0 },
      );
      stops.push(() => gateway.close());
      return {
        engine,
        gateway,
        async get(path) {
          const res = await fetch(`http://127.0.0.1:${gateway.port}${path}`);
          return { status: res.status, body: await res.text() };
        },
      };
    },
    async close() {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}
