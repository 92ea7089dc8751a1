/**
 * Bytes the catalog holds per pool and per token (`node dist/bench/catalog-memory.js [--pools N]`,
 * 1,000,000 by default): a universe shaped like the public networks' (about 0.9 tokens per pool, one
 * network in eight with base58 addresses), built through the catalog as ingest builds it. Prints the
 * catalog's own bytes (its typed arrays in use, the heap, the address tables), the static view
 * columns it writes beside them, what the same entries cost as JS records with string-keyed maps
 * (the shape before the catalog, measured on the V8 heap), and an export/import round trip.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseArgs } from 'node:util';
import { Catalog } from '../engine/catalog/catalog.js';
import { PARTS } from '../engine/catalog/parts.js';
import type { NetworkInfo, PoolCreated, TokenInfo } from '../engine/events/model.js';
import { EngineViews } from '../engine/state/views.js';
import type { PoolRecord, TokenRecord } from '../engine/store/store.js';

const { values } = parseArgs({ options: { pools: { type: 'string' } } });
const POOLS = Number(values.pools ?? 1_000_000);
const CHAINS = 8;
/** The chain with base58 addresses (44 characters, case-sensitive). */
const BASE58_CHAIN = 7;
/** One pool in this many pairs two tokens seen before (the rest bring a new token). */
const OLD_PAIR_EVERY = 10;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
let seed = 42;
function rand(): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed;
}
function address(chain: number): string {
  if (chain === BASE58_CHAIN) {
    let s = '';
    for (let i = 0; i < 44; i++) s += B58[rand() % B58.length];
    return s;
  }
  let s = '0x';
  for (let i = 0; i < 5; i++) s += rand().toString(16).padStart(8, '0');
  return s;
}
const WORDS = ['Moon', 'Doge', 'Pepe', 'Inu', 'Cat', 'Frog', 'AI', 'Meta', 'Chain', 'Swap', 'Gold', 'Sun', 'Rocket', 'Baby', 'Elon', 'Floki'];
function tokenInfo(chain: number): TokenInfo {
  const name = `${WORDS[rand() % WORDS.length]} ${WORDS[rand() % WORDS.length]} ${rand() % 10_000}`;
  const symbol = name.split(' ').map((w) => w.slice(0, 3).toUpperCase()).join('').slice(0, 8);
  return { address: address(chain), name, symbol, decimals: 18, totalSupply: BigInt(rand()) * 10n ** 18n, role: 0 } as TokenInfo;
}

const networks: NetworkInfo[] = Array.from({ length: CHAINS }, (_, c) => ({
  id: `chain${c}`,
  displayName: `Chain ${c}`,
  blockTimeSeconds: 2,
  dexes: [{ id: 'dex', name: 'Dex', protocol: 'uniswap_v2', poolProtocol: 0, factory: address(c) }],
})) as NetworkInfo[];

/** Quote tokens per network (wrapped native, stablecoins, majors): most pools pair one of them. */
const QUOTES = 16;

/** The events, made once: both shapes are built from the same ones. */
const events: { chain: number; e: PoolCreated }[] = [];
const known: TokenInfo[][] = Array.from({ length: CHAINS }, (_, c) => Array.from({ length: QUOTES }, () => tokenInfo(c)));
for (let i = 0; i < POOLS; i++) {
  const chain = i % CHAINS;
  const seen = known[chain]!;
  const quote = seen[rand() % QUOTES]!;
  let base = i % OLD_PAIR_EVERY === 0 ? seen[rand() % seen.length]! : tokenInfo(chain);
  if (base === quote) base = tokenInfo(chain);
  if (base !== seen[seen.length - 1] && i % OLD_PAIR_EVERY !== 0) seen.push(base);
  const e = {
    kind: 'pool_created',
    key: { blockNumber: i, txIndex: 0, logIndex: 0 },
    timestamp: 1_700_000_000 + i,
    pool: address(chain),
    dexId: 'dex',
    factory: '',
    protocol: 0,
    feePpm: 3000,
    token0: base,
    token1: quote,
  } as unknown as PoolCreated;
  events.push({ chain, e });
}

