/**
 * Solana new slots by subscription: the real service (`dexdata serve`) follows the replay node of
 * the recorded mainnet transactions with a poll interval of ten minutes, so that only the node's
 * PubSub announcement can have it read a new block within the test. A block the node has but has
 * not announced is not read; once announced, its swaps are served over REST, with the amounts,
 * tokens and pool solana-dex-parser (an independent decoder) reads in the recorded transaction.
 * This with `blockSubscribe` and with a node that offers only `slotSubscribe`, the endpoint found by
 * the default rule (the RPC port plus one). A node without subscriptions (every subscription refused,
 * or no PubSub endpoint at all) is followed by polling; a subscription lost (the sockets closed) is
 * followed by polling until the socket is opened again. /health says which of them is in use.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DexParser } from 'solana-dex-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startService, type RunningService } from './support/service.js';
import { loadFixtureTransactions, startReplayNode, type FixtureTransaction, type ReplayNode } from './support/solana-replay.js';

const loaded = loadFixtureTransactions();
const skip = typeof loaded === 'string' ? loaded : null;
if (skip) console.log(`skipping the Solana subscription test: ${skip}`);

const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
/** The families the source decodes, as solana-dex-parser names them. */
const AMMS = new Set(['RaydiumV4', 'RaydiumCPMM', 'RaydiumCL', 'Orca', 'MeteoraDLMM', 'MeteoraDamm', 'MeteoraDammV2', 'Pumpfun', 'Pumpswap']);
/** The poll interval every service here is given: far longer than any test waits. */
const POLL_MS = 600_000;
const SPACING_S = 20;
/** The replay node announces only when told: a subscription is not taken as dead for its silence unless a test asks. */
const SILENCE_MS = 600_000;

interface Trade {
  readonly mintIn: string;
  readonly amountIn: bigint;
  readonly mintOut: string;
  readonly amountOut: bigint;
}
const key = (t: Trade) => `${t.mintIn} ${t.amountIn} ${t.mintOut} ${t.amountOut}`;

/** A decimal string back to raw units. */
function raw(text: string, decimals: number): bigint {
  const neg = text.startsWith('-');
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.');
  const v = BigInt(i!) * 10n ** BigInt(decimals) + BigInt((f + '0'.repeat(decimals)).slice(0, decimals) || '0');
  return neg ? -v : v;
}

const parser = new DexParser();
/** A transaction's swaps of the decoded families as solana-dex-parser reads them. */
function parsed(t: FixtureTransaction): Trade[] {
  const trades = parser.parseAll(t.tx as never, { tryUnknowDEX: false }).trades as unknown as { amm: string; inputToken: { mint: string; amountRaw: string }; outputToken: { mint: string; amountRaw: string } }[];
  return trades.filter((x) => AMMS.has(x.amm)).map((x) => ({ mintIn: x.inputToken.mint, amountIn: BigInt(x.inputToken.amountRaw), mintOut: x.outputToken.mint, amountOut: BigInt(x.outputToken.amountRaw) }));
}

/** Transactions whose swaps are all plain (no Token-2022 mint, whose transfer fees make the pool's amounts differ from the trader's). */
function plain(t: FixtureTransaction): boolean {
  const mints = new Set([...(t.tx.meta?.preTokenBalances ?? []), ...(t.tx.meta?.postTokenBalances ?? [])].filter((b) => b.programId === TOKEN_2022).map((b) => b.mint));
  const trades = parsed(t);
  return trades.length > 0 && trades.every((x) => !mints.has(x.mintIn) && !mints.has(x.mintOut));
}

interface Served {
  readonly node: ReplayNode;
  readonly service: RunningService;
  /** The paid REST listener (no answer cache) and its key. */
  readonly url: string;
  readonly key: string;
  readonly dir: string;
}

/**
 * The replay node (with `pubsub`) holding back the last `held` blocks, and the real service
 * following it from its first slot with the given Solana settings.
 */
async function serve(txs: readonly FixtureTransaction[], held: number, pubsub: 'block' | 'slot' | 'refuse' | undefined, settings: Record<string, unknown>): Promise<Served> {
  const node = await startReplayNode({ transactions: txs, firstTime: Math.floor(Date.now() / 1000) - 3_600, spacingSeconds: SPACING_S, ...(pubsub ? { pubsub } : {}) });
  node.head = node.slots[node.slots.length - 1 - held]!;
  const dir = mkdtempSync(join(tmpdir(), 'solana-subscribe-'));
  const data = join(dir, 'data');
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ source: 'evm', solana: [{ rpcUrls: [node.url], startSlot: node.slots[0], pollIntervalMs: POLL_MS, wsSilenceMs: SILENCE_MS, ...settings }] }));
  const apiKey = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', data], { encoding: 'utf8' }))![1]!;
  const service = await startService(['--config', config, '--data-dir', data]);
  await service.waitFor(/caught up/, 60_000);
  const line = await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/);
  return { node, service, url: `http://127.0.0.1:${/:(\d+)$/.exec(line)![1]}`, key: apiKey, dir };
}

