import { errorText, fallbackLog } from '../log.js';
import { SwapFlags } from '../events/fb/dex/events/swap-flags.js';
function u128Text(s) {
    const w0 = s.w0();
    const w1 = s.w1();
    const w2 = s.w2();
    const w3 = s.w3();
    if (w2 === 0 && w3 === 0 && w1 < 0x20_0000)
        return `${w1 * 4_294_967_296 + w0}`;
    return ((BigInt(w3) << 96n) | (BigInt(w2) << 64n) | (BigInt(w1) << 32n) | BigInt(w0)).toString();
}
/** The feed record of swap `e` of pool p (called only for watched swaps). */
export function feedSwap(e, k, p, scratch, price0Usd, price1Usd, volumeUsd) {
    const flags = e.flags();
    const a0 = u128Text(e.amount0(scratch));
    const a1 = u128Text(e.amount1(scratch));
    return {
        pool: p,
        block: k.blockNumber(),
        txIndex: k.txIndex(),
        logIndex: k.logIndex(),
        time: e.timestamp(),
        txHash: e.txHash() ?? '',
        sender: e.sender() ?? '',
        recipient: e.recipient() ?? '',
        amount0: (flags & SwapFlags.Amount0Negative) !== 0 && a0 !== '0' ? `-${a0}` : a0,
        amount1: (flags & SwapFlags.Amount1Negative) !== 0 && a1 !== '0' ? `-${a1}` : a1,
        price0Usd,
        price1Usd,
        volumeUsd,
    };
}
/** Where dispatchers publish the watched swaps of each applied task; the gateway listens. */
export class SwapFeed {
    listeners = new Set();
    log;
    constructor(log = fallbackLog()) {
        this.log = log;
    }
    subscribe(listener) {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
    }
    publish(swaps) {
        if (swaps.length === 0)
            return;
        for (const l of this.listeners) {
            try {
                l(swaps);
            }
            catch (err) {
                this.log.error(`swap feed: listener failed: ${errorText(err)}`);
            }
        }
    }
}
//# sourceMappingURL=swaps.js.map