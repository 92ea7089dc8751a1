/**
 * Balancer v2 on a local anvil from the bytecode its authors publish in `@balancer-labs/v2-deployments`
 * (the mainnet deployment tasks of 2021-04-18: Authorizer, Vault, WeightedPoolFactory), and the calls
 * the tests trade through: joins, exits and swaps sent to the Vault by the test account.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeAbiParameters, maxUint256, toFunctionSelector, type Abi, type Address, type Hex } from 'viem';
import { deploy, fixtures, mineAt, read, send, type Anvil, type Artifact } from './evm.js';

const require = createRequire(import.meta.url);

/** A contract of a deployment task: its ABI and creation code. */
function taskArtifact(task: string, name: string): Artifact {
  const dir = `@balancer-labs/v2-deployments/dist/tasks/${task}`;
  const abi = JSON.parse(readFileSync(require.resolve(`${dir}/abi/${name}.json`), 'utf8')) as Abi;
  const { creationCode } = JSON.parse(readFileSync(require.resolve(`${dir}/bytecode/${name}.json`), 'utf8')) as { creationCode: string };
  return { abi, bytecode: (creationCode.startsWith('0x') ? creationCode : `0x${creationCode}`) as Hex };
}

export const BALANCER = {
  authorizer: taskArtifact('20210418-authorizer', 'Authorizer'),
  vault: taskArtifact('20210418-vault', 'Vault'),
  weightedFactory: taskArtifact('20210418-weighted-pool', 'WeightedPoolFactory'),
  weightedPool: taskArtifact('20210418-weighted-pool', 'WeightedPool'),
} as const;

const COLLECTOR_ABI = [
  { type: 'function', name: 'getActionId', stateMutability: 'view', inputs: [{ name: 'selector', type: 'bytes4' }], outputs: [{ type: 'bytes32' }] },
  { type: 'function', name: 'setSwapFeePercentage', stateMutability: 'nonpayable', inputs: [{ name: 'fee', type: 'uint256' }], outputs: [] },
] as const satisfies Abi;

/** WeightedPool JoinKind and ExitKind values (v1 weighted pools). */
const JOIN_INIT = 0n;
const JOIN_EXACT_TOKENS_IN = 1n;
const EXIT_EXACT_BPT_IN_FOR_TOKENS_OUT = 1n;

export interface BalancerMarket {
  readonly vault: Address;
  readonly vaultBlock: number;
  /** A weighted pool of `tokens` (sorted here, as the Vault requires) with these weights (1e18 = 100 %) and swap fee; block at time t. */
  createPool(tokens: readonly Address[], weights: readonly bigint[], swapFee: bigint, t: number): Promise<{ pool: Address; id: Hex; tokens: Address[]; weights: bigint[] }>;
  /** The first join (amounts in the pool's token order). */
  init(id: Hex, tokens: readonly Address[], amounts: readonly bigint[], t: number): Promise<void>;
  join(id: Hex, tokens: readonly Address[], amounts: readonly bigint[], t: number): Promise<void>;
  /** Exits with `percent` % of the account's pool shares. */
  exit(id: Hex, pool: Address, tokens: readonly Address[], percent: bigint, t: number): Promise<void>;
  /** Sells `amount` of `tokenIn` for `tokenOut`. */
  swap(id: Hex, tokenIn: Address, tokenOut: Address, amount: bigint, t: number): Promise<void>;
  /** The call data of a swap, for several in one block. */
  swapCall(id: Hex, tokenIn: Address, tokenOut: Address, amount: bigint): { address: Address; abi: Abi; functionName: string; args: readonly unknown[] };
  /** The Vault's protocol swap fee (1e18 = 100 %), charged on joins and exits. */
  setProtocolSwapFee(fee: bigint, t: number): Promise<void>;
  poolTokens(id: Hex): Promise<{ tokens: Address[]; balances: bigint[] }>;
}

