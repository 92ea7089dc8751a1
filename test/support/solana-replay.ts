/**
 * A Solana JSON-RPC node replaying recorded mainnet transactions (../shared/fixtures/solana) as a
 * chain of its own, over real HTTP, so the Solana source runs unchanged against it: `getSlot`,
 * `getBlocks`, `getBlocksWithLimit`, `getBlock` (full or no transaction details), `getBlockTime`,
 * `getFirstAvailableBlock`, `getTransaction`, `getAccountInfo` and `getMultipleAccounts` (the
 * recorded account dumps, and any `accounts` given; null for any other account).
 *
 * The replay chain: transaction i sits alone (or `perBlock` of them together) in slot
 * `firstSlot + 2i` with block time `firstTime + spacingSeconds * i`; every odd slot between them is
 * skipped (getBlock answers -32007).
 * Everything of a transaction is served as recorded except where it sits (slot, block time), and in
 * the encoding it was recorded in (most `json`, a few `jsonParsed`; the source reads both).
 *
 * `fork(fromSlot, replace)`: the blocks from `fromSlot` on are replaced by a new fork: new block
 * hashes (chained from the last block kept) and, per block, the transactions `replace` returns.
 *
 * PubSub (`pubsub`): a WebSocket endpoint (uWebSockets.js) at the RPC port plus one, as Agave
 * validators serve it, offering `blockSubscribe` and `slotSubscribe` (`block`), only
 * `slotSubscribe` (`slot`, blockSubscribe answered -32601 as by a node without block
 * subscriptions), or neither (`refuse`: every subscription answered -32601). Absent: no endpoint
 * (the socket is refused). Nothing is announced by itself: `announce()` sends the notification of
 * the node's slot to every subscription (`blockNotification` without transactions, or
 * `slotNotification`); `dropSockets()` closes every socket, and while `pubsubDown` a socket is
 * closed as soon as it opens.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import uWS from 'uWebSockets.js';
import type { us_listen_socket, WebSocket } from 'uWebSockets.js';
import type { RpcTransaction } from '../../engine/sources/solana/transaction.js';

/** The project's root: the nearest folder up from here holding package.json (from test/support, or compiled from dist/test/support). */
function projectRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** The recorded transactions beside the project (`../shared/fixtures/solana`), or where DEXDATA_SOLANA_FIXTURES says. */
export const SOLANA_FIXTURES = process.env['DEXDATA_SOLANA_FIXTURES'] ?? join(projectRoot(), '..', 'shared', 'fixtures', 'solana');

export interface FixtureTransaction {
  readonly signature: string;
  readonly file: string;
  readonly recordedSlot: number;
  readonly tx: RpcTransaction;
}

/** The recorded transactions, by recorded slot; null (with the reason) when the test data is absent. */
export function loadFixtureTransactions(dir = SOLANA_FIXTURES): FixtureTransaction[] | string {
  const txDir = join(dir, 'transactions');
  if (!existsSync(txDir)) return `the recorded Solana transactions are not at ${txDir}`;
  const out: FixtureTransaction[] = [];
  for (const f of readdirSync(txDir)) {
    if (!f.endsWith('.json')) continue;
    const tx = JSON.parse(readFileSync(join(txDir, f), 'utf8')) as RpcTransaction;
    out.push({ signature: tx.transaction.signatures[0]!, file: f, recordedSlot: tx.slot ?? 0, tx });
  }
  return out.sort((a, b) => a.recordedSlot - b.recordedSlot);
}

/** The recorded account dumps, by address (the newest capture of an address captured twice). */
function loadAccounts(dir: string): Map<string, unknown> {
  const out = new Map<string, { slot: number; value: unknown }>();
  const accDir = join(dir, 'accounts');
  if (!existsSync(accDir)) return new Map();
  for (const f of readdirSync(accDir)) {
    if (!f.endsWith('.json')) continue;
    const [address, tag] = f.replace(/\.json$/, '').split('.');
    const j = JSON.parse(readFileSync(join(accDir, f), 'utf8')) as { result?: { value?: unknown }; account?: unknown };
    const value = j.result?.value ?? j.account ?? null;
    const slot = tag !== undefined && /^\d+$/.test(tag) ? Number(tag) : 0;
    const had = out.get(address!);
    if (!had || slot >= had.slot) out.set(address!, { slot, value });
  }
  return new Map([...out].map(([k, v]) => [k, v.value]));
}

