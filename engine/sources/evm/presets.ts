/**
 * The built-in registry of EVM networks: what `--network NAME --rpc URL` fills in so that no config
 * file is needed. Every address and deployment block names where it was read (`source`); only facts
 * read from the projects' own packages, deployment docs or subgraph manifests are listed, and what
 * could not be checked is left out (a config file adds it; see README "Real chains").
 *
 * Invariants (checked by test/evm-networks.test.ts): network ids are the interface's canonical ids
 * (those of the simulator's network list), unique; DEX ids unique per network; every factory's
 * protocol is one the source reads (EVM_PROTOCOLS); every preset parses with EvmChainSchema once
 * given an RPC URL.
 *
 * Bump PRESETS_VERSION whenever an entry changes, so that a log line or `dexdata networks` tells
 * which registry a service ran with.
 */
import type { EvmProtocol } from './config.js';
import { SOLANA_PRESET } from '../solana/preset.js';

export const PRESETS_VERSION = 3;

/** Where an address or block number was read. */
const SRC = {
  uniswapSdkCore: '@uniswap/sdk-core 7.19.4 (src/addresses.ts, src/entities/weth9.ts)',
  uniswapV2Subgraph: 'Uniswap v2-subgraph config/<network>/config.json (factory, startblock)',
  uniswapV3Subgraph: 'Uniswap v3-subgraph config/<network>/config.json (factory, startblock)',
  uniswapV3SubgraphNetworks: 'Uniswap v3-subgraph networks.json (factory, startBlock)',
  pancakeTokens: '@pancakeswap/tokens 0.9.1 (USDC, USDT)',
  pancakeV2Sdk: '@pancakeswap/v2-sdk 1.2.2 (FACTORY_ADDRESS_MAP)',
  pancakeV2Subgraph: 'PancakeSwap exchange subgraph manifest, network bsc (startBlock)',
  pancakeV3Sdk: '@pancakeswap/v3-sdk 3.10.2 (FACTORY_ADDRESSES)',
  pancakeV3Deployment: 'PancakeSwap v3 factory deployment transaction 0x57b6445a…c85 on BSC (block 26956207)',
  pancakeV3SubgraphBase: 'PancakeSwap exchange-v3 subgraph manifest, network base (startBlock)',
  circleUsdc: 'Circle, USDC contract addresses (developers.circle.com)',
  uniswapV4SdkCore: '@uniswap/sdk-core 7.19.4 (src/addresses.ts, v4PoolManagerAddress)',
  v4AfterV3: 'start block: the same network\'s Uniswap v3 factory start block, a lower bound (v4 was deployed years after v3)',
  balancerVault: '@balancer-labs/v2-deployments 3.2.0 (dist/tasks/20210418-vault/output/<network>.json, Vault)',
  balancerBeforeVault: 'start block: a block before the Vault\'s deployment task (2021-04-18) reached the network (a lower bound)',
} as const;

export interface PresetToken {
  readonly address: string;
  readonly symbol: string;
  readonly source: string;
}

export interface PresetFactory {
  readonly dexId: string;
  readonly name: string;
  readonly protocol: EvmProtocol;
  readonly address: string;
  /** Swap fee of constant-product pools, in millionths. */
  readonly feePpm?: number;
  /** The factory's deployment block, or a lower bound of it (scanning starts there). */
  readonly startBlock: number;
  readonly source: string;
}

export interface NetworkPreset {
  /** The interface's canonical network id. */
  readonly id: string;
  readonly displayName: string;
  readonly chainId: number;
  readonly blockTimeSeconds: number;
  /** Confirmations waited for before a block is read. */
  readonly confirmations: number;
  readonly wrappedNative: PresetToken;
  /** The first is the chain's USD reference. */
  readonly stablecoins: readonly PresetToken[];
  readonly factories: readonly PresetFactory[];
}

const UNISWAP_V2_FEE_PPM = 3_000; // 0.3 %
const PANCAKESWAP_V2_FEE_PPM = 2_500; // 0.25 %

