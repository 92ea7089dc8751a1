/**
 * A real local EVM node for tests: anvil from the npm package on a free loopback port, the real
 * Uniswap bytecode from @uniswap/v2-core and @uniswap/v3-core, PancakeSwap v3's from
 * @pancakeswap/v3-core, Algebra Integral's from @cryptoalgebra/integral-core and Algebra v1.9's from
 * @cryptoalgebra/core, and test tokens compiled offline
 * with solc from test/fixtures/evm/Tokens.sol. Accounts are anvil's unlocked dev accounts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import solc from 'solc';
import { createPublicClient, createWalletClient, getContractAddress, http, parseAbiItem, type Abi, type AbiEvent, type Address, type Hex, type PublicClient, type WalletClient } from 'viem';
import { foundry } from 'viem/chains';
import { EvmChainSchema, type EvmChainConfig } from '../../engine/sources/evm/config.js';
import type { RpcLog } from '../../engine/sources/evm/words.js';

const require = createRequire(import.meta.url);

export interface Anvil {
  readonly url: string;
  readonly port: number;
  readonly chainId: number;
  readonly child: ChildProcess;
  readonly pub: PublicClient;
  readonly wallet: WalletClient;
  readonly account: Address;
  rpc<T>(method: string, params?: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

function anvilBinary(): string {
  const pkg = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  return require.resolve(`${pkg}/bin/anvil`);
}

/**
 * Starts anvil on 127.0.0.1 with instant mining; `timestamp` sets the genesis time (Unix s). anvil
 * binds a port of the kernel's choosing (`--port 0`) and prints it: no other test's node can take
 * it between a probe and the bind.
 */
