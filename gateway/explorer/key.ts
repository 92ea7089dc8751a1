/**
 * The explorer's key: an account of the `explorer` plan in the key store like any other (listed by
 * `dexdata keys list`, metered on its own counters, revoked or regenerated like any key), made at
 * the first start and given a new key at each start, since only the hash of a key is stored. The
 * key is held in memory and handed to the explorer page only (serve.ts); nothing bypasses the plan.
 */
import type { Account, KeyStore } from '../auth/key-store.js';

export const EXPLORER_PLAN = 'explorer';
export const EXPLORER_LABEL = 'web explorer (issued by the service at each start)';

export interface ExplorerKey {
  readonly account: Account;
  readonly key: string;
}

/** The live explorer account with a new key, or a new account when there is none. */
export function issueExplorerKey(keys: KeyStore, now: number): ExplorerKey {
  const live = keys.list().find((a) => a.plan === EXPLORER_PLAN && a.revokedAt === 0);
  return live === undefined ? keys.create(EXPLORER_PLAN, EXPLORER_LABEL, now) : keys.regenerate(live.id);
}
