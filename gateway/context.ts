/** What the gateway reads from: the engine through its read surface (engine/read), the clock and the log. */
import { type EngineParts, EngineReader, type Log, type PoolRanker, type Store } from '../engine/read/index.js';

/** What the process hands the gateway: the engine's parts (the gateway reads them through an EngineReader). */
export interface GatewayContext extends EngineParts {
  readonly store: Store;
  readonly ranker: PoolRanker;
  /** Unix seconds. */
  now(): number;
  /** The engine's own figures for /stats (`engine`: log, snapshots); absent without it. */
  engineStats?: () => object;
  /** The service's log (engine/log.ts); nothing is logged without it. */
  log?: Log;
}

/** What the gateway's handlers read from. */
export interface ServeContext {
  /** The engine: lookups, pool and token state, candles, windows, prices, chains, search, swaps. */
  readonly read: EngineReader;
  /** The gateway's own databases in the store (API keys, credit ledgers, feedback). */
  readonly store: Store;
  /** Unix seconds. */
  now(): number;
  readonly engineStats?: (() => object) | undefined;
  readonly log?: Log | undefined;
}

/** The handlers' context over what the process handed over (read live: a caller may swap its clock). */
export function serveContext(ctx: GatewayContext): ServeContext {
  const read = new EngineReader(ctx);
  return {
    read,
    store: ctx.store,
    now: () => ctx.now(),
    get engineStats() {
      return ctx.engineStats;
    },
    get log() {
      return ctx.log;
    },
  };
}
