/**
 * `eth_getLogs` answers read from their bytes (engine/sources/evm/log-answer.ts) against JSON.parse:
 * real answers of anvil (token transfers, several logs per block, the node's own field order and
 * extra fields), the same answers reshaped (white space, keys reordered, numbers and null beside the
 * logs), and the shapes the reader leaves to JSON.parse (errors, escapes, non-ASCII text, null
 * fields of pending logs, a missing field, nested objects), each then answered by the RPC client
 * exactly as JSON.parse reads it, over a real HTTP server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLogAnswer } from '../engine/sources/evm/log-answer.js';
import { createRpcClient } from '../engine/sources/evm/rpc.js';
import { logIndexOf, logInt, logSigned, logWord, signed, word, type RpcLog } from '../engine/sources/evm/words.js';
import { deploy, fixtures, inOneBlock, mineAt, startAnvil, logFields as fields, type Anvil } from './support/evm.js';

let node: Anvil;
/** Raw bytes of a real eth_getLogs answer holding every Transfer log of the chain. */
let answer: Buffer;

beforeAll(async () => {
  const t0 = Math.floor(Date.now() / 1000) - 3_600;
  node = await startAnvil({ timestamp: t0 });
  const f = fixtures();
  await mineAt(node, t0 + 1);
  const token = await deploy(node, f.TestToken, ['USD Coin', 'USDC', 6, 10n ** 15n]);
  // Several transfers in one block (log indexes above 0), then single ones.
  const others = ['0x00000000000000000000000000000000000000a1', '0x00000000000000000000000000000000000000b2', '0x00000000000000000000000000000000000000c3'] as const;
  await inOneBlock(
    node,
    t0 + 10,
    others.map((to, i) => ({ address: token, abi: f.TestToken.abi, functionName: 'transfer', args: [to, BigInt(1_000 + i)] })),
  );
  await inOneBlock(node, t0 + 20, [{ address: token, abi: f.TestToken.abi, functionName: 'transfer', args: [others[0], 5n] }]);
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: 'latest', address: token }] }),
  });
  answer = Buffer.from(await res.arrayBuffer());
}, 60_000);

afterAll(async () => {
  await node?.stop();
});

