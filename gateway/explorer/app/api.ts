/**
 * The service's public interface as the page uses it: REST on the free host (this origin) or, for a
 * paid key, the paid host; streams on the stream host of the key's side. The key is the explorer's
 * (handed by /explorer/session to browsers on the operator's machine), one the reader entered (kept
 * in this browser's localStorage only, sent nowhere but as the Authorization header), or none.
 */

export type HostRole = 'freeRest' | 'paidRest' | 'freeStream' | 'paidStream';

export interface Session {
  readonly key: string | null;
  readonly plan: string | null;
  /** Why no key was handed, when none was. */
  readonly reason: string | null;
  readonly ports: Readonly<Record<HostRole, number | null>>;
  readonly hosts: Readonly<Record<HostRole, string | null>>;
}

export type KeySource = 'explorer' | 'entered' | 'none';

export interface Access {
  readonly key: string | null;
  readonly source: KeySource;
  readonly plan: string;
  /** REST base URL ('' = this origin). */
  readonly rest: string;
  /** Stream host base URL. */
  readonly stream: string;
}

export interface Usage {
  readonly plan: string;
  readonly credits_limit: number;
  readonly credits_used: number;
  readonly credits_remaining: number;
  readonly resets_at: string;
  readonly requests_per_minute: number;
  readonly concurrent_streams: number;
}

/** An error answer of the service: `{error, message, ...}` with its status. */
export class ServiceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfter: number;
  readonly body: Record<string, unknown>;
  constructor(status: number, body: Record<string, unknown>, retryAfter: number) {
    super(typeof body['message'] === 'string' ? body['message'] : `the service answered ${status}`);
    this.status = status;
    this.code = typeof body['error'] === 'string' ? body['error'] : 'error';
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

const PAID_PLANS = new Set(['dev', 'pro', 'enterprise']);
/** Plans that may read transactions, token candles and the swap and candle streams. */
const FULL_PLANS = new Set(['dev', 'pro', 'enterprise', 'explorer']);
const STORAGE_KEY = 'dexdata.explorer.key';

let session: Session | null = null;
let current: Access = { key: null, source: 'none', plan: 'keyless', rest: '', stream: '' };
const listeners = new Set<(a: Access) => void>();
let noticeHandler: (message: string) => void = () => undefined;

export function access(): Access {
  return current;
}

export function explorerSession(): Session | null {
  return session;
}

/** Whether the plan in use reads everything the pages show (transactions, token candles, swap streams). */
export function fullAccess(): boolean {
  return FULL_PLANS.has(current.plan);
}

/** Called when the plan or key changes. */
export function onAccessChange(f: (a: Access) => void): void {
  listeners.add(f);
}

/** Where rate limits and other notices are shown. */
export function onNotice(f: (message: string) => void): void {
  noticeHandler = f;
}

export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

/** A host's base URL as this browser reaches it: its configured public name, else this page's host name with the host's port. */
function base(role: HostRole): string {
  if (session === null) return '';
  const named = session.hosts[role];
  if (named !== null) return (/^[a-z]+:\/\//i.test(named) ? named : `${location.protocol}//${named}`).replace(/\/+$/, '');
  const port = session.ports[role];
  if (role === 'freeRest' || port === null) return '';
  return `${location.protocol}//${location.hostname}:${port}`;
}

function accessFor(key: string | null, source: KeySource, plan: string): Access {
  const paid = PAID_PLANS.has(plan);
  return { key, source, plan, rest: paid ? base('paidRest') : '', stream: base(paid ? 'paidStream' : 'freeStream') };
}

function setAccess(a: Access): void {
  current = a;
  for (const f of listeners) f(a);
}

interface StoredKey {
  readonly key: string;
  readonly plan: string;
}

function storedKey(): StoredKey | null {
  try {
    const text = localStorage.getItem(STORAGE_KEY);
    if (text === null) return null;
    const v = JSON.parse(text) as Partial<StoredKey>;
    return typeof v.key === 'string' && typeof v.plan === 'string' ? { key: v.key, plan: v.plan } : null;
  } catch {
    return null;
  }
}

async function readSession(): Promise<Session> {
  const res = await fetch('/explorer/session', { cache: 'no-store' });
  return (await res.json()) as Session;
}

/** Reads the session and picks the key: one entered before, else the explorer's, else none. */
export async function start(): Promise<void> {
  session = await readSession();
  const stored = storedKey();
  if (stored !== null) setAccess(accessFor(stored.key, 'entered', stored.plan));
  else if (session.key !== null) setAccess(accessFor(session.key, 'explorer', session.plan ?? 'explorer'));
  else setAccess(accessFor(null, 'none', 'keyless'));
}

/**
 * Uses a key the reader entered: its plan (and so the host that serves it) is read from
 * /explorer/key on this host; the key and its plan are kept in this browser only.
 */
export async function enterKey(key: string): Promise<Access> {
  const trimmed = key.trim();
  const { plan } = await fetchJson<{ plan: string }>('', '/explorer/key', trimmed);
  localStorage.setItem(STORAGE_KEY, JSON.stringify({ key: trimmed, plan }));
  setAccess(accessFor(trimmed, 'entered', plan));
  return current;
}

let renewing: Promise<void> | null = null;

/**
 * The explorer's key was refused (the service was restarted, or the operator gave its account a new
 * key): the session is read again, and the pages start over with the key it hands now.
 */
export function renewExplorerKey(): void {
  if (current.source !== 'explorer' || renewing !== null) return;
  renewing = readSession()
    .then((s) => {
      session = s;
      if (s.key !== current.key) setAccess(s.key !== null ? accessFor(s.key, 'explorer', s.plan ?? 'explorer') : accessFor(null, 'none', 'keyless'));
    })
    .catch(() => undefined)
    .finally(() => {
      renewing = null;
    });
}

/** Forgets the entered key: back to the explorer's key, or none. */
export function forgetKey(): void {
  localStorage.removeItem(STORAGE_KEY);
  if (session?.key) setAccess(accessFor(session.key, 'explorer', session.plan ?? 'explorer'));
  else setAccess(accessFor(null, 'none', 'keyless'));
}

async function fetchJson<T>(rest: string, path: string, key: string | null, signal?: AbortSignal): Promise<T> {
  const res = await fetch(`${rest}${path}`, { headers: key ? { Authorization: key } : {}, ...(signal ? { signal } : {}) });
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    if (res.ok) throw new Error(`the service answered ${path} with something other than JSON`);
  }
  if (!res.ok) {
    const retry = Number(res.headers.get('retry-after') ?? 0);
    const err = new ServiceError(res.status, (body ?? {}) as Record<string, unknown>, Number.isFinite(retry) ? retry : 0);
    if (res.status === 401 && key === current.key) renewExplorerKey();
    if (res.status === 429) noticeHandler(`Rate limited on the ${current.plan} plan: ${err.message}`);
    else if (res.status === 402) noticeHandler(`Credits used up on the ${current.plan} plan: ${err.message}`);
    throw err;
  }
  return body as T;
}

export type Query = Readonly<Record<string, string | number | boolean | null | undefined>>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** GET a REST path with the key in use. */
export function get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
  return fetchJson<T>(current.rest, withQuery(path, query), current.key, signal);
}

/** The key's plan, limits and credits (a request like any other: it counts toward the per-minute limit). */
export function usage(signal?: AbortSignal): Promise<Usage> {
  return get<Usage>('/usage', undefined, signal);
}

export const enc = encodeURIComponent;
