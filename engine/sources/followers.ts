/**
 * One step of every chain follower of a source (EVM or Solana), each reading its own node: a node
 * that stays unreachable after its client's retries does not stop the service. Its chain waits (and
 * says so once per outage, then again when it returns) and resumes where it stopped.
 */
import type { ChainEventBatch } from '../events/model.js';
import { RpcError } from './evm/rpc.js';

/** How long a chain whose node is unreachable waits before it is asked again. */
const DOWN_RETRY_MS = 1_000;

export interface Follower {
  readonly config: { readonly id: string };
  step(): Promise<ChainEventBatch | null>;
}

/** Since when each follower's node has been unreachable (null: reachable), kept across steps. */
export type Outages = (number | null)[];

/** Steps every follower at once; the batches they made (none from a chain whose node is down). */
export async function stepFollowers(followers: readonly Follower[], down: Outages, log: (line: string) => void): Promise<ChainEventBatch[]> {
  const batches = await Promise.all(
    followers.map(async (f, i) => {
      try {
        const b = await f.step();
        if (down[i] !== null && down[i] !== undefined) log(`${f.config.id}: node reachable again after ${Math.round((Date.now() - down[i]!) / 1000)} s; ingestion resumes`);
        down[i] = null;
        return b;
      } catch (err) {
        if (!(err instanceof RpcError) || !err.retryable) throw err;
        if (down[i] === null || down[i] === undefined) down[i] = Date.now();
        log(`${f.config.id}: node unreachable since ${new Date(down[i]!).toISOString()} (${err.message}); retrying`);
        await new Promise((r) => setTimeout(r, DOWN_RETRY_MS));
        return null;
      }
    }),
  );
  return batches.filter((b): b is ChainEventBatch => b !== null);
}
