/**
 * Solana pools' reserves follow their vaults in every transaction that moves them, not only in swaps.
 *
 * The recorded mainnet transactions hold no liquidity add or remove of the decoded families (the test
 * data's README lists what they hold), so after a recorded Raydium AMM v4 swap the replay node serves
 * four SYNTHETIC transactions built here on that pool's recorded accounts (each labelled synthetic
 * below): a deposit, a withdrawal (their instructions as Raydium's AMM v4 program lays them out), a
 * vault movement by an instruction no decoder knows (fees collected) that lists both vaults, and a
 * plain token transfer into one vault (the other not in the transaction). The proof is each
 * transaction's own vault balances: after every transaction, the served reserves must equal the
 * vault balances an independent calculation from the recorded and synthetic token balances gives,
 * and the served add and remove must carry the vaults' balance changes.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKeys, type RpcTransaction } from '../engine/sources/solana/transaction.js';
import { getJson } from './support/evm-serve.js';
import { CLI, startService, type RunningService } from './support/service.js';
import { followAndServe, type ServedSolana } from './support/solana-serve.js';
import { loadFixtureTransactions, startReplayNode, type FixtureTransaction, type ReplayNode } from './support/solana-replay.js';
import { syntheticTransaction, TOKEN_PROGRAM, transferData } from './support/solana-synthetic.js';

const loaded = loadFixtureTransactions();
const skip = typeof loaded === 'string' ? loaded : null;
if (skip) console.log(`skipping the Solana liquidity test: ${skip}`);

const AMM_V4 = '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8';
const TOKEN = TOKEN_PROGRAM;
/** A recorded top-level Raydium AMM v4 swap (18 accounts: pool at 1, coin and pc vaults at 5 and 6). */
const SWAP_TX = '3aQZsNRUbNXpH54GQEaxFpWZsmL554cYGGtWqqoypz8b6LUDYprbRd9AwgivXRLtFBYCU6MU6e9ANurwP8dCMV6';
const T0 = 1_760_000_000;
const SPACING_S = 30;

const b58 = getBase58Decoder();
const newKey = (): string => b58.decode(randomBytes(32));

/** A decimal string back to raw units. */
function raw(text: string, decimals: number): bigint {
  const neg = text.startsWith('-');
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.');
  const v = BigInt(i!) * 10n ** BigInt(decimals) + BigInt((f + '0'.repeat(decimals)).slice(0, decimals) || '0');
  return neg ? -v : v;
}

interface Vault {
  readonly key: string;
  readonly mint: string;
  readonly decimals: number;
}

const synthetic = syntheticTransaction;

/** The recorded AMM v4 swap's pool, its coin and pc vaults (balances after the swap), and the pool's other accounts as the swap names them. */
function ammV4Pool(tx: RpcTransaction): { pool: string; coin: Vault & { post: bigint }; pc: Vault & { post: bigint }; authority: string; openOrders: string; targetOrders: string; market: string } {
  const keys = accountKeys(tx);
  const ix = tx.transaction.message.instructions.find((i) => 'programIdIndex' in i && keys[i.programIdIndex] === AMM_V4) as { readonly accounts: readonly number[] };
  expect(ix.accounts).toHaveLength(18);
  const vaultOf = (i: number): Vault & { post: bigint } => {
    const key = keys[ix.accounts[i]!]!;
    const b = tx.meta!.postTokenBalances!.find((x) => keys[x.accountIndex] === key)!;
    return { key, mint: b.mint, decimals: b.uiTokenAmount.decimals, post: BigInt(b.uiTokenAmount.amount) };
  };
  const [authority, openOrders, targetOrders, market] = [2, 3, 4, 8].map((i) => keys[ix.accounts[i]!]!);
  return { pool: keys[ix.accounts[1]!]!, coin: vaultOf(5), pc: vaultOf(6), authority: authority, openOrders: openOrders, targetOrders: targetOrders, market: market };
}

