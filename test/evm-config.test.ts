/** The `chains` section of the config file and the `--source` flag: every problem listed at once. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../engine/config.js';
import { TokenRole } from '../engine/events/model.js';
import { tokenRole } from '../engine/sources/evm/tokens.js';
import { configProblems } from './support/evm-serve.js';

const dir = mkdtempSync(join(tmpdir(), 'evm-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(content: unknown): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

const GOOD = {
  id: 'ethereum',
  displayName: 'Ethereum',
  chainId: 1,
  rpcUrls: ['http://127.0.0.1:8545'],
  stablecoins: ['0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'],
  wrappedNative: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  factories: [{ dexId: 'uniswap_v2', protocol: 'uniswap_v2', address: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f' }],
};

const problems = configProblems;

describe('EVM chain configuration', () => {
  it('the simulator stays the default source, with no chains', () => {
    const c = loadConfig({}, {});
    expect(c.source).toBe('simulator');
    expect(c.chains).toEqual([]);
  });

  it('fills defaults: confirmations, log batch size, retries, poll interval, factory fee', () => {
    const c = loadConfig({ config: file({ chains: [GOOD] }), source: 'evm' }, {});
    expect(c.source).toBe('evm');
    const chain = c.chains[0]!;
    expect([chain.confirmations, chain.logBatchBlocks, chain.maxRetries, chain.startBlock, chain.factories[0]!.feePpm]).toEqual([12, 2000, 8, 0, 3000]);
  });

  it('lists every problem of every chain at once', () => {
    const bad = {
      ...GOOD,
      chainId: 0,
      rpcUrls: ['not a url'],
      wrappedNative: '0x1234',
      confirmations: -1,
      factories: [
        { dexId: 'Uniswap V2', protocol: 'uniswap_v9', address: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f' },
        { dexId: 'sushi', protocol: 'uniswap_v2', address: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f', extra: 1 },
      ],
    };
    const p = problems({ config: file({ chains: [bad, { ...GOOD, stablecoins: [] }] }), source: 'evm' });
    const paths = p.map((x) => x.split(':')[0]);
    expect(paths).toEqual(
      expect.arrayContaining([
        'chains.0.chainId',
        'chains.0.rpcUrls.0',
        'chains.0.wrappedNative',
        'chains.0.confirmations',
        'chains.0.factories.0.dexId',
        'chains.0.factories.0.protocol',
        'chains.0.factories.1',
        'chains.1.stablecoins',
      ]),
    );
  });

  it('refuses RPC URLs the client cannot speak to, naming each', () => {
    const p = problems({ config: file({ chains: [{ ...GOOD, rpcUrls: ['https://eth.example.org/v2/key', 'wss://eth.example.org/ws', 'ftp://eth.example.org'] }] }), source: 'evm' });
    expect(p).toEqual(['chains.0.rpcUrls.1: must be an http:// or https:// URL', 'chains.0.rpcUrls.2: must be an http:// or https:// URL']);
  });

  it('refuses duplicate network ids and DEX ids, and source evm without chains', () => {
    expect(problems({ config: file({ chains: [GOOD, GOOD] }), source: 'evm' })).toEqual(['chains.1.id: duplicate network id "ethereum"']);
    expect(problems({ config: file({ chains: [{ ...GOOD, factories: [GOOD.factories[0], GOOD.factories[0]] }] }) })).toEqual([
      'chains.0.factories.1.dexId: duplicate DEX id "uniswap_v2"',
    ]);
    expect(problems({ source: 'evm' })).toEqual(['chains: source "evm" needs at least one chain']);
    expect(problems({ source: 'ethereum' })[0]).toMatch(/^source: /);
  });

  it('prices the first stablecoin and the pegged ones at 1 USD, the other stablecoins by their market', () => {
    const usdc = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
    const usdt = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
    const dai = '0x6B175474E89094C44Da98b954EedeAC495271d0F';
    const chain = { ...GOOD, stablecoins: [usdc, usdt, dai], pegged: [usdt] };
    const c = loadConfig({ config: file({ chains: [chain] }), source: 'evm' }, {}).chains[0]!;
    expect(c.pegged).toEqual([usdt]);
    expect(loadConfig({ config: file({ chains: [GOOD] }), source: 'evm' }, {}).chains[0]!.pegged).toEqual([]);
    const role = (a: string) => tokenRole(a, c.stablecoins, c.wrappedNative, c.pegged);
    expect([role(usdc), role(usdt.toLowerCase()), role(dai), role(GOOD.wrappedNative), role('0x00000000000000000000000000000000000000aa')]).toEqual([
      TokenRole.PrimaryStable,
      TokenRole.PrimaryStable,
      TokenRole.Stable,
      TokenRole.WrappedNative,
      TokenRole.Other,
    ]);
    expect(problems({ config: file({ chains: [{ ...chain, pegged: [GOOD.wrappedNative] }] }), source: 'evm' })).toEqual([
      `chains.0.pegged.0: ${GOOD.wrappedNative} is not one of the chain's stablecoins`,
    ]);
  });
});
