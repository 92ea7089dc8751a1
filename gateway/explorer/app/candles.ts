/**
 * A candle chart panel as the pool and token pages show it: the chart's box and status line, and the
 * read of its candles from the page's OHLCV path (the chart library loaded with the first one). A
 * newer read supersedes one still in flight; the box is `aria-busy` while one is.
 */
import { get, type Query } from './api.js';
import type { Candle, CandleChart } from './chart.js';
import { fill, h } from './dom.js';
import * as fmt from './format.js';
import { problem, type Scope } from './ui.js';

/** Intervals the charts offer, with their seconds. */
export const INTERVALS: readonly (readonly [string, number])[] = [
  ['1m', 60],
  ['5m', 300],
  ['10m', 600],
  ['15m', 900],
  ['30m', 1800],
  ['1h', 3600],
  ['6h', 21_600],
  ['12h', 43_200],
  ['24h', 86_400],
];
/** Candles a chart asks for (count_back). */
export const CANDLES = 300;

interface RestCandle {
  readonly timestamp: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

export interface CandlePanel {
  readonly box: HTMLElement;
  readonly state: HTMLElement;
  /** The chart once drawn (null before, and after `reset`). */
  readonly chart: CandleChart | null;
  /** True while no read is in flight (live updates go to the chart only then). */
  readonly settled: boolean;
  /** Reads and draws the candles of `interval()`. */
  load(): Promise<void>;
  /** Drops the chart (its next load draws a new one, e.g. with another label). */
  reset(): void;
}

export function candlePanel(o: { readonly id: string; readonly scope: Scope; readonly path: string; readonly interval: () => string; readonly query?: () => Query; readonly label: () => string }): CandlePanel {
  const box = h('div', { class: 'chart', id: o.id, tabindex: '0' });
  const state = h('div', { class: 'chart-state', role: 'status' });
  const chartModule = import('./chart.js');
  let chart: CandleChart | null = null;
  let reading = 0;
  return {
    box,
    state,
    get chart() {
      return chart;
    },
    get settled() {
      return box.getAttribute('aria-busy') !== 'true';
    },
    reset() {
      chart?.destroy();
      chart = null;
    },
    async load() {
      const interval = o.interval();
      const seconds = INTERVALS.find(([i]) => i === interval)![1];
      const ticket = ++reading;
      box.setAttribute('aria-busy', 'true');
      state.textContent = `Loading ${interval} candles…`;
      try {
        const rows = await get<RestCandle[]>(o.path, { interval, start: `-${seconds * CANDLES}s`, count_back: CANDLES, ...o.query?.() }, o.scope.signal);
        if (ticket !== reading || !o.scope.alive) return;
        const { CandleChart } = await chartModule;
        if (ticket !== reading || !o.scope.alive) return;
        chart ??= new CandleChart(box, (p) => fmt.usdPrice(p), o.label());
        const candles: Candle[] = rows.map((c) => ({ time: fmt.seconds(c.timestamp), open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume }));
        chart.set(candles, seconds);
        box.dataset['candlesLoaded'] = String(candles.length);
        state.textContent = candles.length === 0 ? `No trades in the last ${CANDLES} ${interval} candles.` : '';
      } catch (err) {
        if (!o.scope.alive || ticket !== reading) return;
        fill(state, problem(err, 'Candles could not be read'));
      } finally {
        if (ticket === reading) box.setAttribute('aria-busy', 'false');
      }
    },
  };
}
