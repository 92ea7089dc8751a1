/**
 * The EVM source against a real local node: anvil started here on a loopback port, the real Uniswap
 * v2 bytecode, test tokens (one with 6 decimals, one whose symbol() returns bytes32, one without
 * metadata functions). Pools are created, funded, traded both ways and drained through the pair
 * contracts; the source ingests the chain into a real engine and gateway, and the REST answers are
 * compared with what the chain says, computed here from the contracts' state and logs with viem.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUnits, keccak256, parseAbiItem, stringToHex, toHex, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { decodeStringOrBytes32, SIGNATURES, TOPICS } from '../engine/sources/evm/abi.js';
import { EvmChainSchema, type EvmChainConfigInput } from '../engine/sources/evm/config.js';
import { ReorgDetectedError } from '../engine/sources/evm/chain.js';
import { createEvmSource, type EvmSource } from '../engine/sources/evm/source.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore, type Store } from '../engine/store/store.js';
import { startGateway, type Gateway } from '../gateway/server.js';
import { deploy, fixtures, pairHistory, read, send, startAnvil, v2Trades, V2_FACTORY, V2_PAIR, type Anvil, type PairTx, type V2Trades } from './support/evm.js';
import { expectTransactions } from './support/evm-serve.js';

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const MINUTE = 60;

let node: Anvil;
let trades: V2Trades;
let dir = '';
let store: Store;
let gateway: Gateway;
let base = '';
let source: EvmSource;
let ingest: Ingest;
/** Genesis of the test chain: a whole hour ago, so every block lies in the past. */
const NOW = Math.floor(Date.now() / 1000);
const T0 = Math.floor(NOW / 3600) * 3600 - 3600;

const tok: Record<'usdc' | 'weth' | 'mkr' | 'bare', Address> = { usdc: '0x', weth: '0x', mkr: '0x', bare: '0x' };
let factory: Address;
let factoryBlock = 0;
let wethUsdc: Address;
let mkrWeth: Address;
let bareUsdc: Address;
const ERC20 = () => fixtures().TestToken.abi;

/** Mines the next transaction at Unix time t. */
async function at(t: number): Promise<void> {
  await node.rpc('evm_setNextBlockTimestamp', [t]);
}

