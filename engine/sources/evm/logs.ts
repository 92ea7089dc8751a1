/**
 * `eth_getLogs` over a block range with an adaptive range size: a range the node refuses as too large
 * (or that times out) is split in halves, recursively; the size that worked is kept for the next
 * ranges and regrown by doubling after successes, up to the configured batch size. Several ranges
 * are fetched at once; the logs come back in chain order.
 */
import type { RpcLog } from './abi.js';
import type { LogPage } from './log-answer.js';
import { RangeTooLargeError, RpcError, type RpcClient } from './rpc.js';

export interface LogFilter {
  /** Contract addresses; null = any address (filtered by the caller). */
  readonly address: readonly string[] | null;
  /** Allowed first topics (event signatures). */
  readonly topics0: readonly string[];
}

export interface LogReader {
  /** Every matching log of blocks [from, to], in chain order. */
  read(from: number, to: number, filter: LogFilter): Promise<RpcLog[]>;
  /** The logs of one range, asked for in one request (split only when the node refuses it). */
  range(from: number, to: number, filter: LogFilter): Promise<RpcLog[]>;
  /** As `range`, the logs left in the answers until their pages' `logs()` is called (ranges read ahead). */
  pages(from: number, to: number, filter: LogFilter): Promise<LogPage[]>;
  /** Current range size in blocks. */
  readonly rangeBlocks: number;
  /** Ranges split because the node refused them. */
  readonly splits: number;
}

/** eth_getLogs accepts an address array; beyond this many addresses the filter is applied locally. */
export const MAX_FILTER_ADDRESSES = 1_000;

const hex = (n: number) => `0x${n.toString(16)}`;
/** eth_getLogs requests in flight per read. */
export const DEFAULT_CONCURRENCY = 4;

export function createLogReader(rpc: RpcClient, maxRangeBlocks: number, concurrency = DEFAULT_CONCURRENCY): LogReader {
  let range = maxRangeBlocks;
  let splits = 0;
  let successes = 0;

  /** Appends the pages of [from, to] to `out`, in block order (several when the node refused the range whole). */
  async function fetchRange(from: number, to: number, filter: LogFilter, out: LogPage[]): Promise<void> {
    try {
      const params: Record<string, unknown> = { fromBlock: hex(from), toBlock: hex(to), topics: [filter.topics0] };
      if (filter.address) params['address'] = filter.address;
      out.push(await rpc.getLogs([params]));
      if (++successes >= 4 && range < maxRangeBlocks) {
        range = Math.min(maxRangeBlocks, range * 2);
        successes = 0;
      }
    } catch (err) {
      // A refused range, or one that keeps timing out, is split; one block cannot be split further.
      const splittable = err instanceof RangeTooLargeError || (err instanceof RpcError && err.code === 0);
      if (!splittable || from === to) throw err;
      splits++;
      successes = 0;
      const mid = from + Math.floor((to - from) / 2);
      range = Math.max(1, Math.min(range, mid - from + 1));
      await fetchRange(from, mid, filter, out);
      await fetchRange(mid + 1, to, filter, out);
    }
  }

  async function pages(from: number, to: number, filter: LogFilter): Promise<LogPage[]> {
    if (filter.address && filter.address.length === 0) return [];
    const out: LogPage[] = [];
    await fetchRange(from, to, filter, out);
    return out;
  }

  return {
    get rangeBlocks() {
      return range;
    },
    get splits() {
      return splits;
    },
    async range(from, to, filter) {
      return logsOf(await pages(from, to, filter));
    },
    pages,
    async read(from, to, filter) {
      if (filter.address && filter.address.length === 0) return [];
      // Up to `concurrency` ranges in flight; their logs are joined in range order. A read shorter
      // than `concurrency` ranges is cut in `concurrency` pieces, so a short step is read in parallel too.
      const parts: RpcLog[][] = [];
      let start = from;
      const piece = Math.max(1, Math.ceil((to - from + 1) / Math.max(1, concurrency)));
      const worker = async (): Promise<void> => {
        while (start <= to) {
          const s = start;
          const end = Math.min(to, s + Math.min(range, piece) - 1);
          start = end + 1;
          const k = parts.length;
          parts.push([]);
          const pages: LogPage[] = [];
          await fetchRange(s, end, filter, pages);
          // Read as each range comes back, while the others are still being served.
          parts[k] = logsOf(pages);
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
      return parts.flat();
    },
  };
}

/** The logs of pages in their order. */
export function logsOf(pages: readonly LogPage[]): RpcLog[] {
  if (pages.length === 1) return pages[0]!.logs();
  const out: RpcLog[] = [];
  for (const p of pages) for (const l of p.logs()) out.push(l);
  return out;
}
