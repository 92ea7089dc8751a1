/**
 * The few ABI pieces the source reads, decoded by hand: event topics of Uniswap v2 and v3 factories
 * and pools, and ERC-20 metadata answers (strings, bytes32 strings, integers).
 * Topics are keccak-256 of the event signatures (checked against a keccak implementation in test/evm.test.ts).
 */
export const TOPICS = {
    /** UniswapV2Factory `PairCreated(address indexed token0, address indexed token1, address pair, uint256)` */
    pairCreated: '0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9',
    /** UniswapV2Pair `Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)` */
    v2Swap: '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
    /** UniswapV2Pair `Sync(uint112 reserve0, uint112 reserve1)` */
    v2Sync: '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1',
    /** UniswapV2Pair `Mint(address indexed sender, uint amount0, uint amount1)` */
    v2Mint: '0x4c209b5fc8ad50758f13e2e1088ba56a560dff690a1c6fef26394f4c03821c4f',
    /** UniswapV2Pair `Burn(address indexed sender, uint amount0, uint amount1, address indexed to)` */
    v2Burn: '0xdccd412f0b1252819cb1fd330b93224ca42612892bb3f4f789976e6d81936496',
    /** UniswapV3Factory `PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)` */
    poolCreated: '0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118',
    /** UniswapV3Pool `Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)` */
    v3Swap: '0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67',
    /** UniswapV3Pool `Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)` */
    v3Mint: '0x7a53080ba414158be7ec69b987b5fb7d07dee101fe85488f0853ae16239d0bde',
    /** UniswapV3Pool `Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)` */
    v3Burn: '0x0c396cd989a39f4459b5fa1aed6a9a8dcdbc45908acfd67e028cd568da98982c',
    /** UniswapV3Pool `Initialize(uint160 sqrtPriceX96, int24 tick)` */
    v3Initialize: '0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95',
};
export const SIGNATURES = {
    pairCreated: 'PairCreated(address,address,address,uint256)',
    v2Swap: 'Swap(address,uint256,uint256,uint256,uint256,address)',
    v2Sync: 'Sync(uint112,uint112)',
    v2Mint: 'Mint(address,uint256,uint256)',
    v2Burn: 'Burn(address,uint256,uint256,address)',
    poolCreated: 'PoolCreated(address,address,uint24,int24,address)',
    v3Swap: 'Swap(address,address,int256,int256,uint160,uint128,int24)',
    v3Mint: 'Mint(address,address,int24,int24,uint128,uint256,uint256)',
    v3Burn: 'Burn(address,int24,int24,uint128,uint256,uint256)',
    v3Initialize: 'Initialize(uint160,int24)',
};
/** ERC-20 function selectors (first 4 bytes of keccak-256 of the signature). */
export const SELECTORS = {
    name: '0x06fdde03',
    symbol: '0x95d89b41',
    decimals: '0x313ce567',
    totalSupply: '0x18160ddd',
};
const TWO_256 = 1n << 256n;
const TWO_255 = 1n << 255n;
/** The i-th 32-byte word of ABI data as an unsigned integer. */
export function word(data, i) {
    const start = 2 + i * 64;
    const hex = data.slice(start, start + 64);
    if (hex.length !== 64)
        throw new Error(`ABI data too short for word ${i}`);
    return BigInt(`0x${hex}`);
}
/** Two's-complement reading of a 256-bit word (int256, int24, ... are sign-extended to 256 bits). */
export function signed(w) {
    return w >= TWO_255 ? w - TWO_256 : w;
}
/** The address held in the low 20 bytes of a topic or word, lowercase. */
export function topicAddress(topic) {
    return `0x${topic.slice(-40).toLowerCase()}`;
}
export function wordAddress(data, i) {
    return topicAddress(data.slice(2 + i * 64, 2 + (i + 1) * 64));
}
export function hexNumber(hex) {
    // A digit loop for the short quantities nodes send (block numbers, indexes): about twice as fast
    // as parseInt here, where every log carries several; anything unusual goes to parseInt.
    const n = hex.length;
    if (n > 2 && n <= 15 && hex.charCodeAt(0) === 48 && (hex.charCodeAt(1) | 32) === 120) {
        let v = 0;
        for (let i = 2; i < n; i++) {
            const c = hex.charCodeAt(i) | 32;
            const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
            if (d < 0)
                return Number.parseInt(hex, 16);
            v = v * 16 + d;
        }
        return v;
    }
    return Number.parseInt(hex, 16);
}
/** Readable text only: NULs and other control characters dropped, trimmed. */
function clean(s) {
    // eslint-disable-next-line no-control-regex
    return s.replace(/[\u0000-\u001f\u007f\ufffd]/g, '').trim();
}
/**
 * An ERC-20 `name()` / `symbol()` answer: an ABI `string`, or a `bytes32` holding the text padded
 * with zeros (MKR, SAI and other early tokens). Returns null when it is neither.
 */
export function decodeStringOrBytes32(data) {
    if (!/^0x[0-9a-fA-F]*$/.test(data) || data.length < 66)
        return null;
    const bytes = Buffer.from(data.slice(2), 'hex');
    if (bytes.length >= 64) {
        const offset = word(data, 0);
        if (offset <= BigInt(bytes.length - 32) && offset % 32n === 0n) {
            const at = Number(offset);
            const len = BigInt(`0x${bytes.subarray(at, at + 32).toString('hex')}`);
            if (len <= BigInt(bytes.length - at - 32))
                return clean(bytes.subarray(at + 32, at + 32 + Number(len)).toString('utf8'));
        }
    }
    if (bytes.length === 32)
        return clean(bytes.toString('utf8'));
    return null;
}
//# sourceMappingURL=abi.js.map