/**
 * A token: its price and figures, a price chart (the token's candles over all its pools, moved live
 * by its sealed 1 s candles), its windows and its pools. Token candles and the candle stream need a
 * plan that includes them (the explorer plan, paid keys); a free key or none gets the live price
 * where the price stream allows it.
 */
import { access, enc, fullAccess, get } from '../api.js';
import { fill, h, link, table, td } from '../dom.js';
import * as fmt from '../format.js';
import { paths } from '../router.js';
import { openStream } from '../sse.js';
import { attempt, breadcrumbs, keepFocus, change, heading, loading, POOL_HEADERS, poolRow, stat, stats, toggleGroup, type PoolRow, type Scope } from '../ui.js';
import { defaultInterval } from './pool.js';
import { CANDLES, candlePanel, INTERVALS } from '../candles.js';
import { networkName } from './shared.js';

const WINDOWS = ['1m', '5m', '15m', '30m', '1h', '6h', '24h'] as const;

interface Summary {
  readonly volume_usd: number;
  readonly buy_usd: number;
  readonly sell_usd: number;
  readonly buys: number;
  readonly sells: number;
  readonly txns: number;
  readonly last_price_usd_change: number;
}

interface TokenDetails {
  readonly id: string;
  readonly name: string;
  readonly symbol: string;
  readonly chain: string;
  readonly decimals: number;
  readonly total_supply: string;
  readonly added_at: string;
  readonly fdv: number | null;
  readonly price_usd: number | null;
  readonly summary: { readonly price_usd: number | null; readonly fdv: number | null; readonly liquidity_usd: number; readonly pools: number } & Readonly<Partial<Record<(typeof WINDOWS)[number], Summary>>>;
}

interface SecondCandle {
  readonly timestamp: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume_usd: number;
}

