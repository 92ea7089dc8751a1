/**
 * One Solana cluster followed over JSON-RPC by polling: `getSlot` for the head at the configured
 * commitment, `getBlocks` for the slots that hold a block (skipped slots are simply absent), and
 * `getBlock` (json, full transactions, maxSupportedTransactionVersion 0) for each of them, a step's
 * worth at once. Swaps of the configured DEX programs become `pool_created` (first sight), `sync`
 * (the pool's vault balances after the transaction) and `swap` events keyed by (slot, transaction
 * index in the block, event index in the transaction); liquidity adds and removes a `sync` and a
 * `mint` or `burn`; any other change of a known pool's vaults a `sync` (both vaults listed by the
 * transaction) or a `reserve_delta` (one of them); a `block` precedes each block's events.
 *
 * Forks: at `confirmed` commitment a slot read may still be abandoned. The follower keeps the hashes
 * of recent blocks it read; before each step the last one is asked for again, and when it is gone or
 * its hash changed, the kept hashes are walked back to the newest block the node still has, and the
 * step begins with a `reorg` to it (pools first seen after it are forgotten), followed by the blocks
 * of the canonical fork. Each block read must also name the previous block read as its parent.
 *
 * Start: a resumed chain goes on after its checkpoint; a fresh one at `startSlot`, or at the first
 * block of the last `recentDays` days (a binary search over block times, startFromRecent), or
 * `backfillSlots` before the node's slot.
 */
import { PoolProtocol, type ChainEvent, type ChainEventBatch, type DexInfo, type NetworkInfo, type Reorg, type TokenInfo } from '../../events/model.js';
import { chainRpcClient, RpcError, type RpcClient } from '../evm/rpc.js';
import type { ChainResume } from '../evm/chain.js';
import { pubsubUrl, type SolanaChainConfig, type SolanaProgramConfig } from './config.js';
import { SwapDecoder, type DecodedSwap } from './decode.js';
import { SOLANA_PRESET } from './preset.js';
import { SlotSubscription, type FollowMode } from './subscribe.js';
import { readTokens } from './tokens.js';
import type { RpcTransaction } from './transaction.js';

export interface SolanaBlock {
  readonly blockhash: string;
  readonly previousBlockhash: string;
  readonly parentSlot: number;
  readonly blockTime: number | null;
  readonly transactions?: readonly RpcTransaction[];
}

export class SlotForkTooDeepError extends Error {
  override readonly name = 'SlotForkTooDeepError';
}

export interface SlotProgress {
  readonly chain: string;
  /** First slot of this run's reading (-1 until known: a start from the head or from recentDays is found at the first step). */
  readonly startSlot: number;
  readonly nextSlot: number;
  /** The node's slot at the configured commitment, -1 before the first poll. */
  readonly headSlot: number;
  readonly caughtUp: boolean;
  readonly pools: number;
  /** Pools per configured program (its DEX id), in the configuration's order. */
  readonly programs: readonly { readonly dexId: string; readonly pools: number }[];
  readonly events: number;
  readonly blocks: number;
  readonly transactions: number;
  readonly swaps: number;
  /** Liquidity adds and removes decoded. */
  readonly liquidityChanges: number;
  /** Reserve changes of known pools by transactions without a decoded instruction of theirs. */
  readonly balanceChanges: number;
  readonly reorgs: number;
  readonly lastReorgSlot: number;
  readonly rpcRetries: number;
  readonly rpcLastError: string;
  readonly rpcLastSuccessAt: number;
  /** How new slots are learnt of now: a block or slot subscription, or polling. */
  readonly follow: FollowMode;
  /** Subscription notifications received, subscriptions lost once up (closed or silent), and the last failure. */
  readonly notifications: number;
  readonly subscriptionFallbacks: number;
  readonly subscriptionLastError: string;
}

export interface SlotFollowerOptions {
  readonly config: SolanaChainConfig;
  readonly resume?: ChainResume;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly rpc?: RpcClient;
  /** Records this source kept in the store about the chain (ChainEventBatch.records): the pools' vaults. */
  readonly records?: ReadonlyMap<string, unknown>;
}