const capacity = { pools: POOLS + 64 * CHAINS, tokens: 2 * POOLS + 64 * CHAINS, chains: CHAINS };
const views = EngineViews.create(capacity);
const catalog = new Catalog(views);
catalog.syncNetworks(networks);
let t0 = performance.now();
for (const { chain, e } of events) catalog.createPool(chain, e);
const buildMs = performance.now() - t0;
const pools = catalog.poolCount;
const tokens = catalog.tokenCount;

const exported = catalog.export();
const section = (name: string) => exported.sections.find((s) => s.name === name)!.bytes.byteLength;
const scopeBytes = (scope: string) => PARTS.filter((p) => p.scope === scope).reduce((n, p) => n + section(p.name), 0);
const poolBytes = scopeBytes('pool') + section('poolSlots');
const tokenBytes = scopeBytes('token') + section('tokenSlots');
const heapBytes = section('heap');
const otherBytes = scopeBytes('chain') + scopeBytes('fixed');
const total = poolBytes + tokenBytes + heapBytes + otherBytes;
const allocated = Object.values(catalog.buffers.parts).reduce((n, b) => n + b.byteLength, 0) + section('poolSlots') + section('tokenSlots');
const viewBytes = exported.sections.filter((s) => s.name.startsWith('view:')).reduce((n, s) => n + s.bytes.byteLength, 0);

t0 = performance.now();
const copy = Catalog.import(EngineViews.create(capacity), exported);
const importMs = performance.now() - t0;
if (copy.poolCount !== pools || copy.poolAddress(123) !== catalog.poolAddress(123)) throw new Error('the imported catalog differs');

// The shape before the catalog: one record object per pool and token, string-keyed maps per chain, id arrays.
gc();
const before = process.memoryUsage().heapUsed;
const records = { pools: [] as PoolRecord[], tokens: [] as TokenRecord[], poolIndex: [] as Map<string, number>[], tokenIndex: [] as Map<string, number>[], tokenPools: [] as number[][], poolIds: [] as number[][] };
for (let p = 0; p < catalog.poolBound; p++) {
  if (!catalog.poolLive(p)) continue;
  const r = catalog.pool(p);
  records.pools[p] = r;
  (records.poolIndex[r.chain] ??= new Map()).set(r.address, p);
  (records.poolIds[r.chain] ??= []).push(p);
  (records.tokenPools[r.token0] ??= []).push(p);
  (records.tokenPools[r.token1] ??= []).push(p);
}
for (let t = 0; t < catalog.tokenBound; t++) {
  if (!catalog.tokenLive(t)) continue;
  const r = catalog.token(t);
  records.tokens[t] = r;
  (records.tokenIndex[r.chain] ??= new Map()).set(r.address, t);
}
gc();
const recordBytes = process.memoryUsage().heapUsed - before;

const f = (n: number) => Math.round(n).toLocaleString('en-US');
const print = (line: string) => process.stdout.write(`${line}\n`);
print(`catalog of ${f(pools)} pools and ${f(tokens)} tokens on ${CHAINS} networks (one with base58 addresses), built in ${f(buildMs)} ms:`);
print(`  per pool:  ${(poolBytes / pools).toFixed(1)} B (address, lists, state, address table)`);
print(`  per token: ${((tokenBytes + heapBytes) / tokens).toFixed(1)} B (address, texts, lists, address table; the heap ${f(heapBytes)} B also holds the base58 pool addresses)`);
print(`  in all:    ${f(total)} B in use = ${(total / pools).toFixed(1)} B per pool with its share of tokens; ${f(allocated)} B allocated (growth by doubling)`);
print(`  static view columns written beside it: ${(viewBytes / pools).toFixed(1)} B per pool with its share of tokens`);
print(`  the same entries as JS records and string-keyed maps: ${f(recordBytes)} B = ${(recordBytes / pools).toFixed(1)} B per pool with its share of tokens (${(recordBytes / total).toFixed(1)}x)`);
print(`  export: ${exported.sections.length} sections, ${f(exported.sections.reduce((n, s) => n + s.bytes.byteLength, 0))} B; import ${f(importMs)} ms`);
void records;
