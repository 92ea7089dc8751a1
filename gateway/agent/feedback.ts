/**
 * Feedback sent through the submitFeedback tool, kept in the `feedback` LMDB database of the
 * service's store: integer id -> FeedbackRecord, ids ascending in arrival order. Written by the
 * gateway (an id is taken and written in one write transaction, so it is unique even with another
 * writer), read by `dexdata feedback list`. A record is acknowledged only once committed.
 */
import type { Database } from 'lmdb';
import type { Store } from '../../engine/read/index.js';

export const FEEDBACK_CATEGORIES = ['bug', 'data_quality', 'missing_feature', 'documentation', 'other'] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

export const FEEDBACK_MESSAGE_MAX_CHARS = 4000;
/** Records kept at most; beyond it new feedback is refused (the per-minute limits bound the rate, this the disk). */
export const FEEDBACK_MAX_RECORDS = 100_000;

export interface FeedbackRecord {
  readonly id: number;
  /** Unix seconds. */
  readonly receivedAt: number;
  readonly category: FeedbackCategory;
  readonly message: string;
  /** The tool the feedback is about, when named. */
  readonly tool: string | null;
  /** 1 (poor) to 5 (excellent), when given. */
  readonly rating: number | null;
  /** How to reach the sender, when given. */
  readonly contact: string | null;
  /** Plan of the sender's connection, and its account (null when keyless). */
  readonly plan: string;
  readonly account: number | null;
  /** clientInfo the sender's MCP client gave, when known. */
  readonly client: { readonly name: string; readonly version: string } | null;
  readonly transport: string;
}

export type NewFeedback = Omit<FeedbackRecord, 'id'>;

export interface FeedbackStore {
  /** Stores one record; resolves once it is durable. Throws FeedbackFull at the cap. */
  add(entry: NewFeedback): Promise<FeedbackRecord>;
  /** Records in arrival order, from id `after` + 1 on (all by default), at most `limit`. */
  list(options?: { readonly after?: number; readonly limit?: number; readonly since?: number }): FeedbackRecord[];
  count(): number;
}

export class FeedbackFull extends Error {
  override readonly name = 'FeedbackFull';
}

/** Public reference of a record. */
export function feedbackRef(id: number): string {
  return `fb-${id}`;
}

export function openFeedbackStore(store: Store): FeedbackStore {
  const db: Database<FeedbackRecord, number> = store.root.openDB<FeedbackRecord, number>({ name: 'feedback' });
  const entries = (): number => (db.getStats() as { entryCount: number }).entryCount;
  const lastId = (): number => {
    for (const key of db.getKeys({ reverse: true, limit: 1 })) return key;
    return 0;
  };
  return {
    async add(entry) {
      let written: FeedbackRecord | undefined;
      await db.transaction(() => {
        if (entries() >= FEEDBACK_MAX_RECORDS) return;
        written = { id: lastId() + 1, ...entry };
        void db.put(written.id, written);
      });
      if (written === undefined) throw new FeedbackFull(`the feedback store holds its maximum of ${FEEDBACK_MAX_RECORDS} records`);
      return written;
    },
    list(options = {}) {
      const out: FeedbackRecord[] = [];
      const limit = options.limit ?? Infinity;
      for (const { value } of db.getRange({ start: (options.after ?? 0) + 1 })) {
        if (out.length >= limit) break;
        if (options.since !== undefined && value.receivedAt < options.since) continue;
        out.push(value);
      }
      return out;
    },
    count: entries,
  };
}
