/**
 * The candlestick chart (lightweight-charts), loaded only by the pages that draw one. Candles come
 * from the REST OHLCV answer; live trades (or finer candles) then move the newest candle or open the
 * next one. The container says what is drawn: data-candles (how many), data-interval, data-last-time,
 * data-live-updates, and an aria-label summing it up for screen readers.
 */
import { CandlestickSeries, ColorType, createChart, HistogramSeries, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';

export interface Candle {
  /** Open time, Unix seconds. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

const UP = '#3fb950';
/** Below this many candles the chart does not stretch them over its width. */
const FEW_CANDLES = 60;
const DOWN = '#f85149';

export class CandleChart {
  private readonly chart: IChartApi;
  private readonly candles: ISeriesApi<'Candlestick'>;
  private readonly volumes: ISeriesApi<'Histogram'>;
  private readonly container: HTMLElement;
  private readonly formatPrice: (p: number) => string;
  private readonly label: string;
  private bars: Candle[] = [];
  private seconds = 60;
  private updates = 0;

  constructor(container: HTMLElement, formatPrice: (p: number) => string, label: string) {
    this.container = container;
    this.formatPrice = formatPrice;
    this.label = label;
    container.setAttribute('role', 'img');
    this.chart = createChart(container, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: '#0d1117' }, textColor: '#c9d1d9', fontFamily: 'system-ui, sans-serif' },
      grid: { vertLines: { color: '#1c2430' }, horzLines: { color: '#1c2430' } },
      rightPriceScale: { borderColor: '#30363d' },
      timeScale: { borderColor: '#30363d', timeVisible: true, secondsVisible: false },
      localization: { priceFormatter: formatPrice },
    });
    this.candles = this.chart.addSeries(CandlestickSeries, {
      upColor: UP,
      downColor: DOWN,
      wickUpColor: UP,
      wickDownColor: DOWN,
      borderVisible: false,
      priceFormat: { type: 'custom', formatter: formatPrice, minMove: 1e-12 },
    });
    this.candles.priceScale().applyOptions({ scaleMargins: { top: 0.08, bottom: 0.28 } });
    this.volumes = this.chart.addSeries(HistogramSeries, { priceScaleId: 'volume', priceFormat: { type: 'volume' }, lastValueVisible: false, priceLineVisible: false });
    this.chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.78, bottom: 0 } });
  }

  /** Draws `candles` (oldest first) of `seconds` each. */
  set(candles: readonly Candle[], seconds: number): void {
    this.seconds = seconds;
    this.bars = candles.map((c) => ({ ...c }));
    this.updates = 0;
    this.candles.setData(this.bars.map((c) => this.bar(c)));
    this.volumes.setData(this.bars.map((c) => this.volumeBar(c)));
    // A long run fills the width; a few candles keep a candle's width, the newest at the right.
    if (this.bars.length >= FEW_CANDLES) this.chart.timeScale().fitContent();
    else {
      this.chart.timeScale().applyOptions({ barSpacing: 14 });
      this.chart.timeScale().scrollToRealTime();
    }
    this.describe();
  }

  /** A trade at `time` (Unix s) at `price` worth `volume` USD: the newest candle moves, or the next one opens. */
  trade(time: number, price: number, volume: number): 'updated' | 'opened' | 'late' {
    const open = Math.floor(time / this.seconds) * this.seconds;
    return this.fold({ time: open, open: price, high: price, low: price, close: price, volume });
  }

  /** A candle of a finer interval (a 1 s candle) folded into the candle holding its time. */
  fold(c: Candle): 'updated' | 'opened' | 'late' {
    if (!Number.isFinite(c.close)) return 'late';
    const open = Math.floor(c.time / this.seconds) * this.seconds;
    const last = this.bars[this.bars.length - 1];
    let result: 'updated' | 'opened';
    if (last !== undefined && open < last.time) return 'late';
    if (last !== undefined && open === last.time) {
      last.high = Math.max(last.high, c.high);
      last.low = Math.min(last.low, c.low);
      last.close = c.close;
      last.volume += c.volume;
      result = 'updated';
    } else {
      this.bars.push({ time: open, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume });
      result = 'opened';
    }
    const bar = this.bars[this.bars.length - 1]!;
    this.candles.update(this.bar(bar));
    this.volumes.update(this.volumeBar(bar));
    this.updates++;
    this.describe();
    return result;
  }

  get count(): number {
    return this.bars.length;
  }

  destroy(): void {
    this.chart.remove();
  }

  private bar(c: Candle) {
    return { time: c.time as UTCTimestamp, open: c.open, high: c.high, low: c.low, close: c.close };
  }

  private volumeBar(c: Candle) {
    return { time: c.time as UTCTimestamp, value: c.volume, color: c.close >= c.open ? 'rgba(63,185,80,0.45)' : 'rgba(248,81,73,0.45)' };
  }

  private describe(): void {
    // The library's attribution is a logo link: give it a name for screen readers.
    const logo = this.container.querySelector('a[href*="tradingview.com"]');
    if (logo !== null && !logo.hasAttribute('aria-label')) logo.setAttribute('aria-label', 'TradingView Lightweight Charts (the chart library)');
    const d = this.container.dataset;
    const last = this.bars[this.bars.length - 1];
    d['candles'] = String(this.bars.length);
    d['interval'] = String(this.seconds);
    d['lastTime'] = last === undefined ? '' : String(last.time);
    d['liveUpdates'] = String(this.updates);
    const summary =
      last === undefined
        ? 'no candles in this range'
        : `${this.bars.length} candles, the newest opened ${new Date(last.time * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC: open ${this.formatPrice(last.open)}, high ${this.formatPrice(last.high)}, low ${this.formatPrice(last.low)}, close ${this.formatPrice(last.close)}`;
    this.container.setAttribute('aria-label', `${this.label}: ${summary}`);
  }
}