interface ReplayBlock {
  readonly slot: number;
  readonly time: number;
  hash: string;
  parentHash: string;
  parentSlot: number;
  txs: RpcTransaction[];
}

export interface ReplayOptions {
  readonly transactions: readonly FixtureTransaction[];
  readonly firstSlot?: number;
  readonly firstTime: number;
  readonly spacingSeconds?: number;
  /** Transactions per block (1 unless told; a benchmark fills blocks as a busy slot holds them). */
  readonly perBlock?: number;
  readonly fixtures?: string;
  /** Accounts served beside the recorded ones (getAccountInfo's `value`, base64 data), by address. */
  readonly accounts?: ReadonlyMap<string, unknown>;
  /** The PubSub endpoint at the RPC port plus one: which subscriptions it offers (absent: none listens). */
  readonly pubsub?: 'block' | 'slot' | 'refuse';
}

export interface ReplayNode {
  readonly url: string;
  /** Slots that hold a block, in order. */
  readonly slots: readonly number[];
  /** The slot of each transaction (by signature). */
  readonly slotOf: ReadonlyMap<string, number>;
  readonly timeOf: ReadonlyMap<number, number>;
  /** The node's slot (getSlot); blocks after it are not served yet. */
  head: number;
  /** Requests answered, by method (PubSub methods included). */
  readonly calls: Map<string, number>;
  /** The PubSub endpoint (ws://, the RPC port plus one); '' without one. */
  readonly wsUrl: string;
  /** Sends the notification of the node's slot to every live subscription; how many were sent. */
  announce(): number;
  /** Live subscriptions, by method. */
  subscriptions(): { block: number; slot: number };
  /** Closes every PubSub socket (the node keeps listening). */
  dropSockets(): void;
  /** While true, every PubSub socket opened is closed at once (an endpoint that is down). */
  pubsubDown: boolean;
  fork(fromSlot: number, replace: (slot: number, txs: readonly RpcTransaction[]) => RpcTransaction[]): void;
  /** Makes every block's answer text ahead (a benchmark then times the reader, not the node's serialisation). */
  prepare(): void;
  close(): Promise<void>;
}

const b58 = getBase58Decoder();
const hashOf = (text: string): string => b58.decode(createHash('sha256').update(text).digest());