describe.skipIf(skip !== null)('Solana reserves follow the vaults: liquidity adds and removes, and any other vault movement', () => {
  const recorded = skip ? undefined : (loaded as FixtureTransaction[]).find((t) => t.signature === SWAP_TX);
  let node: ReplayNode;
  let served: ServedSolana;
  let pool = '';
  const clock = { now: T0 + 600 };
  /** Per transaction (recorded first): the vault balances after it, as its token balances state them (the independent calculation). */
  const expectedAfter: [bigint, bigint][] = [];
  const txs: FixtureTransaction[] = [];
  /** The balance changes of the vaults in the synthetic deposit and withdrawal. */
  let added: [bigint, bigint] = [0n, 0n];
  let removed: [bigint, bigint] = [0n, 0n];
  let decimals: [number, number] = [0, 0];

  beforeAll(async () => {
    const { pool: p, coin, pc, authority, openOrders, targetOrders, market } = ammV4Pool(recorded!.tx);
    pool = p;
    decimals = [coin.decimals, pc.decimals];
    expectedAfter.push([coin.post, pc.post]);
    txs.push(recorded!);

    const payer = newKey();
    const userCoin = newKey();
    const userPc = newKey();
    const userLp = newKey();
    const lpMint = newKey();
    const mints = new Map<string, Vault>([
      [coin.key, coin],
      [pc.key, pc],
      [userCoin, { ...coin, key: userCoin }],
      [userPc, { ...pc, key: userPc }],
    ]);
    let balances = new Map<string, bigint>([
      [coin.key, coin.post],
      [pc.key, pc.post],
      [userCoin, 10n ** 15n],
      [userPc, 10n ** 15n],
    ]);
    const push = (t: RpcTransaction, label: string) => {
      const post = new Map(t.meta!.postTokenBalances!.map((b) => [t.transaction.message.accountKeys[b.accountIndex] as string, BigInt(b.uiTokenAmount.amount)]));
      for (const [k, v] of post) balances.set(k, v);
      expectedAfter.push([balances.get(coin.key)!, balances.get(pc.key)!]);
      txs.push({ signature: t.transaction.signatures[0]!, file: `synthetic ${label}`, recordedSlot: 0, tx: t });
    };
    // Raydium AMM v4 deposit (tag 3) and withdraw (tag 4): token program, amm, authority, open orders,
    // target orders, lp mint, coin vault, pc vault, market, user coin, user pc, user lp, owner, ...
    const liquidityAccounts = [TOKEN, pool, authority, openOrders, targetOrders, lpMint, coin.key, pc.key, market, userCoin, userPc, userLp, payer];
    const data = (tag: number) => b58.decode(Buffer.concat([Buffer.from([tag]), Buffer.alloc(24, 1)]));

    // SYNTHETIC 1: a deposit of about 1 % of each side.
    added = [coin.post / 100n + 7n, pc.post / 100n + 3n];
    push(synthetic(payer, AMM_V4, liquidityAccounts, data(3), [{ from: userCoin, to: coin.key, amount: added[0] }, { from: userPc, to: pc.key, amount: added[1] }], new Map(balances), mints), 'deposit');
    // SYNTHETIC 2: a withdrawal of about half of that.
    removed = [-(added[0] / 2n), -(added[1] / 2n + 1n)];
    push(synthetic(payer, AMM_V4, liquidityAccounts, data(4), [{ from: coin.key, to: userCoin, amount: -removed[0] }, { from: pc.key, to: userPc, amount: -removed[1] }], new Map(balances), mints), 'withdraw');
    // SYNTHETIC 3: fees paid out of the coin vault by an instruction no decoder knows (discriminator 0xEE); both vaults listed, the pc vault unchanged.
    push(synthetic(payer, AMM_V4, [TOKEN, pool, authority, coin.key, pc.key, userCoin], b58.decode(Buffer.from([0xee, 1, 2, 3])), [{ from: coin.key, to: userCoin, amount: 12_345n }], new Map([[coin.key, balances.get(coin.key)!], [pc.key, balances.get(pc.key)!], [userCoin, balances.get(userCoin)!]]), mints), 'fees');
    // SYNTHETIC 4: a plain token transfer into the pc vault, no DEX program invoked, the coin vault not in the transaction.
    push(synthetic(payer, TOKEN, [userPc, pc.key, payer], transferData(777_000n), [{ from: userPc, to: pc.key, amount: 777_000n }], new Map([[pc.key, balances.get(pc.key)!], [userPc, balances.get(userPc)!]]), mints, false), 'transfer');

    node = await startReplayNode({ transactions: txs, firstTime: T0, spacingSeconds: SPACING_S });
    node.head = node.slots[0]!;
    served = await followAndServe({ rpcUrls: [node.url], startSlot: node.slots[0]!, pollIntervalMs: 10 }, clock);
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await node?.close();
  });

  it('after every transaction the served reserves are the vault balances its token balances state', async () => {
    for (let i = 0; i < txs.length; i++) {
      if (i > 0) {
        node.head = node.slots[i]!;
        // Past the 15 s the free host keeps an answer for.
        clock.now += 20;
        await served.follow(clock.now);
      }
      const r = await getJson(`${served.url}/networks/solana/pools/${pool}${i % 2 === 0 ? '' : '?inversed=false'}`);
      expect(r.status).toBe(200);
      expect(r.body.token_reserves.map((x: { reserve: string }) => BigInt(x.reserve)), `after ${txs[i]!.file}`).toEqual(expectedAfter[i]);
    }
    const p = served.source.progress()[0]!;
    expect([p.swaps, p.liquidityChanges, p.balanceChanges]).toEqual([1, 2, 2]);
  });

  it('the deposit and the withdrawal are served as an add and a remove with the vaults\' balance changes', async () => {
    const r = await getJson(`${served.url}/networks/solana/pools/${pool}/transactions?limit=50`);
    expect(r.status).toBe(200);
    const list = r.body as Record<string, any>[];
    expect(list.map((x) => x['type']).sort()).toEqual(['add', 'remove', 'swap']);
    const add = list.find((x) => x['type'] === 'add')!;
    const remove = list.find((x) => x['type'] === 'remove')!;
    expect(add['transaction_hash']).toBe(txs[1]!.signature);
    expect(remove['transaction_hash']).toBe(txs[2]!.signature);
    // Served in the pool's view (a remove's amounts negative): the vault changes by the independent calculation (balances after minus before).
    const change = (i: number, side: 0 | 1) => expectedAfter[i]![side] - expectedAfter[i - 1]![side];
    expect([raw(add['amount_0'], decimals[0]), raw(add['amount_1'], decimals[1])]).toEqual([change(1, 0), change(1, 1)]);
    expect([raw(remove['amount_0'], decimals[0]), raw(remove['amount_1'], decimals[1])]).toEqual([change(2, 0), change(2, 1)]);
    expect([change(1, 0), change(1, 1)]).toEqual(added);
    expect([change(2, 0), change(2, 1)]).toEqual(removed);
  });
});

