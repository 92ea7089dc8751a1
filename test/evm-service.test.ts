/**
 * The service (`dexdata serve --source evm`) following a local anvil node: backfill from the config
 * file's chain, live following of new blocks, and a `kill -9` restart that resumes from the ingest
 * checkpoint with nothing lost or counted twice. Expected figures come from the pair contract.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployV2Market, read, startAnvil, V2_PAIR, type Anvil, type V2Market } from './support/evm.js';
import { CLI, startService, type RunningService } from './support/service.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const NOW = Math.floor(Date.now() / 1000);
const T0 = NOW - 3_600;

let node: Anvil;
let market: V2Market;
let pair: Address;
let dir = '';
let configFile = '';
let service: RunningService | null = null;
/** A pro key: the paid host answers without the free host's URL cache, so new blocks show at once. */
let key = '';

async function paidUrl(s: RunningService): Promise<string> {
  const line = await s.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/);
  return `http://127.0.0.1:${/:(\d+)$/.exec(line)![1]}`;
}

async function poolState(url: string): Promise<{ reserves: string[]; transactions: number }> {
  const r = await fetch(`${url}/networks/devnet/pools/${pair}`, { headers: { authorization: key } });
  expect(r.status).toBe(200);
  const body = (await r.json()) as { token_reserves: { reserve: string }[]; transactions: number };
  return { reserves: body.token_reserves.map((x) => x.reserve), transactions: body.transactions };
}

async function chainReserves(): Promise<string[]> {
  const [r0, r1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
  return [r0.toString(), r1.toString()];
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_338 });
  market = await deployV2Market(node, T0 + 1, {
    usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 9n * E6 },
    weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 6n * E18 },
  });
  pair = await market.createPair(market.tokens.weth!, market.tokens.usdc!, T0 + 10);
  await market.addLiquidity(pair, market.tokens.weth!, 50n * E18, market.tokens.usdc!, 150_000n * E6, T0 + 20);
  await market.swap(pair, market.tokens.weth!, E18, T0 + 60);
  await market.swap(pair, market.tokens.usdc!, 4_000n * E6, T0 + 120);
  await market.swap(pair, market.tokens.weth!, E18 / 2n, T0 + 180);
  dir = mkdtempSync(join(tmpdir(), 'evm-service-'));
  configFile = join(dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      chains: [
        {
          id: 'devnet',
          displayName: 'Local devnet',
          chainId: 31_338,
          rpcUrls: [node.url],
          blockTimeSeconds: 1,
          startBlock: market.factoryBlock,
          confirmations: 0,
          logBatchBlocks: 4,
          pollIntervalMs: 50,
          stablecoins: [market.tokens.usdc],
          wrappedNative: market.tokens.weth,
          factories: [{ dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: market.factory }],
        },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await service?.stop();
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('dexdata serve --source evm', () => {
  it('refuses a chain id that is not the node\'s', async () => {
    const bad = join(dir, 'bad.json');
    const cfg = JSON.parse(readFileSync(configFile, 'utf8')) as { chains: { chainId: number }[] };
    cfg.chains[0]!.chainId = 1;
    writeFileSync(bad, JSON.stringify(cfg));
    const s = await startService(['--config', bad, '--source', 'evm', '--data-dir', join(dir, 'bad-data')]);
    await s.waitFor(/serves chain id 31338, the configuration says 1/, 20_000);
    await s.stop();
  });

  it('backfills the chain, follows new blocks, and resumes after kill -9 without losing or repeating an event', async () => {
    const data = join(dir, 'data');
    key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', data], { encoding: 'utf8' }))![1]!;
    service = await startService(['--config', configFile, '--source', 'evm', '--data-dir', data]);
    await service.waitFor(/caught up/, 30_000);
    let url = await paidUrl(service);
    expect(await poolState(url)).toEqual({ reserves: await chainReserves(), transactions: 3 });

    // Live: a swap mined now is served within moments.
    const liveT = Math.floor(Date.now() / 1000);
    await market.swap(pair, market.tokens.usdc!, 1_000n * E6, liveT);
    const want = await chainReserves();
    const deadline = Date.now() + 15_000;
    let got = await poolState(url);
    while (JSON.stringify(got.reserves) !== JSON.stringify(want) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      got = await poolState(url);
    }
    expect(got).toEqual({ reserves: want, transactions: 4 });

    // Killed; the chain moves on; the restarted service has every event once.
    await service.kill9();
    service = null;
    const t = Math.max(Math.floor(Date.now() / 1000) + 1, liveT + 2);
    await market.swap(pair, market.tokens.weth!, E18 / 4n, t);
    await market.removeLiquidity(pair, 30n, t + 2);
    service = await startService(['--config', configFile, '--source', 'evm', '--data-dir', data]);
    await service.waitFor(/caught up/, 30_000);
    url = await paidUrl(service);
    expect(await poolState(url)).toEqual({ reserves: await chainReserves(), transactions: 5 });
  }, 60_000);
});
