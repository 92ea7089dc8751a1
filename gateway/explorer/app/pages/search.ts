/**
 * Pool and token search: free text (names, symbols, address prefixes) through /search, or the
 * interface's rankings with its filters and orderings through /pools/search and /tokens/search,
 * page after page with their cursor. The form is in the address bar, so a search can be linked.
 */
import { enc, get } from '../api.js';
import { fill, h, table } from '../dom.js';
import { navigate, paths } from '../router.js';
import { attempt, heading, loading, POOL_HEADERS, poolRow, TOKEN_HEADERS, tokenRow, type PoolRow, type Scope, type TokenRef, type TokenRow } from '../ui.js';
import { dexes, networks } from './shared.js';

const POOL_ORDERS: readonly (readonly [string, string])[] = [
  ['volume_usd_24h', 'Volume 24 h'],
  ['volume_usd_7d', 'Volume 7 d'],
  ['volume_usd_30d', 'Volume 30 d'],
  ['liquidity_usd', 'Liquidity'],
  ['txns_24h', 'Transactions 24 h'],
  ['created_at', 'Creation time'],
  ['price_usd', 'Price'],
  ['price_change_percentage_24h', 'Price change 24 h'],
  ['price_change_percentage_48h', 'Price change 48 h'],
  ['price_change_percentage_6h', 'Price change 6 h'],
  ['price_change_percentage_1h', 'Price change 1 h'],
  ['price_change_percentage_5m', 'Price change 5 min'],
];
const TOKEN_ORDERS: readonly (readonly [string, string])[] = [
  ['volume_usd_24h', 'Volume 24 h'],
  ['volume_usd_7d', 'Volume 7 d'],
  ['volume_usd_30d', 'Volume 30 d'],
  ['liquidity_usd', 'Liquidity'],
  ['txns_24h', 'Transactions 24 h'],
  ['price_change_percentage_24h', 'Price change 24 h'],
  ['created_at', 'Creation time'],
  ['fdv_usd', 'Fully diluted value'],
];
/** Range filters shown, with the kinds that take them. */
const FILTERS: readonly { readonly name: string; readonly label: string; readonly kinds: readonly string[]; readonly type?: string }[] = [
  { name: 'liquidity_usd_min', label: 'Liquidity at least (USD)', kinds: ['pools', 'tokens'] },
  { name: 'volume_usd_24h_min', label: 'Volume 24 h at least (USD)', kinds: ['pools', 'tokens'] },
  { name: 'txns_24h_min', label: 'Transactions 24 h at least', kinds: ['pools', 'tokens'] },
  { name: 'price_change_percentage_24h_min', label: 'Price change 24 h at least (%)', kinds: ['pools', 'tokens'] },
  { name: 'price_change_percentage_24h_max', label: 'Price change 24 h at most (%)', kinds: ['pools', 'tokens'] },
  { name: 'fdv_usd_min', label: 'Fully diluted value at least (USD)', kinds: ['tokens'] },
  { name: 'created_after', label: 'Created after', kinds: ['pools', 'tokens'], type: 'date' },
];
const PAGE_SIZE = 25;

interface SearchAnswer {
  readonly tokens: readonly {
    id: string;
    name: string;
    symbol: string;
    chain: string;
    price_usd: number;
    fdv: number;
    liquidity_usd: number;
    volume_usd: number;
    price_usd_change: number;
  }[];
  readonly pools: readonly {
    id: string;
    dex_id: string;
    dex_name: string;
    chain: string;
    volume_usd: number;
    transactions: number;
    price_usd: number;
    last_price_change_usd_24h: number;
    created_at: string;
    fee: number | null;
    tokens: TokenRef[];
    liquidity_usd?: number;
  }[];
}

interface Ranked<T> {
  readonly results: T[];
  readonly has_next_page: boolean;
  readonly next_cursor: string | null;
}

