/**
 * `eth_getLogs` answers kept as bytes until their logs are asked for (log-answer.ts, readLogPage;
 * the follower reads its ranges ahead this way) against the answer parsed by JSON.parse: every
 * family's real answers from anvil (swaps through each family's contracts, several per transaction
 * and block), decoded by the family from both readings event for event; the same answers reshaped
 * (removed logs, data of odd lengths, `result` not last, logs of other shapes, broken answers); and
 * ranges the node refuses whole, split into several pages, through the RPC client over HTTP.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_FAMILIES, deployMarket, type BenchFamily, type Market } from '../bench/evm-backfill.js';
import type { ChainEvent } from '../engine/events/model.js';
import { FAMILIES } from '../engine/sources/evm/families/index.js';
import { readLogAnswer, readLogPage } from '../engine/sources/evm/log-answer.js';
import { createLogReader, logsOf } from '../engine/sources/evm/logs.js';
import { createRpcClient } from '../engine/sources/evm/rpc.js';
import { hexNumber, logIndexOf, logInt, logSigned, logWord, signed, topicAddress, word, type RpcLog } from '../engine/sources/evm/words.js';
import { startAnvil, logFields as fields, type Anvil } from './support/evm.js';

let node: Anvil;
/** Per family: its market and the raw bytes of the node's answer holding every log the source asks for. */
const chains = new Map<BenchFamily, { market: Market; from: number; to: number; answer: Buffer }>();

const getLogs = (from: number, to: number, filter: Market['filter'], id = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, address: filter.address, topics: [filter.topics0] }] });

async function post(url: string, body: string): Promise<Buffer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return Buffer.from(await res.arrayBuffer());
}

/**
 * Every engine event the family makes of these logs, in order: creations as the factory's family
 * reads them, then each log as its pool's family decodes it (a fresh decoding state per reading).
 */
function decodeAll(family: BenchFamily, market: Market, logs: readonly RpcLog[]): unknown[] {
  const fam = FAMILIES[market.factory.protocol];
  const decoder = fam.decoder?.() ?? null;
  const out: unknown[] = [];
  for (const l of logs) {
    const c = fam.factoryTopics.includes(l.topics[0]!) ? fam.creation(l, 3_000, 500) : null;
    if (c) out.push({ creation: c });
    const pool = fam.poolIdTopic !== undefined ? l.topics[fam.poolIdTopic]!.toLowerCase() : l.address.toLowerCase();
    const key = { blockNumber: hexNumber(l.blockNumber), txIndex: hexNumber(l.transactionIndex), logIndex: logIndexOf(l) };
    if (decoder) {
      const events: ChainEvent[] = [];
      decoder.decode(l, key, 1_700_000_000, pool, topicAddress, events);
      out.push(...events);
    } else {
      const ev = fam.decode(l, key, 1_700_000_000, pool, topicAddress);
      if (ev) out.push(ev);
    }
  }
  expect(out.length, family).toBeGreaterThan(0);
  return out;
}

beforeAll(async () => {
  const t0 = Math.floor(Date.now() / 1000) - 86_400;
  node = await startAnvil({ timestamp: t0, gasLimit: 100_000_000 });
  // Every family's market on one chain, one after the other; 2 transactions of 30 swaps each.
  for (const [k, family] of BENCH_FAMILIES.entries()) {
    const base = t0 + 1_000 * k;
    const market = await deployMarket(node, base, family);
    await market.churn(30, base + 100);
    await market.churn(30, base + 112);
    const to = Number(await node.rpc<string>('eth_blockNumber'));
    chains.set(family, { market, from: market.startBlock, to, answer: await post(node.url, getLogs(market.startBlock, to, market.filter)) });
  }
}, 600_000);

afterAll(async () => {
  await node?.stop();
});

