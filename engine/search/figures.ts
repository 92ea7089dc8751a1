/**
 * The pool figures search ranks and filters by, each one shared column of the engine's views.
 * The order of POOL_FIGURES is the wire between the gateway and the shard threads: a figure
 * travels as its index here.
 *
 * The window figures named here are the only ones a pool keeps while it holds no ring block, in its
 * window slot (views.ts derives the slot's window columns from ROW_WINDOWS; a pool that has not
 * traded within the longest window holds none: state/window-slots.ts); the others live in a trading
 * pool's ring block, and a quiet pool's are summed from its stored candles when read (state/windows.ts).
 */
import { Win } from '../state/layout.js';
import type { EngineViews } from '../state/views.js';
import { priceChange } from '../state/windows.js';

export const POOL_FIGURES = [
  'volume_usd_24h',
  'volume_usd_7d',
  'volume_usd_30d',
  'liquidity_usd',
  'txns_24h',
  'created_at',
  'price_usd',
  'price_change_percentage_24h',
  'price_change_percentage_48h',
  'price_change_percentage_6h',
  'price_change_percentage_1h',
  'price_change_percentage_5m',
] as const;

export type PoolFigure = (typeof POOL_FIGURES)[number];

/** Window figures a pool row can keep: USD volume, transactions and token 0's USD price change. */
export const ROW_WINDOW_FIGURES = ['volumeUsd', 'txns', 'priceChange'] as const;
export type RowWindowFigure = (typeof ROW_WINDOW_FIGURES)[number];

type Source = { readonly figure: RowWindowFigure; readonly window: Win } | { readonly column: 'liquidityUsd' | 'poolCreatedAt' | 'priceUsd0' };

const SOURCE: Readonly<Record<PoolFigure, Source>> = {
  volume_usd_24h: { figure: 'volumeUsd', window: Win.H24 },
  volume_usd_7d: { figure: 'volumeUsd', window: Win.D7 },
  volume_usd_30d: { figure: 'volumeUsd', window: Win.D30 },
  liquidity_usd: { column: 'liquidityUsd' },
  txns_24h: { figure: 'txns', window: Win.H24 },
  created_at: { column: 'poolCreatedAt' },
  price_usd: { column: 'priceUsd0' },
  price_change_percentage_24h: { figure: 'priceChange', window: Win.H24 },
  price_change_percentage_48h: { figure: 'priceChange', window: Win.H48 },
  price_change_percentage_6h: { figure: 'priceChange', window: Win.H6 },
  price_change_percentage_1h: { figure: 'priceChange', window: Win.H1 },
  price_change_percentage_5m: { figure: 'priceChange', window: Win.M5 },
};

/** Per row window figure, the windows (layout WINDOWS indexes, ascending) whose figure every pool row keeps. */
export const ROW_WINDOWS: Readonly<Record<RowWindowFigure, readonly number[]>> = (() => {
  const out: Record<RowWindowFigure, number[]> = { volumeUsd: [], txns: [], priceChange: [] };
  for (const name of POOL_FIGURES) {
    const s = SOURCE[name];
    if ('figure' in s) out[s.figure].push(s.window);
  }
  for (const f of ROW_WINDOW_FIGURES) out[f].sort((a, b) => a - b);
  return out;
})();

/**
 * The value of every figure of any pool, in POOL_FIGURES order, read where it is kept: a pool
 * column, or the pool's window slot, or (a pool without a slot) what it reads without one
 * (state/window-slots.ts). Constant time per read, nothing allocated.
 */
export class FigureValues {
  private readonly v: EngineViews;
  /** Per figure: 0 a pool column, 1 a window slot column (0 without a slot), 2 a price change (without a slot: against the last swap's price). */
  private readonly kind: Uint8Array;
  /** Per figure: its pool column, or its window slot column. */
  private readonly column: readonly (Float64Array | Uint32Array)[];
  private readonly poolSlot: Int32Array;
  private readonly price: Float64Array;
  private readonly lastSwapPrice: Float64Array;

  constructor(v: EngineViews) {
    this.v = v;
    this.kind = Uint8Array.from(POOL_FIGURES, (f) => {
      const s = SOURCE[f];
      return 'column' in s ? 0 : s.figure === 'priceChange' ? 2 : 1;
    });
    this.column = POOL_FIGURES.map((f) => {
      const s = SOURCE[f];
      return 'column' in s ? v[s.column] : v.rowWindow[s.figure][s.window]!;
    });
    this.poolSlot = v.poolWindowSlot;
    this.price = v.priceUsd0;
    this.lastSwapPrice = v.lastSwapPrice0;
  }

  /** Figure f (POOL_FIGURES index) of pool p. */
  value(f: number, p: number): number {
    const kind = this.kind[f]!;
    if (kind === 0) return this.column[f]![p]!;
    const s = this.poolSlot[p]! - 1;
    if (s >= 0) return this.column[f]![s]!;
    return kind === 2 ? priceChange(this.price[p]!, this.lastSwapPrice[p]!) : 0;
  }

  /** rankValue of figure f of each pool of `pools` into `out` (same length), one loop per kind of figure. */
  readAll(f: number, pools: Int32Array, out: Float64Array): void {
    const kind = this.kind[f]!;
    const col = this.column[f]!;
    const n = pools.length;
    if (kind === 0) {
      for (let i = 0; i < n; i++) out[i] = rankValue(col[pools[i]!]!);
      return;
    }
    const slots = this.poolSlot;
    if (kind === 1) {
      for (let i = 0; i < n; i++) {
        const s = slots[pools[i]!]! - 1;
        out[i] = s >= 0 ? rankValue(col[s]!) : 0;
      }
      return;
    }
    const price = this.price;
    const last = this.lastSwapPrice;
    for (let i = 0; i < n; i++) {
      const p = pools[i]!;
      const s = slots[p]! - 1;
      out[i] = rankValue(s >= 0 ? col[s]! : priceChange(price[p]!, last[p]!));
    }
  }

  /** The views read. */
  get views(): EngineViews {
    return this.v;
  }
}

/** The column of every figure, in POOL_FIGURES order: a window figure's is indexed by window slot (views.ts), the others' by pool. */
export function figureColumns(views: EngineViews): (Float64Array | Uint32Array)[] {
  return POOL_FIGURES.map((f) => {
    const s = SOURCE[f];
    return 'figure' in s ? views.rowWindow[s.figure][s.window]! : views[s.column];
  });
}

/** The reader of every figure (POOL_FIGURES order) over `views`. */
export function figureValues(views: EngineViews): FigureValues {
  return new FigureValues(views);
}

export function figureIndex(name: PoolFigure): number {
  return POOL_FIGURES.indexOf(name);
}

/** The value a figure ranks and filters by: non-finite as 0, -0 as 0, so the order is total. */
export function rankValue(x: number): number {
  return x - x === 0 ? x + 0 : 0;
}
