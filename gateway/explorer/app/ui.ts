/** Pieces the pages share: the page scope, headings, figures, changes, notices and the pool and token rows. */
import { isAbort, ServiceError } from './api.js';
import { h, link, td, type Child } from './dom.js';
import * as fmt from './format.js';
import { paths } from './router.js';

/** What a page holds while shown: its requests, streams and timers end with it. */
export class Scope {
  private readonly controller = new AbortController();
  private readonly cleanups: (() => void)[] = [];

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get alive(): boolean {
    return !this.controller.signal.aborted;
  }

  /** Runs `f` when the page goes. */
  add(f: () => void): void {
    if (this.alive) this.cleanups.push(f);
    else f();
  }

  every(ms: number, f: () => void): void {
    const t = setInterval(f, ms);
    this.add(() => clearInterval(t));
  }

  dispose(): void {
    this.controller.abort();
    for (const f of this.cleanups.splice(0)) {
      try {
        f();
      } catch {
        // a cleanup that fails leaves nothing behind worth reporting
      }
    }
  }
}

/** The page's main heading: focused after navigation so screen readers announce the new page. */
export function heading(text: Child, sub?: Child): HTMLHeadingElement {
  return h('h1', { tabindex: '-1', id: 'page-title' }, text, sub ? h('span', { class: 'sub' }, sub) : null);
}

/** After a page replaced its content: focus its heading again if focus was on what went away. */
export function keepFocus(): void {
  const active = document.activeElement;
  if (active === null || active === document.body) document.getElementById('page-title')?.focus({ preventScroll: true });
}

export function breadcrumbs(...items: (readonly [string, string] | string)[]): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Breadcrumb', class: 'crumbs' },
    h(
      'ol',
      null,
      items.map((it, i) =>
        h('li', null, typeof it === 'string' ? h('span', { 'aria-current': i === items.length - 1 ? 'page' : null }, it) : link(it[1], it[0])),
      ),
    ),
  );
}

/** A change in percent, its sign written and its colour a second cue. */
export function change(value: number | string | null | undefined): HTMLSpanElement {
  return h('span', { class: `chg ${fmt.trend(value)}` }, fmt.percent(value));
}

/** A figure card: label and value. */
export function stat(label: string, value: Child, id?: string): HTMLDivElement {
  return h('div', { class: 'stat' }, h('dt', null, label), h('dd', id ? { id } : null, value));
}

export function stats(...cards: HTMLDivElement[]): HTMLDListElement {
  return h('dl', { class: 'stats' }, cards) as HTMLDListElement;
}

export function loading(what: string): HTMLParagraphElement {
  return h('p', { class: 'muted', role: 'status' }, `Loading ${what}…`);
}

/** A refusal or failure, worded for the reader (plan limits name the key to use). */
export function problem(err: unknown, what: string): HTMLElement {
  if (err instanceof ServiceError) {
    const hint =
      err.code === 'plan_required' || err.code === 'api_key_required' || err.code === 'preview_only'
        ? ' Enter a key of a plan that includes it (Key, at the top), or browse from the machine the service runs on to use the explorer plan.'
        : err.code === 'rate_limited'
          ? ` Try again in ${err.retryAfter || 'a few'} s.`
          : '';
    return h('p', { class: 'problem', role: 'alert' }, `${what}: ${err.message}.${hint}`);
  }
  return h('p', { class: 'problem', role: 'alert' }, `${what}: ${err instanceof Error ? err.message : String(err)}`);
}

/** Runs a page step, showing its failure in `where` (a page that went away shows nothing). */
export async function attempt<T>(scope: Scope, where: Element, what: string, f: () => Promise<T>): Promise<T | undefined> {
  try {
    return await f();
  } catch (err) {
    if (isAbort(err) || !scope.alive) return undefined;
    where.replaceChildren(problem(err, what));
    return undefined;
  }
}

export interface TokenRef {
  readonly id: string;
  readonly symbol: string;
  readonly name?: string;
  readonly chain?: string;
}

export interface PoolRow {
  readonly id: string;
  readonly chain: string;
  readonly dex_id: string;
  readonly dex_name: string;
  readonly volume_usd_24h: number;
  readonly liquidity_usd: number;
  readonly price_usd: number;
  readonly transactions_24h: number;
  readonly price_change_percentage_24h: number;
  readonly created_at: string;
  readonly fee: number | null;
  readonly tokens: readonly TokenRef[];
}

