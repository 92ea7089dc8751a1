import { RangeTooLargeError, RpcError } from './rpc.js';
/** eth_getLogs accepts an address array; beyond this many addresses the filter is applied locally. */
export const MAX_FILTER_ADDRESSES = 1_000;
const hex = (n) => `0x${n.toString(16)}`;
/** eth_getLogs requests in flight per read. */
export const DEFAULT_CONCURRENCY = 4;
export function createLogReader(rpc, maxRangeBlocks, concurrency = DEFAULT_CONCURRENCY) {
    let range = maxRangeBlocks;
    let splits = 0;
    let successes = 0;
    async function fetchRange(from, to, filter, out) {
        try {
            const params = { fromBlock: hex(from), toBlock: hex(to), topics: [filter.topics0] };
            if (filter.address)
                params['address'] = filter.address;
            const logs = await rpc.request('eth_getLogs', [params]);
            for (const l of logs)
                out.push(l);
            if (++successes >= 4 && range < maxRangeBlocks) {
                range = Math.min(maxRangeBlocks, range * 2);
                successes = 0;
            }
        }
        catch (err) {
            // A refused range, or one that keeps timing out, is split; one block cannot be split further.
            const splittable = err instanceof RangeTooLargeError || (err instanceof RpcError && err.code === 0);
            if (!splittable || from === to)
                throw err;
            splits++;
            successes = 0;
            const mid = from + Math.floor((to - from) / 2);
            range = Math.max(1, Math.min(range, mid - from + 1));
            await fetchRange(from, mid, filter, out);
            await fetchRange(mid + 1, to, filter, out);
        }
    }
    return {
        get rangeBlocks() {
            return range;
        },
        get splits() {
            return splits;
        },
        async read(from, to, filter) {
            if (filter.address && filter.address.length === 0)
                return [];
            // Up to `concurrency` ranges in flight; their logs are joined in range order. A read shorter
            // than `concurrency` ranges is cut in `concurrency` pieces, so a short step is read in parallel too.
            const parts = [];
            let start = from;
            const piece = Math.max(1, Math.ceil((to - from + 1) / Math.max(1, concurrency)));
            const worker = async () => {
                while (start <= to) {
                    const s = start;
                    const end = Math.min(to, s + Math.min(range, piece) - 1);
                    start = end + 1;
                    const part = [];
                    parts.push(part);
                    await fetchRange(s, end, filter, part);
                }
            };
            await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
            return parts.flat();
        },
    };
}
//# sourceMappingURL=logs.js.map