/** Record key of a pool's vaults; its value is [program id, vault 0, vault 1 or null]. */
const VAULTS_RECORD = 'vaults.';

/** Block hashes kept to find a fork point (a confirmed slot is abandoned within a few dozen slots, if ever). */
export const RECENT_SLOTS = 512;
/** JSON-RPC errors of `getBlock` for a slot without a block: skipped, or not available (cleaned up or not yet there). */
const SLOT_SKIPPED = new Set([-32007, -32009, -32004]);
const DAY_S = 86_400;

const SQRT_LIMIT = (1n << 160n) - 1n;

/** Integer square root (Newton). */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  if (x === 0n) x = 1n;
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x && y - x <= 1n) {
      while (x * x > n) x--;
      while ((x + 1n) * (x + 1n) <= n) x++;
      return x;
    }
    x = y;
  }
}

/**
 * The swap's price, token 0 in token 1 (raw units), as Q64.96 square root: the trade's own rate
 * (|amount1| / |amount0|), which is what the transaction proves of the price of every family, curves
 * and bins included.
 */
export function tradeSqrtPriceX96(amount0: bigint, amount1: bigint): bigint {
  const a0 = amount0 < 0n ? -amount0 : amount0;
  const a1 = amount1 < 0n ? -amount1 : amount1;
  if (a0 === 0n) return 0n;
  const q = isqrt((a1 << 192n) / a0);
  return q > SQRT_LIMIT ? SQRT_LIMIT : q;
}

export function solanaNetworkInfo(config: SolanaChainConfig): NetworkInfo {
  return {
    id: config.id,
    displayName: config.displayName,
    blockTimeSeconds: config.slotSeconds,
    dexes: config.programs.map((p): DexInfo => ({ id: p.dexId, name: p.name ?? p.dexId, protocol: p.family, poolProtocol: PoolProtocol.Concentrated, factory: p.programId })),
  };
}

export class SlotFollower {
  readonly config: SolanaChainConfig;
  readonly rpc: RpcClient;
  time = 0;
  caughtUp = false;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly decoder: SwapDecoder;
  private readonly programs = new Map<string, SolanaProgramConfig>();
  /** Known pools and the slot they were first seen at (absent: before anything a fork can reach). */
  private readonly pools = new Map<string, number | undefined>();
  /** Program id of each known pool, and pools per program id. */
  private readonly poolProgram = new Map<string, string>();
  private readonly programPools = new Map<string, number>();
  private readonly tokens = new Map<string, TokenInfo>();
  private readonly recent = new Map<number, string>();
  private last: { slot: number; hash: string } | null = null;
  private nextSlot: number;
  private startSlot = -1;
  /** recentDays still to be turned into a slot (a first start, before the first step). */
  private recentPending: boolean;
  private headSlot = -1;
  private lastHeadPoll = 0;
  private started = false;
  /** The node's announcements of new slots (null: not subscribing, or before the first step). */
  private subscription: SlotSubscription | null = null;
  /** Announcements of a slot not read yet, and how many of them a step has answered. */
  private announced = 0;
  private answered = 0;
  /** Called on an announcement: the owner of the follower steps it at once instead of at its next tick. */
  wake: (() => void) | null = null;
  private counts = { events: 0, blocks: 0, transactions: 0, swaps: 0, liquidityChanges: 0, balanceChanges: 0, reorgs: 0, lastReorgSlot: -1 };