function chainConfig(over: Partial<EvmChainConfigInput> = {}): EvmChainConfigInput {
  return {
    id: 'anvil',
    displayName: 'Anvil',
    chainId: node.chainId,
    rpcUrls: [node.url],
    blockTimeSeconds: 1,
    startBlock: factoryBlock,
    confirmations: 0,
    stablecoins: [tok.usdc],
    wrappedNative: tok.weth,
    factories: [{ dexId: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', address: factory }],
    pollIntervalMs: 10,
    ...over,
  };
}

async function get(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path);
  return { status: r.status, body: JSON.parse(await r.text()) };
}

beforeAll(async () => {
  node = await startAnvil({ timestamp: T0 });
  trades = v2Trades(node);
  const f = fixtures();
  let t = T0 + 10;
  const tick = () => (t += 3);
  await at(tick());
  tok.usdc = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 9n * E6]);
  await at(tick());
  tok.weth = await deploy(node, f.TestToken, ['Wrapped Ether', 'WETH', 18, 10n ** 6n * E18]);
  await at(tick());
  tok.mkr = await deploy(node, f.Bytes32Token, [stringToHex('Maker', { size: 32 }), stringToHex('MKR', { size: 32 }), 10n ** 6n * E18]);
  await at(tick());
  tok.bare = await deploy(node, f.BareToken, [10n ** 6n * E18]);
  await at(tick());
  factory = await deploy(node, V2_FACTORY, [node.account]);
  factoryBlock = Number(await node.rpc<string>('eth_blockNumber'));

  const create = async (a: Address, b: Address): Promise<Address> => {
    await at(tick());
    await send(node, factory, V2_FACTORY.abi, 'createPair', [a, b]);
    return read<Address>(node, factory, V2_FACTORY.abi, 'getPair', [a, b]);
  };
  wethUsdc = await create(tok.weth, tok.usdc);
  mkrWeth = await create(tok.mkr, tok.weth);
  bareUsdc = await create(tok.bare, tok.usdc);

  await trades.addLiquidity(wethUsdc, tok.weth, 100n * E18, tok.usdc, 300_000n * E6, T0 + 120);
  await trades.addLiquidity(mkrWeth, tok.mkr, 1_000n * E18, tok.weth, 50n * E18, T0 + 130);
  await trades.addLiquidity(bareUsdc, tok.bare, 10_000n * E18, tok.usdc, 5_000n * E6, T0 + 140);
  // Trades in several minutes, both directions.
  await trades.swap(wethUsdc, tok.weth, 2n * E18, T0 + 5 * MINUTE + 1);
  await trades.swap(wethUsdc, tok.usdc, 9_000n * E6, T0 + 5 * MINUTE + 30);
  await trades.swap(mkrWeth, tok.mkr, 20n * E18, T0 + 6 * MINUTE + 5);
  await trades.swap(wethUsdc, tok.usdc, 1_234_567_891n, T0 + 7 * MINUTE + 10);
  await trades.swap(mkrWeth, tok.weth, 1n * E18, T0 + 8 * MINUTE + 20);
  await trades.swap(wethUsdc, tok.weth, E18 / 3n, T0 + 9 * MINUTE + 40);
  await trades.swap(bareUsdc, tok.usdc, 100n * E6, T0 + 10 * MINUTE);
  await trades.removeLiquidity(wethUsdc, 40n, T0 + 12 * MINUTE);
  await trades.swap(wethUsdc, tok.weth, E18, T0 + 14 * MINUTE + 2);

  dir = mkdtempSync(join(tmpdir(), 'evm-test-'));
  store = openStore(dir);
  const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
  const shards = new LocalShards(views, store);
  ingest = new Ingest(store, views, shards);
  source = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ logBatchBlocks: 7, stepBlocks: 20 }))], store, now: () => NOW, progressIntervalMs: 0 });
  await ingest.registerNetworks(source.networks);
  for (let i = 0; i < 1000 && !source.followers.every((x) => x.caughtUp); i++) {
    const result = await ingest.ingest(await source.advance(NOW));
    await result.applied;
  }
  ingest.advanceClock(0, NOW);
  await shards.flush();
  shards.sweep(1);
  gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => NOW }, { host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${gateway.port}`;
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await store?.close();
  await node?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('ABI constants', () => {
  it('event topics are keccak-256 of their signatures', () => {
    for (const [k, sig] of Object.entries(SIGNATURES)) expect(TOPICS[k as keyof typeof TOPICS], sig).toBe(keccak256(toHex(sig)));
  });

  it('decodes ABI strings and bytes32 strings, and refuses other answers', () => {
    expect(decodeStringOrBytes32(stringToHex('MKR', { size: 32 }))).toBe('MKR');
    const abiString = `0x${'20'.padStart(64, '0')}${'4'.padStart(64, '0')}${Buffer.from('USDC').toString('hex').padEnd(64, '0')}` as Hex;
    expect(decodeStringOrBytes32(abiString)).toBe('USDC');
    expect(decodeStringOrBytes32('0x')).toBeNull();
    expect(decodeStringOrBytes32('0x1234')).toBeNull();
  });
});

/** What the chain says about a pair: its tokens, their decimals, reserves and every log, read with viem. */
interface PairTruth {
  token0: Address;
  token1: Address;
  dec0: number;
  dec1: number;
  reserve0: bigint;
  reserve1: bigint;
  createdBlock: number;
  /** Swaps, mints and burns in chain order with the reserves after them (from the Sync of the same transaction). */
  txs: PairTx[];
}

const PAIR_CREATED = parseAbiItem('event PairCreated(address indexed token0, address indexed token1, address pair, uint index)');

async function truth(pair: Address): Promise<PairTruth> {
  const token0 = await read<Address>(node, pair, V2_PAIR.abi, 'token0');
  const token1 = await read<Address>(node, pair, V2_PAIR.abi, 'token1');
  const dec = async (t: Address) => (t.toLowerCase() === tok.bare.toLowerCase() ? 18 : Number(await read<number>(node, t, ERC20(), 'decimals')));
  const [reserve0, reserve1] = await read<[bigint, bigint, number]>(node, pair, V2_PAIR.abi, 'getReserves');
  const created = (await node.pub.getLogs({ address: factory, event: PAIR_CREATED, fromBlock: 0n })).find((l) => l.args.pair!.toLowerCase() === pair.toLowerCase())!;
  const txs = await pairHistory(node, pair);
  return { token0, token1, dec0: await dec(token0), dec1: await dec(token1), reserve0, reserve1, createdBlock: Number(created.blockNumber), txs };
}

const num = (raw: bigint, decimals: number) => Number(formatUnits(raw, decimals));
/** USD price of WETH from a WETH/USDC pair's reserves. */
function wethUsd(p: PairTruth, r0: bigint, r1: bigint): number {
  const usdcIs0 = p.token0.toLowerCase() === tok.usdc.toLowerCase();
  const usdc = num(usdcIs0 ? r0 : r1, 6);
  const weth = num(usdcIs0 ? r1 : r0, 18);
  return usdc / weth;
}
const close = (actual: number, expected: number, what: string) => expect(Math.abs(actual - expected) / Math.max(1e-12, Math.abs(expected)), `${what}: ${actual} vs ${expected}`).toBeLessThan(1e-9);

describe('Uniswap v2 on anvil through the REST interface', () => {
  it('serves the network, its DEX and every pair the factory created', async () => {
    const nets = await get('/networks');
    expect(nets.status).toBe(200);
    expect(JSON.stringify(nets.body)).toContain('"anvil"');
    const pairs = await read<bigint>(node, factory, V2_FACTORY.abi, 'allPairsLength');
    expect(pairs).toBe(3n);
    for (const pair of [wethUsdc, mkrWeth, bareUsdc]) expect((await get(`/networks/anvil/pools/${pair}`)).status, pair).toBe(200);
  });

  it('pool details: tokens, creation block, fee, reserves and price equal the pair contract', async () => {
    for (const pair of [wethUsdc, mkrWeth, bareUsdc]) {
      const p = await truth(pair);
      const { status, body } = await get(`/networks/anvil/pools/${pair}`);
      expect(status).toBe(200);
      expect(body.id).toBe(pair.toLowerCase());
      expect(body.dex_id).toBe('uniswap_v2');
      expect(body.factory_id).toBe(factory.toLowerCase());
      expect(body.fee).toBe(3000);
      expect(body.created_at_block_number).toBe(p.createdBlock);
      expect(body.tokens.map((t: { id: string }) => t.id)).toEqual([p.token0.toLowerCase(), p.token1.toLowerCase()]);
      expect(body.tokens.map((t: { decimals: number }) => t.decimals)).toEqual([p.dec0, p.dec1]);
      expect(body.token_reserves.map((r: { reserve: string }) => r.reserve)).toEqual([p.reserve0.toString(), p.reserve1.toString()]);
      close(body.token_reserves[0].reserve_normalized, num(p.reserve0, p.dec0), 'reserve 0');
      close(body.token_reserves[1].reserve_normalized, num(p.reserve1, p.dec1), 'reserve 1');
      close(body.last_price, num(p.reserve1, p.dec1) / num(p.reserve0, p.dec0), 'last_price');
      const swaps = p.txs.filter((x) => x.type === 'swap');
      expect(body.transactions).toBe(swaps.length);
    }
  });

  it('prices: WETH from the WETH/USDC reserves, MKR through WETH, USDC at 1', async () => {
    const wu = await truth(wethUsdc);
    const mw = await truth(mkrWeth);
    const weth = wethUsd(wu, wu.reserve0, wu.reserve1);
    const wethIs0 = mw.token0.toLowerCase() === tok.weth.toLowerCase();
    // MKR is priced through MKR/WETH, then WETH/USDC, as both stand now: WETH moved after the MKR
    // pair's last event, and MKR moved with it.
    const mkrLast = mw.txs[mw.txs.length - 1]!.block;
    expect(wu.txs[wu.txs.length - 1]!.block).toBeGreaterThan(mkrLast);
    const mkr = (num(wethIs0 ? mw.reserve0 : mw.reserve1, 18) / num(wethIs0 ? mw.reserve1 : mw.reserve0, 18)) * weth;
    const prices = await get(`/networks/anvil/multi/prices?tokens=${tok.weth},${tok.usdc},${tok.mkr}`);
    expect(prices.status).toBe(200);
    const details = await get(`/networks/anvil/pools/${wethUsdc}?inversed=true`);
    close(details.body.last_price_usd, weth, 'WETH last_price_usd');
    const w = await get(`/networks/anvil/tokens/${tok.weth}`);
    close(w.body.price_usd, weth, 'WETH price_usd');
    const m = await get(`/networks/anvil/tokens/${tok.mkr}`);
    close(m.body.price_usd, mkr, 'MKR price_usd');
    const u = await get(`/networks/anvil/tokens/${tok.usdc}`);
    expect(u.body.price_usd).toBe(1);
  });

  it('token details: metadata by eth_call, bytes32 symbols decoded, reverting metadata replaced', async () => {
    const usdc = (await get(`/networks/anvil/tokens/${tok.usdc}`)).body;
    expect([usdc.name, usdc.symbol, usdc.decimals]).toEqual(['USD Coin', 'USDC', 6]);
    expect(String(usdc.total_supply)).toBe((await read<bigint>(node, tok.usdc, ERC20(), 'totalSupply')).toString());
    const mkr = (await get(`/networks/anvil/tokens/${tok.mkr}`)).body;
    expect([mkr.name, mkr.symbol, mkr.decimals]).toEqual(['Maker', 'MKR', 18]);
    expect(String(mkr.total_supply)).toBe((10n ** 6n * E18).toString());
    const bare = (await get(`/networks/anvil/tokens/${tok.bare}`)).body;
    expect([bare.name, bare.symbol, bare.decimals]).toEqual([tok.bare.toLowerCase().slice(0, 8), tok.bare.toLowerCase().slice(0, 8), 18]);
    expect(String(bare.total_supply)).toBe((10n ** 6n * E18).toString());
  });

  it('transactions: every Swap, Mint and Burn log of the pair, newest first, amounts and prices from the chain', async () => {
    for (const pair of [wethUsdc, mkrWeth]) {
      const p = await truth(pair);
      const { status, body } = await get(`/networks/anvil/pools/${pair}/transactions?limit=100`);
      expect(status).toBe(200);
      expectTransactions(body, p.txs, p.dec0, p.dec1);
    }
    const p = await truth(wethUsdc);
    const { body } = await get(`/networks/anvil/pools/${wethUsdc}/transactions?limit=100`);
    const usdcIs0 = p.token0.toLowerCase() === tok.usdc.toLowerCase();
    for (const [i, x] of [...p.txs].reverse().entries()) {
      if (x.type !== 'swap') continue;
      close(body[i][usdcIs0 ? 'price_1_usd' : 'price_0_usd'], wethUsd(p, x.r0, x.r1), `swap ${x.id} WETH price`);
      close(body[i].volume_usd, Math.abs(num(usdcIs0 ? x.amount0 : x.amount1, 6)), `swap ${x.id} volume`);
    }
  });

  it('OHLCV: one-minute candles of WETH in USD from the reserves after each swap, volume from the USDC legs', async () => {
    const p = await truth(wethUsdc);
    const usdcIs0 = p.token0.toLowerCase() === tok.usdc.toLowerCase();
    const candles = new Map<number, { open: number; high: number; low: number; close: number; volume: number }>();
    for (const x of p.txs) {
      if (x.type !== 'swap') continue;
      const price = wethUsd(p, x.r0, x.r1);
      const t = Math.floor(x.time / 60) * 60;
      const vol = Math.abs(num(usdcIs0 ? x.amount0 : x.amount1, 6));
      const c = candles.get(t);
      if (!c) candles.set(t, { open: price, high: price, low: price, close: price, volume: vol });
      else candles.set(t, { open: c.open, high: Math.max(c.high, price), low: Math.min(c.low, price), close: price, volume: c.volume + vol });
    }
    const inversed = usdcIs0 ? 'true' : 'false';
    const { status, body } = await get(`/networks/anvil/pools/${wethUsdc}/ohlcv?interval=1m&start=${T0}&inversed=${inversed}`);
    expect(status).toBe(200);
    expect(body.map((c: { timestamp: string }) => Date.parse(c.timestamp) / 1000)).toEqual([...candles.keys()]);
    for (const [i, [t, c]] of [...candles.entries()].entries()) {
      for (const k of ['open', 'high', 'low', 'close', 'volume'] as const) close(body[i][k], c[k], `${k} at ${t}`);
    }
  });
});

/** Events as comparable JSON (bigints as strings). */
const plain = (events: unknown) => JSON.parse(JSON.stringify(events, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as unknown;

async function drain(s: EvmSource): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < 1000 && !s.followers.every((x) => x.caughtUp); i++) for (const b of await s.advance(NOW)) out.push(...b.events);
  return out;
}

describe('RPC faults', () => {
  it('refused eth_getLogs ranges are split, 429s, 5xx and timeouts are retried: the events are those of a healthy node', async () => {
    const direct = await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig())], now: () => NOW, progressIntervalMs: 0 }));
    let n = 0;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const call = JSON.parse(body) as { id: number; method: string; params: { fromBlock: string; toBlock: string }[] } | unknown[];
        n++;
        if (n % 7 === 3) return void res.writeHead(429).end('slow down');
        if (n % 7 === 5) return void res.writeHead(503).end('unavailable');
        if (n % 11 === 6) return void setTimeout(() => res.writeHead(200).end('{}'), 400); // beyond the 200 ms timeout
        if (!Array.isArray(call) && call.method === 'eth_getLogs' && Number(call.params[0]!.toBlock) - Number(call.params[0]!.fromBlock) > 3) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32005, message: 'query returned more than 10000 results' } }));
        }
        void fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(await r.text());
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const faulty = createEvmSource({
        chains: [EvmChainSchema.parse(chainConfig({ rpcUrls: [url], logBatchBlocks: 64, requestTimeoutMs: 200, maxRetries: 20 }))],
        now: () => NOW,
        progressIntervalMs: 0,
      });
      const got = await drain(faulty);
      expect(plain(got)).toEqual(plain(direct));
      const p = faulty.progress()[0]!;
      expect(p.rangeSplits).toBeGreaterThan(0);
      expect(p.rpcRetries).toBeGreaterThan(3);
    } finally {
      proxy.close();
    }
  }, 30_000);
  it('a provider behind basic auth in its URL, answering compressed (gzip, deflate, br) and in small chunks: the events are those of a healthy node', async () => {
    const direct = await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig())], now: () => NOW, progressIntervalMs: 0 }));
    const encoders: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
    const used = new Set<string>();
    let n = 0;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.headers.authorization !== `Basic ${Buffer.from('reader:s3cret').toString('base64')}`) return void res.writeHead(401).end('{"error":"unauthorized"}');
        const accepted = (req.headers['accept-encoding'] ?? '').split(',').map((e) => e.trim());
        void fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) }).then(async (r) => {
          const plainBody = Buffer.from(await r.arrayBuffer());
          const encoding = ['gzip', 'deflate', 'br', 'identity'][n++ % 4]!;
          const body = encoding === 'identity' ? plainBody : encoders[encoding]!(plainBody);
          if (encoding !== 'identity' && !accepted.includes(encoding)) return void res.writeHead(406).end();
          used.add(encoding);
          res.writeHead(r.status, { 'content-type': 'application/json', ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }) });
          // Written a few bytes at a time: the answer arrives in many chunks.
          for (let at = 0; at < body.length; at += 97) res.write(body.subarray(at, at + 97));
          res.end();
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://reader:s3cret@127.0.0.1:${(proxy.address() as AddressInfo).port}/v2`;
      const s = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ rpcUrls: [url], logBatchBlocks: 16, maxRetries: 0 }))], now: () => NOW, progressIntervalMs: 0 });
      expect(plain(await drain(s))).toEqual(plain(direct));
      expect([...used].sort()).toEqual(['br', 'deflate', 'gzip', 'identity']);
      expect(s.progress()[0]!.rpcRetries).toBe(0);
    } finally {
      proxy.close();
    }
  });
  it('a provider that moved (HTTP 308) is reported with where it points, its path left out, and the source stays up', async () => {
    const proxy = createServer((req, res) => {
      req.resume();
      req.on('end', () => void res.writeHead(308, { location: 'https://rpc.example.org/v3/0123456789abcdef' }).end());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const lines: string[] = [];
      const s = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ rpcUrls: [url], maxRetries: 0 }))], now: () => NOW, log: (l) => lines.push(l), progressIntervalMs: 0 });
      expect(await s.advance(NOW)).toEqual([]);
      const p = s.progress()[0]!;
      expect(p.nodeDownSince).not.toBeNull();
      expect(p.rpcLastError).toMatch(/HTTP 308, moved to https:\/\/rpc\.example\.org: configure the URL it points to/);
      expect(lines.join('\n')).not.toContain('0123456789abcdef');
      expect(p.rpcLastError).not.toContain('0123456789abcdef');
    } finally {
      proxy.close();
    }
  });
  it('a node that stays down does not stop the source: it is reported, and ingestion resumes by itself when the node returns', async () => {
    const direct = await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig())], now: () => NOW, progressIntervalMs: 0 }));
    let up = false;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (!up) return void res.writeHead(502).end('bad gateway');
        void fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(await r.text());
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const lines: string[] = [];
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const s = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ rpcUrls: [url], maxRetries: 1 }))], now: () => NOW, log: (l) => lines.push(l), progressIntervalMs: 0 });
      expect(await s.advance(NOW)).toEqual([]);
      expect(s.progress()[0]!.nodeDownSince).not.toBeNull();
      expect(s.progress()[0]!.rpcLastError).toContain('HTTP 502');
      expect(lines.some((l) => /^anvil: node unreachable since .*HTTP 502.*; retrying$/.test(l))).toBe(true);
      up = true;
      expect(plain(await drain(s))).toEqual(plain(direct));
      expect(s.progress()[0]!.nodeDownSince).toBeNull();
      expect(lines.some((l) => /^anvil: node reachable again after \d+ s; ingestion resumes$/.test(l))).toBe(true);
    } finally {
      proxy.close();
    }
  });
});

