export const FEEDBACK_CATEGORIES = ['bug', 'data_quality', 'missing_feature', 'documentation', 'other'];
export const FEEDBACK_MESSAGE_MAX_CHARS = 4000;
/** Records kept at most; beyond it new feedback is refused (the per-minute limits bound the rate, this the disk). */
export const FEEDBACK_MAX_RECORDS = 100_000;
export class FeedbackFull extends Error {
    name = 'FeedbackFull';
}
/** Public reference of a record. */
export function feedbackRef(id) {
    return `fb-${id}`;
}
export function openFeedbackStore(store) {
    const db = store.root.openDB({ name: 'feedback' });
    const entries = () => db.getStats().entryCount;
    const lastId = () => {
        for (const key of db.getKeys({ reverse: true, limit: 1 }))
            return key;
        return 0;
    };
    return {
        async add(entry) {
            let written;
            await db.transaction(() => {
                if (entries() >= FEEDBACK_MAX_RECORDS)
                    return;
                written = { id: lastId() + 1, ...entry };
                void db.put(written.id, written);
            });
            if (written === undefined)
                throw new FeedbackFull(`the feedback store holds its maximum of ${FEEDBACK_MAX_RECORDS} records`);
            return written;
        },
        list(options = {}) {
            const out = [];
            const limit = options.limit ?? Infinity;
            for (const { value } of db.getRange({ start: (options.after ?? 0) + 1 })) {
                if (out.length >= limit)
                    break;
                if (options.since !== undefined && value.receivedAt < options.since)
                    continue;
                out.push(value);
            }
            return out;
        },
        count: entries,
    };
}
//# sourceMappingURL=feedback.js.map