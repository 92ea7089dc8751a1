/**
 * Real Solidly-style contracts for tests: Aerodrome's Pool and PoolFactory (the Velodrome v2 design)
 * as the npm package sphere-mezo-solidity-files ships their sources, compiled with npm solc against
 * @openzeppelin/contracts (the version those sources import) on first use and cached under
 * node_modules/.cache (keyed by the compiler's and the packages' versions), deployed on anvil and
 * driven through the pool contracts themselves (no router), each step in a block at a set time.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import solc from 'solc';
import type { Abi, Address, Hex } from 'viem';
import { deploy, fixtures, mineAt, read, send, type Anvil, type Artifact } from './evm.js';

const require = createRequire(import.meta.url);

const SOURCES_PACKAGE = 'sphere-mezo-solidity-files';
const OZ = '@openzeppelin/contracts';
/** The sources' folder in the package, and the two contracts compiled (the others are reached by imports). */
const CONTRACTS = 'domains/aerodrome/contracts/';
const ENTRY = { pool: 'Pool.sol', factory: 'factories/PoolFactory.sol' } as const;
const SETTINGS = { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } };

export interface SolidlyArtifacts {
  readonly pool: Artifact;
  readonly factory: Artifact;
}

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

function version(name: string): string {
  return (JSON.parse(readFileSync(join(packageDir(name), 'package.json'), 'utf8')) as { version: string }).version;
}

let compiled: SolidlyArtifacts | null = null;

/** Aerodrome's Pool and PoolFactory, compiled from the package's sources (cached). */
export function solidlyArtifacts(): SolidlyArtifacts {
  if (compiled) return compiled;
  const sources = join(packageDir(SOURCES_PACKAGE), CONTRACTS);
  const oz = packageDir(OZ);
  const key = createHash('sha256').update(JSON.stringify([solc.version(), version(SOURCES_PACKAGE), version(OZ), SETTINGS])).digest('hex').slice(0, 16);
  const cacheDir = join(packageDir(SOURCES_PACKAGE), '..', '.cache', 'dexdata-solidly');
  const cacheFile = join(cacheDir, `${key}.json`);
  try {
    compiled = JSON.parse(readFileSync(cacheFile, 'utf8')) as SolidlyArtifacts;
    return compiled;
  } catch {
    // not compiled yet
  }
  const findImports = (path: string): { contents: string } | { error: string } => {
    try {
      if (path.startsWith(`${OZ}/`)) return { contents: readFileSync(join(oz, path.slice(OZ.length + 1)), 'utf8') };
      return { contents: readFileSync(join(sources, path), 'utf8') };
    } catch (err) {
      return { error: String(err) };
    }
  };
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.values(ENTRY).map((f) => [f, { content: readFileSync(join(sources, f), 'utf8') }])),
    settings: SETTINGS,
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const artifact = (file: string, name: string): Artifact => {
    const c = out.contracts[file]![name]!;
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as Hex };
  };
  compiled = { pool: artifact(ENTRY.pool, 'Pool'), factory: artifact(ENTRY.factory, 'PoolFactory') };
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(compiled));
  renameSync(tmp, cacheFile);
  return compiled;
}

/** A Solidly market on the node: the factory (over a Pool implementation it clones) and pool helpers. */
export interface SolidlyMarket {
  readonly factory: Address;
  readonly factoryBlock: number;
  readonly artifacts: SolidlyArtifacts;
  /** createPool(a, b, stable) in block t; returns the pool. */
  createPool(a: Address, b: Address, stable: boolean, t: number): Promise<Address>;
  /** Both amounts sent to the pool, then mint; uses blocks t to t+2. */
  addLiquidity(pool: Address, a: Address, amountA: bigint, b: Address, amountB: bigint, t: number): Promise<void>;
  /** The pool's own quote of `amountIn` of `tokenIn` (its getAmountOut, fee taken). */
  quote(pool: Address, tokenIn: Address, amountIn: bigint): Promise<bigint>;
  /** Sells `amountIn` of `tokenIn` for the pool's quote; uses blocks t and t+1. Returns the amount out. */
  swap(pool: Address, tokenIn: Address, amountIn: bigint, t: number): Promise<bigint>;
  /** The swap's two calls (transfer in, then swap out for `amountOut`) as arguments for writeContract. */
  swapCalls(pool: Address, tokenIn: Address, amountIn: bigint, amountOut: bigint): Promise<{ address: Address; abi: Abi; functionName: string; args: unknown[] }[]>;
  /** Burns `percent` % of the account's LP tokens; uses blocks t and t+1. */
  removeLiquidity(pool: Address, percent: bigint, t: number): Promise<void>;
}

export async function deploySolidlyMarket(node: Anvil, t: number): Promise<SolidlyMarket> {
  const artifacts = solidlyArtifacts();
  const { pool: POOL, factory: FACTORY } = artifacts;
  const erc20 = fixtures().TestToken.abi;
  await mineAt(node, t);
  const implementation = await deploy(node, POOL);
  await mineAt(node, t + 1);
  const factory = await deploy(node, FACTORY, [implementation]);
  const factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));
  const transfer = async (token: Address, to: Address, amount: bigint, at: number) => {
    await mineAt(node, at);
    await send(node, token, erc20, 'transfer', [to, amount]);
  };
  const quote = (pool: Address, tokenIn: Address, amountIn: bigint) => read<bigint>(node, pool, POOL.abi, 'getAmountOut', [amountIn, tokenIn]);
  const swapCalls = async (pool: Address, tokenIn: Address, amountIn: bigint, amountOut: bigint) => {
    const token0 = await read<Address>(node, pool, POOL.abi, 'token0');
    const zeroIn = token0.toLowerCase() === tokenIn.toLowerCase();
    return [
      { address: tokenIn, abi: erc20, functionName: 'transfer', args: [pool, amountIn] },
      { address: pool, abi: POOL.abi, functionName: 'swap', args: [zeroIn ? 0n : amountOut, zeroIn ? amountOut : 0n, node.account, '0x'] },
    ];
  };
  return {
    factory,
    factoryBlock,
    artifacts,
    async createPool(a, b, stable, at) {
      await mineAt(node, at);
      await send(node, factory, FACTORY.abi, 'createPool', [a, b, stable]);
      return read<Address>(node, factory, FACTORY.abi, 'getPool', [a, b, stable]);
    },
    async addLiquidity(pool, a, amountA, b, amountB, at) {
      await transfer(a, pool, amountA, at);
      await transfer(b, pool, amountB, at + 1);
      await mineAt(node, at + 2);
      await send(node, pool, POOL.abi, 'mint', [node.account]);
    },
    quote,
    swapCalls,
    async swap(pool, tokenIn, amountIn, at) {
      const out = await quote(pool, tokenIn, amountIn);
      const [pay, take] = await swapCalls(pool, tokenIn, amountIn, out);
      await mineAt(node, at);
      await send(node, pay!.address, pay!.abi, pay!.functionName, pay!.args);
      await mineAt(node, at + 1);
      await send(node, take!.address, take!.abi, take!.functionName, take!.args);
      return out;
    },
    async removeLiquidity(pool, percent, at) {
      const lp = await read<bigint>(node, pool, POOL.abi, 'balanceOf', [node.account]);
      await mineAt(node, at);
      await send(node, pool, POOL.abi, 'transfer', [pool, (lp * percent) / 100n]);
      await mineAt(node, at + 1);
      await send(node, pool, POOL.abi, 'burn', [node.account]);
    },
  };
}
