/**
 * Solana: recorded mainnet transactions (../shared/fixtures/solana) replayed by a local JSON-RPC node,
 * followed by the real Solana source and served over REST. Every served swap is checked against
 * solana-dex-parser (an independent decoder, used only here) and against the token balance changes
 * the recorded transaction itself states; prices, volumes and candles against a calculation from
 * those amounts; then a fork replaces replayed slots and the served data must equal a fresh follow
 * of the new fork.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUnits } from 'viem';
import { DexParser } from 'solana-dex-parser';
import { addDecoderSizePrefix, fixDecoderSize, getAddressDecoder, getBytesDecoder, getStructDecoder, getU32Decoder, getUtf8Decoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKeys, type RpcTransaction } from '../engine/sources/solana/transaction.js';
import { SOLANA_PRESET } from '../engine/sources/solana/preset.js';
import { pubsubUrl, SolanaChainSchema } from '../engine/sources/solana/config.js';
import { loadConfig } from '../engine/config.js';
import { configProblems, expectCandles, expectClose, getJson, minuteCandles } from './support/evm-serve.js';
import { followAndServe, type ServedSolana } from './support/solana-serve.js';
import { loadFixtureTransactions, SOLANA_FIXTURES, startReplayNode, type FixtureTransaction, type ReplayNode } from './support/solana-replay.js';

const loaded = loadFixtureTransactions();
const skip = typeof loaded === 'string' ? loaded : null;
if (skip) console.log(`skipping the Solana tests: ${skip}`);

const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
/** solana-dex-parser's names of the families the source decodes, and the DEX id each is served under. */
const DEX_OF_AMM: Readonly<Record<string, string>> = {
  RaydiumV4: 'raydium',
  RaydiumCPMM: 'raydium_cpmm',
  RaydiumCL: 'raydium_clmm',
  Orca: 'orca',
  MeteoraDLMM: 'meteora_dlmm',
  MeteoraDamm: 'meteora_damm',
  MeteoraDammV2: 'meteora_damm_v2',
  Pumpfun: 'pumpfun',
  Pumpswap: 'pumpswap',
};
/** The one recorded trade between wrapped SOL and USDC of these families (a Meteora DLMM hop of a Jupiter route): it prices SOL. */
const SOL_USD_TX = '5Rt3HkbvPRtQZ2FKxi8mAbsrTSLUQmb5SaphqD32pntbC3hgxZV9PayGL6pZGMSVXWBrrCAaw8uhDSR6R8J5bkgy';
const T0 = 1_760_000_000;
const SPACING_S = 20;

/** A trade as solana-dex-parser reads it. */
interface ParsedTrade {
  readonly amm: string;
  readonly Pool?: string[];
  readonly inputToken: { readonly mint: string; readonly amountRaw: string; readonly decimals: number };
  readonly outputToken: { readonly mint: string; readonly amountRaw: string; readonly decimals: number };
}

/** A served swap with its amounts back in raw units. */
interface ServedSwap {
  readonly body: Record<string, any>;
  readonly pool: string;
  readonly sig: string;
  readonly block: number;
  readonly txIndex: number;
  readonly logIndex: number;
  readonly token0: string;
  readonly token1: string;
  readonly amount0: bigint;
  readonly amount1: bigint;
}

/** A decimal string back to raw units. */
function raw(text: string, decimals: number): bigint {
  const neg = text.startsWith('-');
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.');
  const v = BigInt(i!) * 10n ** BigInt(decimals) + BigInt((f + '0'.repeat(decimals)).slice(0, decimals) || '0');
  return neg ? -v : v;
}

/** Token balance changes the transaction states: per token account, its mint and post - pre. */
function tokenDeltas(tx: RpcTransaction): { account: string; mint: string; program: string | undefined; delta: bigint }[] {
  const keys = accountKeys(tx);
  const m = new Map<string, { mint: string; program: string | undefined; delta: bigint }>();
  for (const b of tx.meta!.preTokenBalances ?? []) m.set(keys[b.accountIndex]!, { mint: b.mint, program: b.programId, delta: -BigInt(b.uiTokenAmount.amount) });
  for (const b of tx.meta!.postTokenBalances ?? []) {
    const k = keys[b.accountIndex]!;
    const had = m.get(k);
    m.set(k, { mint: b.mint, program: b.programId, delta: (had?.delta ?? 0n) + BigInt(b.uiTokenAmount.amount) });
  }
  return [...m].map(([account, v]) => ({ account, ...v }));
}