describe('restart mid-backfill', () => {
  it('a run stopped after a few steps and resumed from its store serves exactly what an uninterrupted run serves', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'evm-restart-'));
    const config = EvmChainSchema.parse(chainConfig({ stepBlocks: 3, logBatchBlocks: 2 }));
    try {
      // First run: three steps committed and applied, then the run ends without catching up.
      {
        const s1 = openStore(dir2);
        const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
        const i1 = new Ingest(s1, views, new LocalShards(views, s1));
        const src = createEvmSource({ chains: [config], store: s1, now: () => NOW, progressIntervalMs: 0 });
        await i1.registerNetworks(src.networks);
        let steps = 0;
        while (steps < 3) {
          const r = await i1.ingest(await src.advance(NOW));
          await r.applied;
          if (r.accepted > 0) steps++;
        }
        expect(src.followers[0]!.caughtUp).toBe(false);
        await s1.close();
      }
      // Second run: replay the log, resume the source from the checkpoint.
      const s2 = openStore(dir2);
      const views = EngineViews.create({ pools: 1024, tokens: 1024, chains: 16 });
      const shards2 = new LocalShards(views, s2);
      const i2 = new Ingest(s2, views, shards2);
      i2.registry.load(s2);
      await i2.replay();
      const src = createEvmSource({ chains: [config], store: s2, now: () => NOW, progressIntervalMs: 0 });
      await i2.registerNetworks(src.networks);
      for (let i = 0; i < 1000 && !src.followers.every((x) => x.caughtUp); i++) await (await i2.ingest(await src.advance(NOW))).applied;
      expect(i2.droppedDuplicates).toBe(0);
      i2.advanceClock(0, NOW);
      await shards2.flush();
      shards2.sweep(1);
      const g2 = await startGateway({ views, registry: i2.registry, store: s2, ranker: shards2, now: () => NOW }, { host: '127.0.0.1', port: 0 });
      try {
        for (const path of [
          ...[wethUsdc, mkrWeth, bareUsdc].flatMap((p) => [`/networks/anvil/pools/${p}`, `/networks/anvil/pools/${p}/transactions?limit=100`, `/networks/anvil/pools/${p}/ohlcv?interval=1m&start=${T0}`]),
          ...Object.values(tok).map((t) => `/networks/anvil/tokens/${t}`),
        ]) {
          const resumed = await (await fetch(`http://127.0.0.1:${g2.port}${path}`)).text();
          expect(JSON.parse(resumed), path).toEqual((await get(path)).body);
        }
      } finally {
        await g2.close();
        await s2.close();
      }
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
  });
});