  constructor(options: SlotFollowerOptions) {
    this.config = options.config;
    this.now = options.now ?? (() => Date.now() / 1000);
    this.log = options.log ?? (() => {});
    this.rpc = options.rpc ?? chainRpcClient(options.config, (line) => this.log(line));
    for (const p of options.config.programs) this.programs.set(p.programId, p);
    this.decoder = new SwapDecoder({ families: new Map(options.config.programs.map((p) => [p.programId, p.family])), wrappedNative: options.config.wrappedNative });
    this.nextSlot = Math.max(options.config.startSlot ?? 0, options.resume?.nextBlock ?? 0);
    // A resumed chain goes on after its checkpoint; a fresh one without startSlot starts from the head (first step).
    const resumed = (options.resume?.nextBlock ?? 0) > 0;
    this.started = options.config.startSlot !== undefined || resumed;
    if (this.started) this.startSlot = this.nextSlot;
    this.recentPending = options.config.recentDays !== undefined && !resumed;
    for (const p of options.resume?.pools ?? []) {
      this.pools.set(p.address, p.createdBlock);
      if (p.factory !== undefined) this.countPool(p.address, p.factory);
    }
    for (const t of options.resume?.tokens ?? []) this.tokens.set(t.address, t);
    // The vaults of pools seen before the restart: a transaction that only moves them still moves the reserves.
    for (const [key, value] of options.records ?? []) {
      if (!key.startsWith(VAULTS_RECORD) || !Array.isArray(value)) continue;
      const [programId, vault0, vault1] = value as [unknown, unknown, unknown];
      if (typeof programId === 'string' && typeof vault0 === 'string' && (typeof vault1 === 'string' || vault1 === null)) this.decoder.knowVaults(key.slice(VAULTS_RECORD.length), programId, vault0, vault1);
    }
    const recent = [...(options.resume?.recentBlocks ?? [])].sort((a, b) => a[0] - b[0]);
    for (const [n, h] of recent) this.remember(n, h);
    const newest = recent[recent.length - 1];
    if (newest) this.last = { slot: newest[0], hash: newest[1] };
  }

  progress(): SlotProgress {
    return {
      chain: this.config.id,
      startSlot: this.startSlot,
      nextSlot: this.nextSlot,
      headSlot: this.headSlot,
      caughtUp: this.caughtUp,
      pools: this.pools.size,
      programs: this.config.programs.map((p) => ({ dexId: p.dexId, pools: this.programPools.get(p.programId) ?? 0 })),
      ...this.counts,
      rpcRetries: this.rpc.stats.retries,
      rpcLastError: this.rpc.stats.lastError,
      rpcLastSuccessAt: this.rpc.stats.lastSuccessAt,
      follow: this.subscription?.mode ?? 'polling',
      notifications: this.subscription?.notifications ?? 0,
      subscriptionFallbacks: this.subscription?.fallbacks ?? 0,
      subscriptionLastError: this.subscription?.lastError ?? '',
    };
  }

  /** Opens the node's subscription (config `subscribe`), once. */
  private subscribe(): void {
    if (!this.config.subscribe || this.subscription !== null) return;
    this.subscription = new SlotSubscription({
      chain: this.config.id,
      url: pubsubUrl(this.config),
      commitment: this.config.commitment,
      silenceMs: this.config.wsSilenceMs,
      retryMaxMs: this.config.wsRetryMaxMs,
      log: this.log,
      // Up (again): one step reads whatever the node has that was not read while polling.
      onUp: () => {
        this.announced++;
        this.wake?.();
      },
      onSlot: (slot) => {
        // A slot before the next one to read brings nothing new (slotSubscribe announces every slot the node starts).
        if (slot < this.nextSlot) return;
        this.announced++;
        this.wake?.();
      },
    });
  }

  /** Closes the subscription. */
  async close(): Promise<void> {
    const s = this.subscription;
    this.subscription = null;
    await s?.close();
  }