export interface TokenRow {
  readonly id: string;
  readonly chain: string;
  readonly name: string;
  readonly symbol: string;
  readonly price_usd: number;
  readonly fdv_usd: number;
  readonly liquidity_usd: number;
  readonly volume_usd_24h: number;
  readonly txns_24h: number;
  readonly price_change_percentage_24h: number;
  readonly created_at: string;
  readonly pools_count: number;
}

export function pairName(tokens: readonly TokenRef[]): string {
  return tokens.map((t) => t.symbol).join(' / ');
}

/** Fee as the pools give it (hundredths of a basis point): 500 -> 0.05 %. */
export function feeText(fee: number | null | undefined): string {
  return fee === null || fee === undefined ? '' : `${(fee / 10_000).toLocaleString('en-US', { maximumFractionDigits: 4 })} %`;
}

export const POOL_HEADERS: readonly (string | readonly [string, string])[] = [
  'Pool',
  'DEX',
  ['Price', 'num'],
  ['24 h', 'num'],
  ['Volume 24 h', 'num'],
  ['Liquidity', 'num'],
  ['Txns 24 h', 'num'],
  ['Created', 'num'],
];

export function poolRow(p: PoolRow, showChain: boolean): HTMLTableRowElement {
  return h(
    'tr',
    null,
    h('th', { scope: 'row' }, link(paths.pool(p.chain, p.id), pairName(p.tokens)), showChain ? h('span', { class: 'tag' }, p.chain) : null, p.fee ? h('span', { class: 'muted small' }, ` ${feeText(p.fee)}`) : null),
    td(p.dex_name),
    td(fmt.usdPrice(p.price_usd), 'num'),
    td(change(p.price_change_percentage_24h), 'num'),
    td(fmt.usd(p.volume_usd_24h, true), 'num'),
    td(fmt.usd(p.liquidity_usd, true), 'num'),
    td(fmt.count(p.transactions_24h), 'num'),
    td(h('time', { datetime: p.created_at, title: fmt.dateTime(p.created_at) }, fmt.ago(p.created_at)), 'num'),
  );
}

export const TOKEN_HEADERS: readonly (string | readonly [string, string])[] = [
  'Token',
  ['Price', 'num'],
  ['24 h', 'num'],
  ['Volume 24 h', 'num'],
  ['Liquidity', 'num'],
  ['FDV', 'num'],
  ['Txns 24 h', 'num'],
  ['Pools', 'num'],
];

export function tokenRow(t: TokenRow, showChain: boolean): HTMLTableRowElement {
  return h(
    'tr',
    null,
    h('th', { scope: 'row' }, link(paths.token(t.chain, t.id), t.symbol), h('span', { class: 'muted small' }, ` ${t.name}`), showChain ? h('span', { class: 'tag' }, t.chain) : null),
    td(fmt.usdPrice(t.price_usd), 'num'),
    td(change(t.price_change_percentage_24h), 'num'),
    td(fmt.usd(t.volume_usd_24h, true), 'num'),
    td(fmt.usd(t.liquidity_usd, true), 'num'),
    td(fmt.usd(t.fdv_usd, true), 'num'),
    td(fmt.count(t.txns_24h), 'num'),
    td(fmt.count(t.pools_count), 'num'),
  );
}

/** Network display names, read once from /networks. */
export interface NetworkRow {
  readonly id: string;
  readonly display_name: string;
  readonly volume_usd_24h: number;
  readonly txns_24h: number;
  readonly pools_count: number;
}

/** A segmented group of toggle buttons (aria-pressed); arrow keys move between them. */
export function toggleGroup(label: string, options: readonly (readonly [string, string])[], selected: string, onSelect: (value: string) => void): HTMLDivElement {
  const buttons = options.map(([value, text]) =>
    h('button', { type: 'button', class: 'seg', 'aria-pressed': value === selected ? 'true' : 'false', 'data-value': value }, text),
  );
  const group = h('div', { role: 'group', 'aria-label': label, class: 'segs' }, buttons);
  const select = (b: HTMLButtonElement) => {
    for (const x of buttons) x.setAttribute('aria-pressed', x === b ? 'true' : 'false');
    onSelect(b.dataset['value']!);
  };
  buttons.forEach((b, i) => {
    b.addEventListener('click', () => select(b));
    b.addEventListener('keydown', (e) => {
      const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (step === 0) return;
      e.preventDefault();
      buttons[(i + step + buttons.length) % buttons.length]!.focus();
    });
  });
  return group;
}
