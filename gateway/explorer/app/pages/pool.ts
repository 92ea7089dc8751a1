/**
 * A pool: its figures, an OHLCV candlestick chart with a choice of interval, a trades tape and its
 * reserves, all moving live with the pool's swap and reserve streams (plans that include them: the
 * explorer plan, paid keys; a free key gets the reserves; without a key the page shows what REST gives).
 */
import { access, enc, fullAccess, get } from '../api.js';
import { fill, h, link, table, td } from '../dom.js';
import * as fmt from '../format.js';
import { paths } from '../router.js';
import { openStream } from '../sse.js';
import { attempt, breadcrumbs, keepFocus, change, feeText, heading, loading, pairName, problem, stat, stats, toggleGroup, type Scope } from '../ui.js';
import { networkName } from './shared.js';
import { CANDLES, candlePanel, INTERVALS } from '../candles.js';

export { CANDLES, INTERVALS };
const TAPE_ROWS = 40;
const WINDOWS = ['5m', '15m', '30m', '1h', '6h', '24h'] as const;
const DETAILS_REFRESH_MS = 60_000;

interface Window {
  readonly last_price_usd_change: number;
  readonly volume_usd: number;
  readonly buy_usd: number;
  readonly sell_usd: number;
  readonly buys: number;
  readonly sells: number;
  readonly txns: number;
}

interface PoolToken {
  readonly id: string;
  readonly name: string;
  readonly symbol: string;
  readonly decimals: number;
}

type PoolDetails = {
  readonly id: string;
  readonly chain: string;
  readonly dex_id: string;
  readonly dex_name: string;
  readonly factory_id: string;
  readonly created_at: string;
  readonly created_at_block_number: number;
  readonly fee: number | null;
  readonly tokens: readonly PoolToken[];
  readonly last_price_usd: number;
  readonly price_time: string;
  readonly token_reserves: readonly { token_id: string; reserve_normalized: number; reserve_usd: number }[];
  readonly liquidity_usd: number;
  readonly transactions: number;
} & Readonly<Partial<Record<(typeof WINDOWS)[number], Window>>>;

interface RestTx {
  readonly id: string;
  readonly transaction_hash: string;
  readonly type: 'swap' | 'add' | 'remove';
  readonly price_0_usd: number;
  readonly price_1_usd: number;
  readonly created_at: string;
  readonly amount_0: string;
  readonly amount_1: string;
  readonly volume_usd: number;
}

interface StreamSwap {
  readonly block_timestamp: string;
  readonly tx_hash: string;
  readonly log_index: number;
  readonly amount_0: number | string;
  readonly amount_1: number | string;
  readonly price_0_usd: number;
  readonly price_1_usd: number;
  readonly volume_usd: number;
}

interface StreamReserves {
  readonly tokens: readonly { token_id: string; reserve: string; reserve_usd: number }[];
  readonly total_reserve_usd: number;
}

/** One line of the tape, from REST (the pool's side) or the stream (the trader's side). */
interface Trade {
  readonly key: string;
  readonly time: number;
  /** buy / sell: of token 0; add / remove: liquidity. */
  readonly kind: 'buy' | 'sell' | 'add' | 'remove';
  readonly price0: number;
  readonly price1: number;
  readonly amount0: number;
  readonly amount1: number;
  readonly usd: number;
  readonly hash: string;
}

export function defaultInterval(plan: string): string {
  return plan === 'keyless' ? '1h' : plan === 'free' ? '15m' : '1m';
}