const lamportDelta = (tx: RpcTransaction, account: string): bigint => {
  const i = accountKeys(tx).indexOf(account);
  return i < 0 ? 0n : BigInt(tx.meta!.postBalances[i]!) - BigInt(tx.meta!.preBalances[i]!);
};

const lamportBefore = (tx: RpcTransaction, account: string): bigint => {
  const i = accountKeys(tx).indexOf(account);
  return i < 0 ? -1n : BigInt(tx.meta!.preBalances[i]!);
};

/**
 * Every served pool (pool search) and swap (each pool's transactions). `fresh` asks with other query
 * strings than a first call, which the free host's URL cache (15 s) has not seen.
 */
async function servedSwaps(url: string, fresh = false): Promise<{ pools: Record<string, any>[]; swaps: ServedSwap[] }> {
  const q = fresh ? { search: 'limit=99', details: '?inversed=false', txs: 'limit=99' } : { search: 'limit=100', details: '', txs: 'limit=100' };
  const search = await getJson(`${url}/networks/solana/pools/search?${q.search}`);
  expect(search.status).toBe(200);
  const pools = search.body.results as Record<string, any>[];
  const swaps: ServedSwap[] = [];
  for (const p of pools) {
    const details = await getJson(`${url}/networks/solana/pools/${p['id']}${q.details}`);
    expect(details.status, `${url} pool ${p['id']}`).toBe(200);
    const [d0, d1] = (details.body.tokens as { decimals: number }[]).map((t) => t.decimals);
    const r = await getJson(`${url}/networks/solana/pools/${p['id']}/transactions?${q.txs}`);
    expect(r.status).toBe(200);
    for (const x of r.body as Record<string, any>[])
      swaps.push({
        body: x,
        pool: x['pool_id'],
        sig: x['transaction_hash'],
        block: x['created_at_block_number'],
        txIndex: x['transaction_index'],
        logIndex: x['log_index'],
        token0: x['token_0'],
        token1: x['token_1'],
        amount0: raw(x['amount_0'], d0!),
        amount1: raw(x['amount_1'], d1!),
      });
  }
  swaps.sort((a, b) => a.block - b.block || a.txIndex - b.txIndex || a.logIndex - b.logIndex);
  return { pools, swaps };
}