describe('backfill progress', () => {
  it('plain lines in logs, a bar redrawn in place on a terminal, both with blocks/s, events/s and ETA', async () => {
    const lines: string[] = [];
    await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ stepBlocks: 2 }))], now: () => NOW, log: (l) => lines.push(l), progressIntervalMs: 1 }));
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(l, l).toMatch(/^anvil: backfill at block \d+ of \d+, \d+ blocks\/s, \d+ events\/s, \d+ of \d+ blocks done, \d+ pools, ETA (\d+ s|unknown)/);
    expect(lines[lines.length - 1]).toContain(' 0 s');
    const writes: string[] = [];
    const tty = { write: (chunk: string) => writes.push(chunk) } as unknown as NodeJS.WriteStream;
    await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ stepBlocks: 2 }))], now: () => NOW, progressBar: tty, progressIntervalMs: 1 }));
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) expect(w).toMatch(/^\ranvil \[[#.]{20}\] \d+% \d+ blocks\/s \d+ events\/s ETA/);
    expect(writes[writes.length - 1]).toMatch(/\[#{20}\] 100% .*\n$/);
  });
});

describe('reorganisations', () => {
  it('a block already read that the node replaces: the next step begins with a reorg to the last canonical block, then the canonical blocks', async () => {
    let clock = NOW;
    const s = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig())], now: () => clock, progressIntervalMs: 0 });
    await drain(s);
    const canonical = Number(await node.rpc<string>('eth_blockNumber'));
    const canonicalHash = (await node.pub.getBlock({ blockNumber: BigInt(canonical) })).hash;
    const snapshot = await node.rpc<string>('evm_snapshot');
    await at(T0 + 20 * MINUTE);
    await send(node, tok.usdc, ERC20(), 'transfer', [wethUsdc, 1n]);
    await at(T0 + 20 * MINUTE + 1);
    await send(node, wethUsdc, V2_PAIR.abi, 'sync');
    clock += 1;
    const batches = await s.advance(clock);
    expect(batches[0]!.events.map((e) => e.kind)).toEqual(['block', 'sync']);
    // The two blocks are replaced by two others (different timestamps, so different hashes).
    await node.rpc('evm_revert', [snapshot]);
    await at(T0 + 21 * MINUTE);
    await send(node, tok.usdc, ERC20(), 'transfer', [wethUsdc, 2n]);
    await at(T0 + 21 * MINUTE + 1);
    await send(node, wethUsdc, V2_PAIR.abi, 'sync');
    const [r0, r1] = await read<[bigint, bigint, number]>(node, wethUsdc, V2_PAIR.abi, 'getReserves');
    const syncBlock = await node.pub.getBlock({ blockNumber: BigInt(canonical + 2) });
    clock += 1;
    const after = await s.advance(clock);
    expect(plain(after[0]!.events)).toEqual(
      plain([
        { kind: 'reorg', toBlock: canonical, toHash: canonicalHash },
        { kind: 'block', number: canonical + 2, hash: syncBlock.hash, parentHash: syncBlock.parentHash, timestamp: T0 + 21 * MINUTE + 1 },
        { kind: 'sync', key: { blockNumber: canonical + 2, txIndex: 0, logIndex: 0 }, timestamp: T0 + 21 * MINUTE + 1, pool: wethUsdc.toLowerCase(), reserve0: r0, reserve1: r1 },
      ]),
    );
    expect(s.progress()[0]).toMatchObject({ reorgs: 1, lastReorgBlock: canonical });
    await node.rpc('evm_revert', [snapshot]);
  });

  it('blocks replaced while the follower is behind the head it saw last: the next read does not extend them, the step after rolls back, and the events end as those of the new chain', async () => {
    const before = await node.rpc<string>('evm_snapshot');
    try {
      const start = Number(await node.rpc<string>('eth_blockNumber')) + 1;
      let fork = '';
      for (let i = 0; i < 24; i++) {
        if (i === 8) fork = await node.rpc<string>('evm_snapshot');
        await at(T0 + 40 * MINUTE + i);
        await send(node, wethUsdc, V2_PAIR.abi, 'sync');
      }
      let clock = NOW;
      const s = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ logBatchBlocks: 2, stepBlocks: 4 }))], now: () => clock, progressIntervalMs: 0 });
      const got: { kind: string; number?: number; toBlock?: number; key?: { blockNumber: number } }[] = [];
      // Read into the blocks about to be replaced, not to the head.
      for (let i = 0; i < 1000 && s.progress()[0]!.nextBlock <= start + 12; i++) for (const b of await s.advance(NOW)) got.push(...(b.events as typeof got));
      expect(s.followers[0]!.caughtUp).toBe(false);
      expect(got.some((e) => e.kind === 'block' && e.number === start + 10)).toBe(true);
      // Blocks from start + 8 on, read already, replaced by others (other times, so other hashes), and more after them.
      await node.rpc('evm_revert', [fork]);
      for (let i = 0; i < 20; i++) {
        await at(T0 + 45 * MINUTE + i);
        await send(node, tok.usdc, ERC20(), 'transfer', [wethUsdc, BigInt(i + 1)]);
        await send(node, wethUsdc, V2_PAIR.abi, 'sync');
      }
      const head = Number(await node.rpc<string>('eth_blockNumber'));
      // A step read ahead while the blocks were being replaced may have seen a shorter chain: on to the head.
      for (let i = 0; i < 1000 && s.progress()[0]!.nextBlock <= head; i++, clock += 1) for (const b of await s.advance(clock)) got.push(...(b.events as typeof got));
      // What a consumer keeps: each reorg drops the events after its block.
      const blockOf = (e: (typeof got)[number]) => e.number ?? e.key?.blockNumber ?? -1;
      const kept: typeof got = [];
      for (const e of got) {
        if (e.kind !== 'reorg') kept.push(e);
        else kept.splice(0, kept.length, ...kept.filter((x) => blockOf(x) <= e.toBlock!));
      }
      expect(got.filter((e) => e.kind === 'reorg').map((e) => e.toBlock)).toEqual([start + 7]);
      const fresh = await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig())], now: () => NOW, progressIntervalMs: 0 }));
      expect(plain(kept)).toEqual(plain(fresh));
    } finally {
      await node.rpc('evm_revert', [before]);
    }
  }, 30_000);

  it('a fork older than every block hash kept stops the follower with ReorgDetectedError', async () => {
    const snapshot = await node.rpc<string>('evm_snapshot');
    const start = Number(await node.rpc<string>('eth_blockNumber')) + 1;
    await at(T0 + 30 * MINUTE);
    await send(node, wethUsdc, V2_PAIR.abi, 'sync');
    let clock = NOW + 10;
    const s = createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ startBlock: start }))], now: () => clock, progressIntervalMs: 0 });
    await drain(s);
    await node.rpc('evm_revert', [snapshot]);
    await at(T0 + 31 * MINUTE);
    await send(node, wethUsdc, V2_PAIR.abi, 'sync');
    clock += 1;
    const err = await Promise.resolve(s.advance(clock)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReorgDetectedError);
    expect((err as ReorgDetectedError).changedBlock).toBe(start);
    await node.rpc('evm_revert', [snapshot]);
  });
});