  /** Reads the next step of blocks up to the node's slot: their events in chain order, null when none. */
  async step(): Promise<ChainEventBatch | null> {
    this.subscribe();
    const wall = this.now();
    // Once live: a step when the node announced a slot not read yet; else, with no subscription up, every poll interval.
    const subscribed = this.subscription !== null && this.subscription.mode !== 'polling';
    if (this.caughtUp && this.announced === this.answered && (subscribed || (wall - this.lastHeadPoll) * 1000 < this.config.pollIntervalMs)) {
      this.time = Math.max(this.time, wall);
      return null;
    }
    this.answered = this.announced;
    this.lastHeadPoll = wall;
    const commitment = this.config.commitment;
    const [head, reorg] = await Promise.all([this.rpc.request<number>('getSlot', [{ commitment }]), this.checkLast()]);
    this.headSlot = head;
    if (!this.started) {
      this.nextSlot = this.recentPending ? await this.startFromRecent(head) : Math.max(0, head - this.config.backfillSlots);
      this.startSlot = this.nextSlot;
      this.started = true;
    }
    const events: ChainEvent[] = reorg ? [reorg] : [];
    if (this.nextSlot > head) {
      this.caughtUp = true;
      this.time = Math.max(this.time, this.now());
      return this.deliver(events);
    }
    const end = Math.min(head, this.nextSlot + this.config.rangeSlots - 1);
    const slots = await this.rpc.request<number[]>('getBlocks', [this.nextSlot, end, { commitment }]);
    const take = slots.filter((s) => s >= this.nextSlot && s <= end).slice(0, this.config.stepBlocks);
    // Every slot before the next one listed, and up to `end` when the list is used up, holds no block.
    const through = take.length === this.config.stepBlocks ? take[take.length - 1]! : end;
    const blocks = await Promise.all(take.map((s) => this.block(s)));
    const read = await this.read(take, blocks, events);
    if (!read) return this.deliver(events);
    this.nextSlot = through + 1;
    this.caughtUp = through >= head;
    this.time = Math.max(this.time, this.caughtUp ? this.now() : read.time);
    return this.deliver(events);
  }

  private deliver(events: ChainEvent[]): ChainEventBatch | null {
    if (events.length === 0) return null;
    this.counts.events += events.length;
    // Vaults learnt in this step are kept with its events (kept by the decoder until a batch carries them).
    const learned = this.decoder.takeLearned();
    if (learned.length === 0) return { chain: this.config.id, events };
    return { chain: this.config.id, events, records: learned.map(([pool, program, v0, v1]) => [VAULTS_RECORD + pool, [program, v0, v1]] as const) };
  }

  /** A block, or null for a slot that has none after all (skipped or cleaned up). */
  private async block(slot: number): Promise<SolanaBlock | null> {
    try {
      return await this.rpc.request<SolanaBlock | null>('getBlock', [
        slot,
        { encoding: 'json', maxSupportedTransactionVersion: 0, transactionDetails: 'full', rewards: false, commitment: this.config.commitment },
      ]);
    } catch (err) {
      if (err instanceof RpcError && SLOT_SKIPPED.has(err.code)) return null;
      throw err;
    }
  }