export async function poolPage(main: HTMLElement, scope: Scope, network: string, address: string, params: URLSearchParams): Promise<void> {
  const base = `/networks/${enc(network)}/pools/${enc(address)}`;
  fill(main, breadcrumbs(['Markets', paths.home()], [network, paths.network(network)], 'Pool'), heading('Pool', address), loading('the pool'));
  const first = await attempt(scope, main, 'The pool could not be read', () => get<PoolDetails>(base, undefined, scope.signal));
  if (first === undefined) return;
  let details = first;
  const [t0, t1] = [details.tokens[0]!, details.tokens[1]!];
  let inversed = params.get('inversed') === 'true';
  let interval = INTERVALS.some(([i]) => i === params.get('interval')) ? params.get('interval')! : defaultInterval(access().plan);
  const baseToken = () => (inversed ? t1 : t0);
  const quoteToken = () => (inversed ? t0 : t1);
  document.title = `${pairName(details.tokens)} · ${details.dex_name} · dexdata explorer`;

  // ---- heading and figures ----
  // The newest USD prices of token 0 and token 1 (token 1's is known once a trade shows it).
  let last0 = details.last_price_usd;
  let last1 = NaN;
  const priceNow = h('span', { class: 'big', id: 'pool-price' }, fmt.usdPrice(inversed ? last1 : last0));
  const priceLabel = h('span', { class: 'muted' }, `${baseToken().symbol} price`);
  const figures = h('div', { class: 'figures' });
  const liveState = h('span', { class: 'live', role: 'status' }, '');
  const renderFigures = (): void => {
    const w24 = details['24h'];
    fill(
      figures,
      stats(
        stat('Liquidity', fmt.usd(details.liquidity_usd), 'pool-liquidity'),
        stat('Volume 24 h', fmt.usd(w24?.volume_usd)),
        stat('Transactions 24 h', fmt.count(w24?.txns)),
        stat('Buys / sells 24 h', `${fmt.count(w24?.buys)} / ${fmt.count(w24?.sells)}`),
        stat('Change 24 h', change(w24?.last_price_usd_change)),
        stat('Created', h('time', { datetime: details.created_at, title: fmt.dateTime(details.created_at) }, fmt.ago(details.created_at))),
      ),
    );
  };
  renderFigures();
  const networkTitle = await networkName(network, scope.signal);

  // ---- chart ----
  const chartNote = h('p', { class: 'muted small' });
  const candles = candlePanel({
    id: 'pool-chart',
    scope,
    path: `${base}/ohlcv`,
    interval: () => interval,
    query: () => ({ inversed: inversed ? 'true' : null }),
    label: () => `${baseToken().symbol} price in USD`,
  });
  const { box: chartBox, state: chartState } = candles;
  const loadChart = () => candles.load();
  const setUrl = (): void => {
    const q = new URLSearchParams();
    q.set('interval', interval);
    if (inversed) q.set('inversed', 'true');
    history.replaceState(history.state, '', `${location.pathname}?${q}`);
  };
  const intervals = toggleGroup('Candle interval', INTERVALS.map(([i]) => [i, i] as const), interval, (v) => {
    interval = v;
    setUrl();
    void loadChart();
  });
  const flip = h('button', { type: 'button', class: 'flip', 'aria-pressed': inversed ? 'true' : 'false' }, `Show ${quoteToken().symbol} price`);
  flip.addEventListener('click', () => {
    inversed = !inversed;
    flip.setAttribute('aria-pressed', inversed ? 'true' : 'false');
    flip.textContent = `Show ${quoteToken().symbol} price`;
    priceLabel.textContent = `${baseToken().symbol} price`;
    priceNow.textContent = fmt.usdPrice(inversed ? last1 : last0);
    candles.reset();
    setUrl();
    renderTape();
    void loadChart();
  });
  chartNote.textContent = `Candles in USD of ${baseToken().symbol}, times in UTC, only intervals with trades. Up to ${CANDLES} candles.`;

  // ---- tape ----
  const tapeBody = h('tbody');
  const tapeState = h('p', { class: 'muted small' });
  let tapeRows: Trade[] = [];
  const tapeKeys = new Set<string>();
  const tradeRow = (t: Trade, fresh: boolean): HTMLTableRowElement => {
    const kindText = t.kind === 'buy' ? `Buy ${t0.symbol}` : t.kind === 'sell' ? `Sell ${t0.symbol}` : t.kind === 'add' ? 'Add' : 'Remove';
    return h(
      'tr',
      { class: fresh ? 'fresh' : null, 'data-live': fresh ? '1' : null },
      td(h('time', { datetime: new Date(t.time * 1000).toISOString(), 'data-ts': String(t.time), title: fmt.dateTime(t.time) }, fmt.ago(t.time))),
      td(h('span', { class: `side ${t.kind}` }, kindText)),
      td(fmt.usdPrice(inversed ? t.price1 : t.price0), 'num'),
      td(fmt.amount(Math.abs(t.amount0)), 'num'),
      td(fmt.amount(Math.abs(t.amount1)), 'num'),
      td(fmt.usd(t.usd), 'num'),
      td(h('span', { class: 'mono', title: t.hash }, fmt.shortAddress(t.hash))),
    );
  };
  const renderTape = (): void => fill(tapeBody, tapeRows.map((t) => tradeRow(t, false)));
  const addTrade = (t: Trade): void => {
    if (tapeKeys.has(t.key)) return;
    tapeKeys.add(t.key);
    tapeRows.unshift(t);
    tapeBody.prepend(tradeRow(t, true));
    while (tapeRows.length > TAPE_ROWS) {
      tapeKeys.delete(tapeRows.pop()!.key);
      tapeBody.lastElementChild?.remove();
    }
  };
  const tape = h(
    'table',
    { id: 'trades' },
    h('caption', { class: 'sr-only' }, `Latest trades of ${pairName(details.tokens)}, newest first`),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['Time', 'Type', ['Price', 'num'], [t0.symbol, 'num'], [t1.symbol, 'num'], ['Value', 'num'], 'Transaction'].map((x) =>
          typeof x === 'string' ? h('th', { scope: 'col' }, x) : h('th', { scope: 'col', class: x[1] }, x[0]),
        ),
      ),
    ),
    tapeBody,
  );

  // ---- reserves and windows ----
  const reservesBox = h('div');
  const renderReserves = (rows: readonly { token_id: string; amount: number; usd: number }[], total: number): void => {
    const symbol = (id: string) => details.tokens.find((t) => t.id === id)?.symbol ?? fmt.shortAddress(id);
    fill(
      reservesBox,
      table(
        'Reserves of the pool',
        ['Token', ['Amount', 'num'], ['Value', 'num'], ['Share', 'num']],
        rows.map((r) =>
          h('tr', null, h('th', { scope: 'row' }, link(paths.token(network, r.token_id), symbol(r.token_id))), td(fmt.amount(r.amount), 'num'), td(fmt.usd(r.usd), 'num'), td(total > 0 ? `${((r.usd / total) * 100).toFixed(1)} %` : '—', 'num')),
        ),
      ),
    );
  };
  renderReserves(
    details.token_reserves.map((r) => ({ token_id: r.token_id, amount: r.reserve_normalized, usd: r.reserve_usd })),
    details.liquidity_usd,
  );
  const windowsBox = h('div');
  const renderWindows = (): void =>
    fill(
      windowsBox,
      table(
        'Figures over rolling windows',
        ['Window', ['Change', 'num'], ['Volume', 'num'], ['Buys', 'num'], ['Sells', 'num']],
        WINDOWS.map((w) => {
          const x = details[w];
          return h('tr', null, h('th', { scope: 'row' }, w), td(change(x?.last_price_usd_change), 'num'), td(fmt.usd(x?.volume_usd, true), 'num'), td(fmt.count(x?.buys), 'num'), td(fmt.count(x?.sells), 'num'));
        }),
      ),
    );
  renderWindows();

  const info = h(
    'dl',
    { class: 'facts' },
    h('dt', null, 'Pool address'),
    h('dd', { class: 'mono' }, details.id),
    h('dt', null, 'DEX'),
    h('dd', null, link(paths.search({ kind: 'pools', network, dex: details.dex_id }), details.dex_name)),
    h('dt', null, 'Network'),
    h('dd', null, link(paths.network(network), networkTitle)),
    details.fee !== null ? [h('dt', null, 'Fee'), h('dd', null, feeText(details.fee))] : null,
    h('dt', null, 'Created'),
    h('dd', null, `${fmt.dateTime(details.created_at)} (block ${fmt.count(details.created_at_block_number)})`),
    h('dt', null, 'Factory'),
    h('dd', { class: 'mono' }, details.factory_id),
    details.tokens.map((t, i) => [h('dt', null, `Token ${i}`), h('dd', null, link(paths.token(network, t.id), `${t.symbol}`), ` ${t.name} · `, h('span', { class: 'mono small' }, t.id))]),
  );

  fill(
    main,
    breadcrumbs(['Markets', paths.home()], [networkTitle, paths.network(network)], pairName(details.tokens)),
    heading(pairName(details.tokens), `${details.dex_name}${details.fee !== null ? ` · ${feeText(details.fee)}` : ''} · ${networkTitle}`),
    h('div', { class: 'headline' }, h('div', null, priceLabel, ' ', priceNow, ' ', change(details['24h']?.last_price_usd_change)), liveState),
    figures,
    h(
      'section',
      { 'aria-labelledby': 'chart-h', class: 'panel' },
      h('div', { class: 'panel-head' }, h('h2', { id: 'chart-h' }, 'Price chart'), intervals, flip),
      chartBox,
      chartState,
      chartNote,
    ),
    h(
      'div',
      { class: 'columns' },
      h('section', { 'aria-labelledby': 'tape-h', class: 'panel wide' }, h('h2', { id: 'tape-h' }, 'Trades'), tapeState, h('div', { class: 'scroll' }, tape)),
      h(
        'div',
        null,
        h('section', { 'aria-labelledby': 'res-h', class: 'panel' }, h('h2', { id: 'res-h' }, 'Reserves'), reservesBox),
        h('section', { 'aria-labelledby': 'win-h', class: 'panel' }, h('h2', { id: 'win-h' }, 'Windows'), windowsBox),
      ),
    ),
    h('section', { 'aria-labelledby': 'info-h', class: 'panel' }, h('h2', { id: 'info-h' }, 'About this pool'), info),
  );
  keepFocus();
  void loadChart();

  // ---- the tape from REST, then live ----
  const fromRest = (x: RestTx): Trade => {
    const a0 = Number(x.amount_0);
    return {
      key: x.id,
      time: fmt.seconds(x.created_at),
      kind: x.type === 'swap' ? (a0 < 0 ? 'buy' : 'sell') : x.type,
      price0: x.price_0_usd,
      price1: x.price_1_usd,
      amount0: a0,
      amount1: Number(x.amount_1),
      usd: x.volume_usd,
      hash: x.transaction_hash,
    };
  };
  if (fullAccess()) {
    tapeState.textContent = 'Loading trades…';
    try {
      const txs = await get<RestTx[]>(`${base}/transactions`, { limit: TAPE_ROWS }, scope.signal);
      for (const t of txs.map(fromRest).reverse()) addTrade(t);
      renderTape();
      if (tapeRows[0] !== undefined) {
        last1 = tapeRows[0].price1;
        if (inversed) priceNow.textContent = fmt.usdPrice(last1);
      }
      tapeState.textContent = txs.length === 0 ? 'No trades in the last 7 days yet; new ones appear here as they happen.' : '';
    } catch (err) {
      if (!scope.alive) return;
      fill(tapeState, problem(err, 'Trades could not be read'));
    }
  } else {
    tapeState.textContent = `Trades need a plan that includes them (dev, pro, enterprise or the explorer plan); the ${access().plan} plan does not.`;
  }

  const states = new Map<string, string>();
  const showState = (name: string, state: string, message?: string): void => {
    states.set(name, state);
    const all = [...states.values()];
    liveState.className = `live ${all.every((s) => s === 'live') ? 'on' : 'off'}`;
    liveState.textContent = all.every((s) => s === 'live') ? 'Live' : all.some((s) => s === 'stopped') ? `Live updates stopped: ${message ?? ''}` : 'Reconnecting…';
  };
  if (fullAccess()) {
    const swaps = openStream(`/sse/transactions?method=pool&chain=${enc(network)}&address=${enc(details.id)}`, {
      onState: (s, m) => showState('swaps', s, m),
      onEvent: (e) => {
        if (e.event !== 'pool') return;
        const s = e.data as StreamSwap;
        const a0 = fmt.rawToNumber(s.amount_0, t0.decimals);
        const time = fmt.seconds(s.block_timestamp);
        addTrade({
          key: `${s.tx_hash}:${s.log_index}`,
          time,
          kind: a0 > 0 ? 'buy' : 'sell',
          price0: s.price_0_usd,
          price1: s.price_1_usd,
          amount0: a0,
          amount1: fmt.rawToNumber(s.amount_1, t1.decimals),
          usd: s.volume_usd,
          hash: s.tx_hash,
        });
        tapeState.textContent = '';
        last0 = s.price_0_usd;
        last1 = s.price_1_usd;
        const p = inversed ? last1 : last0;
        priceNow.textContent = fmt.usdPrice(p);
        if (candles.chart !== null && candles.settled && candles.chart.trade(time, p, s.volume_usd) === 'opened') chartState.textContent = '';
      },
    });
    scope.add(() => swaps.close());
  } else {
    chartNote.textContent += ' Live candles need a plan with the swap stream (dev, pro, enterprise or the explorer plan).';
  }
  if (access().key !== null) {
    const reserves = openStream(`/sse/reserves?method=pool_reserves&chain=${enc(network)}&address=${enc(details.id)}`, {
      onState: (s, m) => showState('reserves', s, m),
      onEvent: (e) => {
        if (e.event !== 'pool_reserves') return;
        const r = e.data as StreamReserves;
        renderReserves(
          r.tokens.map((t) => ({ token_id: t.token_id, amount: Number(t.reserve), usd: t.reserve_usd })),
          r.total_reserve_usd,
        );
        const liq = document.getElementById('pool-liquidity');
        if (liq) liq.textContent = fmt.usd(r.total_reserve_usd);
      },
    });
    scope.add(() => reserves.close());
  } else {
    liveState.className = 'live off';
    liveState.textContent = 'Not live: enter a key (Key, at the top) for live updates';
  }

  scope.every(5_000, () => {
    for (const el of tapeBody.querySelectorAll<HTMLTimeElement>('time[data-ts]')) el.textContent = fmt.ago(Number(el.dataset['ts']));
  });
  scope.every(DETAILS_REFRESH_MS, () => {
    void get<PoolDetails>(base, undefined, scope.signal)
      .then((d) => {
        details = d;
        renderFigures();
        renderWindows();
      })
      .catch(() => undefined);
  });
}