export async function deployBalancer(node: Anvil, weth: Address, tokens: readonly Address[], t: number): Promise<BalancerMarket> {
  await mineAt(node, t++);
  const authorizer = await deploy(node, BALANCER.authorizer, [node.account]);
  await mineAt(node, t++);
  const vault = await deploy(node, BALANCER.vault, [authorizer, weth, 0n, 0n]);
  const vaultBlock = Number(await node.rpc<string>('eth_blockNumber'));
  await mineAt(node, t++);
  const factory = await deploy(node, BALANCER.weightedFactory, [vault]);
  for (const token of tokens) {
    await mineAt(node, t++);
    await send(node, token, fixtures().TestToken.abi, 'approve', [vault, maxUint256]);
  }
  const v = BALANCER.vault.abi;
  const funds = { sender: node.account, fromInternalBalance: false, recipient: node.account, toInternalBalance: false };
  const swapCall = (id: Hex, tokenIn: Address, tokenOut: Address, amount: bigint) => ({
    address: vault,
    abi: v,
    functionName: 'swap',
    args: [{ poolId: id, kind: 0, assetIn: tokenIn, assetOut: tokenOut, amount, userData: '0x' }, funds, 0n, maxUint256] as const,
  });
  const joinWith = async (id: Hex, tokens: readonly Address[], userData: Hex, t: number) => {
    await mineAt(node, t);
    await send(node, vault, v, 'joinPool', [id, node.account, node.account, { assets: tokens, maxAmountsIn: tokens.map(() => maxUint256), userData, fromInternalBalance: false }]);
  };
  return {
    vault,
    vaultBlock,
    async createPool(list, weights, swapFee, at) {
      const order = list.map((a, i) => [a, weights[i]!] as const).sort((a, b) => (a[0].toLowerCase() < b[0].toLowerCase() ? -1 : 1));
      await mineAt(node, at);
      const before = Number(await node.rpc<string>('eth_blockNumber'));
      await send(node, factory, BALANCER.weightedFactory.abi, 'create', ['Balancer Weighted', 'BPT', order.map((o) => o[0]), order.map((o) => o[1]), swapFee, node.account]);
      const logs = await node.pub.getContractEvents({ address: factory, abi: BALANCER.weightedFactory.abi, eventName: 'PoolCreated', fromBlock: BigInt(before + 1) });
      const pool = (logs[logs.length - 1]!.args as { pool: Address }).pool;
      const id = await read<Hex>(node, pool, BALANCER.weightedPool.abi, 'getPoolId');
      return { pool, id, tokens: order.map((o) => o[0]), weights: order.map((o) => o[1]) };
    },
    init: (id, tokens, amounts, at) => joinWith(id, tokens, encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256[]' }], [JOIN_INIT, [...amounts]]), at),
    join: (id, tokens, amounts, at) => joinWith(id, tokens, encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256[]' }, { type: 'uint256' }], [JOIN_EXACT_TOKENS_IN, [...amounts], 0n]), at),
    async exit(id, pool, tokens, percent, at) {
      const shares = await read<bigint>(node, pool, BALANCER.weightedPool.abi, 'balanceOf', [node.account]);
      const userData = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [EXIT_EXACT_BPT_IN_FOR_TOKENS_OUT, (shares * percent) / 100n]);
      await mineAt(node, at);
      await send(node, vault, v, 'exitPool', [id, node.account, node.account, { assets: tokens, minAmountsOut: tokens.map(() => 0n), userData, toInternalBalance: false }]);
    },
    async swap(id, tokenIn, tokenOut, amount, at) {
      const c = swapCall(id, tokenIn, tokenOut, amount);
      await mineAt(node, at);
      await send(node, c.address, c.abi, c.functionName, c.args);
    },
    swapCall,
    async setProtocolSwapFee(fee, at) {
      const collector = await read<Address>(node, vault, v, 'getProtocolFeesCollector');
      const action = await read<Hex>(node, collector, COLLECTOR_ABI, 'getActionId', [toFunctionSelector('setSwapFeePercentage(uint256)')]);
      await mineAt(node, at);
      await send(node, authorizer, BALANCER.authorizer.abi, 'grantRole', [action, node.account]);
      await mineAt(node, at + 1);
      await send(node, collector, COLLECTOR_ABI, 'setSwapFeePercentage', [fee]);
    },
    async poolTokens(id) {
      const [tokens, balances] = await read<[Address[], bigint[], bigint]>(node, vault, v, 'getPoolTokens', [id]);
      return { tokens: [...tokens], balances: [...balances] };
    },
  };
}
