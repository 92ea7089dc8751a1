/**
 * The built-in network registry: its entries, `dexdata networks`, and `dexdata serve --network NAME
 * --rpc URL` with no chain written in a config file. Two real anvil nodes stand in for Base and BNB
 * Chain (their chain ids), Uniswap v2 bytecode deployed on each; the config file only moves the
 * presets' v2 factories to where they were deployed. The served pools are compared with the pair
 * contracts' own state.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAddress, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../engine/config.js';
import { EVM_PROTOCOLS, EvmChainSchema } from '../engine/sources/evm/config.js';
import { NETWORK_PRESETS, PRESETS_VERSION, presetChain } from '../engine/sources/evm/presets.js';
import { SOLANA_PRESET } from '../engine/sources/solana/preset.js';
import { NETWORKS as SIMULATED_NETWORKS } from '../engine/sources/simulator/catalog.js';
import { deployV2Market, read, startAnvil, V2_PAIR, type Anvil, type V2Market } from './support/evm.js';
import { CLI, startService, type RunningService } from './support/service.js';
import { configProblems } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const T0 = Math.floor(Date.now() / 1000) - 3_600;
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DEXDATA_')));

const dir = mkdtempSync(join(tmpdir(), 'evm-networks-'));
function file(content: unknown): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

const problems = configProblems;

function run(args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: CLEAN_ENV, timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the network registry', () => {
  it('covers the interface\'s main EVM networks under their canonical ids, each a valid chain once given an RPC URL', () => {
    const ids = NETWORK_PRESETS.map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(['ethereum', 'bsc', 'base', 'arbitrum', 'optimism', 'polygon', 'avalanche']));
    expect(new Set(ids).size).toBe(ids.length);
    const simulated = new Set(SIMULATED_NETWORKS.map((n) => n.id));
    for (const p of NETWORK_PRESETS) {
      expect(simulated.has(p.id), p.id).toBe(true);
      expect(p.displayName).toBe(SIMULATED_NETWORKS.find((n) => n.id === p.id)!.displayName);
      const parsed = EvmChainSchema.safeParse({ ...presetChain(p), rpcUrls: ['http://127.0.0.1:8545'] });
      expect(parsed.success, `${p.id}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it('every address carries a valid EIP-55 checksum (a mistyped character fails it) and names its source', () => {
    for (const p of NETWORK_PRESETS) {
      const all = [p.wrappedNative, ...p.stablecoins, ...p.factories];
      for (const a of all) {
        // An all-lowercase address has no checksum to check; the registry writes them checksummed
        // (only an address without letters, such as 0x42…06, reads the same either way).
        expect(/[a-f]/.test(a.address) && !/[A-F]/.test(a.address), `${p.id} ${a.address}`).toBe(false);
        expect(getAddress(a.address), `${p.id} ${a.address}`).toBe(a.address);
        expect(a.source.length, `${p.id} ${a.address}`).toBeGreaterThan(10);
      }
      for (const f of p.factories) {
        expect(EVM_PROTOCOLS).toContain(f.protocol);
        expect(Number.isInteger(f.startBlock) && f.startBlock >= 0).toBe(true);
      }
    }
  });

  it('dexdata networks prints each network with its chain id and factories, and the totals', () => {
    const r = run(['networks']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    // The EVM networks, the Solana cluster (engine/sources/solana/preset.ts) and the totals.
    expect(lines).toHaveLength(NETWORK_PRESETS.length + 2);
    for (const p of NETWORK_PRESETS) {
      const line = lines.find((l) => l.startsWith(`${p.id}: `));
      expect(line, p.id).toBeDefined();
      expect(line).toContain(`chain id ${p.chainId}, ${p.factories.length} factories`);
      for (const f of p.factories) expect(line).toContain(`${f.dexId} (${f.protocol})`);
    }
    expect(lines.find((l) => l.startsWith('solana: '))).toContain(`${SOLANA_PRESET.programs.length} DEX programs`);
    const factories = NETWORK_PRESETS.reduce((n, p) => n + p.factories.length, 0) + SOLANA_PRESET.programs.length;
    expect(lines.at(-1)).toBe(`${NETWORK_PRESETS.length + 1} networks, ${factories} factories (registry version ${PRESETS_VERSION})`);
  });

  it('serve rejects an unknown network with one line and exit code 2, before anything starts', () => {
    const r = run(['serve', '--network', 'basechain', '--rpc', 'http://127.0.0.1:1', '--data-dir', join(dir, 'never')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/unknown network "basechain"; the registry has ethereum, bsc, base/);
  });
});

describe('--network and --rpc in the configuration', () => {
  it('--network fills the chain from the registry and implies source evm', () => {
    const c = loadConfig({ network: 'base', rpc: 'http://127.0.0.1:8545,http://127.0.0.1:8546' }, {});
    expect(c.source).toBe('evm');
    const base = NETWORK_PRESETS.find((p) => p.id === 'base')!;
    expect(c.chains.map((x) => x.id)).toEqual(['base']);
    const chain = c.chains[0]!;
    expect([chain.chainId, chain.displayName, chain.wrappedNative, chain.rpcUrls]).toEqual([8453, 'Base', base.wrappedNative.address, ['http://127.0.0.1:8545', 'http://127.0.0.1:8546']]);
    expect(chain.factories.map((f) => [f.dexId, f.address, f.startBlock])).toEqual(base.factories.map((f) => [f.dexId, f.address, f.startBlock]));
    expect(chain.startBlock).toBe(Math.min(...base.factories.map((f) => f.startBlock)));
  });

  it('several networks, each with its own --rpc, and the environment variables alike', () => {
    const c = loadConfig({ network: 'bsc,ethereum', rpc: 'http://a.example http://b.example' }, {});
    expect(c.chains.map((x) => [x.id, x.chainId, x.rpcUrls[0]])).toEqual([
      ['bsc', 56, 'http://a.example'],
      ['ethereum', 1, 'http://b.example'],
    ]);
    const e = loadConfig({}, { DEXDATA_NETWORK: 'polygon', DEXDATA_RPC: 'http://c.example' });
    expect(e.chains.map((x) => [x.id, x.chainId])).toEqual([['polygon', 137]]);
  });

  it('a config file overrides fields and factories by DEX id, adds factories and chains, and drops a factory with enabled: false', () => {
    const extra = { id: 'devnet', displayName: 'Devnet', chainId: 31_337, rpcUrls: ['http://127.0.0.1:9'], stablecoins: ['0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'], wrappedNative: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', factories: [{ dexId: 'uniswap_v2', protocol: 'uniswap_v2', address: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f' }] };
    const over = {
      chains: [
        {
          id: 'bsc',
          confirmations: 3,
          factories: [
            { dexId: 'pancakeswap_v2', address: '0x1111111111111111111111111111111111111111', startBlock: 7 },
            { dexId: 'uniswap_v3', enabled: false },
            { dexId: 'biswap', name: 'Biswap', protocol: 'uniswap_v2', address: '0x2222222222222222222222222222222222222222', feePpm: 2000 },
          ],
        },
        extra,
      ],
    };
    const c = loadConfig({ config: file(over), network: 'bsc', rpc: 'http://127.0.0.1:8545' }, {});
    expect(c.chains.map((x) => x.id)).toEqual(['bsc', 'devnet']);
    const bsc = c.chains[0]!;
    expect(bsc.confirmations).toBe(3);
    expect(bsc.chainId).toBe(56);
    expect(bsc.factories.map((f) => [f.dexId, f.name, f.address, f.feePpm, f.startBlock])).toEqual([
      ['pancakeswap_v2', 'PancakeSwap V2', '0x1111111111111111111111111111111111111111', 2500, 7],
      ['uniswap_v2', 'Uniswap V2', '0x8909Dc15e40173Ff4699343b6eB8132c65e18eC6', 3000, 33_496_018],
      ['pancakeswap_v3', 'PancakeSwap V3', '0x0BFbCF9fa4f9C56B0F40a671Ad40E0805A091865', 3000, 26_956_207],
      ['uniswap_v4', 'Uniswap V4', '0x28e2Ea090877bF75740558f6BFB36A5ffeE9e9dF', 3000, 12_369_621],
      ['biswap', 'Biswap', '0x2222222222222222222222222222222222222222', 2000, undefined],
    ]);
  });

  it('a config file alone can start from a preset with "preset"', () => {
    const c = loadConfig({ config: file({ source: 'evm', chains: [{ preset: 'arbitrum', rpcUrls: ['http://127.0.0.1:8545'] }] }) }, {});
    expect(c.chains.map((x) => [x.id, x.chainId, x.factories.length])).toEqual([['arbitrum', 42161, NETWORK_PRESETS.find((p) => p.id === 'arbitrum')!.factories.length]]);
  });

  it('lists every problem: --rpc count, a source other than evm, an unknown preset', () => {
    expect(problems({ network: 'base,bsc', rpc: 'http://127.0.0.1:8545' })).toEqual(['--rpc: 2 networks named and 1 --rpc given; give one --rpc after each --network']);
    expect(problems({ network: 'base', rpc: 'http://127.0.0.1:8545', source: 'simulator' })).toEqual(['--network needs source "evm", the configuration says "simulator"']);
    const p = problems({ config: file({ source: 'evm', chains: [{ preset: 'solana', rpcUrls: ['http://127.0.0.1:8545'] }] }) });
    expect(p[0]).toMatch(/^chains\.0\.preset: "solana" is not in the registry/);
  });
});

describe('dexdata serve --network base --rpc ... --network bsc --rpc ... on two anvil nodes', () => {
  let base: Anvil;
  let bsc: Anvil;
  let baseMarket: V2Market;
  let bscMarket: V2Market;
  let basePair: Address;
  let bscPair: Address;
  let service: RunningService | null = null;

  async function market(node: Anvil): Promise<{ market: V2Market; pair: Address }> {
    const m = await deployV2Market(node, T0 + 1, {
      usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 9n * E6 },
      weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 6n * E18 },
    });
    const pair = await m.createPair(m.tokens.weth!, m.tokens.usdc!, T0 + 10);
    await m.addLiquidity(pair, m.tokens.weth!, 40n * E18, m.tokens.usdc!, 120_000n * E6, T0 + 20);
    await m.swap(pair, m.tokens.weth!, E18, T0 + 60);
    await m.swap(pair, m.tokens.usdc!, 2_500n * E6, T0 + 120);
    return { market: m, pair };
  }

  /** The chain entry that moves a preset's factory and anchors to the contracts deployed on anvil. */
  const override = (id: string, dexId: string, m: V2Market) => ({
    id,
    confirmations: 0,
    logBatchBlocks: 8,
    pollIntervalMs: 50,
    blockTimeSeconds: 1,
    startBlock: m.factoryBlock,
    stablecoins: [m.tokens.usdc],
    wrappedNative: m.tokens.weth,
    factories: [{ dexId, address: m.factory, startBlock: m.factoryBlock }],
  });

  beforeAll(async () => {
    [base, bsc] = await Promise.all([startAnvil({ timestamp: T0, chainId: 8453 }), startAnvil({ timestamp: T0, chainId: 56 })]);
    [{ market: baseMarket, pair: basePair }, { market: bscMarket, pair: bscPair }] = await Promise.all([market(base), market(bsc)]);
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await base?.stop();
    await bsc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves both networks\' pools as the pair contracts hold them, with the presets\' names and fees', async () => {
    const config = file({ chains: [override('base', 'uniswap_v2', baseMarket), override('bsc', 'pancakeswap_v2', bscMarket)] });
    service = await startService(['--network', 'base', '--rpc', base.url, '--network', 'bsc', '--rpc', bsc.url, '--config', config, '--data-dir', join(dir, 'data')]);
    await service.waitFor(/caught up/, 30_000);
    // The first start's progress, per network and per factory: pools found, or where a factory's scan starts.
    for (const [n, dexId] of [
      ['base', 'uniswap_v2'],
      ['bsc', 'pancakeswap_v2'],
    ] as const) {
      const others = NETWORK_PRESETS.find((p) => p.id === n)!.factories.filter((f) => f.dexId !== dexId);
      const perFactory = [`${dexId} 1 pools`, ...others.map((f) => `${f.dexId} from block ${f.startBlock}`)];
      expect(service.output()).toMatch(new RegExp(`${n}: backfill at block \\d+ of \\d+, .*, 1 pools, ETA [^;]*; ${perFactory.join(', ')}`));
    }

    const networks = (await (await fetch(`${service.url}/networks`)).json()) as { id: string; display_name?: string; name?: string }[];
    const shown = networks.map((n) => n.id).sort();
    expect(shown).toEqual(['base', 'bsc']);
    const dexes = async (n: string) => ((await (await fetch(`${service!.url}/networks/${n}/dexes?limit=50`)).json()) as { data?: { id: string }[]; dexes?: { dex_id: string }[] } & Record<string, unknown>);
    expect(JSON.stringify(await dexes('bsc'))).toContain('pancakeswap_v2');

    for (const [n, node, pair, dexId, fee] of [
      ['base', base, basePair, 'uniswap_v2', 3000],
      ['bsc', bsc, bscPair, 'pancakeswap_v2', 2500],
    ] as const) {
      const r = await fetch(`${service.url}/networks/${n}/pools/${pair}`);
      expect(r.status, n).toBe(200);
      const body = (await r.json()) as { dex_id: string; fee: number; transactions: number; token_reserves: { reserve: string }[] };
      const [r0, r1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
      expect([body.dex_id, body.fee, body.transactions], n).toEqual([dexId, fee, 2]);
      expect(body.token_reserves.map((x) => x.reserve), n).toEqual([r0.toString(), r1.toString()]);
    }
  }, 60_000);
});
