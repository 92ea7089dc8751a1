/**
 * Who is calling and whether this host serves them: the Authorization header (the whole value is
 * the key, no scheme word) to a plan, and the host role to the plans it serves.
 *
 *   freeRest  keyless callers and free keys        paidRest  dev, pro and enterprise keys only
 *   agent     everyone (the /api subset)
 * A key on the host of the other side answers 403 wrong_host naming the right host; the paid host
 * without any Authorization header answers 403 with an HTML page, as an edge would.
 */
import { type ListenerRole, PAID_PLANS, type PlanLimits, type PlanName } from '../../engine/read/index.js';
import { ApiError, INVALID_KEY, INVALID_KEY_AT_ROOT } from '../errors.js';
import type { MeterSubject } from '../metering/meter.js';
import type { Account, KeyStore } from './key-store.js';

/** Roles served by the REST gateway; the stream roles have their own server. */
export type RestRole = Extract<ListenerRole, 'freeRest' | 'paidRest' | 'agent'>;

export interface Caller extends MeterSubject {
  readonly plan: PlanName;
  readonly account: Account | undefined;
}

export const EDGE_PAGE = Buffer.from(
  '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>403 Forbidden</title></head>' +
    '<body><h1>403 Forbidden</h1><p>This host serves paid plans: send your API key as the whole value of the Authorization header.</p></body></html>\n',
  'utf8',
);

/** Keyless callers by address, reused while their plans are the same (a caller is read-only). */
const keylessByIp = new Map<string, Caller>();
/** The same callers by raw peer address: an IPv4 address as a number, an IPv6 one as 16 latin1 characters. */
const keylessByRaw = new Map<number | string, Caller>();
let keylessPlans: Readonly<Record<PlanName, PlanLimits>> | null = null;
const KEYLESS_CALLERS_MAX = 65_536;

export function keylessCaller(plans: Readonly<Record<PlanName, PlanLimits>>, ip: string): Caller {
  if (keylessPlans !== plans) forgetKeyless(plans);
  let c = keylessByIp.get(ip);
  if (c === undefined) {
    if (keylessByIp.size >= KEYLESS_CALLERS_MAX) forgetKeyless(plans);
    c = { key: `ip:${ip}`, plan: 'keyless', limits: plans.keyless, anchor: 0, extraCredits: 0, account: undefined };
    keylessByIp.set(ip, c);
  }
  return c;
}

function forgetKeyless(plans: Readonly<Record<PlanName, PlanLimits>>): void {
  keylessByIp.clear();
  keylessByRaw.clear();
  keylessPlans = plans;
}

/**
 * The keyless caller at a peer address as uWS gives it raw (`getRemoteAddress`: 4 bytes for IPv4,
 * 16 for IPv6): no text is made for an address seen before. Same caller as `keylessCaller` with
 * the address's text form (`addressText`).
 */
export function keylessCallerAt(plans: Readonly<Record<PlanName, PlanLimits>>, raw: ArrayBuffer): Caller {
  if (keylessPlans !== plans) forgetKeyless(plans);
  const b = new Uint8Array(raw);
  const id = b.length === 4 ? ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0 : String.fromCharCode.apply(null, b as unknown as number[]);
  let c = keylessByRaw.get(id);
  if (c === undefined) {
    c = keylessCaller(plans, addressText(b));
    keylessByRaw.set(id, c);
  }
  return c;
}

/** A raw peer address in the text form uWS's getRemoteAddressAsText gives: dotted IPv4, or eight groups of four hex digits. */
export function addressText(b: Uint8Array): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return '';
  let text = '';
  for (let i = 0; i < 16; i += 2) text += `${i === 0 ? '' : ':'}${b[i]!.toString(16).padStart(2, '0')}${b[i + 1]!.toString(16).padStart(2, '0')}`;
  return text;
}

/**
 * The caller named by an Authorization header value ('' = none). Throws 401 for a header that is
 * not a live key (a scheme word in front of the key included), worded for the host root when `atRoot`.
 */
export function resolveCaller(keys: KeyStore, plans: Readonly<Record<PlanName, PlanLimits>>, authorization: string, ip: string, atRoot: boolean, now: number): Caller {
  if (authorization === '') return keylessCaller(plans, ip);
  const account = keys.verify(authorization);
  if (account === undefined) throw atRoot ? INVALID_KEY_AT_ROOT : INVALID_KEY;
  return {
    key: `a:${account.id}`,
    plan: account.plan,
    limits: plans[account.plan],
    anchor: account.createdAt,
    extraCredits: account.extraCreditsUntil > now ? account.extraCredits : 0,
    account,
  };
}

/** The role that serves a plan on the REST side. */
export function restRoleOf(plan: PlanName): RestRole {
  return PAID_PLANS.has(plan) ? 'paidRest' : 'freeRest';
}

/** Throws 403 wrong_host when `role` does not serve the caller's plan; `hostUrl` names each role's public address. */
export function checkHost(role: RestRole, caller: Caller, hostUrl: (role: RestRole) => string): void {
  if (role === 'agent') return;
  const right = restRoleOf(caller.plan);
  if (right === role) return;
  const url = hostUrl(right);
  throw new ApiError('wrong_host', `the ${caller.plan} plan is served on ${url}`, { host: url });
}
