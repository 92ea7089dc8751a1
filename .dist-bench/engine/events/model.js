/**
 * The one event model every source emits (simulator, EVM JSON-RPC, replay).
 *
 * On-chain events are identified by `(chain, blockNumber, txIndex, logIndex)`; a batch is
 * always for one chain, so the chain lives on the batch. Raw amounts and reserves are
 * integers (`bigint`) in the token's smallest unit; decimals are applied only where USD
 * figures are made. Signed amounts follow the pool's point of view, as Uniswap v3 logs do:
 * positive means the pool received tokens, negative means tokens left the pool.
 */
/** Pricing role of a token on its chain, used to route USD prices. */
export const TokenRole = {
    /** The chain's reference stablecoin: its price is 1 USD by definition. */
    PrimaryStable: 0,
    Stable: 1,
    WrappedNative: 2,
    Other: 3,
};
export const PoolProtocol = {
    /** Constant product x*y=k with reserves (Uniswap v2 and its forks). */
    ConstantProduct: 0,
    /** Concentrated liquidity with sqrtPriceX96 and active liquidity (Uniswap v3 style). */
    Concentrated: 1,
};
/** Total order of on-chain events of one chain. */
export function compareKeys(a, b) {
    return a.blockNumber - b.blockNumber || a.txIndex - b.txIndex || a.logIndex - b.logIndex;
}
//# sourceMappingURL=model.js.map