describe.skipIf(skip !== null)('Solana pools\' vaults are kept across a restart of the service', () => {
  const recorded = skip ? undefined : (loaded as FixtureTransaction[]).find((t) => t.signature === SWAP_TX);
  let node: ReplayNode;
  let service: RunningService | undefined;
  let dir = '';
  let key = '';
  let pool = '';
  /** Per transaction (the recorded swap first): the vault balances after it, as its token balances state them. */
  const expectedAfter: [bigint, bigint][] = [];
  const txs: FixtureTransaction[] = [];

  beforeAll(async () => {
    const { pool: p, coin, pc, authority } = ammV4Pool(recorded!.tx);
    pool = p;
    expectedAfter.push([coin.post, pc.post]);
    txs.push(recorded!);
    const payer = newKey();
    const userCoin = newKey();
    const userPc = newKey();
    const mints = new Map<string, Vault>([[coin.key, coin], [pc.key, pc], [userCoin, { ...coin, key: userCoin }], [userPc, { ...pc, key: userPc }]]);
    const balances = new Map<string, bigint>([[coin.key, coin.post], [pc.key, pc.post], [userCoin, 10n ** 15n], [userPc, 10n ** 15n]]);
    const push = (t: RpcTransaction, label: string) => {
      for (const b of t.meta!.postTokenBalances!) balances.set(t.transaction.message.accountKeys[b.accountIndex] as string, BigInt(b.uiTokenAmount.amount));
      expectedAfter.push([balances.get(coin.key)!, balances.get(pc.key)!]);
      txs.push({ signature: t.transaction.signatures[0]!, file: `synthetic ${label}`, recordedSlot: 0, tx: t });
    };
    const only = (...k: string[]) => new Map(k.map((x) => [x, balances.get(x)!]));
    // SYNTHETIC 1 (after a SIGTERM): fees paid out of both vaults by an instruction no decoder knows (discriminator 0xEE), both vaults listed.
    push(synthetic(payer, AMM_V4, [TOKEN, pool, authority, coin.key, pc.key, userCoin, userPc], b58.decode(Buffer.from([0xee, 9])), [{ from: coin.key, to: userCoin, amount: 4_321n }, { from: pc.key, to: userPc, amount: 8_765n }], only(coin.key, pc.key, userCoin, userPc), mints), 'fees');
    // SYNTHETIC 2 (after kill -9): a plain token transfer into the coin vault, no DEX program invoked, the pc vault not in the transaction.
    push(synthetic(payer, TOKEN, [userCoin, coin.key, payer], transferData(555_000n), [{ from: userCoin, to: coin.key, amount: 555_000n }], only(coin.key, userCoin), mints, false), 'transfer');

    node = await startReplayNode({ transactions: txs, firstTime: Math.floor(Date.now() / 1000) - 3_600, spacingSeconds: SPACING_S });
    node.head = node.slots[0]!;
    dir = mkdtempSync(join(tmpdir(), 'solana-vaults-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ source: 'evm', solana: [{ rpcUrls: [node.url], startSlot: node.slots[0], pollIntervalMs: 100, subscribe: false }] }));
    key = /key: (api_\S+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', join(dir, 'data')], { encoding: 'utf8' }))![1]!;
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await node?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the service on the test's data and waits until it has read up to the node's slot; its paid REST URL. */
  const start = async (): Promise<string> => {
    service = await startService(['--config', join(dir, 'config.json'), '--data-dir', join(dir, 'data')]);
    await service.waitFor(/caught up/, 60_000);
    const line = await service.waitFor(/paid REST listening on http:\/\/[\d.]+:(\d+)/);
    return `http://127.0.0.1:${/:(\d+)$/.exec(line)![1]}`;
  };
  /** The served reserves of the pool once the service has read the node's slot (/health). */
  const reserves = async (url: string): Promise<bigint[]> => {
    const deadline = Date.now() + 30_000;
    while (((await (await fetch(`${service!.url}/health`)).json()) as { chains: { next_block: number }[] }).chains[0]!.next_block <= node.head) {
      if (Date.now() > deadline) throw new Error(`slot ${node.head} not read; output:\n${service!.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Read: served once ingested.
    for (;;) {
      const r = await fetch(`${url}/networks/solana/pools/${pool}`, { headers: { authorization: key } });
      const body = (await r.json()) as { token_reserves: { reserve: string }[] };
      const got = body.token_reserves.map((x) => BigInt(x.reserve));
      if (got.join() === expectedAfter[node.slots.indexOf(node.head)]!.join() || Date.now() > deadline) return got;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('after SIGTERM and after kill -9, a transaction that only moves the pool\'s vaults moves its served reserves', async () => {
    let url = await start();
    expect(await reserves(url)).toEqual(expectedAfter[0]);
    // SIGTERM; the node then has the fee payment (both vaults listed: a sync).
    expect(await service!.stop()).toBe(0);
    node.head = node.slots[1]!;
    url = await start();
    expect(await reserves(url)).toEqual(expectedAfter[1]);
    expect(expectedAfter[1]).not.toEqual(expectedAfter[0]);
    // kill -9; the node then has the transfer into one vault (a reserve delta).
    await service!.kill9();
    node.head = node.slots[2]!;
    url = await start();
    expect(await reserves(url)).toEqual(expectedAfter[2]);
    expect(expectedAfter[2]![0]).toBe(expectedAfter[1]![0] + 555_000n);
    // The pool's transactions: the one swap only (vault movements are no transaction of the pool).
    const r = await fetch(`${url}/networks/solana/pools/${pool}/transactions?limit=10`, { headers: { authorization: key } });
    expect(((await r.json()) as { transaction_hash: string }[]).map((x) => x.transaction_hash)).toEqual([SWAP_TX]);
  }, 120_000);
});