function field(label: string, control: HTMLElement): HTMLElement {
  const id = control.id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

function select(id: string, name: string, options: readonly (readonly [string, string])[], value: string): HTMLSelectElement {
  return h('select', { id, name }, options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

export async function searchPage(main: HTMLElement, scope: Scope, params: URLSearchParams): Promise<void> {
  const kind = params.get('kind') === 'tokens' ? 'tokens' : 'pools';
  const q = (params.get('q') ?? '').trim();
  const network = params.get('network') ?? '';
  const results = h('section', { 'aria-labelledby': 'res-h', 'aria-live': 'polite', 'aria-busy': 'true' }, h('h2', { id: 'res-h' }, 'Results'), loading('results'));

  const kindGroup = h(
    'fieldset',
    { class: 'kinds' },
    h('legend', null, 'Search'),
    (['pools', 'tokens'] as const).map((k) =>
      h('label', { class: 'radio' }, h('input', { type: 'radio', name: 'kind', value: k, checked: k === kind }), k === 'pools' ? 'Pools' : 'Tokens'),
    ),
  );
  const text = h('input', { id: 'f-q', name: 'q', type: 'search', value: q, placeholder: 'Name, symbol or address', autocomplete: 'off' });
  const networkSelect = select('f-network', 'network', [['', 'All networks']], network);
  const dexSelect = select('f-dex', 'dex', [['', 'All DEXes']], '');
  const orders = kind === 'pools' ? POOL_ORDERS : TOKEN_ORDERS;
  const order = orders.some(([v]) => v === params.get('order_by')) ? params.get('order_by')! : 'volume_usd_24h';
  const orderSelect = select('f-order', 'order_by', orders, order);
  const sortSelect = select('f-sort', 'sort', [['desc', 'Highest first'], ['asc', 'Lowest first']], params.get('sort') === 'asc' ? 'asc' : 'desc');
  const filters = FILTERS.filter((f) => f.kinds.includes(kind)).map((f) =>
    field(f.label, h('input', { id: `f-${f.name}`, name: f.name, type: f.type ?? 'number', step: 'any', value: params.get(f.name) ?? '', inputmode: f.type ? null : 'decimal' })),
  );
  const tokenFilter =
    kind === 'pools' ? field('Holding token (address)', h('input', { id: 'f-token', name: 'token', type: 'text', value: params.get('token') ?? '', autocomplete: 'off', spellcheck: 'false' })) : null;
  const form = h(
    'form',
    { class: 'search-form', role: 'search', 'aria-label': `${kind === 'pools' ? 'Pool' : 'Token'} search` },
    kindGroup,
    h('div', { class: 'row' }, field('Text', text), field('Network', networkSelect), kind === 'pools' ? field('DEX', dexSelect) : null),
    h('div', { class: 'row' }, field('Order by', orderSelect), field('Direction', sortSelect)),
    h('details', { class: 'filters', open: FILTERS.some((f) => params.get(f.name)) || params.has('token') }, h('summary', null, 'Filters'), h('div', { class: 'row' }, filters, tokenFilter)),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Search'), h('a', { href: paths.search({ kind }) }, 'Clear')),
  );
  const submit = (cursor?: string) => {
    const data = new FormData(form);
    const out = new URLSearchParams();
    for (const [k, v] of data) if (typeof v === 'string' && v.trim() !== '') out.set(k, v.trim());
    if (cursor) out.set('cursor', cursor);
    navigate(paths.search(out));
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit();
  });
  for (const radio of kindGroup.querySelectorAll('input')) radio.addEventListener('change', () => submit());
  // The DEXes of the network chosen, for the DEX filter.
  let dexTicket = 0;
  const loadDexes = (net: string, selected: string): void => {
    const ticket = ++dexTicket;
    dexSelect.replaceChildren(h('option', { value: '' }, 'All DEXes'));
    dexSelect.disabled = net === '' || kind !== 'pools';
    if (dexSelect.disabled) return;
    void dexes(net, 1, 100, scope.signal)
      .then((r) => {
        if (ticket !== dexTicket) return;
        for (const d of r.dexes) dexSelect.append(h('option', { value: d.dex_id, selected: d.dex_id === selected }, d.dex_name));
      })
      .catch(() => undefined);
  };
  networkSelect.addEventListener('change', () => loadDexes(networkSelect.value, ''));
  fill(main, heading(kind === 'pools' ? 'Pools' : 'Tokens', q ? `matching “${q}”` : 'search, filter and order'), form, results);
  document.title = `${kind === 'pools' ? 'Pools' : 'Tokens'} · dexdata explorer`;

  void networks(scope.signal)
    .then((list) => {
      for (const n of list) networkSelect.append(h('option', { value: n.id, selected: n.id === network }, n.display_name));
    })
    .catch(() => undefined);
  loadDexes(network, params.get('dex') ?? '');

  const done = () => results.setAttribute('aria-busy', 'false');
  if (q !== '') {
    const r = await attempt(scope, results, 'The search failed', () => get<SearchAnswer>('/search', { query: q }, scope.signal));
    done();
    if (r === undefined) return;
    const inNetwork = <T extends { chain: string }>(rows: readonly T[]) => rows.filter((x) => network === '' || x.chain === network);
    const pools: PoolRow[] = inNetwork(r.pools).map((p) => ({
      id: p.id,
      chain: p.chain,
      dex_id: p.dex_id,
      dex_name: p.dex_name,
      volume_usd_24h: p.volume_usd,
      liquidity_usd: p.liquidity_usd ?? NaN,
      price_usd: p.price_usd,
      transactions_24h: p.transactions,
      price_change_percentage_24h: p.last_price_change_usd_24h,
      created_at: p.created_at,
      fee: p.fee,
      tokens: p.tokens,
    }));
    const tokens: TokenRow[] = inNetwork(r.tokens).map((t) => ({
      id: t.id,
      chain: t.chain,
      name: t.name,
      symbol: t.symbol,
      price_usd: t.price_usd,
      fdv_usd: t.fdv,
      liquidity_usd: t.liquidity_usd,
      volume_usd_24h: t.volume_usd,
      txns_24h: NaN,
      price_change_percentage_24h: t.price_usd_change,
      created_at: '',
      pools_count: NaN,
    }));
    const poolTable = pools.length > 0 ? table(`Pools matching ${q}`, POOL_HEADERS, pools.map((p) => poolRow(p, network === ''))) : h('p', { class: 'muted' }, 'No pool matches.');
    const tokenTable = tokens.length > 0 ? table(`Tokens matching ${q}`, TOKEN_HEADERS, tokens.map((t) => tokenRow(t, network === ''))) : h('p', { class: 'muted' }, 'No token matches.');
    fill(
      results,
      h('h2', { id: 'res-h' }, `Matches for “${q}”`),
      h('p', { class: 'muted' }, 'Free-text matches by name, symbol or address prefix; clear the text to rank and filter.'),
      kind === 'pools' ? [h('h3', null, `Pools (${pools.length})`), poolTable, h('h3', null, `Tokens (${tokens.length})`), tokenTable] : [h('h3', null, `Tokens (${tokens.length})`), tokenTable, h('h3', null, `Pools (${pools.length})`), poolTable],
    );
    return;
  }

  const query: Record<string, string | number> = { limit: PAGE_SIZE, order_by: order, sort: sortSelect.value };
  for (const f of FILTERS) if (f.kinds.includes(kind) && params.get(f.name)) query[f.name] = params.get(f.name)!;
  if (kind === 'pools' && params.get('dex')) query['dex_name'] = params.get('dex')!;
  if (kind === 'pools' && params.get('token')) query['token_address'] = params.get('token')!;
  if (params.get('cursor')) query['cursor'] = params.get('cursor')!;
  const path = network === '' ? `/${kind}/search` : `/networks/${enc(network)}/${kind}/search`;
  const r = await attempt(scope, results, 'The search failed', () => get<Ranked<PoolRow & TokenRow>>(path, query, scope.signal));
  done();
  if (r === undefined) return;
  const rows = kind === 'pools' ? r.results.map((p) => poolRow(p, network === '')) : r.results.map((t) => tokenRow(t, network === ''));
  const label = `${kind === 'pools' ? 'Pools' : 'Tokens'} by ${orders.find(([v]) => v === order)![1].toLowerCase()}, ${sortSelect.value === 'asc' ? 'lowest' : 'highest'} first`;
  fill(
    results,
    h('h2', { id: 'res-h' }, label),
    r.results.length === 0 ? h('p', { class: 'muted' }, 'Nothing matches these filters.') : table(label, kind === 'pools' ? POOL_HEADERS : TOKEN_HEADERS, rows),
    h(
      'div',
      { class: 'pager' },
      params.get('cursor') ? h('button', { type: 'button', onclick: () => history.back() }, '← Previous page') : null,
      r.has_next_page && r.next_cursor ? h('button', { type: 'button', onclick: () => submit(r.next_cursor!) }, 'Next page →') : null,
    ),
  );
}
