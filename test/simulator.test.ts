import { describe, expect, it } from 'vitest';
import {
  compareKeys,
  PoolProtocol,
  TokenRole,
  type ChainEvent,
  type ChainEventBatch,
  type PoolCreated,
} from '../engine/events/model.js';
import { isqrt, isqrtNear } from '../engine/sources/simulator/amm.js';
import { BASE58_ALPHABET } from '../engine/sources/simulator/encoding.js';
import { createSimulator, DEFAULT_SIMULATOR_OPTIONS, resumeSimulator, type SimulatorOptions } from '../engine/sources/simulator/index.js';

const GENESIS = 1_750_000_000;
const HOUR = 3600;
const DAY = 86_400;
const PPM = 1_000_000n;

const EXPECTED_NETWORKS: Record<string, { name: string; blockTime: number; dexes: string[] }> = {
  ethereum: { name: 'Ethereum', blockTime: 12, dexes: ['uniswap_v2', 'uniswap_v3', 'sushiswap'] },
  solana: { name: 'Solana', blockTime: 0.4, dexes: ['raydium', 'orca', 'meteora'] },
  bsc: { name: 'BNB Chain', blockTime: 3, dexes: ['pancakeswap_v2', 'pancakeswap_v3', 'biswap'] },
  base: { name: 'Base', blockTime: 2, dexes: ['aerodrome', 'uniswap_v3'] },
  arbitrum: { name: 'Arbitrum', blockTime: 0.25, dexes: ['uniswap_v3'] },
  polygon: { name: 'Polygon', blockTime: 2, dexes: ['quickswap', 'uniswap_v3'] },
  avalanche: { name: 'Avalanche', blockTime: 2, dexes: ['traderjoe'] },
  optimism: { name: 'Optimism', blockTime: 2, dexes: ['velodrome', 'uniswap_v3'] },
};

function options(overrides: Partial<SimulatorOptions> = {}): SimulatorOptions {
  return { ...DEFAULT_SIMULATOR_OPTIONS, pools: 600, genesisTime: GENESIS, ...overrides };
}

