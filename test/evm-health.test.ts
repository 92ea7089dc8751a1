/**
 * The service (`dexdata serve --source evm`, shard threads and all) reading anvil through a TCP
 * relay the test can take away: a node that stops answering is reported by /health and
 * `dexdata status`, and ingestion resumes by itself when the node is back. A reorganisation under
 * the running service (blocks replaced with evm_revert) is rolled back on the shard threads: the
 * answers follow the new canonical chain, and /health counts it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
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
let service: RunningService | null = null;
let key = '';
let paid = '';
let configFile = '';
let dataDir = '';

/** A TCP relay to the node on a fixed port; `down()` closes the port and every connection through it. */
function relay(target: number) {
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  let port = 0;
  const up = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server!.close(() => resolve());
    });
  return { up, down, url: () => `http://127.0.0.1:${port}` };
}

const r = { up: async () => {}, down: async () => {}, url: () => '' };

async function health(): Promise<any> {
  const res = await fetch(`${service!.url}/health`);
  expect(res.status).toBe(200);
  return res.json();
}

async function waitUntil<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await get();
  while (!ok(v)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((res) => setTimeout(res, 50));
    v = await get();
  }
  return v;
}

async function served(): Promise<{ reserves: string[]; transactions: number; ids: string[] }> {
  const d = await fetch(`${paid}/networks/devnet/pools/${pair}`, { headers: { authorization: key } });
  const body = (await d.json()) as { token_reserves: { reserve: string }[]; transactions: number };
  const t = (await (await fetch(`${paid}/networks/devnet/pools/${pair}/transactions?limit=100`, { headers: { authorization: key } })).json()) as { id: string }[];
  return { reserves: body.token_reserves.map((x) => x.reserve), transactions: body.transactions, ids: t.map((x) => x.id) };
}

/** The pair as the node has it: reserves, swap count and the ids of its Swap, Mint and Burn logs, newest first. */
async function onChain(): Promise<{ reserves: string[]; transactions: number; ids: string[] }> {
  const [r0, r1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
  const logs = await node.rpc<{ topics: string[]; blockNumber: string; transactionIndex: string; logIndex: string }[]>('eth_getLogs', [{ address: pair, fromBlock: '0x0' }]);
  const SYNC = '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1';
  const SWAP = '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822';
  const trades = logs.filter((l) => l.topics[0] !== SYNC && l.topics[0] !== '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
  return {
    reserves: [r0.toString(), r1.toString()],
    transactions: trades.filter((l) => l.topics[0] === SWAP).length,
    ids: trades.map((l) => `${Number(l.blockNumber)}:${Number(l.transactionIndex)}:${Number(l.logIndex)}`).reverse(),
  };
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0, chainId: 31_340 });
  market = await deployV2Market(node, T0 + 1, {
    usdc: { name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 9n * E6 },
    weth: { name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: 10n ** 6n * E18 },
  });
  pair = await market.createPair(market.tokens.weth!, market.tokens.usdc!, T0 + 10);
  await market.addLiquidity(pair, market.tokens.weth!, 50n * E18, market.tokens.usdc!, 150_000n * E6, T0 + 20);
  await market.swap(pair, market.tokens.weth!, E18, T0 + 60);
  Object.assign(r, relay(node.port));
  await r.up();
  dir = mkdtempSync(join(tmpdir(), 'evm-health-'));
  const config = join(dir, 'config.json');
  configFile = config;
  writeFileSync(
    config,
    JSON.stringify({
      chains: [
        {
          id: 'devnet',
          displayName: 'Local devnet',
          chainId: 31_340,
          rpcUrls: [r.url()],
          blockTimeSeconds: 1,
          startBlock: market.factoryBlock,
          confirmations: 0,
          pollIntervalMs: 50,
          requestTimeoutMs: 1_000,
          maxRetries: 1,
          stablecoins: [market.tokens.usdc],
          wrappedNative: market.tokens.weth,
          factories: [{ dexId: 'uniswap_v2', protocol: 'uniswap_v2', address: market.factory }],
        },
      ],
    }),
  );
  const data = join(dir, 'data');
  dataDir = data;
  key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', data], { encoding: 'utf8' }))![1]!;
  service = await startService(['--config', config, '--source', 'evm', '--data-dir', data]);
  await service.waitFor(/caught up/, 30_000);
  paid = `http://127.0.0.1:${/:(\d+)$/.exec(await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/))![1]}`;
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await r.down().catch(() => {});
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const status = (): Promise<{ code: number; out: string }> =>
  new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'status', '--port', String(service!.port)], { encoding: 'utf8' }, (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: stdout }));
  });