  /**
   * Decodes the blocks into `events`; false (nothing kept) when a block does not extend the one
   * before it as read, which the next step's check of the last block sorts out.
   */
  private async read(slots: readonly number[], blocks: readonly (SolanaBlock | null)[], events: ChainEvent[]): Promise<{ time: number } | false> {
    let prev = this.last;
    const swaps: { slot: number; block: SolanaBlock; tx: number; sig: string; swaps: DecodedSwap[] }[] = [];
    let time = this.time;
    for (let i = 0; i < slots.length; i++) {
      const b = blocks[i];
      if (!b) continue;
      if (prev !== null && b.parentSlot === prev.slot && b.previousBlockhash !== prev.hash) {
        this.log(`${this.config.id}: slot ${slots[i]} does not extend slot ${prev.slot} as read; checking for a fork`);
        return false;
      }
      if (prev !== null && b.parentSlot < prev.slot) {
        this.log(`${this.config.id}: slot ${slots[i]} descends from slot ${b.parentSlot}, not from slot ${prev.slot} as read; checking for a fork`);
        return false;
      }
      prev = { slot: slots[i]!, hash: b.blockhash };
      const txs = b.transactions ?? [];
      this.counts.blocks++;
      this.counts.transactions += txs.length;
      for (let t = 0; t < txs.length; t++) {
        const tx = txs[t]!;
        const found = this.decoder.decode(tx);
        if (found.length > 0) swaps.push({ slot: slots[i]!, block: b, tx: t, sig: tx.transaction.signatures[0]!, swaps: found });
      }
      if (b.blockTime !== null) time = b.blockTime;
    }
    await this.learnTokens(swaps.flatMap((s) => s.swaps));
    let announced = -1;
    for (const s of swaps) {
      const timestamp = s.block.blockTime ?? Math.floor(this.now());
      if (s.slot !== announced) {
        events.push({ kind: 'block', number: s.slot, hash: s.block.blockhash, parentHash: s.block.previousBlockhash, timestamp });
        this.remember(s.slot, s.block.blockhash);
        announced = s.slot;
      }
      let seq = 0;
      for (const d of s.swaps) {
        const key = () => ({ blockNumber: s.slot, txIndex: s.tx, logIndex: seq++ });
        if (d.kind === 'balance') {
          // A known pool's vaults moved by something other than a decoded instruction: its reserves follow.
          if (!this.pools.has(d.pool)) continue;
          if (d.complete) events.push({ kind: 'sync', key: key(), timestamp, pool: d.pool, reserve0: d.reserve0, reserve1: d.reserve1 });
          else events.push({ kind: 'reserve_delta', key: key(), timestamp, pool: d.pool, amount0: d.amount0, amount1: d.amount1 });
          this.counts.balanceChanges++;
          continue;
        }
        if (!this.pools.has(d.pool)) {
          const program = this.programs.get(d.programId)!;
          events.push({
            kind: 'pool_created',
            key: key(),
            timestamp,
            pool: d.pool,
            dexId: program.dexId,
            factory: program.programId,
            protocol: PoolProtocol.Concentrated,
            feePpm: program.feePpm,
            token0: this.tokens.get(d.mint0)!,
            token1: this.tokens.get(d.mint1)!,
          });
          this.pools.set(d.pool, s.slot);
          this.countPool(d.pool, d.programId);
        }
        events.push({ kind: 'sync', key: key(), timestamp, pool: d.pool, reserve0: d.reserve0, reserve1: d.reserve1 });
        if (d.kind !== 'swap') {
          const abs = (x: bigint) => (x < 0n ? -x : x);
          events.push({ kind: d.kind === 'add' ? 'mint' : 'burn', key: key(), timestamp, pool: d.pool, amount0: abs(d.amount0), amount1: abs(d.amount1), liquidity: 0n, tickLower: 0, tickUpper: 0, owner: d.trader, txHash: s.sig });
          this.counts.liquidityChanges++;
          continue;
        }
        events.push({
          kind: 'swap',
          key: key(),
          timestamp,
          pool: d.pool,
          amount0: d.amount0,
          amount1: d.amount1,
          sqrtPriceX96: tradeSqrtPriceX96(d.amount0, d.amount1),
          liquidity: 0n,
          tick: 0,
          txHash: s.sig,
          sender: d.trader,
          recipient: d.trader,
        });
        this.counts.swaps++;
      }
    }
    if (prev !== null) {
      this.remember(prev.slot, prev.hash);
      this.last = prev;
    }
    return { time };
  }

  /** Reads the metadata of every mint not known yet. */
  private async learnTokens(swaps: readonly DecodedSwap[]): Promise<void> {
    const missing = new Map<string, number>();
    for (const d of swaps) {
      if (d.kind === 'balance') continue;
      if (!this.tokens.has(d.mint0)) missing.set(d.mint0, d.decimals0);
      if (!this.tokens.has(d.mint1)) missing.set(d.mint1, d.decimals1);
    }
    if (missing.size === 0) return;
    const known = [SOLANA_PRESET.wrappedNative, ...SOLANA_PRESET.stablecoins];
    for (const t of await readTokens(this.rpc, missing, { stablecoins: this.config.stablecoins, wrappedNative: this.config.wrappedNative }, known)) this.tokens.set(t.address, t);
  }

  private countPool(pool: string, programId: string): void {
    this.poolProgram.set(pool, programId);
    this.programPools.set(programId, (this.programPools.get(programId) ?? 0) + 1);
  }

