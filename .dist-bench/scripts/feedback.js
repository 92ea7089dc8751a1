/**
 * dexdata feedback: what agent-platform users sent with the submitFeedback tool, read from the
 * service's data directory (safe while the service runs: LMDB readers never block the writer).
 */
import { loadConfig } from '../engine/config.js';
import { openStore } from '../engine/store/store.js';
import { feedbackRef, openFeedbackStore } from '../gateway/agent/feedback.js';
import { parseTimeSpec, resolveTime, rfc3339 } from '../gateway/http/time.js';
/** The `feedback` actions (the command line is built from this list). */
export const FEEDBACK_ACTIONS = [
    { name: 'list', help: 'feedback in arrival order, oldest first' },
    { name: 'count', help: 'how many records are stored' },
];
class UsageError extends Error {
}
function describe(r) {
    const who = `plan ${r.plan}${r.account === null ? '' : `, account ${r.account}`}`;
    const facts = [rfc3339(r.receivedAt), r.category, who];
    if (r.tool !== null)
        facts.push(`tool ${r.tool}`);
    if (r.rating !== null)
        facts.push(`rating ${r.rating}/5`);
    facts.push(r.client === null ? `via ${r.transport}` : `${r.client.name} ${r.client.version} via ${r.transport}`);
    if (r.contact !== null)
        facts.push(`contact ${JSON.stringify(r.contact)}`);
    return [`${feedbackRef(r.id)}  ${facts.join('  ')}`, ...r.message.split('\n').map((l) => `    ${l}`)];
}
/**
 * Runs one `feedback` action; returns the exit code (2 for a usage error). `options`: `limit`,
 * `since`, `json` (list); `flags`: the config flags (`data-dir`, `config`).
 */
export async function feedbackCommand(action, options, flags, out = (l) => process.stdout.write(`${l}\n`)) {
    const values = options;
    try {
        const limitText = values['limit'];
        if (limitText !== undefined && !/^[1-9][0-9]{0,8}$/.test(limitText))
            throw new UsageError('--limit must be a positive integer');
        const sinceText = values['since'];
        let since;
        if (sinceText !== undefined) {
            const spec = parseTimeSpec(sinceText);
            if (spec === null)
                throw new UsageError('--since must be an RFC 3339 time, yyyy-mm-dd, Unix seconds or an offset such as -7d');
            since = resolveTime(spec, Math.floor(Date.now() / 1000));
        }
        const store = openStore(loadConfig(flags).dataDir);
        try {
            const feedback = openFeedbackStore(store);
            if (action === 'count') {
                out(`${feedback.count()}`);
                return 0;
            }
            const records = feedback.list({ ...(limitText === undefined ? {} : { limit: Number(limitText) }), ...(since === undefined ? {} : { since }) });
            for (const r of records) {
                if (values['json'] === true)
                    out(JSON.stringify({ ...r, id: feedbackRef(r.id), receivedAt: rfc3339(r.receivedAt) }));
                else
                    for (const line of describe(r))
                        out(line);
            }
            if (values['json'] !== true && records.length === 0)
                out('no feedback');
            return 0;
        }
        finally {
            await store.close();
        }
    }
    catch (err) {
        if (!(err instanceof UsageError))
            throw err;
        process.stderr.write(`${err.message}\n`);
        return 2;
    }
}
//# sourceMappingURL=feedback.js.map