describe('node health', () => {
  it('a node that stays down is reported by /health and dexdata status; ingestion resumes by itself when it returns', async () => {
    const h = await waitUntil('live', health, (b) => b.chains[0].state === 'live');
    expect(h).toMatchObject({ status: 'ok', phase: 'live', chains: [{ chain: 'devnet', state: 'live', blocks_behind: 0, node_down_since: null, reorgs: 0 }] });
    expect(Date.parse(h.chains[0].last_success_at)).toBeGreaterThan(Date.now() - 10_000);
    expect(h.chains[0].head_block).toBe(Number(await node.rpc<string>('eth_blockNumber')));
    const ok = await status();
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^devnet: live, head \d+, next block \d+, 0 blocks behind, last answer \S+, \d+ RPC retries, 0 reorgs$/m);

    await r.down();
    const t = Math.floor(Date.now() / 1000);
    await market.swap(pair, market.tokens.usdc!, 2_000n * E6, t);
    const down = await waitUntil('node_down', health, (b) => b.chains[0].state === 'node_down');
    expect(down.status).toBe('degraded');
    expect(down.chains[0].last_error).toMatch(/network error|timed out/);
    expect(Date.parse(down.chains[0].node_down_since)).toBeGreaterThan(Date.now() - 20_000);
    const bad = await status();
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/^devnet: node_down, node down since \S+, .* last error: .*(network error|timed out)/m);
    expect((await served()).transactions).toBe(1);

    await r.up();
    const want = await onChain();
    const got = await waitUntil('resumed', served, (v) => JSON.stringify(v) === JSON.stringify(want));
    expect(got).toEqual(want);
    expect(got.transactions).toBe(2);
    const back = await waitUntil('live again', health, (b) => b.chains[0].state === 'live');
    expect(back).toMatchObject({ status: 'ok', chains: [{ node_down_since: null, blocks_behind: 0 }] });
    expect(service!.output()).toMatch(/devnet: node reachable again after \d+ s; ingestion resumes/);
  }, 60_000);

  it('blocks replaced under the running service are rolled back on the shard threads; answers follow the canonical chain', async () => {
    const fork = Number(await node.rpc<string>('eth_blockNumber'));
    const snapshot = await node.rpc<string>('evm_snapshot');
    const t = Math.floor(Date.now() / 1000) + 2;
    await market.swap(pair, market.tokens.weth!, 3n * E18, t);
    await market.swap(pair, market.tokens.usdc!, 5_000n * E6, t + 2);
    const orphaned = await onChain();
    await waitUntil('orphaned blocks served', served, (v) => JSON.stringify(v) === JSON.stringify(orphaned));

    await node.rpc('evm_revert', [snapshot]);
    await market.swap(pair, market.tokens.weth!, E18 / 5n, t + 5);
    const want = await onChain();
    expect(want).not.toEqual(orphaned);
    const got = await waitUntil('canonical blocks served', served, (v) => JSON.stringify(v) === JSON.stringify(want));
    expect(got).toEqual(want);
    const h = await health();
    expect(h.chains[0]).toMatchObject({ reorgs: 1, last_reorg_block: fork, state: 'live' });
    expect(service!.output()).toMatch(new RegExp(`devnet: block \\d+ was replaced; rolling back to block ${fork}`));
    expect(service!.output()).toMatch(/devnet: rolled back to block \d+/);
  }, 60_000);

  it('killed (-9) as it starts a rollback, the restarted service serves the canonical chain', async () => {
    const snapshot = await node.rpc<string>('evm_snapshot');
    const t = Math.floor(Date.now() / 1000) + 10;
    await market.swap(pair, market.tokens.usdc!, 7_000n * E6, t);
    const orphaned = await onChain();
    await waitUntil('orphaned block served', served, (v) => JSON.stringify(v) === JSON.stringify(orphaned));
    const before = (service!.output().match(/was replaced; rolling back/g) ?? []).length;

    await node.rpc('evm_revert', [snapshot]);
    await market.swap(pair, market.tokens.weth!, E18 / 3n, t + 3);
    const want = await onChain();
    // The follower announces the rollback just before ingest starts it: kill the process there.
    await waitUntil('rollback announced', async () => (service!.output().match(/was replaced; rolling back/g) ?? []).length, (n) => n > before, 20_000);
    await service!.kill9();
    service = await startService(['--config', configFile, '--source', 'evm', '--data-dir', dataDir]);
    await service.waitFor(/caught up/, 30_000);
    paid = `http://127.0.0.1:${/:(\d+)$/.exec(await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/))![1]}`;
    const got = await waitUntil('canonical chain served after the restart', served, (v) => JSON.stringify(v) === JSON.stringify(want));
    expect(got).toEqual(want);
  }, 60_000);
});