describe('log pages: answers read when their logs are asked for', () => {
  it("every family's real answer: the same logs as JSON.parse reads, and the same events decoded from both", () => {
    expect([...chains.keys()]).toEqual([...BENCH_FAMILIES]);
    for (const [family, { market, answer }] of chains) {
      const parsed = (JSON.parse(answer.toString('utf8')) as { result: RpcLog[] }).result;
      // The swaps, and more than one log per transaction and per block.
      expect(parsed.length, family).toBeGreaterThanOrEqual(60);
      expect(new Set(parsed.map((l) => l.transactionHash)).size, family).toBeLessThan(parsed.length);
      const page = readLogPage(answer);
      expect(page, family).not.toBeNull();
      const lazy = page!.logs();
      expect(lazy.map(fields), family).toEqual(parsed.map(fields));
      expect(lazy.map(fields), family).toEqual(readLogAnswer(answer)!.result.map(fields));
      // Events: amounts, signs, prices, ticks, transactions and keys, digit for digit.
      const events = decodeAll(family, market, lazy);
      expect(events, family).toEqual(decodeAll(family, market, parsed));
      const swaps = events.filter((e) => (e as { kind?: string }).kind === 'swap').length;
      expect(swaps, family).toBe(60);
      // A page is read again on each call, with the same logs.
      expect(page!.logs().map(fields), family).toEqual(lazy.map(fields));
    }
  });

  it('removed logs, data of odd lengths and every data word: as JSON.parse and the data text read them', () => {
    const { answer } = chains.get('algebra')!;
    const parsed = (JSON.parse(answer.toString('utf8')) as { id: number; result: Record<string, unknown>[] }).result;
    const data = parsed[parsed.length - 1]!['data'] as string;
    // Every other log removed; data cut to odd numbers of digits, to a part of a word, to nothing, and lengthened.
    const cuts = [data.length - 1, data.length - 3, data.length - 63, data.length - 64, 67, 3, 2];
    const reshaped = parsed.map((l, i) => ({ ...l, removed: i % 2 === 1, ...(i < cuts.length ? { data: data.slice(0, cuts[i]) } : i === cuts.length ? { data: `${data}0` } : {}) }));
    const bytes = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 3, result: reshaped }));
    const lazy = readLogPage(bytes)!.logs();
    const eager = (JSON.parse(bytes.toString('latin1')) as { result: RpcLog[] }).result;
    expect(lazy.map(fields)).toEqual(eager.map(fields));
    expect(lazy.filter((l) => l.removed).length).toBe(Math.floor(parsed.length / 2));
    const outcome = (read: () => unknown) => {
      try {
        return String(read());
      } catch (err) {
        return `throws ${(err as Error).name}`;
      }
    };
    for (const [i, l] of lazy.entries()) {
      const d = eager[i]!.data;
      expect(logIndexOf(l)).toBe(hexNumber(eager[i]!.logIndex));
      for (let w = 0; w < 8; w++) {
        expect(outcome(() => logWord(l, w)), `${d} word ${w}`).toBe(outcome(() => word(d, w)));
        expect(outcome(() => logSigned(l, w)), `${d} word ${w}`).toBe(outcome(() => signed(word(d, w))));
        expect(outcome(() => logInt(l, w)), `${d} word ${w}`).toBe(outcome(() => Number(signed(word(d, w)))));
      }
    }
  });

  it('answers left to the other readers, and logs of other shapes read as JSON.parse reads them', () => {
    const { answer } = chains.get('uniswap_v2')!;
    const parsed = JSON.parse(answer.toString('utf8')) as { jsonrpc: string; id: number; result: Record<string, unknown>[] };
    // `result` before the other members, an error, no result, a batch, escapes, non-ASCII text: no page.
    const refused = [
      JSON.stringify({ result: parsed.result, id: parsed.id, jsonrpc: '2.0' }),
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"query returned more than 10000 results"}}',
      '{"jsonrpc":"2.0","id":1}',
      '{"jsonrpc":"2.0","id":1,"result":null}',
      '[{"jsonrpc":"2.0","id":1,"result":[]}]',
      JSON.stringify({ jsonrpc: '2.0', id: 1, note: 'a "quoted" word', result: parsed.result }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: parsed.result, note: 'café' }),
    ];
    for (const r of refused) expect(readLogPage(Buffer.from(r, 'utf8')), r.slice(0, 60)).toBeNull();
    // `result` first is still read from the bytes at once (readLogAnswer), as before.
    expect(readLogAnswer(Buffer.from(refused[0]!))!.result.map(fields)).toEqual((parsed.result as unknown as RpcLog[]).map(fields));
    // Logs of other shapes in an answer that ends with its result: the page reads the answer as JSON.
    const { blockHash: _h, ...missing } = parsed.result[0]!;
    const odd = [{ ...parsed.result[0]!, blockNumber: null, blockHash: null }, missing, { ...parsed.result[1]!, extra: { nested: [1, 2] } }, ...parsed.result.slice(2)];
    const oddBytes = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: odd }, null, 1));
    expect(readLogPage(oddBytes)!.logs()).toEqual(odd);
    expect(readLogPage(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[] }\n'))!.logs()).toEqual([]);
    // Broken answers that look like pages: their logs cannot be read, as JSON.parse cannot.
    for (const broken of ['{"jsonrpc":"2.0","id":1,"result":[{"address":"0x1"]}', '{"jsonrpc":"2.0","id":1,"result":[1,]]}', '{"jsonrpc":"2.0","id":1,"result":[]],"x":[]}']) {
      const page = readLogPage(Buffer.from(broken));
      expect(page, broken).not.toBeNull();
      expect(() => page!.logs(), broken).toThrow(/eth_getLogs/);
      expect(() => JSON.parse(broken)).toThrow();
    }
  });
});