export async function tokenPage(main: HTMLElement, scope: Scope, network: string, address: string, params: URLSearchParams): Promise<void> {
  const base = `/networks/${enc(network)}/tokens/${enc(address)}`;
  fill(main, breadcrumbs(['Markets', paths.home()], [network, paths.network(network)], 'Token'), heading('Token', address), loading('the token'));
  const t = await attempt(scope, main, 'The token could not be read', () => get<TokenDetails>(base, undefined, scope.signal));
  if (t === undefined) return;
  const networkTitle = await networkName(network, scope.signal);
  document.title = `${t.symbol} · ${networkTitle} · dexdata explorer`;
  let interval = INTERVALS.some(([i]) => i === params.get('interval')) ? params.get('interval')! : defaultInterval(access().plan);

  const priceNow = h('span', { class: 'big', id: 'token-price' }, fmt.usdPrice(t.price_usd));
  const liveState = h('span', { class: 'live', role: 'status' }, '');
  const s24 = t.summary['24h'];
  const figures = stats(
    stat('Fully diluted value', fmt.usd(t.fdv)),
    stat('Liquidity', fmt.usd(t.summary.liquidity_usd)),
    stat('Volume 24 h', fmt.usd(s24?.volume_usd)),
    stat('Transactions 24 h', fmt.count(s24?.txns)),
    stat('Pools', fmt.count(t.summary.pools)),
    stat('Total supply', fmt.amount(fmt.rawToNumber(t.total_supply, t.decimals))),
  );

  // ---- chart ----
  const candles = candlePanel({ id: 'token-chart', scope, path: `${base}/ohlcv`, interval: () => interval, label: () => `${t.symbol} price in USD` });
  const { box: chartBox, state: chartState } = candles;
  const loadChart = () => candles.load();
  const intervals = toggleGroup('Candle interval', INTERVALS.map(([i]) => [i, i] as const), interval, (v) => {
    interval = v;
    history.replaceState(history.state, '', `${location.pathname}?interval=${v}`);
    void loadChart();
  });
  const chartSection = h(
    'section',
    { 'aria-labelledby': 'chart-h', class: 'panel' },
    h('div', { class: 'panel-head' }, h('h2', { id: 'chart-h' }, 'Price chart'), fullAccess() ? intervals : null),
    fullAccess() ? [chartBox, chartState, h('p', { class: 'muted small' }, `Candles of ${t.symbol} in USD over all its pools (liquidity-weighted), times in UTC, up to ${CANDLES}.`)] : null,
    fullAccess() ? null : h('p', { class: 'muted' }, `Token candles need a plan that includes them (dev, pro, enterprise or the explorer plan); the ${access().plan} plan does not. The charts of its pools below are open to every plan.`),
  );

  // ---- windows and pools ----
  const windows = table(
    'Figures over rolling windows, over all the token’s pools',
    ['Window', ['Change', 'num'], ['Volume', 'num'], ['Buys', 'num'], ['Sells', 'num'], ['Txns', 'num']],
    WINDOWS.map((w) => {
      const x = t.summary[w];
      return h('tr', null, h('th', { scope: 'row' }, w), td(change(x?.last_price_usd_change), 'num'), td(fmt.usd(x?.volume_usd, true), 'num'), td(fmt.count(x?.buys), 'num'), td(fmt.count(x?.sells), 'num'), td(fmt.count(x?.txns), 'num'));
    }),
  );
  const poolsSection = h('section', { 'aria-labelledby': 'tp-h', class: 'panel' }, h('h2', { id: 'tp-h' }, 'Pools'), loading('pools'));
  const info = h(
    'dl',
    { class: 'facts' },
    h('dt', null, 'Address'),
    h('dd', { class: 'mono' }, t.id),
    h('dt', null, 'Network'),
    h('dd', null, link(paths.network(network), networkTitle)),
    h('dt', null, 'Decimals'),
    h('dd', null, String(t.decimals)),
    h('dt', null, 'Total supply'),
    h('dd', null, fmt.amount(fmt.rawToNumber(t.total_supply, t.decimals))),
    h('dt', null, 'Listed'),
    h('dd', null, fmt.dateTime(t.added_at)),
  );

  fill(
    main,
    breadcrumbs(['Markets', paths.home()], [networkTitle, paths.network(network)], t.symbol),
    heading(`${t.name} (${t.symbol})`, networkTitle),
    h('div', { class: 'headline' }, h('div', null, h('span', { class: 'muted' }, 'Price'), ' ', priceNow, ' ', change(s24?.last_price_usd_change)), liveState),
    figures,
    chartSection,
    h('div', { class: 'columns' }, poolsSection, h('div', null, h('section', { 'aria-labelledby': 'tw-h', class: 'panel' }, h('h2', { id: 'tw-h' }, 'Windows'), windows), h('section', { 'aria-labelledby': 'ti-h', class: 'panel' }, h('h2', { id: 'ti-h' }, 'About this token'), info))),
  );
  keepFocus();
  if (fullAccess()) void loadChart();

  const pools = await attempt(scope, poolsSection, 'Pools could not be read', () =>
    get<{ results: PoolRow[] }>(`/networks/${enc(network)}/pools/search`, { token_address: t.id, order_by: 'liquidity_usd', limit: 20 }, scope.signal),
  );
  if (pools !== undefined) {
    fill(
      poolsSection,
      h('h2', { id: 'tp-h' }, 'Pools'),
      table(`Pools holding ${t.symbol}, by liquidity`, POOL_HEADERS, pools.results.map((p) => poolRow(p, false))),
      h('p', null, link(paths.search({ kind: 'pools', network, token: t.id, order_by: 'liquidity_usd' }), `All pools of ${t.symbol}, with filters →`)),
    );
  }

  // ---- live: 1 s candles where the plan has them, else the price stream where it allows ----
  const onState = (s: string, m?: string) => {
    liveState.className = `live ${s === 'live' ? 'on' : 'off'}`;
    liveState.textContent = s === 'live' ? 'Live' : s === 'stopped' ? `Live updates stopped: ${m ?? ''}` : 'Reconnecting…';
  };
  if (fullAccess()) {
    const seconds = openStream(`/sse/ohlcv?chain=${enc(network)}&token_id=${enc(t.id)}&interval=1s`, {
      onState,
      onEvent: (e) => {
        if (e.event !== 'ohlcv') return;
        const c = e.data as SecondCandle;
        priceNow.textContent = fmt.usdPrice(c.close);
        if (candles.chart !== null && candles.settled) {
          const r = candles.chart.fold({ time: fmt.seconds(c.timestamp), open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume_usd });
          if (r === 'opened') chartState.textContent = '';
        }
      },
    });
    scope.add(() => seconds.close());
  } else if (access().key !== null) {
    const prices = openStream(`/sse/prices?chain=${enc(network)}&address=${enc(t.id)}`, {
      onState,
      onEvent: (e) => {
        if (e.event === 'token_price') priceNow.textContent = fmt.usdPrice((e.data as { price: string }).price);
      },
    });
    scope.add(() => prices.close());
  } else {
    liveState.className = 'live off';
    liveState.textContent = 'Not live: enter a key (Key, at the top) for live updates';
  }
}