export async function startReplayNode(options: ReplayOptions): Promise<ReplayNode> {
  const firstSlot = options.firstSlot ?? 300_000_000;
  const spacing = options.spacingSeconds ?? 20;
  const accounts = loadAccounts(options.fixtures ?? SOLANA_FIXTURES);
  for (const [k, v] of options.accounts ?? []) accounts.set(k, v);
  const blocks = new Map<number, ReplayBlock>();
  const slots: number[] = [];
  const slotOf = new Map<string, number>();
  const timeOf = new Map<number, number>();
  let parent = { slot: firstSlot - 1, hash: hashOf('genesis') };
  const perBlock = options.perBlock ?? 1;
  for (let i = 0; i * perBlock < options.transactions.length; i++) {
    const slot = firstSlot + 2 * i;
    const time = options.firstTime + spacing * i;
    const hash = hashOf(`block ${slot}`);
    const group = options.transactions.slice(i * perBlock, (i + 1) * perBlock);
    blocks.set(slot, { slot, time, hash, parentHash: parent.hash, parentSlot: parent.slot, txs: group.map((t) => t.tx) });
    slots.push(slot);
    for (const t of group) slotOf.set(t.signature, slot);
    timeOf.set(slot, time);
    parent = { slot, hash };
  }
  const calls = new Map<string, number>();
  let forks = 0;
  /** Each block's answer as JSON text, by slot, transaction details and fork. */
  const blockTexts = new Map<string, string>();

  const node: ReplayNode = {
    url: '',
    slots,
    slotOf,
    timeOf,
    head: slots[slots.length - 1] ?? firstSlot,
    calls,
    fork(fromSlot, replace) {
      forks++;
      let prev: ReplayBlock | undefined;
      for (const s of slots) {
        const b = blocks.get(s)!;
        if (s < fromSlot) {
          prev = b;
          continue;
        }
        b.hash = hashOf(`block ${s} fork ${forks}`);
        if (prev) b.parentHash = prev.hash;
        b.txs = replace(s, b.txs);
        prev = b;
      }
    },
    prepare() {
      for (const s of slots) blockTexts.set(`${s} full ${forks}`, JSON.stringify(blockAnswer(s, 'full')));
    },
    wsUrl: '',
    announce() {
      let sent = 0;
      const b = blocks.get(node.head);
      for (const sub of subs.values()) {
        const result =
          sub.method === 'slotSubscribe'
            ? { parent: b?.parentSlot ?? node.head - 1, root: Math.max(0, node.head - 32), slot: node.head }
            : { context: { slot: node.head }, value: { slot: node.head, block: blockAnswer(node.head, 'none') ?? null, err: null } };
        const method = sub.method === 'slotSubscribe' ? 'slotNotification' : 'blockNotification';
        sub.ws.send(JSON.stringify({ jsonrpc: '2.0', method, params: { result, subscription: sub.id } }));
        sent++;
      }
      return sent;
    },
    subscriptions() {
      let block = 0;
      let slot = 0;
      for (const s of subs.values()) if (s.method === 'slotSubscribe') slot++;
      else block++;
      return { block, slot };
    },
    pubsubDown: false,
    dropSockets() {
      for (const ws of [...sockets]) ws.close();
    },
    close: async () => {
      for (const ws of [...sockets]) ws.close();
      if (listenToken) uWS.us_listen_socket_close(listenToken);
      listenToken = null;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  /** PubSub: live subscriptions by id, and the open sockets. */
  const subs = new Map<number, { id: number; method: string; ws: WebSocket<unknown> }>();
  const sockets = new Set<WebSocket<unknown>>();
  let nextSub = 1;
  let listenToken: us_listen_socket | null = null;

  const blockAnswer = (slot: number, details: string): unknown => {
    const b = blocks.get(slot);
    if (!b || slot > node.head) return undefined;
    return {
      blockhash: b.hash,
      previousBlockhash: b.parentHash,
      parentSlot: b.parentSlot,
      blockTime: b.time,
      blockHeight: slots.indexOf(slot) + 1,
      ...(details === 'none' ? {} : { transactions: b.txs.map((tx) => ({ transaction: tx.transaction, meta: tx.meta, version: tx.version ?? 'legacy' })) }),
    };
  };

  const answer = (method: string, params: unknown[]): { result?: unknown; text?: string; error?: { code: number; message: string } } => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    switch (method) {
      case 'getSlot':
        return { result: node.head };
      case 'getBlocks': {
        const [start, end] = params as [number, number | undefined];
        const last = Math.min(end ?? node.head, node.head);
        return { result: slots.filter((s) => s >= start && s <= last) };
      }
      case 'getBlocksWithLimit': {
        const [start, limit] = params as [number, number];
        return { result: slots.filter((s) => s >= start && s <= node.head).slice(0, limit) };
      }
      case 'getFirstAvailableBlock':
        return { result: slots[0] ?? 0 };
      case 'getBlockTime': {
        const [slot] = params as [number];
        const b = blocks.get(slot);
        if (!b || slot > node.head) return { error: { code: -32009, message: `Slot ${slot} was skipped, or missing in long-term storage` } };
        return { result: b.time };
      }
      case 'getBlock': {
        const [slot, opts] = params as [number, { transactionDetails?: string } | undefined];
        const details = opts?.transactionDetails ?? 'full';
        // A block's answer is made once per fork (its JSON text kept): the node's own cost stays out of a benchmark's figures.
        const key = `${slot} ${details} ${forks}`;
        let text = blockTexts.get(key);
        if (text === undefined) {
          const r = blockAnswer(slot, details);
          if (r === undefined) return { error: { code: -32007, message: `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot` } };
          text = JSON.stringify(r);
          blockTexts.set(key, text);
        }
        if (slot > node.head) return { error: { code: -32007, message: `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot` } };
        return { text };
      }
      case 'getTransaction': {
        const [sig] = params as [string];
        const slot = slotOf.get(sig);
        const b = slot !== undefined ? blocks.get(slot) : undefined;
        const tx = b?.txs.find((t) => t.transaction.signatures[0] === sig);
        return { result: tx && b && b.slot <= node.head ? { ...tx, slot: b.slot, blockTime: b.time } : null };
      }
      case 'getAccountInfo': {
        const [key] = params as [string];
        return { result: { context: { slot: node.head }, value: accounts.get(key) ?? null } };
      }
      case 'getMultipleAccounts': {
        const [keys] = params as [string[]];
        return { result: { context: { slot: node.head }, value: keys.map((k) => accounts.get(k) ?? null) } };
      }
      default:
        return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  };

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      let out: string;
      try {
        const j = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] } | { id: unknown; method: string; params?: unknown[] }[];
        const one = (r: { id: unknown; method: string; params?: unknown[] }): string => {
          const a = answer(r.method, r.params ?? []);
          const head = `{"jsonrpc":"2.0","id":${JSON.stringify(r.id ?? null)},`;
          return a.text !== undefined ? `${head}"result":${a.text}}` : `${head}${JSON.stringify(a).slice(1)}`;
        };
        out = Array.isArray(j) ? `[${j.map(one).join(',')}]` : one(j);
      } catch {
        out = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(out);
    });
  });
  /** One PubSub request (subscribe, unsubscribe; kit's keep-alive `ping` has no id and gets no answer). */
  const pubsubAnswer = (ws: WebSocket<unknown>, text: string): string | null => {
    let r: { id?: unknown; method?: string; params?: unknown[] };
    try {
      r = JSON.parse(text) as typeof r;
    } catch {
      return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (r.id === undefined || typeof r.method !== 'string') return null;
    const method = r.method;
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const reply = (body: object) => JSON.stringify({ jsonrpc: '2.0', id: r.id, ...body });
    const offered = options.pubsub === 'block' ? ['blockSubscribe', 'slotSubscribe'] : options.pubsub === 'slot' ? ['slotSubscribe'] : [];
    if (method.endsWith('Unsubscribe')) {
      const id = Number((r.params ?? [])[0]);
      return reply({ result: subs.delete(id) });
    }
    if (!offered.includes(method)) return reply({ error: { code: -32601, message: 'Method not found' } });
    const id = nextSub++;
    subs.set(id, { id, method, ws });
    return reply({ result: id });
  };

  // The RPC port, and the PubSub endpoint at the port after it when one is asked for (both free).
  for (let attempt = 0; ; attempt++) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    (node as { url: string }).url = `http://127.0.0.1:${port}`;
    if (options.pubsub === undefined) return node;
    const app = uWS.App().ws('/*', {
      open: (ws) => {
        if (node.pubsubDown) return ws.close();
        sockets.add(ws);
      },
      message: (ws, message) => {
        const out = pubsubAnswer(ws, Buffer.from(message).toString('utf8'));
        if (out !== null) ws.send(out);
      },
      close: (ws) => {
        sockets.delete(ws);
        for (const [id, s] of subs) if (s.ws === ws) subs.delete(id);
      },
    });
    const token = await new Promise<us_listen_socket | false>((resolve) => app.listen('127.0.0.1', port + 1, resolve));
    if (token) {
      listenToken = token;
      (node as { wsUrl: string }).wsUrl = `ws://127.0.0.1:${port + 1}`;
      return node;
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (attempt >= 20) throw new Error('no free port after the RPC port for the PubSub endpoint');
  }
}