describe('log pages through the RPC client over HTTP', () => {
  let proxy: Server;
  let url = '';
  /** Widest range the proxy lets through to the node; wider ones are refused as too many results. */
  const MAX_RANGE = 3;
  let refusals = 0;

  beforeAll(async () => {
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const call = JSON.parse(body) as { id: number; method: string; params: { fromBlock: string; toBlock: string }[] };
        res.setHeader('content-type', 'application/json');
        if (call.method === 'eth_getLogs' && hexNumber(call.params[0]!.toBlock) - hexNumber(call.params[0]!.fromBlock) + 1 > MAX_RANGE) {
          refusals++;
          return void res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32005, message: 'query returned more than 10000 results' } }));
        }
        post(node.url, body).then(
          (answer) => res.end(answer),
          () => res.destroy(),
        );
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
  });

  it('ranges split across pages: the logs of the pages, in order, are those of one answer of the node', async () => {
    const rpc = createRpcClient({ urls: [url], timeoutMs: 10_000, maxRetries: 0 });
    for (const family of ['balancer_v2', 'uniswap_v4'] as const) {
      const { from, to, market, answer } = chains.get(family)!;
      const parsed = (JSON.parse(answer.toString('utf8')) as { result: RpcLog[] }).result;
      const filter = { address: market.filter.address, topics0: market.filter.topics0 };
      const before = refusals;
      const reader = createLogReader(rpc, 64, 4);
      const pages = await reader.pages(from, to, filter);
      expect(refusals, family).toBeGreaterThan(before);
      expect(pages.length, family).toBeGreaterThanOrEqual(Math.ceil((to - from + 1) / MAX_RANGE));
      expect(logsOf(pages).map(fields), family).toEqual(parsed.map(fields));
      expect((await reader.read(from, to, filter)).map(fields), family).toEqual(parsed.map(fields));
      expect((await reader.range(from, to, filter)).map(fields), family).toEqual(parsed.map(fields));
      // The events decoded from the pages are those decoded from the one answer.
      expect(decodeAll(family, market, logsOf(pages)), family).toEqual(decodeAll(family, market, parsed));
    }
  });

  it('errors come from getLogs as from request; answers of every shape give the logs JSON.parse reads', async () => {
    const answers = [
      '{"jsonrpc":"2.0","id":1,"result":[]}',
      JSON.stringify({ result: [{ address: '0x1', topics: [], data: '0x', blockNumber: '0x1', blockHash: '0x2', transactionHash: '0x3', transactionIndex: '0x0', logIndex: '0x0' }], id: 1, jsonrpc: '2.0' }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: [{ address: '0x1', topics: [], data: '0x', blockNumber: null, blockHash: null, transactionHash: '0x3', transactionIndex: '0x0', logIndex: '0x0' }] }),
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"query returned more than 10000 results"}}',
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}',
      '{"jsonrpc":"2.0","id":1,"result":null}',
    ];
    let next = '';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end(next));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const rpc = createRpcClient({ urls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}`], timeoutMs: 5_000, maxRetries: 0 });
      const settle = async (p: () => Promise<unknown>) => {
        try {
          return { ok: await p() };
        } catch (err) {
          return { error: (err as Error).name, message: (err as Error).message };
        }
      };
      for (const a of answers) {
        next = a;
        const viaRequest = await settle(async () => (await rpc.request<RpcLog[] | null>('eth_getLogs', [{}]))?.map(fields) ?? null);
        const viaPage = await settle(async () => (await rpc.getLogs([{}])).logs().map(fields));
        const parsed = JSON.parse(a) as { result?: RpcLog[] };
        if ('ok' in viaRequest && Array.isArray(parsed.result)) {
          expect(viaPage, a).toEqual({ ok: parsed.result.map(fields) });
          expect(viaRequest, a).toEqual({ ok: parsed.result.map(fields) });
        } else if ('error' in viaRequest) expect(viaPage, a).toEqual(viaRequest);
        else expect(viaPage, a).toMatchObject({ error: 'RpcError', message: 'eth_getLogs: result is not a list of logs' });
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