async function close(s: Served | undefined): Promise<void> {
  if (!s) return;
  await s.service.stop();
  await s.node.close();
  rmSync(s.dir, { recursive: true, force: true });
}

async function get(s: Served, path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(s.url + path, { headers: { authorization: s.key } });
  return { status: r.status, body: await r.json() };
}

async function health(s: Served): Promise<Record<string, any>> {
  const r = await fetch(`${s.service.url}/health`);
  return ((await r.json()) as { chains: Record<string, any>[] }).chains[0]!;
}

/** Every served swap, as trades (what went into the pool, what came out), by transaction. */
async function servedTrades(s: Served): Promise<Map<string, Trade[]>> {
  const out = new Map<string, Trade[]>();
  const search = await get(s, '/networks/solana/pools/search?limit=100');
  expect(search.status).toBe(200);
  for (const p of search.body.results as { id: string }[]) {
    const details = await get(s, `/networks/solana/pools/${p.id}`);
    expect(details.status, p.id).toBe(200);
    const [t0, t1] = details.body.tokens as { id: string; decimals: number }[];
    const r = await get(s, `/networks/solana/pools/${p.id}/transactions?limit=100`);
    for (const x of r.body as Record<string, string>[]) {
      if (x['type'] !== 'swap') continue;
      const a0 = raw(x['amount_0']!, t0!.decimals);
      const a1 = raw(x['amount_1']!, t1!.decimals);
      const trade = a0 > 0n ? { mintIn: t0!.id, amountIn: a0, mintOut: t1!.id, amountOut: -a1 } : { mintIn: t1!.id, amountIn: a1, mintOut: t0!.id, amountOut: -a0 };
      const sig = x['transaction_hash']!;
      out.set(sig, [...(out.get(sig) ?? []), trade]);
    }
  }
  return out;
}

/** Waits (up to 30 s: the next poll is ten minutes away) until the service has read the block at `slot` (/health), then reads what it serves. */
async function until(s: Served, sig: string): Promise<Map<string, Trade[]>> {
  const deadline = Date.now() + 30_000;
  const slot = s.node.slotOf.get(sig)!;
  const late = () => new Error(`timed out waiting for slot ${slot}; output:\n${s.service.output()}`);
  while ((await health(s))['next_block'] <= slot) {
    if (Date.now() > deadline) throw late();
    await new Promise((r) => setTimeout(r, 50));
  }
  // Read by the source: served once ingested.
  for (;;) {
    const served = await servedTrades(s);
    if (served.has(sig)) return served;
    if (Date.now() > deadline) throw late();
    await new Promise((r) => setTimeout(r, 200));
  }
}

const sorted = (l: readonly Trade[]) => l.map(key).sort();

/** A transaction's served swaps against the independent decoder's: the same trades (a Token-2022 transfer fee aside: as many). */
function expectSame(served: ReadonlyMap<string, Trade[]>, t: FixtureTransaction, want: readonly Trade[]): void {
  const got = served.get(t.signature) ?? [];
  if (plain(t)) expect(sorted(got), t.signature).toEqual(sorted(want));
  else expect(got.length, t.signature).toBe(want.length);
}

