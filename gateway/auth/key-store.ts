/**
 * Accounts and their keys, in two LMDB databases on the service's store:
 *
 *  accounts  account id -> Account (plan, label, hash of its one key, creation time, revocation, extra credits)
 *  keys      key hash (hex) -> account id
 *
 * Invariant: each live account has exactly one `keys` entry, the hash of its current key; regenerating
 * replaces that entry in the same transaction, so the old key stops working at the commit. The pepper
 * (meta `auth.pepper`) is made once per deployment and never changes.
 * Writers may be other processes (the `dexdata keys` command): readers see a commit within a millisecond.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import type { PlanName, Store } from '../../engine/read/index.js';
import { generateKey, hashKey, hashKeyText, looksLikeKey, sameHash } from './keys.js';

/** Plans an account can have: every plan but keyless. */
export type KeyedPlan = Exclude<PlanName, 'keyless'>;
export const KEYED_PLANS: readonly KeyedPlan[] = ['free', 'dev', 'pro', 'enterprise'];

export interface Account {
  readonly id: number;
  readonly plan: KeyedPlan;
  readonly label: string;
  /** Hex SHA-256 of pepper || key. */
  readonly keyHash: string;
  /** Unix seconds; anchors the billing period of paid plans. */
  readonly createdAt: number;
  /** Unix seconds; 0 while the account is live. */
  readonly revokedAt: number;
  /** Credits added on top of the plan's allowance, valid until `extraCreditsUntil` (Unix s). */
  readonly extraCredits: number;
  readonly extraCreditsUntil: number;
}

export interface KeyStore {
  create(plan: KeyedPlan, label: string, now: number): { account: Account; key: string };
  get(id: number): Account | undefined;
  list(): Account[];
  /** A new key for the account; the old one is rejected from the commit on. */
  regenerate(id: number): { account: Account; key: string };
  revoke(id: number, now: number): Account;
  /** Adds credits usable until `until` (Unix s); credits still valid are kept. */
  addCredits(id: number, credits: number, until: number, now: number): Account;
  /** The live account of a key, or undefined for a malformed, unknown or revoked key. */
  verify(key: string): Account | undefined;
  /** A number that changes with every change to accounts or keys, by any process. */
  version(): number;
}

const PEPPER_KEY = 'auth.pepper';
const NEXT_ACCOUNT_KEY = 'auth.nextAccount';
/** Bumped by every change to accounts or keys (by any process), so verified keys can be reused until then. */
const VERSION_KEY = 'auth.version';
/** A change made by another process (the `dexdata keys` command) is seen within this long. */
const VERSION_RECHECK_MS = 1;
/** Verified keys remembered per process, by digest; the memo is emptied when full. */
const VERIFIED_MAX = 10_000;
const PEPPER_BYTES = 32;

export function openKeyStore(store: Store): KeyStore {
  const accounts: Database<Account, number> = store.root.openDB<Account, number>({ name: 'accounts' });
  const keys: Database<number, string> = store.root.openDB<number, string>({ name: 'keys' });
  const meta = store.meta;

  const pepper = Buffer.from(
    store.root.transactionSync(() => {
      let hex = meta.get(PEPPER_KEY) as string | undefined;
      if (hex === undefined) {
        hex = randomBytes(PEPPER_BYTES).toString('hex');
        meta.putSync(PEPPER_KEY, hex);
      }
      return hex;
    }),
    'hex',
  );

  /** Called inside each mutating transaction. */
  function bump(): void {
    meta.putSync(VERSION_KEY, ((meta.get(VERSION_KEY) as number | undefined) ?? 0) + 1);
    versionReadAtMs = -Infinity;
  }
  const verified = new Map<string, { version: number; account: Account }>();
  // The store's key-set version, read again at most every VERSION_RECHECK_MS (and at once after a change made here).
  let version = 0;
  let versionReadAtMs = -Infinity;

  function must(id: number): Account {
    const a = accounts.get(id);
    if (a === undefined) throw new Error(`no account ${id}`);
    return a;
  }

  return {
    create(plan, label, now) {
      const key = generateKey();
      const keyHash = hashKey(pepper, key).toString('hex');
      const account = store.root.transactionSync(() => {
        const id = (meta.get(NEXT_ACCOUNT_KEY) as number | undefined) ?? 1;
        meta.putSync(NEXT_ACCOUNT_KEY, id + 1);
        const a: Account = { id, plan, label, keyHash, createdAt: Math.floor(now), revokedAt: 0, extraCredits: 0, extraCreditsUntil: 0 };
        accounts.putSync(id, a);
        keys.putSync(keyHash, id);
        bump();
        return a;
      });
      return { account, key };
    },
    get: (id) => accounts.get(id),
    list: () => [...accounts.getRange({}).map(({ value }) => value)],
    regenerate(id) {
      const key = generateKey();
      const keyHash = hashKey(pepper, key).toString('hex');
      const account = store.root.transactionSync(() => {
        const old = must(id);
        if (old.revokedAt !== 0) throw new Error(`account ${id} is revoked`);
        keys.removeSync(old.keyHash);
        const a: Account = { ...old, keyHash };
        accounts.putSync(id, a);
        keys.putSync(keyHash, id);
        bump();
        return a;
      });
      return { account, key };
    },
    revoke(id, now) {
      return store.root.transactionSync(() => {
        const old = must(id);
        keys.removeSync(old.keyHash);
        const a: Account = { ...old, revokedAt: old.revokedAt || Math.floor(now) };
        accounts.putSync(id, a);
        bump();
        return a;
      });
    },
    addCredits(id, credits, until, now) {
      if (!Number.isSafeInteger(credits) || credits <= 0) throw new Error('credits must be a positive integer');
      return store.root.transactionSync(() => {
        const old = must(id);
        const kept = old.extraCreditsUntil > now ? old.extraCredits : 0;
        const a: Account = { ...old, extraCredits: kept + credits, extraCreditsUntil: Math.max(until, old.extraCreditsUntil) };
        accounts.putSync(id, a);
        bump();
        return a;
      });
    },
    version: () => (meta.get(VERSION_KEY) as number | undefined) ?? 0,
    verify(key) {
      if (!looksLikeKey(key)) return undefined;
      const digest = hashKeyText(pepper, key);
      // Reuse a verification while no account or key has changed since (checked on every call).
      const nowMs = performance.now();
      if (nowMs - versionReadAtMs >= VERSION_RECHECK_MS) {
        version = (meta.get(VERSION_KEY) as number | undefined) ?? 0;
        versionReadAtMs = nowMs;
      }
      const known = verified.get(digest);
      if (known !== undefined && known.version === version) return known.account;
      const hash = Buffer.from(digest, 'latin1');
      const id = keys.get(hash.toString('hex'));
      if (id === undefined) return undefined;
      const a = accounts.get(id);
      if (a === undefined || a.revokedAt !== 0 || !sameHash(hash, a.keyHash)) return undefined;
      if (verified.size >= VERIFIED_MAX) verified.clear();
      verified.set(digest, { version, account: a });
      return a;
    },
  };
}