export async function startAnvil(options: { timestamp?: number; chainId?: number; gasLimit?: number } = {}): Promise<Anvil> {
  const chainId = options.chainId ?? 31_337;
  const args = ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId)];
  if (options.timestamp !== undefined) args.push('--timestamp', String(options.timestamp));
  if (options.gasLimit !== undefined) args.push('--gas-limit', String(options.gasLimit));
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // The banner ends with the address bound; what anvil prints afterwards (one line per call) is dropped.
  let out = '';
  let collecting = true;
  let bound: (port: number) => void;
  const listening = new Promise<number>((resolve) => (bound = resolve));
  const onData = (b: Buffer) => {
    if (!collecting) return;
    out += b.toString();
    const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
    if (m) {
      collecting = false;
      bound(Number(m[1]));
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await Promise.race([
    listening,
    exited.then(() => {
      throw new Error(`anvil exited before listening: ${out}`);
    }),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`anvil did not print its address within 10 s: ${out}`)), 10_000).unref()),
  ]);
  const url = `http://127.0.0.1:${port}`;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await rpc('eth_chainId');
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`anvil did not start on ${url}: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const chain = { ...foundry, id: chainId, rpcUrls: { default: { http: [url] } } };
  const pub = createPublicClient({ chain, transport: http(url) }) as PublicClient;
  const [account] = await rpc<Address[]>('eth_accounts');
  const wallet = createWalletClient({ chain, transport: http(url), account: account! });
  return {
    url,
    port,
    chainId,
    child,
    pub,
    wallet,
    account: account!,
    rpc,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Artifact {
  readonly abi: Abi;
  readonly bytecode: Hex;
}

function packageArtifact(path: string): Artifact {
  const a = JSON.parse(readFileSync(require.resolve(path), 'utf8')) as { abi: Abi; bytecode: string };
  return { abi: a.abi, bytecode: (a.bytecode.startsWith('0x') ? a.bytecode : `0x${a.bytecode}`) as Hex };
}

export const V2_FACTORY = packageArtifact('@uniswap/v2-core/build/UniswapV2Factory.json');
export const V2_PAIR = packageArtifact('@uniswap/v2-core/build/UniswapV2Pair.json');
export const V3_FACTORY = packageArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json');
export const V3_POOL = packageArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json');
/** A v3-style pool's Mint and Burn events (PancakeSwap v3's are the same), for reading its logs with viem. */
export const V3_MINT = parseAbiItem('event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)');
export const V3_BURN = parseAbiItem('event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)');
/** A v3-style pool's events that move its tokens outside swaps and mints (PancakeSwap v3's are the same). */
export const V3_COLLECT = parseAbiItem('event Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount0, uint128 amount1)');
export const V3_COLLECT_PROTOCOL = parseAbiItem('event CollectProtocol(address indexed sender, address indexed recipient, uint128 amount0, uint128 amount1)');
export const V3_FLASH = parseAbiItem('event Flash(address indexed sender, address indexed recipient, uint256 amount0, uint256 amount1, uint256 paid0, uint256 paid1)');

const BALANCE_OF = [parseAbiItem('function balanceOf(address) view returns (uint256)')] as const;

/** A pool's balances of its two tokens (ERC-20 `balanceOf`), read from the node, at `blockNumber` or the head. */
export async function balancesOf(node: Anvil, pool: Address, token0: Address, token1: Address, blockNumber?: bigint): Promise<[bigint, bigint]> {
  const one = (token: Address) => node.pub.readContract({ address: token, abi: BALANCE_OF, functionName: 'balanceOf', args: [pool], ...(blockNumber === undefined ? {} : { blockNumber }) });
  return [await one(token0), await one(token1)];
}

/**
 * What a v3-style pool's logs say its token balances are: Mint and Swap amounts in, Collect and
 * CollectProtocol amounts out, Flash payments in (a Burn moves nothing: it credits the position).
 */
export async function v3LoggedBalances(node: Anvil, pool: Address, swapEvent: AbiEvent): Promise<[bigint, bigint]> {
  const logs = await node.pub.getLogs({ address: pool, events: [swapEvent, V3_MINT, V3_BURN, V3_COLLECT, V3_COLLECT_PROTOCOL, V3_FLASH], fromBlock: 0n });
  let r0 = 0n;
  let r1 = 0n;
  for (const l of logs) {
    const a = l.args as Record<string, bigint>;
    switch (l.eventName as string) {
      case 'Swap':
      case 'Mint':
        r0 += a['amount0']!;
        r1 += a['amount1']!;
        break;
      case 'Collect':
      case 'CollectProtocol':
        r0 -= a['amount0']!;
        r1 -= a['amount1']!;
        break;
      case 'Flash':
        r0 += a['paid0']!;
        r1 += a['paid1']!;
        break;
    }
  }
  return [r0, r1];
}

export const PANCAKE_V3_FACTORY = packageArtifact('@pancakeswap/v3-core/artifacts/contracts/PancakeV3Factory.sol/PancakeV3Factory.json');
export const PANCAKE_V3_POOL = packageArtifact('@pancakeswap/v3-core/artifacts/contracts/PancakeV3Pool.sol/PancakeV3Pool.json');

let compiled: Record<string, Artifact> | null = null;

type FixtureName = 'TestToken' | 'Bytes32Token' | 'BareToken' | 'V3Caller' | 'V2Churn' | 'V4Churn' | 'PoolCodeDeployer' | 'AlgebraChurn' | 'ImpostorPair';

/** The fixture source, from test/support (vitest) or dist/test/support (compiled, for the bench). */
function fixtureSource(): string {
  for (const rel of ['../fixtures/evm/Tokens.sol', '../../../test/fixtures/evm/Tokens.sol']) {
    try {
      return readFileSync(new URL(rel, import.meta.url), 'utf8');
    } catch {
      // try the next location
    }
  }
  throw new Error('test/fixtures/evm/Tokens.sol not found');
}

/** TestToken, Bytes32Token, BareToken, V3Caller, V2Churn, V4Churn, PoolCodeDeployer, AlgebraChurn and ImpostorPair from test/fixtures/evm/Tokens.sol. */
export function fixtures(): Record<FixtureName, Artifact> {
  if (!compiled) {
    const source = fixtureSource();
    const input = {
      language: 'Solidity',
      sources: { 'Tokens.sol': { content: source } },
      settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
    };
    const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: { severity: string; formattedMessage: string }[];
      contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
    };
    const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
    if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
    compiled = {};
    for (const [name, c] of Object.entries(out.contracts['Tokens.sol']!)) compiled[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as Hex };
  }
  return compiled as Record<FixtureName, Artifact>;
}

/** Polls for a transaction's receipt (anvil mines on arrival); fails after `timeoutMs`. */
async function receiptOf(node: Anvil, hash: Hex, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const raw = await node.rpc<unknown>('eth_getTransactionReceipt', [hash]);
    if (raw !== null) return node.pub.getTransactionReceipt({ hash });
    if (Date.now() > deadline) throw new Error(`transaction ${hash} not mined after ${timeoutMs} ms (head ${Number(await node.rpc<string>('eth_blockNumber'))})`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Deploys a contract and waits for its receipt; returns its address. */
export async function deploy(node: Anvil, artifact: Artifact, args: readonly unknown[] = []): Promise<Address> {
  const hash = await node.wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: args as unknown[], account: node.account, chain: node.wallet.chain });
  const receipt = await receiptOf(node, hash);
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('deployment failed');
  return receipt.contractAddress;
}

/** Sends a contract call as a transaction and waits for it to be mined successfully. */
export async function send(node: Anvil, address: Address, abi: Abi, functionName: string, args: readonly unknown[] = [], gas = 15_000_000n): Promise<Hex> {
  // A fixed gas limit: an estimate made on the previous block's timestamp can fall short when the
  // block's timestamp differs (Uniswap v2 updates its price accumulators only when time has passed).
  const hash = await node.wallet.writeContract({ address, abi, functionName, args: args as unknown[], account: node.account, chain: node.wallet.chain, gas });
  const receipt = await receiptOf(node, hash);
  if (receipt.status !== 'success') {
    // Replay the call on the state before it for the revert reason.
    const reason = await node.pub
      .call({ to: address, data: (await node.pub.getTransaction({ hash })).input, account: node.account, blockNumber: receipt.blockNumber - 1n })
      .then(() => 'no revert on the previous state', (e: unknown) => (e instanceof Error ? e.message.split('\n')[0] : String(e)));
    throw new Error(`${functionName} reverted in block ${receipt.blockNumber} (${reason})`);
  }
  return hash;
}

export async function read<T>(node: Anvil, address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []): Promise<T> {
  return (await node.pub.readContract({ address, abi, functionName, args: args as unknown[] })) as T;
}

/** A contract call to send as a transaction. */
export interface Call {
  readonly address: Address;
  readonly abi: Abi;
  readonly functionName: string;
  readonly args: readonly unknown[];
  readonly value?: bigint;
}

/**
 * Sends these calls, in this order, into one block mined at Unix time t (automining off meanwhile);
 * each must succeed, all in that block. Returns their hashes and the block.
 */
export async function inOneBlock(node: Anvil, t: number, calls: readonly Call[]): Promise<{ hashes: Hex[]; block: bigint }> {
  const hashes: Hex[] = [];
  await node.rpc('evm_setAutomine', [false]);
  try {
    const nonce = await node.pub.getTransactionCount({ address: node.account, blockTag: 'pending' });
    for (const [i, c] of calls.entries()) {
      const value = c.value === undefined ? {} : { value: c.value };
      hashes.push(await node.wallet.writeContract({ address: c.address, abi: c.abi, functionName: c.functionName, args: c.args as unknown[], ...value, account: node.account, chain: node.wallet.chain, gas: 3_000_000n, nonce: nonce + i }));
    }
    await node.rpc('evm_mine', [t]);
  } finally {
    await node.rpc('evm_setAutomine', [true]);
  }
  const receipts = await Promise.all(hashes.map((hash) => node.pub.waitForTransactionReceipt({ hash, pollingInterval: 5 })));
  for (const [i, r] of receipts.entries()) {
    if (r.status !== 'success') throw new Error(`${calls[i]!.functionName} reverted in block ${r.blockNumber}`);
    if (r.blockNumber !== receipts[0]!.blockNumber) throw new Error(`${calls[i]!.functionName} mined in block ${r.blockNumber}, not ${receipts[0]!.blockNumber}`);
  }
  return { hashes, block: receipts[0]!.blockNumber };
}

/** The timestamps of the blocks holding these logs, by block number. */
export async function blockTimes(node: Anvil, logs: readonly { blockNumber: bigint }[]): Promise<Map<bigint, number>> {
  const times = new Map<bigint, number>();
  for (const l of logs) if (!times.has(l.blockNumber)) times.set(l.blockNumber, Number((await node.pub.getBlock({ blockNumber: l.blockNumber })).timestamp));
  return times;
}

/** A Uniswap v3-style pool's swap, mint or burn, signed in the pool's view; a swap with the sqrt price after it (0 for the others). */
export interface V3PoolTx {
  id: string;
  hash: Hex;
  type: 'swap' | 'add' | 'remove';
  block: number;
  time: number;
  amount0: bigint;
  amount1: bigint;
  sqrtPriceX96: bigint;
}

/**
 * A Uniswap v3-style pool's Swap, Mint and Burn logs in chain order, decoded by viem with these
 * events: the Swap's sqrt price is its `sqrtPriceX96` (Algebra's `price`), a Burn's amounts go out.
 */
export async function v3PoolTxs(node: Anvil, pool: Address, swap: AbiEvent, burn: AbiEvent = V3_BURN): Promise<V3PoolTx[]> {
  const logs = await node.pub.getLogs({ address: pool, events: [swap, V3_MINT, burn], fromBlock: 0n });
  const times = await blockTimes(node, logs);
  return logs.map((l): V3PoolTx => {
    const a = l.args as Record<string, bigint>;
    const b = { id: `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`, hash: l.transactionHash, block: Number(l.blockNumber), time: times.get(l.blockNumber)! };
    if (l.eventName === 'Swap') return { ...b, type: 'swap', amount0: a.amount0!, amount1: a.amount1!, sqrtPriceX96: 'sqrtPriceX96' in a ? a.sqrtPriceX96! : a.price! };
    if (l.eventName === 'Mint') return { ...b, type: 'add', amount0: a.amount0!, amount1: a.amount1!, sqrtPriceX96: 0n };
    return { ...b, type: 'remove', amount0: -a.amount0!, amount1: -a.amount1!, sqrtPriceX96: 0n };
  });
}

/** Test tokens (the fixtures' TestToken: name, symbol, decimals, supply), deployed in the order given, one a block at Unix times t, t+1, … */
export async function deployTestTokens<K extends string>(node: Anvil, t: number, specs: Record<K, readonly [string, string, number, bigint]>): Promise<Record<K, Address>> {
  const out = {} as Record<K, Address>;
  for (const [i, [key, args]] of (Object.entries(specs) as [K, readonly [string, string, number, bigint]][]).entries()) {
    await mineAt(node, t + i);
    out[key] = await deploy(node, fixtures().TestToken, args);
  }
  return out;
}

/** Mines the next transaction at Unix time t. */
export async function mineAt(node: Anvil, t: number): Promise<void> {
  await node.rpc('evm_setNextBlockTimestamp', [t]);
}

/** Uniswap v2 pairs driven through the pair contracts themselves (no router), each step in a block at a set time. */
export interface V2Trades {
  /** An ERC-20 transfer in block t. */
  transfer(token: Address, to: Address, amount: bigint, t: number): Promise<void>;
  /** Both amounts sent to the pair, then mint; uses blocks t to t+2. */
  addLiquidity(pair: Address, a: Address, amountA: bigint, b: Address, amountB: bigint, t: number): Promise<void>;
  /** Sells `amountIn` of `tokenIn`, taking the constant-product output less the 0.3 % fee; uses blocks t and t+1. */
  swap(pair: Address, tokenIn: Address, amountIn: bigint, t: number): Promise<void>;
  /** Burns `percent` % of the account's LP tokens; uses blocks t and t+1. */
  removeLiquidity(pair: Address, percent: bigint, t: number): Promise<void>;
}

export function v2Trades(node: Anvil): V2Trades {
  const erc20 = fixtures().TestToken.abi;
  const transfer = async (token: Address, to: Address, amount: bigint, t: number) => {
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
      const [r0, r1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
      const token0 = await read<Address>(node, pair, V2_PAIR.abi, 'token0');
      const zeroIn = token0.toLowerCase() === tokenIn.toLowerCase();
      const [rin, rout] = zeroIn ? [r0, r1] : [r1, r0];
      const amountOut = (amountIn * 997n * rout) / (rin * 1000n + amountIn * 997n);
      await transfer(tokenIn, pair, amountIn, t);
      await mineAt(node, t + 1);
      await send(node, pair, V2_PAIR.abi, 'swap', [zeroIn ? 0n : amountOut, zeroIn ? amountOut : 0n, node.account, '0x']);
    },
    async removeLiquidity(pair, percent, t) {
      const lp = await read<bigint>(node, pair, V2_PAIR.abi, 'balanceOf', [node.account]);
      await mineAt(node, t);
      await send(node, pair, V2_PAIR.abi, 'transfer', [pair, (lp * percent) / 100n]);
      await mineAt(node, t + 1);
      await send(node, pair, V2_PAIR.abi, 'burn', [node.account]);
    },
  };
}

/** A Uniswap v2 market on the node: tokens, a factory and pairs, traded with V2Trades. */
export interface V2Market extends V2Trades {
  readonly factory: Address;
  readonly factoryBlock: number;
  readonly tokens: Record<string, Address>;
  createPair(a: Address, b: Address, t: number): Promise<Address>;
}

export async function deployV2Market(node: Anvil, t: number, tokens: Record<string, { name: string; symbol: string; decimals: number; supply: bigint }>): Promise<V2Market> {
  const f = fixtures();
  const out: Record<string, Address> = {};
  for (const [key, spec] of Object.entries(tokens)) {
    await mineAt(node, t++);
    out[key] = await deploy(node, f.TestToken, [spec.name, spec.symbol, spec.decimals, spec.supply]);
  }
  await mineAt(node, t++);
  const factory = await deploy(node, V2_FACTORY, [node.account]);
  const factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));
  return {
    factory,
    factoryBlock,
    tokens: out,
    async createPair(a, b, at) {
      await mineAt(node, at);
      await send(node, factory, V2_FACTORY.abi, 'createPair', [a, b]);
      return read<Address>(node, factory, V2_FACTORY.abi, 'getPair', [a, b]);
    },
    ...v2Trades(node),
  };
}

const V2_SWAP = parseAbiItem('event Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)');
const V2_SYNC = parseAbiItem('event Sync(uint112 reserve0, uint112 reserve1)');
const V2_MINT = parseAbiItem('event Mint(address indexed sender, uint amount0, uint amount1)');
const V2_BURN = parseAbiItem('event Burn(address indexed sender, uint amount0, uint amount1, address indexed to)');

/** A swap, mint or burn of a v2 pair as its logs tell it, with the reserves after it (the Sync of the same transaction). */
export interface PairTx {
  id: string;
  hash: Hex;
  type: 'swap' | 'add' | 'remove';
  block: number;
  time: number;
  /** Signed, the pool's view: in > 0, out < 0. */
  amount0: bigint;
  amount1: bigint;
  r0: bigint;
  r1: bigint;
}

/** Every swap, mint and burn of a v2 pair on the node's canonical chain, read from its logs in chain order. */
export async function pairHistory(node: Anvil, pair: Address): Promise<PairTx[]> {
  const logs = await node.pub.getLogs({ address: pair, events: [V2_SWAP, V2_SYNC, V2_MINT, V2_BURN], fromBlock: 0n });
  const times = await blockTimes(node, logs);
  const txs: PairTx[] = [];
  let r0 = 0n;
  let r1 = 0n;
  for (const l of logs) {
    const a = l.args as Record<string, bigint>;
    if (l.eventName === 'Sync') {
      r0 = a.reserve0!;
      r1 = a.reserve1!;
      continue;
    }
    const base = { id: `${l.blockNumber}:${l.transactionIndex}:${l.logIndex}`, hash: l.transactionHash, block: Number(l.blockNumber), time: times.get(l.blockNumber)!, r0, r1 };
    if (l.eventName === 'Swap') txs.push({ ...base, type: 'swap', amount0: a.amount0In! - a.amount0Out!, amount1: a.amount1In! - a.amount1Out! });
    else if (l.eventName === 'Mint') txs.push({ ...base, type: 'add', amount0: a.amount0!, amount1: a.amount1! });
    else txs.push({ ...base, type: 'remove', amount0: -a.amount0!, amount1: -a.amount1! });
  }
  return txs;
}

/**
 * A chain config following one factory on a local anvil, as the reorganisation tests do: no
 * confirmations, small log ranges and steps, the head polled every 10 ms.
 */
export function anvilChain(node: Anvil, c: { factory: { dexId: string; name: string; protocol: string; address: Address }; startBlock: number; usdc: Address; weth: Address }): EvmChainConfig {
  return EvmChainSchema.parse({
    id: 'anvil',
    displayName: 'Anvil',
    chainId: node.chainId,
    rpcUrls: [node.url],
    blockTimeSeconds: 1,
    startBlock: c.startBlock,
    confirmations: 0,
    logBatchBlocks: 16,
    stepBlocks: 40,
    stablecoins: [c.usdc],
    wrappedNative: c.weth,
    factories: [c.factory],
    pollIntervalMs: 10,
  });
}

/** A chain config for one backfill of a local anvil (served as it is then): no confirmations. */
export function anvilBackfillChain(
  node: Anvil,
  c: { id: string; displayName: string; startBlock: number; stablecoins: readonly Address[]; wrappedNative: Address; factories: readonly Record<string, unknown>[]; logBatchBlocks?: number },
): EvmChainConfig {
  const { logBatchBlocks, ...rest } = c;
  return EvmChainSchema.parse({ ...rest, chainId: node.chainId, rpcUrls: [node.url], confirmations: 0, ...(logBatchBlocks === undefined ? {} : { logBatchBlocks }) });
}

/** {@link anvilChain} for one Uniswap v2 factory. */
export function anvilV2Chain(node: Anvil, v2: { factory: Address; factoryBlock: number; usdc: Address; weth: Address }): EvmChainConfig {
  return anvilChain(node, { factory: { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: v2.factory }, startBlock: v2.factoryBlock, usdc: v2.usdc, weth: v2.weth });
}

/**
 * A PancakeSwap v3 factory from the package's bytecode, with its pool deployer: the pool's creation
 * code is stored as the code of a contract of its own (a constructor that returns it), which
 * PoolCodeDeployer copies and runs with CREATE2.
 */
export async function deployPancakeV3Factory(node: Anvil): Promise<{ factory: Address; factoryBlock: number }> {
  const code = PANCAKE_V3_POOL.bytecode.slice(2);
  const size = (code.length / 2).toString(16).padStart(8, '0');
  // PUSH4 size, DUP1, PUSH1 14, PUSH1 0, CODECOPY, PUSH1 0, RETURN: returns the 14 bytes' tail as code.
  const holder = await deploy(node, { abi: [], bytecode: `0x63${size}80600e6000396000f3${code}` as Hex });
  const deployer = await deploy(node, fixtures().PoolCodeDeployer, [holder]);
  const factory = await deploy(node, PANCAKE_V3_FACTORY, [deployer]);
  const factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await send(node, deployer, fixtures().PoolCodeDeployer.abi, 'setFactoryAddress', [factory]);
  return { factory, factoryBlock };
}

export const ALGEBRA_INTEGRAL_FACTORY = packageArtifact('@cryptoalgebra/integral-core/artifacts/contracts/AlgebraFactory.sol/AlgebraFactory.json');
export const ALGEBRA_INTEGRAL_DEPLOYER = packageArtifact('@cryptoalgebra/integral-core/artifacts/contracts/AlgebraPoolDeployer.sol/AlgebraPoolDeployer.json');
export const ALGEBRA_INTEGRAL_POOL = packageArtifact('@cryptoalgebra/integral-core/artifacts/contracts/AlgebraPool.sol/AlgebraPool.json');
/** The package's own test caller: mints, swaps and flashes, paying from the sender's allowance. */
export const ALGEBRA_CALLEE = packageArtifact('@cryptoalgebra/integral-core/artifacts/contracts/test/TestAlgebraCallee.sol/TestAlgebraCallee.json');
/** The package's test custom pool deployer: asks the factory for a custom pool (a `CustomPool` log), answering its hooks. */
export const ALGEBRA_CUSTOM_POOL_CREATOR = packageArtifact('@cryptoalgebra/integral-core/artifacts/contracts/test/MockCustomPoolCreator.sol/MockCustomPoolCreator.json');
export const ALGEBRA_V19_FACTORY = packageArtifact('@cryptoalgebra/core/artifacts/contracts/AlgebraFactory.sol/AlgebraFactory.json');
export const ALGEBRA_V19_DEPLOYER = packageArtifact('@cryptoalgebra/core/artifacts/contracts/AlgebraPoolDeployer.sol/AlgebraPoolDeployer.json');
export const ALGEBRA_V19_POOL = packageArtifact('@cryptoalgebra/core/artifacts/contracts/AlgebraPool.sol/AlgebraPool.json');

/**
 * An Algebra factory and its pool deployer, each constructed with the other's address: the
 * deployer's is the one the account's next nonce will give it. Integral (`v19` false) takes the
 * factory alone; v1.9 takes a community vault too (`vault`).
 */
export async function deployAlgebraFactory(node: Anvil, v19: boolean, vault: Address = node.account): Promise<{ factory: Address; factoryBlock: number }> {
  const nonce = await node.pub.getTransactionCount({ address: node.account });
  const predicted = getContractAddress({ from: node.account, nonce: BigInt(nonce + 1) });
  const factory = await deploy(node, v19 ? ALGEBRA_V19_FACTORY : ALGEBRA_INTEGRAL_FACTORY, [predicted]);
  const factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));
  const deployer = await deploy(node, v19 ? ALGEBRA_V19_DEPLOYER : ALGEBRA_INTEGRAL_DEPLOYER, v19 ? [factory, vault] : [factory]);
  if (deployer.toLowerCase() !== predicted.toLowerCase()) throw new Error(`pool deployer at ${deployer}, expected ${predicted}`);
  return { factory, factoryBlock };
}

/** A log's fields as the source reads them (JSON.parse leaves `removed` undefined when absent). */
export function logFields(l: RpcLog) {
  return {
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: l.blockNumber,
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
    transactionIndex: l.transactionIndex,
    logIndex: l.logIndex,
    removed: l.removed === true,
  };
}
