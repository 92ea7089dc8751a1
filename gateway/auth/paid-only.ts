/**
 * Endpoints only paid plans (dev, pro, enterprise) may call (api.md rule 13): refused before any
 * data is read and before metering, so a refusal costs nothing. Pool transactions without a key
 * answer 401 api_key_required (its own rule); otherwise keyless and free callers get 403
 * plan_required without `param`, the whole endpoint being gated.
 */
import type { PlanName } from '../../engine/read/index.js';
import { ApiError } from '../errors.js';

const PAID_PLAN_HINT = 'a paid plan (dev, pro or enterprise)';

/** Which paid-only endpoint `path` is, if any. */
export function paidOnlyEndpoint(path: string): 'transactions' | 'token_history' | null {
  if (!(path.endsWith('/transactions') || path.endsWith('/ohlcv') || path.endsWith('/indicators'))) return null;
  const s = path.split('/'); // ['', 'networks', network, 'pools' | 'tokens', address, leaf]
  if (s.length !== 6 || s[1] !== 'networks') return null;
  if (s[3] === 'pools' && s[5] === 'transactions') return 'transactions';
  if (s[3] === 'tokens' && (s[5] === 'ohlcv' || s[5] === 'indicators')) return 'token_history';
  return null;
}

const API_KEY_REQUIRED = new ApiError('api_key_required', `pool transactions need the key of ${PAID_PLAN_HINT} in the Authorization header`);
const PLAN_REQUIRED: Readonly<Record<'keyless' | 'free', ApiError>> = {
  keyless: new ApiError('plan_required', `this endpoint needs ${PAID_PLAN_HINT}`, { tier: 'keyless', required_tier: 'dev' }),
  free: new ApiError('plan_required', `this endpoint needs ${PAID_PLAN_HINT}`, { tier: 'free', required_tier: 'dev' }),
};

/** Throws the refusal when `plan` may not call the paid-only endpoint at `path`. */
export function checkPaidOnly(path: string, plan: PlanName): void {
  if (plan !== 'keyless' && plan !== 'free') return;
  const endpoint = paidOnlyEndpoint(path);
  if (endpoint === null) return;
  throw endpoint === 'transactions' && plan === 'keyless' ? API_KEY_REQUIRED : PLAN_REQUIRED[plan];
}
