/**
 * dexdata keys: accounts and their API keys, in the service's data directory (safe while the
 * service runs: LMDB serialises writers across processes and the gateway sees a commit at once).
 * A key is printed once, by `create` and `regenerate`; only its hash is stored.
 */
import { loadConfig } from '../engine/config.js';
import { openStore } from '../engine/store/store.js';
import { KEYED_PLANS, openKeyStore } from '../gateway/auth/key-store.js';
import { billingPeriod, HOUR_S, ROLLING_HOURS } from '../gateway/metering/period.js';
/** The `keys` actions: name, arguments, what each does (the command line is built from this list). */
export const KEYS_ACTIONS = [
    { name: 'create', args: [], help: 'make an account and print its key (shown once)' },
    { name: 'show', args: ['account'], help: 'one account (never its key)' },
    { name: 'list', args: [], help: 'every account' },
    { name: 'regenerate', args: ['account'], help: 'a new key; the old one stops working at once' },
    { name: 'revoke', args: ['account'], help: 'the key stops working; the account is kept' },
    { name: 'credits', args: ['account', 'n'], help: 'add n credits to the current allowance window' },
];
class UsageError extends Error {
}
function accountId(text) {
    const id = Number(text);
    if (text === undefined || !/^[0-9]{1,15}$/.test(text) || !Number.isSafeInteger(id))
        throw new UsageError('account must be an account number');
    return id;
}
function describe(a, now) {
    const created = new Date(a.createdAt * 1000).toISOString();
    const state = a.revokedAt === 0 ? 'active' : `revoked ${new Date(a.revokedAt * 1000).toISOString()}`;
    const extra = a.extraCreditsUntil > now ? `, +${a.extraCredits} credits until ${new Date(a.extraCreditsUntil * 1000).toISOString()}` : '';
    return `account ${a.id}: plan ${a.plan}, label ${JSON.stringify(a.label)}, created ${created}, ${state}${extra}`;
}
/**
 * Runs one `keys` action; returns the exit code (2 for a usage error). `flags` are the config flags
 * (`data-dir`, `config`); `options` the action's own (`plan`, `label` of create). `out` receives what is printed.
 */
export async function keysCommand(action, rest, options, flags, out = (l) => process.stdout.write(`${l}\n`)) {
    const values = options;
    const config = loadConfig(flags);
    const now = Math.floor(Date.now() / 1000);
    const store = openStore(config.dataDir);
    try {
        const keys = openKeyStore(store);
        switch (action) {
            case 'create': {
                const plan = values['plan'];
                if (plan === undefined || !KEYED_PLANS.includes(plan))
                    throw new UsageError(`--plan must be one of ${KEYED_PLANS.join(', ')}`);
                const { account, key } = keys.create(plan, values['label'] ?? '', now);
                out(describe(account, now));
                out(`key: ${key}`);
                out('the key is shown only now; store it safely');
                return 0;
            }
            case 'show': {
                const a = keys.get(accountId(rest[0]));
                if (a === undefined)
                    throw new UsageError(`no account ${rest[0]}`);
                out(describe(a, now));
                return 0;
            }
            case 'list':
                for (const a of keys.list())
                    out(describe(a, now));
                return 0;
            case 'regenerate': {
                const { account, key } = keys.regenerate(accountId(rest[0]));
                out(describe(account, now));
                out(`key: ${key}`);
                out('the previous key no longer works; the new one is shown only now');
                return 0;
            }
            case 'revoke':
                out(describe(keys.revoke(accountId(rest[0]), now), now));
                return 0;
            case 'credits': {
                const id = accountId(rest[0]);
                const n = Number(rest[1]);
                if (rest[1] === undefined || !/^[0-9]{1,10}$/.test(rest[1]) || n <= 0)
                    throw new UsageError('credits must be a positive integer');
                const a = keys.get(id);
                if (a === undefined)
                    throw new UsageError(`no account ${id}`);
                // Added credits last as long as the window they were added in.
                const until = config.plans[a.plan].windowKind === 'billing' ? billingPeriod(a.createdAt, now).end : now + ROLLING_HOURS * HOUR_S;
                out(describe(keys.addCredits(id, n, until, now), now));
                return 0;
            }
            default:
                throw new UsageError(action === undefined ? 'an action is needed' : `unknown action "${action}"`);
        }
    }
    catch (err) {
        if (!(err instanceof UsageError) && !(err instanceof Error && /^(no account|account \d+ is revoked)/.test(err.message)))
            throw err;
        process.stderr.write(`${err.message}\n`);
        return 2;
    }
    finally {
        await store.close();
    }
}
//# sourceMappingURL=keys.js.map