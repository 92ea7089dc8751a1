/**
 * Keys that stop working while they are in use: a revoked or regenerated key is refused from the
 * commit on (key-store.ts), and what it opened before (event streams, agent sessions) must end too.
 * The watch reads the key store's version word every KEY_WATCH_INTERVAL_MS (the `dexdata keys`
 * command changes it from another process) and, when it moved, hands out a test of whether an
 * account as a caller verified it still holds a working key (same key hash, not revoked).
 */
import { errorText, fallbackLog } from '../../engine/read/index.js';
import type { Account, KeyStore } from './key-store.js';

/** How often the key store is looked at: a revoked key's streams end within about this long. */
export const KEY_WATCH_INTERVAL_MS = 250;

/** The `error` event message of a stream whose key stopped working. */
export const KEY_REVOKED_MESSAGE = 'the API key of this stream was revoked or replaced; reconnect with a valid key';

/** True when the key an account was verified with no longer works. */
export type KeyGone = (verified: Account) => boolean;

/** Calls `onChange` each time accounts or keys changed; returns the function that stops watching. */

export function watchRevokedKeys(keys: KeyStore, onChange: (gone: KeyGone) => void): () => void {
  let version = keys.version();
  const gone: KeyGone = (verified) => {
    const now = keys.get(verified.id);
    return now === undefined || now.revokedAt !== 0 || now.keyHash !== verified.keyHash;
  };
  const timer = setInterval(() => {
    try {
      const v = keys.version();
      if (v === version) return;
      version = v;
      onChange(gone);
    } catch (err) {
      fallbackLog().error(`auth: revoked keys not looked for: ${errorText(err)}`);
    }
  }, KEY_WATCH_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
