/**
 * A real local EVM node for tests: anvil from the npm package on a free loopback port, the real
 * Uniswap bytecode from @uniswap/v2-core and @uniswap/v3-core, and test tokens compiled offline
 * with solc from test/fixtures/evm/Tokens.sol. Accounts are anvil's unlocked dev accounts.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import solc from 'solc';
import { createPublicClient, createWalletClient, http, parseAbiItem } from 'viem';
import { foundry } from 'viem/chains';
import { EvmChainSchema } from '../../engine/sources/evm/config.js';
const require = createRequire(import.meta.url);
function anvilBinary() {
    const pkg = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
    return require.resolve(`${pkg}/bin/anvil`);
}
/**
 * Starts anvil on 127.0.0.1 with instant mining; `timestamp` sets the genesis time (Unix s). anvil
 * binds a port of the kernel's choosing (`--port 0`) and prints it: no other test's node can take
 * it between a probe and the bind.
 */
export async function startAnvil(options = {}) {
    const chainId = options.chainId ?? 31_337;
    const args = ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId)];
    if (options.timestamp !== undefined)
        args.push('--timestamp', String(options.timestamp));
    if (options.gasLimit !== undefined)
        args.push('--gas-limit', String(options.gasLimit));
    const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // The banner ends with the address bound; what anvil prints afterwards (one line per call) is dropped.
    let out = '';
    let collecting = true;
    let bound;
    const listening = new Promise((resolve) => (bound = resolve));
    const onData = (b) => {
        if (!collecting)
            return;
        out += b.toString();
        const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) {
            collecting = false;
            bound(Number(m[1]));
        }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const port = await Promise.race([
        listening,
        exited.then(() => {
            throw new Error(`anvil exited before listening: ${out}`);
        }),
        new Promise((_, reject) => setTimeout(() => reject(new Error(`anvil did not print its address within 10 s: ${out}`)), 10_000).unref()),
    ]);
    const url = `http://127.0.0.1:${port}`;
    const rpc = async (method, params = []) => {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
        const body = (await res.json());
        if (body.error)
            throw new Error(`${method}: ${body.error.message}`);
        return body.result;
    };
    const deadline = Date.now() + 10_000;
    for (;;) {
        try {
            await rpc('eth_chainId');
            break;
        }
        catch {
            if (Date.now() > deadline || child.exitCode !== null)
                throw new Error(`anvil did not start on ${url}: ${out}`);
            await new Promise((r) => setTimeout(r, 50));
        }
    }
    const chain = { ...foundry, id: chainId, rpcUrls: { default: { http: [url] } } };
    const pub = createPublicClient({ chain, transport: http(url) });
    const [account] = await rpc('eth_accounts');
    const wallet = createWalletClient({ chain, transport: http(url), account: account });
    return {
        url,
        port,
        chainId,
        child,
        pub,
        wallet,
        account: account,
        rpc,
        async stop() {
            if (child.exitCode === null)
                child.kill('SIGTERM');
            await exited;
        },
    };
}
function uniswapArtifact(path) {
    const a = JSON.parse(readFileSync(require.resolve(path), 'utf8'));
    return { abi: a.abi, bytecode: (a.bytecode.startsWith('0x') ? a.bytecode : `0x${a.bytecode}`) };
}
export const V2_FACTORY = uniswapArtifact('@uniswap/v2-core/build/UniswapV2Factory.json');
export const V2_PAIR = uniswapArtifact('@uniswap/v2-core/build/UniswapV2Pair.json');
export const V3_FACTORY = uniswapArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json');
export const V3_POOL = uniswapArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json');
let compiled = null;
/** The fixture source, from test/support (vitest) or dist/test/support (compiled, for the bench). */
function fixtureSource() {
    for (const rel of ['../fixtures/evm/Tokens.sol', '../../../test/fixtures/evm/Tokens.sol']) {
        try {
            return readFileSync(new URL(rel, import.meta.url), 'utf8');
        }
        catch {
            // try the next location
        }
    }
    throw new Error('test/fixtures/evm/Tokens.sol not found');
}
/** TestToken, Bytes32Token, BareToken, V3Caller and V2Churn from test/fixtures/evm/Tokens.sol. */
export function fixtures() {
    if (!compiled) {
        const source = fixtureSource();
        const input = {
            language: 'Solidity',
            sources: { 'Tokens.sol': { content: source } },
            settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
        };
        const out = JSON.parse(solc.compile(JSON.stringify(input)));
        const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
        if (errors.length > 0)
            throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
        compiled = {};
        for (const [name, c] of Object.entries(out.contracts['Tokens.sol']))
            compiled[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
    }
    return compiled;
}
/** Polls for a transaction's receipt (anvil mines on arrival); fails after `timeoutMs`. */
async function receiptOf(node, hash, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const raw = await node.rpc('eth_getTransactionReceipt', [hash]);
        if (raw !== null)
            return node.pub.getTransactionReceipt({ hash });
        if (Date.now() > deadline)
            throw new Error(`transaction ${hash} not mined after ${timeoutMs} ms (head ${Number(await node.rpc('eth_blockNumber'))})`);
        await new Promise((r) => setTimeout(r, 2));
    }
}
/** Deploys a contract and waits for its receipt; returns its address. */
export async function deploy(node, artifact, args = []) {
    const hash = await node.wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: args, account: node.account, chain: node.wallet.chain });
    const receipt = await receiptOf(node, hash);
    if (receipt.status !== 'success' || !receipt.contractAddress)
        throw new Error('deployment failed');
    return receipt.contractAddress;
}
/** Sends a contract call as a transaction and waits for it to be mined successfully. */
export async function send(node, address, abi, functionName, args = [], gas = 15000000n) {
    // A fixed gas limit: an estimate made on the previous block's timestamp can fall short when the
    // block's timestamp differs (Uniswap v2 updates its price accumulators only when time has passed).
    const hash = await node.wallet.writeContract({ address, abi, functionName, args: args, account: node.account, chain: node.wallet.chain, gas });
    const receipt = await receiptOf(node, hash);
    if (receipt.status !== 'success') {
        // Replay the call on the state before it for the revert reason.
        const reason = await node.pub
            .call({ to: address, data: (await node.pub.getTransaction({ hash })).input, account: node.account, blockNumber: receipt.blockNumber - 1n })
            .then(() => 'no revert on the previous state', (e) => (e instanceof Error ? e.message.split('\n')[0] : String(e)));
        throw new Error(`${functionName} reverted in block ${receipt.blockNumber} (${reason})`);
    }
    return hash;
}
export async function read(node, address, abi, functionName, args = []) {
    return (await node.pub.readContract({ address, abi, functionName, args: args }));
}
/** Mines the next transaction at Unix time t. */
export async function mineAt(node, t) {
    await node.rpc('evm_setNextBlockTimestamp', [t]);
}
export function v2Trades(node) {
    const erc20 = fixtures().TestToken.abi;
    const transfer = async (token, to, amount, t) => {
        await mineAt(node, t);
        await send(node, token, erc20, 'transfer', [to, amount]);
    };
    return {
        transfer,
        async addLiquidity(pair, a, amountA, b, amountB, t) {
            await transfer(a, pair, amountA, t);
            await transfer(b, pair, amountB, t + 1);
            await mineAt(node, t + 2);
            await send(node, pair, V2_PAIR.abi, 'mint', [node.account]);
        },
        async swap(pair, tokenIn, amountIn, t) {
            const [r0, r1] = await read(node, pair, V2_PAIR.abi, 'getReserves');
            const token0 = await read(node, pair, V2_PAIR.abi, 'token0');
            const zeroIn = token0.toLowerCase() === tokenIn.toLowerCase();
            const [rin, rout] = zeroIn ? [r0, r1] : [r1, r0];
            const amountOut = (amountIn * 997n * rout) / (rin * 1000n + amountIn * 997n);
            await transfer(tokenIn, pair, amountIn, t);
            await mineAt(node, t + 1);
            await send(node, pair, V2_PAIR.abi, 'swap', [zeroIn ? 0n : amountOut, zeroIn ? amountOut : 0n, node.account, '0x']);
        },
        async removeLiquidity(pair, percent, t) {
            const lp = await read(node, pair, V2_PAIR.abi, 'balanceOf', [node.account]);
            await mineAt(node, t);
            await send(node, pair, V2_PAIR.abi, 'transfer', [pair, (lp * percent) / 100n]);
            await mineAt(node, t + 1);
            await send(node, pair, V2_PAIR.abi, 'burn', [node.account]);
        },
    };
}
export async function deployV2Market(node, t, tokens) {
    const f = fixtures();
    const out = {};
    for (const [key, spec] of Object.entries(tokens)) {
        await mineAt(node, t++);
        out[key] = await deploy(node, f.TestToken, [spec.name, spec.symbol, spec.decimals, spec.supply]);
    }
    await mineAt(node, t++);
    const factory = await deploy(node, V2_FACTORY, [node.account]);
    const factoryBlock = Number(await node.rpc('eth_blockNumber'));
    return {
        factory,
        factoryBlock,
        tokens: out,
        async createPair(a, b, at) {
            await mineAt(node, at);
            await send(node, factory, V2_FACTORY.abi, 'createPair', [a, b]);
            return read(node, factory, V2_FACTORY.abi, 'getPair', [a, b]);
        },
        ...v2Trades(node),
    };
}
const V2_SWAP = parseAbiItem('event Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)');
const V2_SYNC = parseAbiItem('event Sync(uint112 reserve0, uint112 reserve1)');
const V2_MINT = parseAbiItem('event Mint(address indexed sender, uint amount0, uint amount1)');
const V2_BURN = parseAbiItem('event Burn(address indexed sender, uint amount0, uint amount1, address indexed to)');
/** Every swap, mint and burn of a v2 pair on the node's canonical chain, read from its logs in chain order. */
export async function pairHistory(node, pair) {
    const logs = await node.pub.getLogs({ address: pair, events: [V2_SWAP, V2_SYNC, V2_MINT, V2_BURN], fromBlock: 0n });
    const times = new Map();
    for (const l of logs)
        if (!times.has(l.blockNumber))
            times.set(l.blockNumber, Number((await node.pub.getBlock({ blockNumber: l.blockNumber })).timestamp));
    const txs = [];
    let r0 = 0n;
    let r1 = 0n;
    for (const l of logs) {
        const a = l.args;
        if (l.eventName === 'Sync') {
            r0 = a.reserve0;
            r1 = a.reserve1;
            continue;
        }
        const base = { id: `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`, hash: l.transactionHash, block: Number(l.blockNumber), time: times.get(l.blockNumber), r0, r1 };
        if (l.eventName === 'Swap')
            txs.push({ ...base, type: 'swap', amount0: a.amount0In - a.amount0Out, amount1: a.amount1In - a.amount1Out });
        else if (l.eventName === 'Mint')
            txs.push({ ...base, type: 'add', amount0: a.amount0, amount1: a.amount1 });
        else
            txs.push({ ...base, type: 'remove', amount0: -a.amount0, amount1: -a.amount1 });
    }
    return txs;
}
/**
 * A chain config following one Uniswap v2 factory on a local anvil, as the reorganisation tests do:
 * no confirmations, small log ranges and steps, the head polled every 10 ms.
 */
export function anvilV2Chain(node, v2) {
    return EvmChainSchema.parse({
        id: 'anvil',
        displayName: 'Anvil',
        chainId: node.chainId,
        rpcUrls: [node.url],
        blockTimeSeconds: 1,
        startBlock: v2.factoryBlock,
        confirmations: 0,
        logBatchBlocks: 16,
        stepBlocks: 40,
        stablecoins: [v2.usdc],
        wrappedNative: v2.weth,
        factories: [{ dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: v2.factory }],
        pollIntervalMs: 10,
    });
}
//# sourceMappingURL=evm.js.map