describe.skipIf(skip !== null)('Solana: new slots as the node announces them', () => {
  const all = skip ? [] : (loaded as FixtureTransaction[]);
  // Three transactions with plain swaps last: the blocks held back.
  const late = all.filter(plain).slice(-3);
  const txs = [...all.filter((t) => !late.includes(t)), ...late];
  const expected = new Map(txs.map((t) => [t.signature, parsed(t)]));

  describe.each([
    ['blockSubscribe', 'block', 'block_subscription'],
    ['only slotSubscribe', 'slot', 'slot_subscription'],
  ] as const)('a node offering %s', (_name, pubsub, mode) => {
    let s: Served | undefined;
    beforeAll(async () => {
      s = await serve(txs, 2, pubsub, {});
    }, 90_000);
    afterAll(() => close(s));

    it('subscribes at the RPC port plus one, and /health says so', async () => {
      await s!.service.waitFor(new RegExp(`solana: ${pubsub}Subscribe at ${s!.node.wsUrl.replace(/[.]/g, '\\.')}`), 20_000);
      const h = await health(s!);
      expect([h['follow'], h['state'], h['subscription_last_error']]).toEqual([mode, 'live', null]);
      expect(s!.node.subscriptions()).toEqual(pubsub === 'block' ? { block: 1, slot: 0 } : { block: 0, slot: 1 });
    });

    it('a new block is read when announced, not before: its swaps served with the independent decoder\'s amounts', async () => {
      const first = await servedTrades(s!);
      // Everything up to the node's slot, each swap once.
      for (const t of txs.slice(0, -2)) expectSame(first, t, expected.get(t.signature)!);
      const [next, last] = txs.slice(-2).map((t) => t.signature);
      expect(first.has(next!) || first.has(last!)).toBe(false);

      // The node has the next block but has not announced it: with the poll ten minutes away, it is not read.
      const calls = s!.node.calls.get('getSlot') ?? 0;
      s!.node.head = s!.node.slotOf.get(next!)!;
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await servedTrades(s!)).has(next!)).toBe(false);
      expect(s!.node.calls.get('getSlot') ?? 0).toBe(calls);

      // Announced: read at once.
      expect(s!.node.announce()).toBe(1);
      const served = await until(s!, next!);
      expect(sorted(served.get(next!)!)).toEqual(sorted(expected.get(next!)!));

      // The last block, announced as soon as the node has it.
      s!.node.head = s!.node.slotOf.get(last!)!;
      s!.node.announce();
      const end = await until(s!, last!);
      // No block lost or read twice: every transaction's swaps once, as the independent decoder reads them.
      for (const t of txs) expectSame(end, t, expected.get(t.signature)!);
      const h = await health(s!);
      expect([h['follow'], h['head_block'], h['next_block'], h['subscription_notifications']]).toEqual([mode, s!.node.head, s!.node.head + 1, 2]);
    });
  });

  describe.each([
    ['refuses every subscription', 'refuse'],
    ['has no PubSub endpoint', undefined],
  ] as const)('a node that %s', (_name, pubsub) => {
    let s: Served | undefined;
    beforeAll(async () => {
      s = await serve(txs, 1, pubsub, { pollIntervalMs: 200 });
    }, 90_000);
    afterAll(() => close(s));

    it('is followed by polling, and /health says so', async () => {
      const last = txs.at(-1)!.signature;
      expect((await servedTrades(s!)).has(last)).toBe(false);
      s!.node.head = s!.node.slots.at(-1)!;
      const served = await until(s!, last!);
      for (const t of txs) expectSame(served, t, expected.get(t.signature)!);
      const h = await health(s!);
      expect(h['follow']).toBe('polling');
      expect(h['subscription_notifications']).toBe(0);
      expect(h['subscription_last_error']).toMatch(pubsub === 'refuse' ? /method not found/i : /.+/);
      expect(s!.service.output()).toMatch(/solana: no subscription \(.+\); polling, the socket is tried again in/);
      if (pubsub === 'refuse') expect(s!.node.calls.get('slotSubscribe') ?? 0).toBeGreaterThanOrEqual(1);
    });
  });

  describe('a subscription lost', () => {
    let s: Served | undefined;
    beforeAll(async () => {
      s = await serve(txs, 2, 'slot', { pollIntervalMs: 200 });
      await s.service.waitFor(/solana: slotSubscribe at /, 20_000);
    }, 90_000);
    afterAll(() => close(s));

    it('falls back to polling while the socket is down, then subscribes again', async () => {
      const [next, last] = txs.slice(-2).map((t) => t.signature);
      // The node's PubSub goes down (its sockets closed, new ones closed at once), then the node has the next block: polling reads it.
      s!.node.pubsubDown = true;
      s!.node.dropSockets();
      s!.node.head = s!.node.slotOf.get(next!)!;
      const served = await until(s!, next!);
      expect(sorted(served.get(next!)!)).toEqual(sorted(expected.get(next!)!));
      expect((await health(s!))['follow']).toBe('polling');
      // The PubSub is back: the socket is opened again (0.5 s after the loss, then twice as long each time) and the subscription is up.
      s!.node.pubsubDown = false;
      const deadline = Date.now() + 20_000;
      while (s!.node.subscriptions().slot < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(s!.node.subscriptions().slot).toBe(1);
      await new Promise((r) => setTimeout(r, 200));
      const h = await health(s!);
      expect([h['follow'], h['subscription_fallbacks']]).toEqual(['slot_subscription', 1]);
      expect(s!.service.output()).toMatch(/solana: no subscription \(.+\); polling, the socket is tried again in 0\.5 s"/);
      s!.node.head = s!.node.slotOf.get(last!)!;
      s!.node.announce();
      const end = await until(s!, last!);
      for (const t of txs) expectSame(end, t, expected.get(t.signature)!);
    });
  });

  describe('a subscription silent for wsSilenceMs', () => {
    let s: Served | undefined;
    beforeAll(async () => {
      s = await serve(txs, 1, 'slot', { pollIntervalMs: 200, wsSilenceMs: 1_000 });
      await s.service.waitFor(/solana: slotSubscribe at /, 20_000);
    }, 90_000);
    afterAll(() => close(s));

    it('is taken as dead: polling reads the next block, and the socket is opened again', async () => {
      await s!.service.waitFor(/solana: no subscription \(no notification for 1 s\); polling, the socket is tried again in 0\.5 s/, 20_000);
      const last = txs.at(-1)!.signature;
      s!.node.head = s!.node.slots.at(-1)!;
      const served = await until(s!, last);
      for (const t of txs) expectSame(served, t, expected.get(t.signature)!);
      // Subscribed again after each silence (the node's calls count every subscription).
      const deadline = Date.now() + 20_000;
      while ((s!.node.calls.get('slotSubscribe') ?? 0) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(s!.node.calls.get('slotSubscribe')).toBeGreaterThanOrEqual(2);
      expect((await health(s!))['subscription_fallbacks']).toBeGreaterThanOrEqual(1);
    });
  });
});