describe('eth_getLogs answers read from their bytes', () => {
  it('a real answer of the node: every log and field as JSON.parse reads them', () => {
    const parsed = JSON.parse(answer.toString('utf8')) as { result: RpcLog[] };
    expect(parsed.result.length).toBeGreaterThanOrEqual(5);
    expect(new Set(parsed.result.map((l) => l.blockNumber)).size).toBeLessThan(parsed.result.length);
    const read = readLogAnswer(answer);
    expect(read).not.toBeNull();
    expect(read!.result.map(fields)).toEqual(parsed.result.map(fields));
  });

  it('white space, keys in another order, and numbers, booleans and null beside the logs', () => {
    const parsed = JSON.parse(answer.toString('utf8')) as { id: number; result: Record<string, unknown>[] };
    // Each log's keys reversed, with extra fields of other kinds; the answer pretty-printed.
    const reshaped = {
      result: parsed.result.map((l) => ({ extraNumber: -12.5e3, extraNull: null, extraTrue: true, ...Object.fromEntries(Object.entries(l).reverse()) })),
      id: parsed.id,
      jsonrpc: '2.0',
    };
    const bytes = Buffer.from(JSON.stringify(reshaped, null, 2));
    const read = readLogAnswer(bytes);
    expect(read).not.toBeNull();
    expect(read!.result.map(fields)).toEqual((parsed.result as unknown as RpcLog[]).map(fields));
    // No `removed` field: not removed; `removed: true` read as such.
    const bare = parsed.result.map(({ removed: _removed, ...l }) => l);
    expect(readLogAnswer(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: bare })))!.result.every((l) => l.removed === false)).toBe(true);
    const removed = parsed.result.map((l) => ({ ...l, removed: true }));
    expect(readLogAnswer(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: removed })))!.result.every((l) => l.removed === true)).toBe(true);
    expect(readLogAnswer(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[]}'))).toEqual({ result: [] });
  });

  it("data words and log indexes read from the answer's bytes: as the data's text reads them, for every shape of word", () => {
    const log = (JSON.parse(answer.toString('utf8')) as { result: Record<string, unknown>[] }).result[0]!;
    // Words of every length of significant digits, zero-padded (unsigned and positive) and f-padded
    // (negative), in both cases, ticks near the int24 bounds, and data with a digit that is none or
    // cut short (each reading must then fail as the string's does).
    const hex = '0123456789abcdefABCDEF';
    let seed = 7;
    const digit = () => hex[(seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % hex.length]!;
    const digits = (n: number) => Array.from({ length: n }, digit).join('');
    const words: string[] = [];
    for (let n = 0; n <= 64; n++) for (const pad of ['0', 'f', 'F']) words.push(pad.repeat(64 - n) + digits(n));
    // Negative words whose magnitude carries past 32 and 64 bits.
    for (const n of [8, 15, 16, 17, 32]) words.push('f'.repeat(64 - n) + '0'.repeat(n));
    for (const tick of [0, 1, -1, 887_272, -887_272, 2 ** 47, -(2 ** 47), 2 ** 48, -(2 ** 48) - 1]) words.push(BigInt.asUintN(256, BigInt(tick)).toString(16).padStart(64, '0'));
    const datas: string[] = [];
    for (let i = 0; i < words.length; i += 5) datas.push(`0x${words.slice(i, i + 5).join('')}`);
    datas.push(`0x${words[70]!.slice(0, 30)}g${words[70]!.slice(31)}`, `0x${words[3]!}${words[90]!.slice(0, 40)}`, '0x');
    const outcome = (read: () => unknown) => {
      try {
        return String(read());
      } catch (err) {
        return `throws ${(err as Error).name}`;
      }
    };
    let compared = 0;
    for (const [k, data] of datas.entries()) {
      const logIndex = `0x${(k * 37).toString(16)}`;
      const read = readLogAnswer(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: [{ ...log, data, logIndex }] })))!.result[0]!;
      expect(read.data).toBe(data);
      expect(read.logIndex).toBe(logIndex);
      expect(logIndexOf(read)).toBe(k * 37);
      for (let i = 0; i < 6; i++) {
        expect(outcome(() => logWord(read, i)), `${data} word ${i}`).toBe(outcome(() => word(data, i)));
        expect(outcome(() => logSigned(read, i)), `${data} word ${i}`).toBe(outcome(() => signed(word(data, i))));
        expect(outcome(() => logInt(read, i)), `${data} word ${i}`).toBe(outcome(() => Number(signed(word(data, i)))));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(200);
  });

  it('shapes left to JSON.parse: errors, escapes, non-ASCII text, null fields, a missing field, nested objects, trailing bytes', () => {
    const log = (JSON.parse(answer.toString('utf8')) as { result: Record<string, unknown>[] }).result[0]!;
    const withLog = (l: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 1, result: [l] });
    const { blockHash: _blockHash, ...missing } = log;
    const cases = [
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"query returned more than 10000 results"}}',
      '{"jsonrpc":"2.0","id":1,"result":null}',
      withLog({ ...log, note: 'a "quoted" word' }),
      withLog({ ...log, note: 'café' }),
      withLog({ ...log, blockNumber: null, blockHash: null }),
      withLog(missing),
      withLog({ ...log, extra: { nested: 1 } }),
      `${withLog(log)} x`,
      '[{"jsonrpc":"2.0","id":1,"result":[]}]',
    ];
    for (const c of cases) expect(readLogAnswer(Buffer.from(c, 'utf8')), c).toBeNull();
  });
});

describe('the RPC client over HTTP', () => {
  let server: Server;
  let url: string;
  /** The next answer the server sends. */
  let body = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('answers eth_getLogs as JSON.parse reads the answer, whichever reader takes it; errors stay errors', async () => {
    const rpc = createRpcClient({ urls: [url], timeoutMs: 5_000, maxRetries: 0 });
    const parsed = JSON.parse(answer.toString('utf8')) as { result: Record<string, unknown>[] };
    const log = parsed.result[0]!;
    // An id is not checked for single calls; the answers are the server's, whatever the request's id.
    for (const result of [parsed.result, [{ ...log, note: 'café \\u00e9' }], [{ ...log, blockNumber: null }]]) {
      body = JSON.stringify({ jsonrpc: '2.0', id: 1, result });
      const got = await rpc.request<RpcLog[]>('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1' }]);
      expect(got.map((l) => ({ ...fields(l) }))).toEqual((JSON.parse(body) as { result: RpcLog[] }).result.map(fields));
    }
    body = '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"query returned more than 10000 results"}}';
    await expect(rpc.request('eth_getLogs', [{}])).rejects.toMatchObject({ name: 'RangeTooLargeError', code: -32005 });
    // Other methods: text beyond ASCII is read as UTF-8.
    body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'Café ☕' });
    expect(await rpc.request<string>('eth_call', [])).toBe('Café ☕');
  });
});