describe.skipIf(skip !== null)('Solana source on recorded mainnet transactions', () => {
  // The SOL/USDC trade first, so that SOL has its USD price before any other trade; then as recorded.
  const txs = skip ? [] : [...(loaded as FixtureTransaction[])].sort((a, b) => Number(b.signature === SOL_USD_TX) - Number(a.signature === SOL_USD_TX));
  const parser = new DexParser();
  const expected = new Map<string, ParsedTrade[]>();
  for (const t of txs) expected.set(t.signature, (parser.parseAll(t.tx as never, { tryUnknowDEX: false }).trades as unknown as ParsedTrade[]).filter((x) => DEX_OF_AMM[x.amm] !== undefined));
  const bySig = new Map(txs.map((t) => [t.signature, t]));
  const clock = { now: T0 + SPACING_S * txs.length + 60 };
  let node: ReplayNode;
  let served: ServedSolana;
  let pools: Record<string, any>[];
  let swaps: ServedSwap[];

  beforeAll(async () => {
    node = await startReplayNode({ transactions: txs, firstTime: T0, spacingSeconds: SPACING_S });
    served = await followAndServe({ rpcUrls: [node.url], startSlot: node.slots[0]!, pollIntervalMs: 10 }, clock);
    ({ pools, swaps } = await servedSwaps(served.url));
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await node?.close();
  });

  it('serves every swap of the decoded families that solana-dex-parser finds, routed hops each in its own pool, and no other', () => {
    const want = [...expected.values()].reduce((n, l) => n + l.length, 0);
    expect(want, 'swaps of the families in the recorded transactions').toBeGreaterThanOrEqual(40);
    expect(swaps).toHaveLength(want);
    // Every family of the preset appears.
    const dexes = new Set(pools.map((p) => p['dex_id']));
    for (const dex of Object.values(DEX_OF_AMM)) expect(dexes.has(dex), dex).toBe(true);
  });

  it('each swap has the amounts, direction, tokens, pool and DEX of the independent decoding, at its slot and time', () => {
    const poolDex = new Map(pools.map((p) => [p['id'] as string, p['dex_id'] as string]));
    for (const [sig, trades] of expected) {
      const mine = swaps.filter((s) => s.sig === sig);
      expect(mine.length, sig).toBe(trades.length);
      const left = [...mine];
      for (const t of trades) {
        const at = left.findIndex((s) => new Set([s.token0, s.token1]).size === 2 && [s.token0, s.token1].includes(t.inputToken.mint) && [s.token0, s.token1].includes(t.outputToken.mint));
        expect(at, `${sig}: a served swap of ${t.inputToken.mint} for ${t.outputToken.mint}`).toBeGreaterThanOrEqual(0);
        const s = left.splice(at, 1)[0]!;
        const inIs0 = s.token0 === t.inputToken.mint;
        const paidIn = inIs0 ? s.amount0 : s.amount1;
        const paidOut = inIs0 ? s.amount1 : s.amount0;
        // Direction: the pool received the input and paid the output.
        expect(paidIn > 0n && paidOut < 0n, `${sig} direction`).toBe(true);
        const programOf = (mint: string) => tokenDeltas(bySig.get(sig)!.tx).find((d) => d.mint === mint)?.program;
        if (programOf(t.inputToken.mint) === TOKEN_2022 && paidIn !== BigInt(t.inputToken.amountRaw)) {
          // A Token-2022 transfer fee: the pool received less than the trader sent (by at most 5 %).
          expect(paidIn < BigInt(t.inputToken.amountRaw) && Number(paidIn) > Number(t.inputToken.amountRaw) * 0.95, `${sig} input with a transfer fee`).toBe(true);
        } else expect(paidIn, `${sig} ${t.amm} input`).toBe(BigInt(t.inputToken.amountRaw));
        if (programOf(t.outputToken.mint) === TOKEN_2022 && -paidOut !== BigInt(t.outputToken.amountRaw)) {
          // A Token-2022 transfer fee: the pool paid out more than the trader received.
          expect(-paidOut > BigInt(t.outputToken.amountRaw) && Number(-paidOut) < Number(t.outputToken.amountRaw) * 1.05, `${sig} output with a transfer fee`).toBe(true);
        } else expect(-paidOut, `${sig} ${t.amm} output`).toBe(BigInt(t.outputToken.amountRaw));
        expect(poolDex.get(s.pool), `${sig} DEX`).toBe(DEX_OF_AMM[t.amm]);
        if (t.Pool && t.Pool.length > 0) expect(s.pool).toBe(t.Pool[0]);
        expect(accountKeys(bySig.get(sig)!.tx)).toContain(s.pool);
        expect(s.body['type']).toBe('swap');
        expect(s.block).toBe(node.slotOf.get(sig));
        expect(s.body['created_at']).toBe(new Date(node.timeOf.get(s.block)! * 1000).toISOString().replace('.000', ''));
      }
    }
  });

  it('each pool\'s amounts in a transaction are the balance changes of token accounts the transaction states (lamports for a bonding curve)', () => {
    const groups = new Map<string, ServedSwap[]>();
    for (const s of swaps) groups.set(`${s.sig} ${s.pool}`, [...(groups.get(`${s.sig} ${s.pool}`) ?? []), s]);
    for (const [k, list] of groups) {
      const tx = bySig.get(list[0]!.sig)!.tx;
      const deltas = tokenDeltas(tx);
      for (const side of [0, 1] as const) {
        const mint = side === 0 ? list[0]!.token0 : list[0]!.token1;
        const sum = list.reduce((n, s) => n + (side === 0 ? s.amount0 : s.amount1), 0n);
        // The pool's token account changed by the sum; or, for a pool created in this transaction (a
        // pump.fun `create` mints the curve's supply into it first), the trader's account by its opposite.
        const created = lamportBefore(tx, list[0]!.pool) === 0n;
        const proven =
          deltas.some((d) => d.mint === mint && (d.delta === sum || (created && d.delta === -sum))) ||
          (mint === WSOL && (lamportDelta(tx, list[0]!.pool) === sum || (created && sum > 0n && lamportDelta(tx, list[0]!.pool) > sum)));
        expect(proven, `${k}: a change of ${sum} ${mint}`).toBe(true);
      }
    }
  });

  it('pools and tokens as first seen: mints and decimals from the transaction, the preset\'s anchors named', async () => {
    for (const p of pools) {
      const { body } = await getJson(`${served.url}/networks/solana/pools/${p['id']}`);
      const first = swaps.find((s) => s.pool === p['id'])!;
      const tx = bySig.get(first.sig)!.tx;
      const keys = accountKeys(tx);
      const decimalsOf = (mint: string) => [...(tx.meta!.postTokenBalances ?? []), ...(tx.meta!.preTokenBalances ?? [])].find((b) => b.mint === mint)?.uiTokenAmount.decimals ?? (mint === WSOL ? 9 : -1);
      expect(body.tokens.map((t: any) => t.id)).toEqual([first.token0, first.token1]);
      expect(body.tokens.map((t: any) => t.decimals)).toEqual([decimalsOf(first.token0), decimalsOf(first.token1)]);
      expect(keys).toContain(body.factory_id);
      expect(body.created_at_block_number).toBe(first.block);
    }
    const sol = await getJson(`${served.url}/networks/solana/tokens/${WSOL}`);
    expect([sol.status, sol.body.symbol, sol.body.decimals]).toEqual([200, 'WSOL', 9]);
    const usdc = await getJson(`${served.url}/networks/solana/tokens/${USDC}`);
    expect([usdc.status, usdc.body.symbol, usdc.body.decimals, usdc.body.price_usd]).toEqual([200, 'USDC', 6, 1]);
    // Base58 addresses are case-sensitive: another case is another (unknown) token.
    expect((await getJson(`${served.url}/networks/solana/tokens/${USDC.toLowerCase()}`)).status).toBe(404);
  });

  it('Token-2022 mints without a Metaplex metadata account are named by their own TokenMetadata extension', async () => {
    // The recorded Token-2022 mint accounts, their TokenMetadata read here with @solana/kit's codecs from
    // the extension's published layout (TLV entries after the account type byte at 165; type 19).
    const str = addDecoderSizePrefix(getUtf8Decoder(), getU32Decoder());
    const metadata = getStructDecoder([
      ['updateAuthority', fixDecoderSize(getBytesDecoder(), 32)],
      ['mint', getAddressDecoder()],
      ['name', str],
      ['symbol', str],
      ['uri', str],
    ]);
    const dir = join(SOLANA_FIXTURES, 'accounts');
    const named: { account: string; mint: string; name: string; symbol: string }[] = [];
    for (const f of existsSync(dir) ? readdirSync(dir) : []) {
      if (!f.endsWith('.json')) continue;
      const j = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { result?: { value?: { owner: string; data: [string, string] } } };
      const v = j.result?.value;
      if (!v || v.owner !== TOKEN_2022) continue;
      const b = Buffer.from(v.data[0], 'base64');
      if (b[165] !== 1) continue;
      for (let at = 166; at + 4 <= b.length; at += 4 + b.readUInt16LE(at + 2)) {
        if (b.readUInt16LE(at) !== 19) continue;
        const m = metadata.decode(b.subarray(at + 4, at + 4 + b.readUInt16LE(at + 2)));
        named.push({ account: f.split('.')[0]!, mint: m.mint, name: m.name, symbol: m.symbol });
      }
    }
    let count = 0;
    for (const n of named) {
      expect(n.mint, 'the extension names its own mint').toBe(n.account);
      const r = await getJson(`${served.url}/networks/solana/tokens/${n.mint}`);
      if (r.status === 404) continue;
      expect([r.body.name, r.body.symbol], n.mint).toEqual([n.name, n.symbol]);
      count++;
    }
    // PayPal USD (PYUSD) and one more are traded in the recorded transactions.
    expect(count).toBeGreaterThanOrEqual(2);
  });

  it('prices, volumes and 1-minute candles route to USD through SOL and USDC as computed from the decoded amounts', async () => {
    const solTrade = expected.get(SOL_USD_TX)!.find((t) => t.outputToken.mint === WSOL && t.inputToken.mint === USDC)!;
    const solUsd = Number(formatUnits(BigInt(solTrade.inputToken.amountRaw), 6)) / Number(formatUnits(BigInt(solTrade.outputToken.amountRaw), 9));
    const prices = await getJson(`${served.url}/networks/solana/multi/prices?tokens=${WSOL},${USDC}`);
    expectClose(prices.body.find((x: any) => x.id === WSOL).price_usd, solUsd, 'SOL price');
    // SOL has a USD price from the SOL/USDC swap on (an earlier hop of the same route has none yet).
    const priced = swaps.find((s) => s.sig === SOL_USD_TX && [s.token0, s.token1].includes(USDC) && [s.token0, s.token1].includes(WSOL))!;
    const beforeSolPrice = (s: ServedSwap) => s.block < priced.block || (s.block === priced.block && s.logIndex < priced.logIndex);
    let checked = 0;
    for (const p of pools) {
      const own = swaps.filter((s) => s.pool === p['id']);
      if (own.some(beforeSolPrice)) continue;
      const { body } = await getJson(`${served.url}/networks/solana/pools/${p['id']}`);
      const [d0, d1] = body.tokens.map((t: any) => t.decimals as number);
      const anchor = own[0]!.token0 === USDC || own[0]!.token1 === USDC ? USDC : own[0]!.token0 === WSOL || own[0]!.token1 === WSOL ? WSOL : null;
      if (anchor === null) continue;
      const anchorUsd = anchor === USDC ? 1 : solUsd;
      const trades = own.map((s) => {
        const ratio = (Math.abs(Number(s.amount1)) / Math.abs(Number(s.amount0))) * 10 ** (d0 - d1); // token 0 in token 1
        const price0 = s.token0 === anchor ? anchorUsd : ratio * anchorUsd;
        const volume = Math.abs(Number(formatUnits(s.token0 === anchor ? s.amount0 : s.amount1, s.token0 === anchor ? d0 : d1))) * anchorUsd;
        return { time: node.timeOf.get(s.block)!, price: price0, volume, ratio };
      });
      for (const [i, t] of trades.entries()) expectClose(own[i]!.body['volume_usd'], t.volume, `${p['id']} swap ${i} volume`);
      expectClose(body.last_price, trades.at(-1)!.ratio, `${p['id']} last price`);
      expectClose(body.last_price_usd, trades.at(-1)!.price, `${p['id']} last USD price`);
      expectClose(body['24h'].volume_usd, trades.reduce((n, t) => n + t.volume, 0), `${p['id']} 24h volume`);
      expect(body['24h'].txns).toBe(trades.length);
      const candles = await getJson(`${served.url}/networks/solana/pools/${p['id']}/ohlcv?interval=1m&start=${T0 - 60}&limit=1000`);
      expectCandles(candles.body, minuteCandles(trades), p['id']);
      checked++;
    }
    expect(checked, 'pools with a SOL or USDC side').toBeGreaterThanOrEqual(25);
  });

  it('a fork that replaces replayed slots is rolled back exactly: the service then serves what a fresh follow of the new fork serves', async () => {
    // The last two transactions' slots are replaced: the first by an empty block, the second by a new block with the same transaction.
    const [forkTx, keptTx] = txs.slice(-2);
    const forkSlot = node.slotOf.get(forkTx!.signature)!;
    const forkPool = swaps.find((s) => s.sig === forkTx!.signature)!.pool;
    const keptPool = swaps.find((s) => s.sig === keptTx!.signature)!.pool;
    expect((await getJson(`${served.url}/networks/solana/pools/${forkPool}`)).status).toBe(200);
    const statsBefore = (await getJson(`${served.url}/stats`)).body;
    const solBefore = (await getJson(`${served.url}/networks/solana/tokens/${WSOL}`)).body;
    node.fork(forkSlot, (slot, list) => (slot === forkSlot ? [] : [...list]));
    // Past the 15 s the free host keeps an answer for.
    await served.follow(clock.now + 20);
    expect(served.source.progress()[0]!.reorgs).toBe(1);
    expect(served.source.progress()[0]!.lastReorgSlot).toBe(node.slots[node.slots.indexOf(forkSlot) - 1]);

    expect((await getJson(`${served.url}/networks/solana/pools/${forkPool}?inversed=true`)).status).toBe(404);
    const kept = await getJson(`${served.url}/networks/solana/pools/${keptPool}/transactions?limit=98`);
    expect(kept.body.map((x: any) => x.transaction_hash)).toEqual([keptTx!.signature]);
    const statsAfter = (await getJson(`${served.url}/stats?`)).body;
    expect(statsAfter.pools).toBe(statsBefore.pools - 1);

    const fresh = await followAndServe({ rpcUrls: [node.url], startSlot: node.slots[0]!, pollIntervalMs: 10 }, { now: clock.now });
    try {
      const a = await servedSwaps(served.url, true);
      const b = await servedSwaps(fresh.url, true);
      const byId = (l: Record<string, any>[]) => [...l].sort((x, y) => (x['id'] < y['id'] ? -1 : 1));
      expect(byId(a.pools)).toEqual(byId(b.pools));
      expect(a.swaps.map((s) => s.body)).toEqual(b.swaps.map((s) => s.body));
      expect(statsAfter).toEqual((await getJson(`${fresh.url}/stats?`)).body);
      for (const p of b.pools) {
        for (const path of [`/networks/solana/pools/${p['id']}?inversed=false`, `/networks/solana/pools/${p['id']}/ohlcv?interval=1m&start=${T0 - 60}&limit=999`])
          expect((await getJson(served.url + path)).body, path).toEqual((await getJson(fresh.url + path)).body);
      }
      // SOL lost the orphaned trade (one transaction fewer in its windows).
      const solAfter = (await getJson(`${fresh.url}/networks/solana/tokens/${WSOL}`)).body;
      expect(solAfter.summary['24h'].txns).toBe(solBefore.summary['24h'].txns - 1);
    } finally {
      await fresh.close();
    }
  });
});