describe('deep history', () => {
  it('blocks more than 256 under the head are read without their headers, by the hash and time their logs carry: the events of a read with every header', async () => {
    const snapshot = await node.rpc<string>('evm_snapshot');
    try {
      // The blocks with logs sink deep under the head.
      await node.rpc('anvil_mine', [toHex(300), toHex(1)]);
      const head = Number(await node.rpc<string>('eth_blockNumber'));
      /** A proxy recording the blocks whose headers are asked for; `untimed` drops each log's blockTimestamp, as nodes that do not send it. */
      const proxy = async (untimed: boolean, asked: Set<number>) => {
        const server = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            const body = Buffer.concat(chunks).toString();
            const parsed = JSON.parse(body) as { method: string; params: unknown[] } | { method: string; params: unknown[] }[];
            for (const c of Array.isArray(parsed) ? parsed : [parsed]) if (c.method === 'eth_getBlockByNumber') asked.add(Number(c.params[0]));
            void fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
              let text = await r.text();
              if (untimed && !Array.isArray(parsed) && parsed.method === 'eth_getLogs') {
                const answer = JSON.parse(text) as { result: Record<string, unknown>[] };
                for (const l of answer.result) delete l.blockTimestamp;
                text = JSON.stringify(answer);
              }
              res.writeHead(r.status, { 'content-type': 'application/json' });
              res.end(text);
            });
          });
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
      };
      const read = async (untimed: boolean) => {
        const asked = new Set<number>();
        const { server, url } = await proxy(untimed, asked);
        try {
          const events = await drain(createEvmSource({ chains: [EvmChainSchema.parse(chainConfig({ rpcUrls: [url], logBatchBlocks: 7, stepBlocks: 20 }))], now: () => NOW, progressIntervalMs: 0 }));
          return { events: events as { kind: string; number?: number; parentHash?: string }[], asked };
        } finally {
          server.close();
        }
      };
      const timed = await read(false);
      const untimed = await read(true);
      const deepBlocks = untimed.events.filter((e) => e.kind === 'block' && e.number! <= head - 256).map((e) => e.number!);
      expect(deepBlocks.length).toBeGreaterThan(10);
      // Every log's block, hash and time as a read of every header gives them; a deep block's parent hash is not known.
      const withoutParents = (events: typeof timed.events) => plain(events.map((e) => (e.kind === 'block' ? { ...e, parentHash: undefined } : e)));
      expect(withoutParents(timed.events)).toEqual(withoutParents(untimed.events));
      for (const e of timed.events) if (e.kind === 'block') expect(e.parentHash === '').toBe(e.number! <= head - 256);
      // No header of a deep block with logs was asked for when the logs carry their times; each was without them.
      expect(deepBlocks.filter((n) => timed.asked.has(n))).toEqual([]);
      expect(deepBlocks.filter((n) => !untimed.asked.has(n))).toEqual([]);
    } finally {
      await node.rpc('evm_revert', [snapshot]);
    }
  }, 30_000);
});