export const NETWORK_PRESETS: readonly NetworkPreset[] = [
  {
    id: 'ethereum',
    displayName: 'Ethereum',
    chainId: 1,
    blockTimeSeconds: 12,
    confirmations: 12,
    wrappedNative: { address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', symbol: 'WETH', source: SRC.uniswapSdkCore },
    stablecoins: [
      { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', source: SRC.pancakeTokens },
      { address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', symbol: 'USDT', source: SRC.pancakeTokens },
    ],
    factories: [
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 10_000_834, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0x1F98431c8aD98523631AE4a59f267346ea31F984', startBlock: 12_369_621, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3Subgraph}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x000000000004444c5dc75cB358380D2e3dE08A90', startBlock: 12_369_621, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
      // Uniswap v2's start block (May 2020), before the Vault's deployment.
      { dexId: 'balancer_v2', name: 'Balancer V2', protocol: 'balancer_v2', address: '0xBA12222222228d8Ba445958a75a0704d566BF2C8', startBlock: 10_000_834, source: `${SRC.balancerVault}; ${SRC.balancerBeforeVault}` },
    ],
  },
  {
    id: 'bsc',
    displayName: 'BNB Chain',
    chainId: 56,
    blockTimeSeconds: 3,
    confirmations: 15,
    wrappedNative: { address: '0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c', symbol: 'WBNB', source: SRC.uniswapSdkCore },
    stablecoins: [
      { address: '0x55d398326f99059fF775485246999027B3197955', symbol: 'USDT', source: SRC.pancakeTokens },
      { address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', symbol: 'USDC', source: SRC.pancakeTokens },
    ],
    factories: [
      { dexId: 'pancakeswap_v2', name: 'PancakeSwap V2', protocol: 'uniswap_v2', address: '0xcA143Ce32Fe78f1f7019d7d551a6402fC5350c73', feePpm: PANCAKESWAP_V2_FEE_PPM, startBlock: 6_809_737, source: `${SRC.pancakeV2Sdk}; ${SRC.pancakeV2Subgraph}` },
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0x8909Dc15e40173Ff4699343b6eB8132c65e18eC6', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 33_496_018, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      // The subgraph's start block for BNB Chain is Ethereum's: a lower bound, so nothing is missed.
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0xdB1d10011AD0Ff90774D0C6Bb92e5C5c8b4461F7', startBlock: 12_369_621, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3SubgraphNetworks}` },
      { dexId: 'pancakeswap_v3', name: 'PancakeSwap V3', protocol: 'pancakeswap_v3', address: '0x0BFbCF9fa4f9C56B0F40a671Ad40E0805A091865', startBlock: 26_956_207, source: `${SRC.pancakeV3Sdk}; ${SRC.pancakeV3Deployment}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x28e2Ea090877bF75740558f6BFB36A5ffeE9e9dF', startBlock: 12_369_621, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
    ],
  },
  {
    id: 'base',
    displayName: 'Base',
    chainId: 8453,
    blockTimeSeconds: 2,
    confirmations: 10,
    wrappedNative: { address: '0x4200000000000000000000000000000000000006', symbol: 'WETH', source: SRC.uniswapSdkCore },
    stablecoins: [{ address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', symbol: 'USDC', source: `${SRC.pancakeTokens}; ${SRC.circleUsdc}` }],
    factories: [
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0x8909Dc15e40173Ff4699343b6eB8132c65e18eC6', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 6_601_915, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0x33128a8fC17869897dcE68Ed026d694621f6FDfD', startBlock: 2_009_445, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3Subgraph}` },
      { dexId: 'pancakeswap_v3', name: 'PancakeSwap V3', protocol: 'pancakeswap_v3', address: '0x0BFbCF9fa4f9C56B0F40a671Ad40E0805A091865', startBlock: 2_912_007, source: `${SRC.pancakeV3Sdk}; ${SRC.pancakeV3SubgraphBase}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x498581fF718922c3f8e6A244956aF099B2652b2b', startBlock: 2_009_445, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
    ],
  },
  {
    id: 'arbitrum',
    displayName: 'Arbitrum',
    chainId: 42161,
    blockTimeSeconds: 1,
    confirmations: 20,
    wrappedNative: { address: '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1', symbol: 'WETH', source: SRC.uniswapSdkCore },
    stablecoins: [
      { address: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', symbol: 'USDC', source: `${SRC.pancakeTokens}; ${SRC.circleUsdc}` },
      { address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', symbol: 'USDT', source: SRC.pancakeTokens },
    ],
    factories: [
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0x1F98431c8aD98523631AE4a59f267346ea31F984', startBlock: 165, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3SubgraphNetworks}` },
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0xf1D7CC64Fb4452F05c498126312eBE29f30Fbcf9', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 150_442_611, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x360E68faCcca8cA495c1B759Fd9EEe466db9FB32', startBlock: 165, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
      // Uniswap v3's start block (deployed as the network launched), before the Vault's.
      { dexId: 'balancer_v2', name: 'Balancer V2', protocol: 'balancer_v2', address: '0xBA12222222228d8Ba445958a75a0704d566BF2C8', startBlock: 165, source: `${SRC.balancerVault}; ${SRC.balancerBeforeVault}` },
    ],
  },
  {
    id: 'optimism',
    displayName: 'Optimism',
    chainId: 10,
    blockTimeSeconds: 2,
    confirmations: 10,
    wrappedNative: { address: '0x4200000000000000000000000000000000000006', symbol: 'WETH', source: SRC.uniswapSdkCore },
    stablecoins: [{ address: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', symbol: 'USDC', source: SRC.circleUsdc }],
    factories: [
      // networks.json says block 0 (the factory predates the chain's regenesis); the lower of the subgraph's two figures.
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0x1F98431c8aD98523631AE4a59f267346ea31F984', startBlock: 0, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3SubgraphNetworks}` },
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0x0c3c1c532F1e39EdF36BE9Fe0bE1410313E074Bf', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 112_197_986, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x9a13F98Cb987694C9F086b1F5eB990EeA8264Ec3', startBlock: 0, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
      { dexId: 'balancer_v2', name: 'Balancer V2', protocol: 'balancer_v2', address: '0xBA12222222228d8Ba445958a75a0704d566BF2C8', startBlock: 0, source: `${SRC.balancerVault}; ${SRC.balancerBeforeVault}` },
    ],
  },
  {
    id: 'polygon',
    displayName: 'Polygon',
    chainId: 137,
    blockTimeSeconds: 2,
    confirmations: 64,
    wrappedNative: { address: '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270', symbol: 'WPOL', source: SRC.uniswapSdkCore },
    stablecoins: [{ address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', symbol: 'USDC', source: SRC.circleUsdc }],
    factories: [
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0x1F98431c8aD98523631AE4a59f267346ea31F984', startBlock: 22_757_547, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3Subgraph}` },
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0x9e5A52f57b3038F1B8EeE45F28b3C1967e22799C', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 49_948_178, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x67366782805870060151383F4BbFF9daB53e5cD6', startBlock: 22_757_547, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
    ],
  },
  {
    id: 'avalanche',
    displayName: 'Avalanche',
    chainId: 43114,
    blockTimeSeconds: 2,
    confirmations: 1,
    wrappedNative: { address: '0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7', symbol: 'WAVAX', source: SRC.uniswapSdkCore },
    stablecoins: [{ address: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', symbol: 'USDC', source: SRC.circleUsdc }],
    factories: [
      { dexId: 'uniswap_v3', name: 'Uniswap V3', protocol: 'uniswap_v3', address: '0x740b1c1de25031C31FF4fC9A62f554A55cdC1baD', startBlock: 27_832_971, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV3Subgraph}` },
      { dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: '0x9e5A52f57b3038F1B8EeE45F28b3C1967e22799C', feePpm: UNISWAP_V2_FEE_PPM, startBlock: 37_767_795, source: `${SRC.uniswapSdkCore}; ${SRC.uniswapV2Subgraph}` },
      { dexId: 'uniswap_v4', name: 'Uniswap V4', protocol: 'uniswap_v4', address: '0x06380C0e0912312B5150364B9DC4542BA0DbBc85', startBlock: 27_832_971, source: `${SRC.uniswapV4SdkCore}; ${SRC.v4AfterV3}` },
    ],
  },
];

/** Every network `--network` may name: the EVM presets and the Solana cluster (engine/sources/solana/preset.ts). */
export const PRESET_IDS: readonly string[] = [...NETWORK_PRESETS.map((p) => p.id), SOLANA_PRESET.id];

export function networkPreset(id: string): NetworkPreset | undefined {
  return NETWORK_PRESETS.find((p) => p.id === id);
}

type Json = Record<string, unknown>;

/** A preset as a `chains` entry of the config file (rpcUrls left to the caller). */
export function presetChain(p: NetworkPreset): Json {
  return {
    id: p.id,
    displayName: p.displayName,
    chainId: p.chainId,
    blockTimeSeconds: p.blockTimeSeconds,
    confirmations: p.confirmations,
    startBlock: Math.min(...p.factories.map((f) => f.startBlock)),
    stablecoins: p.stablecoins.map((s) => s.address),
    wrappedNative: p.wrappedNative.address,
    factories: p.factories.map((f) => ({
      dexId: f.dexId,
      name: f.name,
      protocol: f.protocol,
      address: f.address,
      startBlock: f.startBlock,
      ...(f.feePpm !== undefined ? { feePpm: f.feePpm } : {}),
    })),
  };
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A config file's chain entry laid over a preset: its fields replace the preset's; its factories
 * are merged by `dexId` (fields given replace the preset factory's, new DEX ids are added, and
 * `"enabled": false` drops a preset factory).
 */
export function overlayChain(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (k === 'preset') continue;
    if (k !== 'factories' || !Array.isArray(v) || !Array.isArray(base['factories'])) {
      out[k] = v;
      continue;
    }
    const merged: unknown[] = (base['factories'] as unknown[]).map((f) => f);
    for (const f of v) {
      const at = isObject(f) ? merged.findIndex((m) => isObject(m) && m['dexId'] === f['dexId']) : -1;
      if (at >= 0) merged[at] = { ...(merged[at] as Json), ...(f as Json) };
      else merged.push(f);
    }
    out['factories'] = merged.filter((f) => !isObject(f) || f['enabled'] !== false).map((f) => (isObject(f) ? Object.fromEntries(Object.entries(f).filter(([k]) => k !== 'enabled')) : f));
  }
  return out;
}

/** A network named on the command line with its RPC endpoints. */
export interface NamedNetwork {
  readonly id: string;
  readonly rpcUrls: readonly string[];
}

/**
 * The `chains` section with presets applied: each network named on the command line becomes a
 * chain (the preset, with its RPC URLs), a config file entry with the same id or with
 * `"preset": "<id>"` is laid over its preset, and other entries stay as they are. Problems (an
 * unknown preset) are pushed to `problems`.
 */
export function applyPresets(chains: unknown, named: readonly NamedNetwork[], problems: string[]): unknown {
  if (named.length === 0 && !(Array.isArray(chains) && chains.some((c) => isObject(c) && c['preset'] !== undefined))) return chains;
  const entries: unknown[] = Array.isArray(chains) ? [...chains] : chains === undefined ? [] : [chains];
  const out: unknown[] = [];
  const taken = new Set<number>();
  for (const n of named) {
    const preset = networkPreset(n.id);
    if (!preset) {
      problems.push(`network "${n.id}" is not in the registry (${PRESET_IDS.join(', ')})`);
      continue;
    }
    let chain: Json = { ...presetChain(preset), rpcUrls: [...n.rpcUrls] };
    entries.forEach((e, i) => {
      if (isObject(e) && (e['id'] === n.id || e['preset'] === n.id)) {
        chain = overlayChain(chain, e);
        taken.add(i);
      }
    });
    out.push(chain);
  }
  entries.forEach((e, i) => {
    if (taken.has(i)) return;
    if (isObject(e) && e['preset'] !== undefined) {
      const preset = typeof e['preset'] === 'string' ? networkPreset(e['preset']) : undefined;
      if (!preset) problems.push(`chains.${i}.preset: "${String(e['preset'])}" is not in the registry (${PRESET_IDS.join(', ')})`);
      else out.push(overlayChain(presetChain(preset), e));
      return;
    }
    out.push(e);
  });
  return out;
}