describe('the solana network of the registry', () => {
  it('--network solana --rpc URL follows the preset: its programs, wrapped SOL and the stablecoins', () => {
    const c = loadConfig({ network: 'solana', rpc: 'http://127.0.0.1:8899' }, {});
    expect(c.source).toBe('evm');
    expect(c.chains).toEqual([]);
    expect(c.solana).toHaveLength(1);
    const s = c.solana[0]!;
    expect([s.id, s.rpcUrls, s.commitment, s.wrappedNative, s.stablecoins]).toEqual(['solana', ['http://127.0.0.1:8899'], 'confirmed', WSOL, SOLANA_PRESET.stablecoins.map((x) => x.address)]);
    expect(s.programs.map((p) => p.programId)).toEqual(SOLANA_PRESET.programs.map((p) => p.programId));
  });

  it('the PubSub endpoint: wsUrl as given, else the first RPC URL in ws/wss with an explicit port plus one', () => {
    const at = (rpc: string, wsUrl?: string) => pubsubUrl(SolanaChainSchema.parse({ rpcUrls: [rpc], ...(wsUrl ? { wsUrl } : {}) }));
    expect(at('http://127.0.0.1:8899')).toBe('ws://127.0.0.1:8900/');
    expect(at('https://rpc.example.com/v1/path?api-key=k')).toBe('wss://rpc.example.com/v1/path?api-key=k');
    expect(at('https://rpc.example.com:8443/')).toBe('wss://rpc.example.com:8444/');
    expect(at('http://127.0.0.1:8899', 'wss://ws.example.com/')).toBe('wss://ws.example.com/');
    // --ws lays the endpoint over the solana entry; given without --network solana, or not ws/wss, it is named.
    expect(loadConfig({ network: 'solana', rpc: 'http://127.0.0.1:8899', ws: 'wss://ws.example.com/k' }, {}).solana[0]!.wsUrl).toBe('wss://ws.example.com/k');
    expect(configProblems({ network: 'solana', rpc: 'http://127.0.0.1:8899', ws: 'https://ws.example.com' })).toEqual(['solana.0.wsUrl: must be a ws:// or wss:// URL']);
    expect(configProblems({ network: 'base', rpc: 'http://127.0.0.1:8545', ws: 'wss://ws.example.com' })).toContain('--ws needs --network solana');
  });

  it('bad settings are named: the RPC URL, a program family, a duplicate DEX id', () => {
    expect(configProblems({ network: 'solana', rpc: 'not-a-url' })).toEqual(['solana.0.rpcUrls.0: Invalid URL']);
    const dir = mkdtempSync(join(tmpdir(), 'solana-config-'));
    try {
      const file = join(dir, 'c.json');
      writeFileSync(file, JSON.stringify({ source: 'evm', solana: [{ rpcUrls: ['http://127.0.0.1:8899'], programs: [{ dexId: 'a', family: 'serum', programId: WSOL }, { dexId: 'b', family: 'pumpfun', programId: 'nope' }] }] }));
      const problems = configProblems({ config: file });
      expect(problems.some((p) => p.startsWith('solana.0.programs.0.family'))).toBe(true);
      expect(problems.some((p) => p.startsWith('solana.0.programs.1.programId') && p.includes('base58'))).toBe(true);
      writeFileSync(file, JSON.stringify({ source: 'evm', solana: [{ rpcUrls: ['http://127.0.0.1:8899'], wsUrl: 'http://127.0.0.1:8900', wsSilenceMs: 0 }] }));
      const ws = configProblems({ config: file });
      expect(ws).toContain('solana.0.wsUrl: must be a ws:// or wss:// URL');
      expect(ws.some((p) => p.startsWith('solana.0.wsSilenceMs'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