function serialise(chain: string, e: ChainEvent): string {
  return chain + '|' + JSON.stringify(e, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

/** Runs advance() over `untils` and returns every chain's events concatenated in order. */
function run(opts: SimulatorOptions, untils: readonly number[]): Map<string, ChainEvent[]> {
  const sim = createSimulator(opts);
  const byChain = new Map<string, ChainEvent[]>();
  for (const until of untils) {
    for (const batch of sim.advance(until)) {
      let list = byChain.get(batch.chain);
      if (!list) byChain.set(batch.chain, (list = []));
      for (const e of batch.events) list.push(e);
    }
  }
  return byChain;
}

/** Collects failed checks, so hot loops stay cheap; assert `failures` is empty at the end. */
class Checks {
  readonly failures: string[] = [];
  that(ok: boolean, what: () => string): void {
    if (!ok && this.failures.length < 20) this.failures.push(what());
  }
}

function hourly(hours: number): number[] {
  return Array.from({ length: hours }, (_, i) => GENESIS + (i + 1) * HOUR);
}

function decodeBase58Length(text: string): number {
  let n = 0n;
  for (const c of text) {
    const d = BASE58_ALPHABET.indexOf(c);
    if (d < 0) return -1;
    n = n * 58n + BigInt(d);
  }
  let bytes = 0;
  for (; n > 0n; n >>= 8n) bytes++;
  return bytes;
}

describe('simulator', () => {
  it('is deterministic: same seed, same events; another seed, other events', () => {
    const untils = hourly(4);
    const flat = (m: Map<string, ChainEvent[]>) => [...m].flatMap(([chain, events]) => events.map((e) => serialise(chain, e)));
    const a = flat(run(options(), untils));
    const b = flat(run(options(), untils));
    const c = flat(run(options({ seed: 7 }), untils));
    expect(a.length).toBeGreaterThan(1000);
    expect(b.slice(0, 1000)).toEqual(a.slice(0, 1000));
    expect(b).toEqual(a);
    expect(c.slice(0, 1000)).not.toEqual(a.slice(0, 1000));
  });

  it('does not depend on how time is cut into advance() calls', () => {
    const end = GENESIS + 5 * HOUR;
    const whole = run(options(), [end]);
    const cuts: number[] = [GENESIS - 100, GENESIS, GENESIS + 0.5];
    // Irregular steps, fractional instants and repeated / earlier instants (no-ops).
    for (let t = GENESIS + 1, i = 0; t < end; i++) {
      t += [1, 7.3, 0.25, 600, 13, 1799.9, 2][i % 7]!;
      cuts.push(Math.min(t, end));
      if (i % 5 === 0) cuts.push(t - 3);
    }
    cuts.push(end);
    const chunked = run(options(), cuts);
    expect([...chunked.keys()].sort()).toEqual([...whole.keys()].sort());
    for (const [chain, events] of whole) {
      const other = chunked.get(chain)!;
      expect(other.length).toBe(events.length);
      expect(other.map((e) => serialise(chain, e))).toEqual(events.map((e) => serialise(chain, e)));
    }
  });

  it('resumed from its saved state, goes on with byte for byte the events of the uninterrupted run', () => {
    const opts = options({ newPoolsPerHour: 40 });
    const whole = createSimulator(opts);
    const first = createSimulator(opts);
    const flat = (batches: ChainEventBatch[]) => batches.flatMap((b) => b.events.map((e) => serialise(b.chain, e)));
    // Saved mid-history, after pools were created live and liquidity moved: the saved state holds all of it.
    const cut = GENESIS + 7 * HOUR + 0.5;
    const before = flat(whole.advance(cut));
    expect(flat(first.advance(cut))).toEqual(before);
    const resumed = resumeSimulator(first.saveState());
    expect(resumed.time).toBe(cut);
    expect(resumed.networks).toEqual(whole.networks);
    let events = 0;
    let created = 0;
    for (let t = cut + 600; t <= GENESIS + 15 * HOUR; t += 1_799.7) {
      const expected = flat(whole.advance(t));
      events += expected.length;
      created += expected.filter((e) => e.includes('"kind":"pool_created"')).length;
      expect(flat(resumed.advance(t))).toEqual(expected);
    }
    expect(events).toBeGreaterThan(2_000);
    // Pools created live after the cut are among them.
    expect(created).toBeGreaterThan(100);
  });

  it('reports time, refuses going back and validates options', () => {
    const sim = createSimulator(options({ pools: 50 }));
    expect(sim.time).toBe(GENESIS);
    expect(sim.advance(GENESIS - 10)).toEqual([]);
    expect(sim.advance(GENESIS + 60).length).toBeGreaterThan(0);
    expect(sim.time).toBe(GENESIS + 60);
    expect(sim.advance(GENESIS + 30)).toEqual([]);
    expect(sim.time).toBe(GENESIS + 60);
    expect(() => sim.advance(Infinity)).toThrow(RangeError);
    expect(() => createSimulator(options({ networks: ['nope'] }))).toThrow(/unknown simulator network/);
    expect(() => createSimulator(options({ pools: 0 }))).toThrow(RangeError);
    expect(() => createSimulator(options({ genesisTime: 1_500_000_000 }))).toThrow(/precedes/);
    const two = createSimulator(options({ pools: 50, networks: ['solana', 'base'] }));
    expect(two.networks.map((n) => n.id)).toEqual(['solana', 'base']);
    expect(() => two.pricingAnchors('ethereum')).toThrow();
  });

  it('emits strictly increasing keys per chain, blocks before their events, block timestamps on events', () => {
    const byChain = run(options(), hourly(6));
    expect(byChain.size).toBe(8);
    const check = new Checks();
    const evmHash = /^0x[0-9a-f]{64}$/;
    const evmAddress = /^0x[0-9a-f]{40}$/;
    for (const [chain, events] of byChain) {
      const evm = chain !== 'solana';
      const blockTime = EXPECTED_NETWORKS[chain]!.blockTime;
      let block: Extract<ChainEvent, { kind: 'block' }> | null = null;
      let eventsInBlock = 0;
      let last = { blockNumber: -1, txIndex: -1, logIndex: -1 };
      let lastTx = '';
      for (const e of events) {
        const at = () => `${chain} ${serialise(chain, e)}`;
        if (e.kind === 'block') {
          if (block) {
            check.that(eventsInBlock > 0, () => `empty block before ${at()}`);
            check.that(e.number > block.number && e.timestamp >= block.timestamp, at);
            // Constant block time: timestamps follow the numbers.
            check.that(Math.abs(e.timestamp - block.timestamp - (e.number - block.number) * blockTime) <= 1, at);
            if (e.number === block.number + 1) check.that(e.parentHash === block.hash, at);
          }
          if (evm) check.that(evmHash.test(e.hash) && evmHash.test(e.parentHash), at);
          else check.that(decodeBase58Length(e.hash) === 32 && decodeBase58Length(e.parentHash) === 32, at);
          check.that(e.parentHash !== e.hash, at);
          block = e;
          eventsInBlock = 0;
          continue;
        }
        if (e.kind === 'reorg') throw new Error('no reorgs expected');
        if (!block) throw new Error(`event before any block: ${at()}`);
        check.that(e.key.blockNumber === block.number && e.timestamp === block.timestamp, at);
        check.that(compareKeys(e.key, last) > 0, at);
        if (e.key.blockNumber === last.blockNumber) {
          // EVM semantics: log index block-wide, tx index grows by one per transaction.
          check.that(e.key.logIndex === last.logIndex + 1, at);
          check.that(e.key.txIndex === last.txIndex || e.key.txIndex === last.txIndex + 1, at);
        } else {
          check.that(e.key.txIndex === 0 && e.key.logIndex === 0, at);
        }
        last = e.key;
        eventsInBlock++;
        if (e.kind === 'swap' || e.kind === 'mint' || e.kind === 'burn') {
          check.that(evm ? evmHash.test(e.txHash) : decodeBase58Length(e.txHash) === 64, at);
          check.that(e.txHash !== lastTx, at);
          lastTx = e.txHash;
        }
        if (e.kind === 'swap') check.that(evm ? evmAddress.test(e.recipient) && evmAddress.test(e.sender) : decodeBase58Length(e.recipient) === 32, at);
        if (e.kind === 'pool_created') {
          if (evm) check.that(evmAddress.test(e.pool) && evmAddress.test(e.token0.address) && evmAddress.test(e.factory), at);
          else check.that(decodeBase58Length(e.pool) === 32 && decodeBase58Length(e.token1.address) === 32, at);
          check.that(e.token0.address < e.token1.address, at);
        }
      }
      check.that(eventsInBlock > 0, () => `${chain}: empty last block`);
    }
    expect(check.failures).toEqual([]);
  });

  it('keeps reserves consistent with the events: replay reproduces them and the CP formula holds', () => {
    const byChain = run(options({ pools: 800 }), hourly(12));
    const check = new Checks();
    let swaps = 0;
    let concentratedSwaps = 0;
    let collects = 0;
    for (const [chain, events] of byChain) {
      const pools = new Map<string, { created: PoolCreated; r0: bigint; r1: bigint; sync: Extract<ChainEvent, { kind: 'sync' }> | null; burn: Extract<ChainEvent, { kind: 'burn' }> | null }>();
      for (const e of events) {
        if (e.kind === 'block' || e.kind === 'reorg') continue;
        const at = () => `${chain} ${serialise(chain, e)}`;
        if (e.kind === 'pool_created') {
          check.that(!pools.has(e.pool), at);
          pools.set(e.pool, { created: e, r0: 0n, r1: 0n, sync: null, burn: null });
          continue;
        }
        const p = pools.get(e.pool);
        if (!p) throw new Error(`event before its pool_created: ${at()}`);
        const cp = p.created.protocol === PoolProtocol.ConstantProduct;
        if (e.kind === 'sync') {
          check.that(cp && p.sync === null, at);
          p.sync = e;
          continue;
        }
        let d0: bigint;
        let d1: bigint;
        if (e.kind === 'reserve_delta') {
          // A concentrated pool's collect, right after its burn in the same tx, pays the burned amounts out.
          const b = p.burn;
          check.that(!cp && b !== null && b.key.blockNumber === e.key.blockNumber && b.key.txIndex === e.key.txIndex && b.key.logIndex === e.key.logIndex - 1, () => `collect without its burn: ${at()}`);
          check.that(b !== null && e.amount0 === -b.amount0 && e.amount1 === -b.amount1, at);
          p.burn = null;
          collects++;
          p.r0 += e.amount0;
          p.r1 += e.amount1;
          check.that(p.r0 >= 0n && p.r1 >= 0n, () => `negative reserves: ${at()}`);
          continue;
        }
        check.that(p.burn === null, () => `burn without its collect before: ${at()}`);
        if (e.kind === 'swap') {
          d0 = e.amount0;
          d1 = e.amount1;
          check.that((d0 > 0n && d1 < 0n) || (d0 < 0n && d1 > 0n), at);
          if (cp) {
            check.that(e.sqrtPriceX96 === 0n && e.liquidity === 0n, at);
            // Recompute the output from the pre-swap reserves.
            const zeroForOne = d0 > 0n;
            const amountIn = zeroForOne ? d0 : d1;
            const [rIn, rOut] = zeroForOne ? [p.r0, p.r1] : [p.r1, p.r0];
            const keep = PPM - BigInt(p.created.feePpm);
            const out = (amountIn * keep * rOut) / (rIn * PPM + amountIn * keep);
            check.that(-(zeroForOne ? d1 : d0) === out, () => `CP output ${out}: ${at()}`);
            swaps++;
          } else {
            check.that(e.sqrtPriceX96 > 0n && e.liquidity > 0n, at);
            const price = (Number(e.sqrtPriceX96) / 2 ** 96) ** 2;
            check.that(Math.abs(e.tick - Math.log(price) / Math.log(1.0001)) < 2, at);
            concentratedSwaps++;
          }
        } else {
          check.that(e.amount0 >= 0n && e.amount1 >= 0n && e.tickLower < e.tickUpper, at);
          const sign = e.kind === 'mint' ? 1n : -1n;
          d0 = sign * e.amount0;
          d1 = sign * e.amount1;
          if (!cp && e.kind === 'burn') {
            // A concentrated burn moves no tokens: the collect that follows does.
            p.burn = e;
            continue;
          }
        }
        p.r0 += d0;
        p.r1 += d1;
        check.that(p.r0 >= 0n && p.r1 >= 0n, () => `negative reserves: ${at()}`);
        if (cp) {
          // The Sync right before, in the same tx, holds exactly the replayed reserves.
          const s = p.sync;
          check.that(
            s !== null && s.key.blockNumber === e.key.blockNumber && s.key.txIndex === e.key.txIndex && s.key.logIndex === e.key.logIndex - 1,
            () => `no Sync right before: ${at()}`,
          );
          check.that(s !== null && s.reserve0 === p.r0 && s.reserve1 === p.r1, () => `Sync ${s && serialise(chain, s)} vs replay: ${at()}`);
          p.sync = null;
        }
      }
    }
    expect(check.failures).toEqual([]);
    expect(swaps).toBeGreaterThan(1000);
    expect(concentratedSwaps).toBeGreaterThan(1000);
    expect(collects).toBeGreaterThan(10);
  });

  it('produces a plausible market after one simulated day', () => {
    const sim = createSimulator(options({ pools: 2000 }));
    expect(sim.name).toBe('simulator');
    expect(sim.networks.map((n) => n.id)).toEqual(Object.keys(EXPECTED_NETWORKS));
    for (const n of sim.networks) {
      const expected = EXPECTED_NETWORKS[n.id]!;
      expect(n.displayName).toBe(expected.name);
      expect(n.blockTimeSeconds).toBe(expected.blockTime);
      expect(n.dexes.length).toBeGreaterThanOrEqual(2);
      expect(n.dexes.length).toBeLessThanOrEqual(5);
      for (const id of expected.dexes) expect(n.dexes.map((d) => d.id)).toContain(id);
      for (const d of n.dexes) expect(d.factory.length).toBeGreaterThan(30);
    }
    expect(sim.networks.find((n) => n.id === 'ethereum')!.dexes.find((d) => d.id === 'uniswap_v3')!.poolProtocol).toBe(PoolProtocol.Concentrated);
    expect(sim.networks.find((n) => n.id === 'ethereum')!.dexes.find((d) => d.id === 'uniswap_v2')!.poolProtocol).toBe(PoolProtocol.ConstantProduct);

    const created = new Map<string, PoolCreated & { chain: string }>();
    const reserves = new Map<string, [bigint, bigint]>();
    const lastSqrtPrice = new Map<string, bigint>();
    const swapsPerChain = new Map<string, number>();
    const batches: ChainEventBatch[] = [];
    for (const until of hourly(24)) batches.push(...sim.advance(until));
    for (const batch of batches) {
      for (const e of batch.events) {
        if (e.kind === 'pool_created') created.set(e.pool, { ...e, chain: batch.chain });
        else if (e.kind === 'sync') reserves.set(e.pool, [e.reserve0, e.reserve1]);
        else if (e.kind === 'swap') {
          swapsPerChain.set(batch.chain, (swapsPerChain.get(batch.chain) ?? 0) + 1);
          if (e.sqrtPriceX96 > 0n) lastSqrtPrice.set(e.pool, e.sqrtPriceX96);
        }
      }
    }
    // Pools and trading on every network.
    for (const id of Object.keys(EXPECTED_NETWORKS)) {
      expect([...created.values()].some((c) => c.chain === id)).toBe(true);
      expect(swapsPerChain.get(id) ?? 0).toBeGreaterThan(100);
    }
    // Defaults average 1.5 noise swaps/s; arbitrage swaps come on top.
    const swaps = [...swapsPerChain.values()].reduce((a, b) => a + b, 0);
    expect(swaps).toBeGreaterThan(1.2 * DAY);
    expect(swaps).toBeLessThan(3.5 * DAY);

    // Roles and anchors.
    for (const n of sim.networks) {
      const anchors = sim.pricingAnchors(n.id);
      expect(anchors.stablecoins.length).toBeGreaterThanOrEqual(2);
      const tokens = [...created.values()].filter((c) => c.chain === n.id).flatMap((c) => [c.token0, c.token1]);
      const byAddress = new Map(tokens.map((t) => [t.address, t]));
      expect(byAddress.get(anchors.stablecoins[0]!)?.role).toBe(TokenRole.PrimaryStable);
      expect(byAddress.get(anchors.stablecoins[0]!)?.symbol).toBe('USDC');
      for (const s of anchors.stablecoins.slice(1)) if (byAddress.has(s)) expect(byAddress.get(s)!.role).toBe(TokenRole.Stable);
      expect(byAddress.get(anchors.wrappedNative)?.role).toBe(TokenRole.WrappedNative);
      for (const t of tokens) expect(t.totalSupply > 0n).toBe(true);
    }

    const price = (c: PoolCreated, r: [bigint, bigint], base: string) => {
      const p = (Number(r[1]) / Number(r[0])) * 10 ** (c.token0.decimals - c.token1.decimals);
      return c.token0.symbol === base ? p : 1 / p;
    };
    const find = (chain: string, dex: string, a: string, b: string) =>
      [...created.values()].filter(
        (c) => c.chain === chain && c.dexId === dex && [c.token0.symbol, c.token1.symbol].sort().join('/') === [a, b].sort().join('/'),
      );

    // Stable pair on a constant-product pool: reserves ratio within 1 % of 1.
    const stable = find('ethereum', 'uniswap_v2', 'USDC', 'USDT')[0]!;
    expect(stable).toBeDefined();
    expect(Math.abs(price(stable, reserves.get(stable.pool)!, 'USDT') - 1)).toBeLessThan(0.01);

    // Wrapped ETH in USDC: constant-product reserves and a concentrated pool's sqrtPriceX96.
    const wethCp = find('ethereum', 'uniswap_v2', 'WETH', 'USDC')[0]!;
    const ethCp = price(wethCp, reserves.get(wethCp.pool)!, 'WETH');
    expect(ethCp).toBeGreaterThan(1000);
    expect(ethCp).toBeLessThan(10_000);
    const wethCl = find('ethereum', 'uniswap_v3', 'WETH', 'USDC').find((c) => lastSqrtPrice.has(c.pool))!;
    expect(wethCl).toBeDefined();
    const sqrt = Number(lastSqrtPrice.get(wethCl.pool)!) / 2 ** 96;
    const ethCl = price(wethCl, [10n ** 18n, BigInt(Math.round(sqrt * sqrt * 1e18))], 'WETH');
    expect(Math.abs(ethCl / ethCp - 1)).toBeLessThan(0.02);

    // Same pair on two networks and DEXes: arbitrage keeps them together.
    const wethBase = find('base', 'aerodrome', 'WETH', 'USDC')[0]!;
    expect(Math.abs(price(wethBase, reserves.get(wethBase.pool)!, 'WETH') / ethCp - 1)).toBeLessThan(0.02);
  });

  it('computes exact integer square roots', () => {
    for (const n of [0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n, (1n << 200n) - 1n, 1n << 200n, 10n ** 60n + 7n, (10n ** 40n + 1n) ** 2n - 1n]) {
      const r = isqrt(n);
      expect(r * r <= n && (r + 1n) * (r + 1n) > n).toBe(true);
      for (const estimate of [1n, r, r + 1n, r + 12345n, r / 2n + 1n]) expect(isqrtNear(n, estimate)).toBe(r);
    }
  });
});