  /**
   * The first slot to read for recentDays: the first block whose block time is at or after now minus
   * those days. A binary search over slots, each probe taking the first block at or after its slot
   * (`getBlocksWithLimit`: skipped slots are passed over) and that block's time (`getBlockTime`); about
   * 2 x 29 requests over mainnet's slots. A node that keeps less history starts at its first block.
   */
  private async startFromRecent(head: number): Promise<number> {
    const days = this.config.recentDays!;
    const since = Math.floor(this.now() - days * DAY_S);
    const commitment = this.config.commitment;
    /** The first slot at or after `slot` (and at most `head`) that holds a block, -1 when none. */
    const blockAtOrAfter = async (slot: number): Promise<number> => {
      const list = await this.rpc.request<number[]>('getBlocksWithLimit', [slot, 1, { commitment }]);
      const b = list[0];
      return b !== undefined && b <= head ? b : -1;
    };
    /** Whether the first block at or after `slot` is at or after `since` (a slot with no block after it: yes). */
    const recent = async (slot: number): Promise<boolean> => {
      const b = await blockAtOrAfter(slot);
      if (b < 0) return true;
      let t: number | null = null;
      try {
        t = await this.rpc.request<number | null>('getBlockTime', [b]);
      } catch (err) {
        if (!(err instanceof RpcError) || !SLOT_SKIPPED.has(err.code)) throw err;
      }
      // A block without a recorded time is from before block times were kept: older than any start asked for.
      return t !== null && t >= since;
    };
    let lo = 0;
    try {
      lo = await this.rpc.request<number>('getFirstAvailableBlock', []);
    } catch (err) {
      if (!(err instanceof RpcError) || err.retryable) throw err;
    }
    let hi = head + 1;
    if (await recent(lo)) hi = lo;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (await recent(mid)) hi = mid;
      else lo = mid + 1;
    }
    const first = lo > head ? head + 1 : await blockAtOrAfter(lo);
    const start = first < 0 ? head + 1 : first;
    this.recentPending = false;
    this.log(`${this.config.id}: starting ${days} day${days === 1 ? '' : 's'} back, at slot ${start} (first block at or after ${new Date(since * 1000).toISOString()}); the node's slot is ${head}`);
    return start;
  }

  private remember(slot: number, hash: string): void {
    if (this.recent.get(slot) === hash) return;
    this.recent.delete(slot);
    this.recent.set(slot, hash);
    if (this.recent.size > RECENT_SLOTS) this.recent.delete(this.recent.keys().next().value!);
  }

  /** The hash the node now has for a slot's block, null when the slot holds none. */
  private async hashAt(slot: number): Promise<string | null> {
    try {
      const b = await this.rpc.request<SolanaBlock | null>('getBlock', [slot, { encoding: 'json', maxSupportedTransactionVersion: 0, transactionDetails: 'none', rewards: false, commitment: this.config.commitment }]);
      return b ? b.blockhash : null;
    } catch (err) {
      if (err instanceof RpcError && SLOT_SKIPPED.has(err.code)) return null;
      throw err;
    }
  }

  /**
   * Checks that the last block read is still on the node's chain. When it is not, finds the newest
   * kept block that is, forgets what was read after it and returns the `reorg` to it.
   */
  private async checkLast(): Promise<Reorg | null> {
    if (!this.last) return null;
    if ((await this.hashAt(this.last.slot)) === this.last.hash) return null;
    const changed = this.last.slot;
    const slots = [...this.recent.keys()].sort((a, b) => b - a);
    let fork = -1;
    for (const s of slots) {
      if (s >= changed) continue;
      if ((await this.hashAt(s)) === this.recent.get(s)) {
        fork = s;
        break;
      }
    }
    if (fork < 0) throw new SlotForkTooDeepError(`${this.config.id}: slot ${changed} was abandoned and none of the ${slots.length} recent blocks kept is on the node's chain any more; the fork is deeper than can be rolled back`);
    const toHash = this.recent.get(fork)!;
    for (const s of slots) if (s > fork) this.recent.delete(s);
    for (const [pool, slot] of this.pools) {
      if (slot === undefined || slot <= fork) continue;
      this.pools.delete(pool);
      const program = this.poolProgram.get(pool);
      if (program !== undefined) this.programPools.set(program, this.programPools.get(program)! - 1);
      this.poolProgram.delete(pool);
    }
    this.last = { slot: fork, hash: toHash };
    this.nextSlot = fork + 1;
    this.counts.reorgs++;
    this.counts.lastReorgSlot = fork;
    this.log(`${this.config.id}: slot ${changed} was abandoned; rolling back to slot ${fork} (${toHash}) and reading the slots after it`);
    return { kind: 'reorg', toBlock: fork, toHash };
  }
}
