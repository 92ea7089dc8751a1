/**
 * One chain followed over JSON-RPC: factory logs discover pools, pool logs become swaps, syncs and
 * liquidity changes, each block that carries events is announced with its hash, parent hash and
 * timestamp. Only blocks at least `confirmations` deep are read. A step reads factory logs first,
 * then the logs of every pool known by then, so a pool created and traded in one step loses nothing.
 *
 * Reorgs: the follower keeps the hashes of recent blocks it read (those that carried events and the
 * last block of each step; on resume, those ingest persisted). Before each step the hash of the last
 * block read is checked again; if it changed, the kept hashes are walked back to the newest block the
 * node still has, the fork point, and the step begins with a `reorg` event to that block followed by
 * the canonical blocks after it (pools created after the fork are forgotten and found again). Rolling
 * back the ingested effects is ingest's part. A fork older than every hash kept stops the follower
 * with a ReorgDetectedError.
 *
 * Singleton factories (Uniswap v4's PoolManager, `poolIdTopic`) emit every pool's logs themselves:
 * their pool logs are asked for by topic beside the factory's, matched to a pool by the id topic,
 * and the pool is named by that id. Families with a decoding state (`decoder`) get one per chain,
 * rolled back with the reorganisations; on a restart it is rebuilt from the family's logs before
 * the first step (those logs are decoded again and dropped: ingest already holds their effects).
 *
 * A start from recent history (`fromBlock`, or `recentDays` turned into a block by its timestamp on
 * a first start) reads every log of the pool topics, whatever its address: a pool created before
 * the start is taken up at its first log once its `factory()` is a configured factory and that
 * factory's registry names it (families/take-up.ts); its creation is announced under that log's key,
 * with, for a concentrated pool, its balances and price before that block. Refused addresses are
 * remembered and never asked about again.
 */
import { PoolProtocol, type ChainEvent, type EventKey, type Reorg, type ChainEventBatch, type DexInfo, type NetworkInfo, type TokenInfo } from '../../events/model.js';
import { hexNumber, topicAddress, type RpcLog } from './abi.js';
import { logIndexOf } from './words.js';
import type { EvmChainConfig, EvmFactoryConfig } from './config.js';
import { FACTORY_TOPICS, FAMILIES, type FamilyDecoder, type PoolCreation, type ProtocolFamily } from './families/index.js';
import { VIEW, wordOf, type ViewCall } from './families/take-up.js';
import { listPage, type LogPage } from './log-answer.js';
import { createLogReader, DEFAULT_CONCURRENCY, logsOf, MAX_FILTER_ADDRESSES, type LogFilter, type LogReader } from './logs.js';
import { chainRpcClient, RpcError, type RpcClient } from './rpc.js';
import { NATIVE_ADDRESS, nativeMetadata, readTokenMetadata, tokenInfo, tokenRole, viewCall, type TokenMetadata } from './tokens.js';

export class ChainIdMismatchError extends Error {
  override readonly name = 'ChainIdMismatchError';
}

export class ReorgDetectedError extends Error {
  override readonly name = 'ReorgDetectedError';
  /** Last block read whose hash still matches the node (the fork point), -1 if none is known. */
  readonly forkBlock: number;
  /** First block whose hash changed. */
  readonly changedBlock: number;
  constructor(chain: string, changedBlock: number, forkBlock: number, kept: number) {
    super(`${chain}: block ${changedBlock} was replaced and none of the ${kept} recent block hashes kept is canonical any more; the reorganisation is deeper than can be rolled back`);
    this.changedBlock = changedBlock;
    this.forkBlock = forkBlock;
  }
}

export interface KnownPool {
  readonly address: string;
  readonly protocol: PoolProtocol;
  /** The factory that created it (lowercase): its family decodes the pool's logs. */
  readonly factory?: string;
  /** Block of the pool's creation event (forgotten when a reorganisation orphans it). */
  readonly createdBlock?: number;
}

export interface ChainResume {
  /** First block to read (the block after the last one committed, or the configured start). */
  readonly nextBlock: number;
  readonly pools: readonly KnownPool[];
  readonly tokens: readonly TokenInfo[];
  /** Hashes of recent blocks already ingested, [number, hash], to check on the first step. */
  readonly recentBlocks?: readonly (readonly [number, string])[];
}

export interface ChainProgress {
  readonly chain: string;
  /** The block this run's scan started at (its first block to read). */
  readonly startBlock: number;
  readonly nextBlock: number;
  /** Last confirmed block seen at the node. */
  readonly safeBlock: number;
  readonly caughtUp: boolean;
  readonly pools: number;
  /** Pools created before the scan's start, taken up at their first log (a start from recent history). */
  readonly takenUp: number;
  readonly events: number;
  readonly logRangeBlocks: number;
  readonly rangeSplits: number;
  readonly rpcRetries: number;
  readonly rpcLastError: string;
  /** Unix ms of the last request the node answered, 0 before the first. */
  readonly rpcLastSuccessAt: number;
  /** Reorganisations found (each emitted as a `reorg` event) and the block the last one rolled back to (-1: none). */
  readonly reorgs: number;
  readonly lastReorgBlock: number;
  /** Per configured factory: its DEX id, the block its scan starts at, and the pools found so far. */
  readonly factories: readonly FactoryProgress[];
}

export interface FactoryProgress {
  readonly dexId: string;
  readonly startBlock: number;
  /** Pools found so far: created in the blocks read, or taken up at their first log. */
  readonly pools: number;
}

export interface ChainFollowerOptions {
  readonly config: EvmChainConfig;
  readonly resume?: ChainResume;
  /** Unix seconds (wall clock by default). */
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly rpc?: RpcClient;
}

interface BlockHeader {
  readonly number: string;
  readonly hash: string;
  readonly parentHash: string;
  readonly timestamp: string;
}

/** A pool created by a factory log of the step being read. */
interface CreatedPool {
  readonly token0: TokenInfo;
  readonly token1: TokenInfo;
  readonly feePpm: number;
  readonly factory: EvmFactoryConfig;
  /** Weighted pools: token 0's and token 1's normalised weights (the family's `complete`). */
  readonly weights?: readonly [bigint, bigint];
}

/** A pool taken up (created before the scan's start) and not yet announced: its creation, then its state before its first log. */
interface TakenUp {
  readonly created: CreatedPool;
  readonly protocol: PoolProtocol;
  /** Concentrated pools: token balances and sqrtPriceX96 before the block of the first log. */
  readonly balances: readonly [bigint, bigint] | null;
  readonly sqrtPriceX96: bigint;
}

/** A range of logs asked for ahead of the steps that read it (see ChainFollower.fill). */
interface AheadPage {
  readonly from: number;
  readonly to: number;
  /**
   * Its logs, left in the answers' bytes until the step that takes the range reads them, and
   * headers: every block's for a short range, else those of the blocks with logs and of both ends.
   */
  readonly done: Promise<{ readonly pages: LogPage[]; readonly headers: Map<number, BlockHeader> }>;
  /** The address-named pools whose logs the request asked for; null: every pool's (no address filter). */
  readonly covers: readonly string[] | null;
  /**
   * Read without headers, its logs carrying their block's hash and time: a range more than
   * RECENT_HASHES blocks under the confirmed head. A step of such ranges ends, as far as its time
   * and the last block read go, at its newest block with logs.
   */
  readonly deep: boolean;
}

interface StepResult {
  readonly events: ChainEvent[] | null;
  /** The step reached the confirmed head. */
  readonly caughtUp: boolean;
  /** Timestamp of the step's last block. */
  readonly time: number;
}

/** Block hashes kept to find the fork point of a reorganisation (well beyond any confirmation depth in use). */
export const RECENT_HASHES = 256;
/** Events a step aims for. */
const STEP_EVENTS = 8_192;
/** Headers asked for per JSON-RPC batch. */
const HEADER_BATCH = 100;
/** Pools read at once when found or taken up (each a few view calls). */
const TAKE_UP_CONCURRENCY = 16;
const DAY_S = 86_400;
/** Ranges up to this many blocks have every header read together with their logs. */
const EARLY_HEADER_BLOCKS = 2 * HEADER_BATCH;
/** Log requests in flight ahead of the steps (a step that needs more asks for them at once). */
const PAGES_IN_FLIGHT = DEFAULT_CONCURRENCY;
/** While behind the confirmed head seen last, the head (and the last block's hash) is asked for again at least this often (s). */
const HEAD_POLL_BEHIND_S = 2;
/** Blocks asked for ahead of the next block to read, in steps: the one being read and the ones after it. */
const AHEAD_STEPS = 3;
const hex = (n: number) => `0x${n.toString(16)}`;

/** Whether a log carries its block's time (some gateways send 0x0 for it: not a time). */
function timed(l: RpcLog): boolean {
  return l.blockTimestamp !== undefined && l.blockTimestamp !== '0x0';
}

/** Position of a log in its chain: block number times 2^20 plus log index (exact below 2^53). */
function position(l: RpcLog): number {
  return hexNumber(l.blockNumber) * 1_048_576 + logIndexOf(l);
}

/** Merges two lists of logs, each in chain order, into one in chain order. */
function mergeByPosition(a: readonly RpcLog[], b: readonly RpcLog[]): RpcLog[] {
  if (a.length === 0) return b.slice();
  if (b.length === 0) return a.slice();
  const out: RpcLog[] = [];
  let i = 0;
  let j = 0;
  let pa = position(a[0]!);
  let pb = position(b[0]!);
  while (i < a.length && j < b.length) {
    if (pa <= pb) {
      out.push(a[i++]!);
      if (i < a.length) pa = position(a[i]!);
    } else {
      out.push(b[j++]!);
      if (j < b.length) pb = position(b[j]!);
    }
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/** Block number of the first log whose block hash is not its header's, -1 when all match. */
function firstMismatch(logs: readonly RpcLog[], numbers: readonly number[], headers: ReadonlyMap<number, BlockHeader>): number {
  for (let i = 0; i < logs.length; i++) {
    const h = headers.get(numbers[i]!);
    if (!h || h.hash !== logs[i]!.blockHash) return numbers[i]!;
  }
  return -1;
}

export function networkInfo(config: EvmChainConfig): NetworkInfo {
  return {
    id: config.id,
    displayName: config.displayName,
    blockTimeSeconds: config.blockTimeSeconds,
    dexes: config.factories.map(
      (f): DexInfo => ({
        id: f.dexId,
        name: f.name ?? f.dexId,
        protocol: f.protocol,
        poolProtocol: FAMILIES[f.protocol].poolProtocol,
        factory: f.address.toLowerCase(),
      }),
    ),
  };
}

export class ChainFollower {
  readonly config: EvmChainConfig;
  readonly rpc: RpcClient;
  /** Unix seconds up to which this chain's events were produced. */
  time = 0;
  caughtUp = false;
  private readonly logs: LogReader;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly factories = new Map<string, EvmFactoryConfig>();
  /** Singleton factories (lowercase): their family, which names pools by a topic of the factory's own logs. */
  private readonly singletons = new Map<string, ProtocolFamily>();
  /** Decoding states of the families that have one, made when their first pool is known. */
  private readonly decoders = new Map<ProtocolFamily, FamilyDecoder>();
  /** Pools known from before a restart whose family has a decoding state: it is rebuilt before the first step. */
  private replayFrom = -1;
  /** Output of decoders whose events are dropped (a rebuild). */
  private readonly discard: ChainEvent[] = [];
  /** Known pools and the family that decodes their logs. */
  private readonly pools = new Map<string, ProtocolFamily>();
  /** Creation block of each known pool (absent: created before anything a reorganisation can reach). */
  private readonly poolBlocks = new Map<string, number>();
  /** Factory (lowercase) of each pool whose factory is configured, and the pools found per factory. */
  private readonly poolFactory = new Map<string, string>();
  private readonly factoryPools = new Map<string, number>();
  private readonly tokens = new Map<string, TokenInfo>();
  /** Per configured factory (lowercase): the first block whose pool creations are read. */
  private readonly factoryStart = new Map<string, number>();
  /** The chain starts from recent history (fromBlock, recentDays): pools created before it are taken up at their first log. */
  private readonly takesUp: boolean;
  /** Topics of the pool logs that may reveal a pool to take up: the configured families' that can. */
  private readonly takeUpTopics = new Set<string>();
  /** recentDays still to be turned into a block (a first start, before the first step). */
  private recentPending: boolean;
  /** First block of this run's scan. */
  private scanStart: number;
  /** Addresses found to be no pool of a configured factory (never asked again). */
  private readonly refused = new Set<string>();
  /** Pools taken up and not yet announced by their first log (kept across a step read again). */
  private readonly takeUps = new Map<string, TakenUp>();
  private takenUpCount = 0;
  /**
   * Topics asked of the node: the factory topics of the configured factories' families, and with
   * them the pool topics of those families and of the families of pools known from before a restart
   * (only these decode; a chain that takes pools up asks for them whatever the address).
   */
  private readonly factoryTopics: readonly string[];
  private readonly poolTopics: readonly string[];
  private readonly factoryAndPoolTopics: readonly string[];
  private readonly recent = new Map<number, string>();
  /** Last block read and its hash: checked again before the next step. */
  private last: { number: number; hash: string } | null = null;
  private nextBlock: number;
  /** Blocks of the next step: adapted to the event density, at most config.stepBlocks. */
  private stepSize: number;
  private safeBlock = -1;
  /** When the head was last asked for (Unix s, wall clock). */
  private lastHeadPoll = 0;
  /** The next step asks for the head and checks the last block's hash whatever the head seen last (a read found the node's answer changed). */
  private checkHead = false;
  /** The first block of the step whose ranges the node did not serve last (read again once), -1 when none. */
  private failedFrom = -1;
  /** Whether the node sends each log's block time (`blockTimestamp`): false once a log without it is read. */
  private logsTimed = true;
  /** The step after the last one delivered, being read while the caller ingests. */
  private prefetched: Promise<StepResult> | null = null;
  /**
   * Log ranges asked for ahead of the steps, in block order: contiguous from the next block to read
   * (to `aheadNext` - 1) unless a step has taken its ranges out and not finished reading them.
   */
  private ahead: AheadPage[] = [];
  /** First block not yet asked for ahead. */
  private aheadNext = 0;
  /** Header requests of the short ranges asked for ahead, in block order, contiguous to `headerNext` - 1 (see headersAhead). */
  private readonly aheadHeaders: { readonly from: number; readonly to: number; readonly done: Promise<Map<number, BlockHeader>> }[] = [];
  private headerNext = 0;
  /** Ahead requests not settled yet (dropped ones included: the node still serves them). */
  private aheadInFlight = 0;
  private chainChecked = false;
  /** Memos of lower() and topicAddress(): the last raw string seen and its result (topicAddress: the last two). */
  private lastAddress = '';
  private lastLower = '';
  private lastTopic = '';
  private lastTopicAddress = '';
  private beforeTopic = '';
  private beforeTopicAddress = '';
  /** topicAddress() bound once, for the families' decoders. */
  private readonly address = (topic: string): string => this.topicAddress(topic);
  private events = 0;
  private reorgs = 0;
  private lastReorgBlock = -1;

  constructor(options: ChainFollowerOptions) {
    this.config = options.config;
    this.now = options.now ?? (() => Date.now() / 1000);
    this.log = options.log ?? (() => {});
    this.rpc = options.rpc ?? chainRpcClient(options.config, (line) => this.log(line));
    this.logs = createLogReader(this.rpc, options.config.logBatchBlocks);
    this.stepSize = Math.min(options.config.stepBlocks, options.config.logBatchBlocks);
    const from = options.config.fromBlock;
    for (const f of options.config.factories) {
      const family = FAMILIES[f.protocol];
      this.factories.set(f.address.toLowerCase(), f);
      this.factoryStart.set(f.address.toLowerCase(), Math.max(f.startBlock ?? options.config.startBlock, from ?? 0));
      if (family.poolIdTopic !== undefined) this.singletons.set(f.address.toLowerCase(), family);
      else if (family.takeUp) for (const t of family.poolTopics) this.takeUpTopics.add(t);
    }
    const deployed = Math.min(options.config.startBlock, ...options.config.factories.map((f) => f.startBlock ?? options.config.startBlock));
    const firstBlock = from !== undefined ? Math.max(deployed, from) : deployed;
    this.nextBlock = Math.max(firstBlock, options.resume?.nextBlock ?? 0);
    this.takesUp = from !== undefined || options.config.recentDays !== undefined;
    // A resumed chain goes on from its checkpoint: recentDays is turned into a block on a first start only.
    this.recentPending = options.config.recentDays !== undefined && !((options.resume?.nextBlock ?? 0) > 0);
    this.scanStart = this.nextBlock;
    for (const p of options.resume?.pools ?? []) {
      const family = this.familyOf(p);
      if (!family) continue;
      if (family.decoder && this.replayFrom < 0) this.replayFrom = firstBlock;
      this.pools.set(p.address.toLowerCase(), family);
      if (p.factory !== undefined) this.countPool(p.address.toLowerCase(), p.factory.toLowerCase());
      if (p.createdBlock !== undefined) this.poolBlocks.set(p.address.toLowerCase(), p.createdBlock);
    }
    for (const t of options.resume?.tokens ?? []) this.tokens.set(t.address.toLowerCase(), t);
    const families = new Set<ProtocolFamily>([...[...this.factories.values()].map((f) => FAMILIES[f.protocol]), ...this.pools.values()]);
    this.factoryTopics = [...new Set([...this.factories.values()].flatMap((f) => FAMILIES[f.protocol].factoryTopics))];
    this.poolTopics = [...new Set([...families].flatMap((f) => f.poolTopics))];
    this.factoryAndPoolTopics = [...this.factoryTopics, ...this.poolTopics];
    // The newest block ingested before the restart is checked against the node on the first step.
    const recent = [...(options.resume?.recentBlocks ?? [])].sort((a, b) => a[0] - b[0]);
    for (const [n, h] of recent) this.remember(n, h);
    const newest = recent[recent.length - 1];
    if (newest) this.last = { number: newest[0], hash: newest[1] };
  }

  /**
   * The family of a pool known from before a restart: its factory's; a pool whose factory is no
   * longer configured is read as the family of its pool model (Uniswap's, or Solidly's for a stable pool).
   */
  private familyOf(p: KnownPool): ProtocolFamily | null {
    const f = p.factory !== undefined ? this.factories.get(p.factory.toLowerCase()) : undefined;
    if (f) return FAMILIES[f.protocol];
    if (p.protocol === PoolProtocol.SolidlyStable) return FAMILIES.solidly;
    // A pool named by an id (a singleton's) is followed only while its factory is configured.
    if (!/^0x[0-9a-f]{40}$/i.test(p.address)) return null;
    return p.protocol === PoolProtocol.Concentrated ? FAMILIES.uniswap_v3 : FAMILIES.uniswap_v2;
  }

  /** Counts a pool for its factory once (a pool found again after a reorganisation is not counted twice). */
  private countPool(pool: string, factory: string): void {
    if (this.poolFactory.has(pool) || !this.factories.has(factory)) return;
    this.poolFactory.set(pool, factory);
    this.factoryPools.set(factory, (this.factoryPools.get(factory) ?? 0) + 1);
  }

  private forgetPool(pool: string): void {
    const factory = this.poolFactory.get(pool);
    if (factory === undefined) return;
    this.poolFactory.delete(pool);
    this.factoryPools.set(factory, this.factoryPools.get(factory)! - 1);
  }

  progress(): ChainProgress {
    return {
      chain: this.config.id,
      startBlock: this.scanStart,
      nextBlock: this.nextBlock,
      safeBlock: this.safeBlock,
      caughtUp: this.caughtUp,
      pools: this.pools.size,
      takenUp: this.takenUpCount,
      events: this.events,
      logRangeBlocks: this.logs.rangeBlocks,
      rangeSplits: this.logs.splits,
      rpcRetries: this.rpc.stats.retries,
      rpcLastError: this.rpc.stats.lastError,
      rpcLastSuccessAt: this.rpc.stats.lastSuccessAt,
      reorgs: this.reorgs,
      lastReorgBlock: this.lastReorgBlock,
      factories: [...this.factories].map(([address, f]) => ({ dexId: f.dexId, startBlock: this.factoryStart.get(address)!, pools: this.factoryPools.get(address) ?? 0 })),
    };
  }

  /**
   * Delivers the next step of confirmed blocks: their events in chain order (null when none). While
   * behind, the step after it is read in the background, so reading overlaps the caller's ingest.
   */
  async step(): Promise<ChainEventBatch | null> {
    if (!this.chainChecked) {
      const id = hexNumber(await this.rpc.request<string>('eth_chainId', []));
      if (id !== this.config.chainId) throw new ChainIdMismatchError(`${this.config.id}: the node at ${this.config.rpcUrls[0]} serves chain id ${id}, the configuration says ${this.config.chainId}`);
      this.chainChecked = true;
    }
    if (this.recentPending) await this.startFromRecent();
    if (this.replayFrom >= 0) await this.replay();
    let result: StepResult;
    if (this.prefetched) {
      const prefetched = this.prefetched;
      this.prefetched = null;
      result = await prefetched;
    } else {
      const wall = this.now();
      if (this.caughtUp && (wall - this.lastHeadPoll) * 1000 < this.config.pollIntervalMs) {
        this.time = Math.max(this.time, wall);
        return null;
      }
      result = await this.readNext();
    }
    this.caughtUp = result.caughtUp;
    this.time = Math.max(this.time, result.caughtUp ? this.now() : result.time);
    if (!result.caughtUp) {
      const next = this.readNext();
      next.catch(() => {}); // rethrown when the next step awaits it
      this.prefetched = next;
    }
    if (!result.events || result.events.length === 0) return null;
    this.events += result.events.length;
    return { chain: this.config.id, events: result.events };
  }

  /** Reads the blocks after the last ones read, up to the confirmed head and at most stepBlocks of them. */
  private async readNext(): Promise<StepResult> {
    // The ranges ahead start at the next block to read (a first step, or a start moved to recent history, has none).
    if (this.ahead.length > 0 ? this.ahead[0]!.from !== this.nextBlock : this.aheadNext !== this.nextBlock) this.dropAhead();
    // While backfilling, the ranges up to the head seen last are asked for (or already were) before
    // the head and the last block's hash come back; a reorganisation found drops them.
    this.fill(this.nextBlock + this.stepSize - 1);
    let reorg: Reorg | null = null;
    const wall = this.now();
    // A step within the confirmed head seen last reads on without asking the node again (one round
    // trip a step, behind the node's log answers, was about half of a local backfill's time): its read
    // checks that its blocks extend the last one read, and a read that finds they do not has the
    // next step look for the fork. The head is asked for once a step reaches past it, and at least
    // every HEAD_POLL_BEHIND_S.
    if (this.checkHead || this.nextBlock + this.stepSize - 1 > this.safeBlock || wall - this.lastHeadPoll >= HEAD_POLL_BEHIND_S) {
      this.lastHeadPoll = wall;
      const [headHex, found] = await Promise.all([this.rpc.request<string>('eth_blockNumber', []), this.checkLastHash()]);
      reorg = found;
      this.checkHead = false;
      this.safeBlock = hexNumber(headHex) - this.config.confirmations;
      // A head that moved back (another node behind the endpoint): no range beyond it is read.
      if (this.aheadNext > this.safeBlock + 1) this.dropAhead();
      if (this.nextBlock > this.safeBlock) {
        this.dropAhead();
        return { events: reorg ? [reorg] : null, caughtUp: true, time: this.time };
      }
    }
    const from = this.nextBlock;
    const pages = this.take(from, Math.min(this.safeBlock, from + this.stepSize - 1));
    const to = pages[pages.length - 1]!.to;
    // The ranges of the steps after this one are asked for now, while this one is decoded and ingested.
    this.fill(-1);
    const read = await this.read(from, to, pages);
    // The node changed its answer while the step was read: read it again next time, after the head and the last block's hash.
    if (read === null) {
      this.checkHead = true;
      return { events: reorg ? [reorg] : null, caughtUp: false, time: this.time };
    }
    if (reorg) read.events.unshift(reorg);
    this.nextBlock = to + 1;
    // Steps sized for about STEP_EVENTS events: one commit amortised, and reading overlaps ingest.
    // A step at most doubles the one before: a sparse first range (deployments, a quiet start) must
    // not turn the next step into the whole backfill, which would leave nothing to overlap.
    const blocks = to - from + 1;
    const fit = read.events.length > 0 ? Math.round((blocks * STEP_EVENTS) / read.events.length) : blocks * 2;
    this.stepSize = Math.max(1, Math.min(this.config.stepBlocks, blocks * 2, fit));
    this.fill(-1);
    return { events: read.events, caughtUp: to >= this.safeBlock, time: read.time };
  }

  /** Blocks per range asked for ahead: the node's range, cut so that a step spans several (read in parallel). */
  private pageBlocks(): number {
    return Math.max(1, Math.min(this.logs.rangeBlocks, Math.ceil(this.stepSize / PAGES_IN_FLIGHT)));
  }

  /**
   * Asks for the logs of the next ranges up to the confirmed head seen last: up to PAGES_IN_FLIGHT
   * requests at once and AHEAD_STEPS steps of blocks ahead, and in any case through `needed` (a step
   * about to be read). Each range settling asks for the next, so the node always has ranges to serve
   * while the steps before are decoded and ingested.
   */
  private fill(needed: number): void {
    const limit = Math.min(this.safeBlock, this.nextBlock + AHEAD_STEPS * this.stepSize - 1);
    while (this.aheadNext <= this.safeBlock && (this.aheadNext <= needed || (this.aheadInFlight < PAGES_IN_FLIGHT && this.aheadNext <= limit))) {
      const from = this.aheadNext;
      const to = Math.min(this.safeBlock, from + this.pageBlocks() - 1);
      this.aheadNext = to + 1;
      this.ahead.push(this.request(from, to));
    }
  }

  /**
   * One range's request: one query for the factories and every pool known now (a pool found later
   * gets a query of its own when its step is read). A short range has its headers asked for beside
   * its logs, which saves a round trip; a long one gets those of the blocks with logs after them.
   */
  private request(from: number, to: number): AheadPage {
    const factories = [...this.factories.keys()];
    // Pools named by an id have their logs from their singleton factory's address.
    const known: string[] = [];
    for (const [pool, family] of this.pools) if (family.poolIdTopic === undefined) known.push(pool);
    // A chain that takes up pools reads every pool log of the topics, whatever its address.
    const byAddress = !this.takesUp && factories.length + known.length <= MAX_FILTER_ADDRESSES;
    const poolTopics = known.length > 0 || this.singletons.size > 0 || this.takesUp;
    const filter: LogFilter = { address: byAddress ? [...factories, ...known] : null, topics0: poolTopics ? this.factoryAndPoolTopics : this.factoryTopics };
    const covers = !poolTopics ? [] : byAddress ? known : null;
    // Deep in history, no header is read: the logs carry their block's hash and time, and no
    // reorganisation reaches there, so the headers' parent hashes would have nothing to check.
    // Until a log without its block's time is read, the node is taken to send them (a read that
    // finds one without reads the headers it lacks, and the ranges after it ask for theirs).
    const deep = this.logsTimed && to <= this.safeBlock - RECENT_HASHES;
    const early = deep ? null : to - from + 1 <= EARLY_HEADER_BLOCKS ? this.headersAhead(from, to) : null;
    early?.catch(() => {}); // awaited with the logs
    this.aheadInFlight++;
    const done = this.logs.pages(from, to, filter).then(async (pages) => {
      if (deep) return { pages, headers: new Map<number, BlockHeader>() };
      if (early !== null) return { pages, headers: await early };
      // A long range: its logs are read now, for the blocks whose headers are asked for.
      const logs = logsOf(pages);
      const wanted = new Set<number>([from, to]);
      for (const l of logs) wanted.add(hexNumber(l.blockNumber));
      return { pages: [listPage(logs)], headers: await this.headers([...wanted].sort((x, y) => x - y)) };
    });
    const settled = () => {
      this.aheadInFlight--;
      this.fill(-1);
    };
    done.then(settled, settled);
    return { from, to, done, covers, deep };
  }

  /** Takes the ranges ahead that hold blocks [from, at least to] out of the queue (asking for those not asked for yet). */
  private take(from: number, to: number): AheadPage[] {
    this.fill(to);
    let n = 0;
    while (n < this.ahead.length && this.ahead[n]!.from <= to) n++;
    return this.ahead.splice(0, n);
  }

  /**
   * The headers of blocks [from, to] (a short range read ahead), asked for HEADER_BATCH blocks at a
   * time up to the confirmed head: one request serves the headers of several ranges, instead of one
   * request beside each range (each answer has a cost of its own, at the node and here).
   */
  private headersAhead(from: number, to: number): Promise<Map<number, BlockHeader>> {
    const chunks = this.aheadHeaders;
    while (chunks.length > 0 && chunks[0]!.to < from) chunks.shift();
    // Contiguous from the range asked for, else asked for anew from it.
    if (chunks.length === 0 ? this.headerNext !== from : chunks[0]!.from > from) {
      chunks.length = 0;
      this.headerNext = from;
    }
    while (this.headerNext <= to) {
      const start = this.headerNext;
      const end = Math.max(to, Math.min(this.safeBlock, start + HEADER_BATCH - 1));
      this.headerNext = end + 1;
      const done = this.headers(Array.from({ length: end - start + 1 }, (_, i) => start + i));
      done.catch(() => {}); // awaited by the ranges it serves
      chunks.push({ from: start, to: end, done });
    }
    const serving = chunks.filter((c) => c.to >= from && c.from <= to);
    return Promise.all(serving.map((c) => c.done)).then((maps) => {
      const out = new Map<number, BlockHeader>();
      for (const m of maps)
        for (let n = from; n <= to; n++) {
          const h = m.get(n);
          if (h) out.set(n, h);
        }
      return out;
    });
  }

  /** Forgets the ranges asked for ahead (a reorganisation, or a step to be read again): they are asked for anew. */
  private dropAhead(): void {
    this.aheadHeaders.length = 0;
    this.headerNext = this.nextBlock;
    this.ahead = [];
    this.aheadNext = this.nextBlock;
  }

  /**
   * Checks that the last block read is still canonical. When it is not, finds the fork point (the
   * newest kept block whose hash the node still has), forgets everything read after it and returns
   * the `reorg` event that tells ingest to roll back to it; the caller then reads on from the fork.
   */
  private async checkLastHash(): Promise<Reorg | null> {
    if (!this.last) return null;
    const header = await this.rpc.request<BlockHeader | null>('eth_getBlockByNumber', [hex(this.last.number), false]);
    if (header && header.hash === this.last.hash) return null;
    const changed = this.last.number;
    // Walk back over the hashes kept to the newest block that is still canonical.
    const numbers = [...this.recent.keys()].sort((a, b) => b - a);
    let fork = -1;
    for (const n of numbers) {
      const h = await this.rpc.request<BlockHeader | null>('eth_getBlockByNumber', [hex(n), false]);
      if (h && h.hash === this.recent.get(n)) {
        fork = n;
        break;
      }
    }
    if (fork < 0) throw new ReorgDetectedError(this.config.id, changed, fork, numbers.length);
    const toHash = this.recent.get(fork)!;
    for (const n of numbers) if (n > fork) this.recent.delete(n);
    for (const d of this.decoders.values()) d.rollback(fork);
    for (const [pool, block] of this.poolBlocks) {
      if (block <= fork) continue;
      this.poolBlocks.delete(pool);
      this.pools.delete(pool);
      this.takeUps.delete(pool);
      this.forgetPool(pool);
    }
    this.last = { number: fork, hash: toHash };
    this.nextBlock = fork + 1;
    this.dropAhead();
    this.reorgs++;
    this.lastReorgBlock = fork;
    this.log(`${this.config.id}: block ${changed} was replaced; rolling back to block ${fork} (${toHash}) and reading the canonical blocks after it`);
    return { kind: 'reorg', toBlock: fork, toHash };
  }

  private async read(from: number, to: number, pages: readonly AheadPage[]): Promise<{ events: ChainEvent[]; time: number } | null> {
    let got: { readonly pages: LogPage[]; readonly headers: Map<number, BlockHeader> }[];
    let raw: RpcLog[];
    try {
      got = await Promise.all(pages.map((p) => p.done));
      // The step's logs become objects only now (see AheadPage).
      raw = logsOf(got.length === 1 ? got[0]!.pages : got.flatMap((g) => g.pages));
    } catch (err) {
      // A range the node did not serve (or served as no list of logs): the ranges after it are asked for again with it.
      this.dropAhead();
      // Once, read again next step after the head and the last block's hash: the ranges may have
      // been past the node's head as it was (a reorganisation that shortened the chain, a node behind
      // the endpoint's others), asked for by the head seen before.
      if (this.failedFrom !== from) {
        this.failedFrom = from;
        this.checkHead = true;
        this.log(`${this.config.id}: blocks ${from}..${to} not served (${err instanceof Error ? err.message : String(err)}); reading them again after the head`);
        return null;
      }
      throw err;
    }
    this.failedFrom = -1;
    const headers = got[0]!.headers;
    for (let i = 1; i < got.length; i++) for (const [n, h] of got[i]!.headers) headers.set(n, h);
    const factoryLogs: RpcLog[] = [];
    const unknown = this.takesUp ? new Map<string, RpcLog>() : null;
    let all = this.keep(raw, factoryLogs, unknown);
    const created = await this.discoverPools(factoryLogs);
    if (unknown !== null && unknown.size > 0) {
      for (const p of created.keys()) unknown.delete(p);
      // Pools created before the scan's start, met at their first log: theirs are read from the same answer.
      const taken = await this.takeUpPools(unknown);
      if (taken.size > 0) all = mergeByPosition(all, raw.filter((l) => !l.removed && taken.has(this.lower(l.address))));
    }
    // A singleton's pool logs were kept whatever their pool: those of pools still unknown go.
    if (this.singletons.size > 0) all = all.filter((l) => this.poolOf(l) !== null);
    // The pools known now that a range's request did not ask for (created in this step, or found
    // after the range was asked for) get a query of their own over those ranges, so nothing of
    // theirs is missed; a range asked for whatever the address holds the logs of those created in
    // this step already (keep() passed over them: they were not known yet).
    const fresh = new Set<string>();
    for (const p of created.keys()) if (this.pools.get(p)?.poolIdTopic === undefined) fresh.add(p);
    const known: string[] = [];
    for (const [pool, family] of this.pools) if (family.poolIdTopic === undefined) known.push(pool);
    for (let i = 0; i < pages.length; ) {
      const covers = pages[i]!.covers;
      let j = i + 1;
      // Pools are only added between two drops of the ranges ahead: requests that asked for as many asked for the same.
      while (j < pages.length && pages[j]!.covers?.length === covers?.length) j++;
      const rangeFrom = pages[i]!.from;
      const rangeTo = pages[j - 1]!.to;
      if (covers === null && fresh.size > 0) {
        const more = raw.filter((l) => !l.removed && fresh.has(this.lower(l.address)) && hexNumber(l.blockNumber) >= rangeFrom && hexNumber(l.blockNumber) <= rangeTo);
        all = mergeByPosition(all, more);
      } else if (covers !== null && covers.length < known.length) {
        const asked = new Set(covers);
        const missing = new Set(known.filter((p) => !asked.has(p)));
        // Pools created in this step have no logs before their creation.
        let since = rangeFrom;
        if ([...missing].every((p) => fresh.has(p))) since = Math.max(since, Math.min(...factoryLogs.map((l) => hexNumber(l.blockNumber))));
        if (since <= rangeTo) {
          const list = [...missing];
          const more = (await this.logs.read(since, rangeTo, { address: list.length <= MAX_FILTER_ADDRESSES ? list : null, topics0: this.poolTopics })).filter(
            (l) => !l.removed && missing.has(this.lower(l.address)),
          );
          // Each list is in chain order as the node returns it: merge them.
          all = mergeByPosition(all, more);
        }
      }
      i = j;
    }

    const numbers = new Array<number>(all.length);
    for (let i = 0; i < all.length; i++) numbers[i] = hexNumber(all[i]!.blockNumber);
    // Blocks with logs whose headers were not read (deep ranges): their hash and time as their logs give them.
    const deep = pages.every((p) => p.deep);
    for (let i = 0; deep && i < all.length; i++) {
      const n = numbers[i]!;
      if (n === numbers[i - 1] || headers.has(n)) continue;
      const l = all[i]!;
      if (timed(l)) headers.set(n, { number: l.blockNumber, hash: l.blockHash, parentHash: '', timestamp: l.blockTimestamp! });
      else this.logsTimed = false; // read by its header below, and the next ranges with theirs
    }
    // Headers of blocks only the pools' own queries had logs in (ranges too long to have every header read).
    let lacking: number[] | null = null;
    if (!deep && !headers.has(from)) (lacking ??= []).push(from);
    if (!deep && !headers.has(to) && to !== from) (lacking ??= []).push(to);
    for (let i = 0; i < numbers.length; i++) {
      const n = numbers[i]!;
      if (n !== numbers[i - 1] && !headers.has(n) && n !== from && n !== to) (lacking ??= []).push(n);
    }
    if (lacking !== null) for (const [n, h] of await this.headers(lacking.sort((x, y) => x - y))) headers.set(n, h);
    const mismatch = firstMismatch(all, numbers, headers);
    if (mismatch >= 0) {
      this.log(`${this.config.id}: logs of block ${mismatch} do not match its header; reading blocks ${from}..${to} again`);
      this.dropAhead();
      return null;
    }
    // The blocks read must extend the last one read, and each other (where consecutive headers are
    // known): a reorganisation between two steps' reads would otherwise mix two forks undetected.
    // On a mismatch the range is read again, after the next step's hash check has found the fork.
    // (A header made from a block's logs has no parent hash: deep in history, nothing to check.)
    const first = headers.get(from);
    if (this.last !== null && this.last.number === from - 1 && first !== undefined && first.parentHash !== '' && first.parentHash !== this.last.hash) {
      this.log(`${this.config.id}: block ${from} does not extend block ${from - 1} as read; checking for a reorganisation`);
      this.dropAhead();
      return null;
    }
    for (let n = from + 1; n <= to; n++) {
      const h = headers.get(n);
      const parent = headers.get(n - 1);
      if (h && parent && h.parentHash !== '' && h.parentHash !== parent.hash) {
        this.log(`${this.config.id}: block ${n} does not extend block ${n - 1} as read; reading blocks ${from}..${to} again`);
        this.dropAhead();
        return null;
      }
    }

    // A deep step ends, as far as the last block read goes, at its newest block with logs.
    const last = deep ? (numbers.length > 0 ? headers.get(numbers[numbers.length - 1]!) : undefined) : headers.get(to);
    if (!last && !deep) throw new RpcError(`${this.config.id}: block ${to} not found at the node`, 0, true);
    const out = this.decodeAll(all, numbers, headers, created);
    // Hashes kept: blocks with logs (remembered by decodeAll) and the step's last block. A deep step
    // without logs leaves the last block read and the time where they were.
    if (last) {
      const number = hexNumber(last.number);
      this.remember(number, last.hash);
      this.last = { number, hash: last.hash };
    }
    this.forgetUndos();
    return { events: out, time: last ? hexNumber(last.timestamp) : this.time };
  }

  /**
   * The logs worth decoding, in their order: those of known pools, and pool creations by the
   * factories (also collected into `factoryLogs`); removed logs are dropped.
   */
  private keep(logs: readonly RpcLog[], factoryLogs: RpcLog[], unknown: Map<string, RpcLog> | null): RpcLog[] {
    const out: RpcLog[] = [];
    for (let i = 0; i < logs.length; i++) {
      const l = logs[i]!;
      if (l.removed) continue;
      const a = this.lower(l.address);
      const singleton = this.singletons.get(a);
      if (singleton && singleton.poolTopics.includes(l.topics[0]!)) out.push(l);
      else if (this.factories.has(a)) {
        if (!FACTORY_TOPICS.includes(l.topics[0]!)) continue;
        out.push(l);
        factoryLogs.push(l);
      } else if (this.pools.has(a)) out.push(l);
      else if (unknown !== null && this.takeUpTopics.has(l.topics[0]!) && !unknown.has(a) && !this.refused.has(a)) unknown.set(a, l);
    }
    return out;
  }

  /** The step's events: a `block` before the first log of each block, then the block's decoded logs. */
  private decodeAll(all: readonly RpcLog[], numbers: readonly number[], headers: ReadonlyMap<number, BlockHeader>, created: ReadonlyMap<string, CreatedPool>): ChainEvent[] {
    const out: ChainEvent[] = [];
    let block = -1;
    let timestamp = 0;
    for (let i = 0; i < all.length; i++) {
      const number = numbers[i]!;
      if (number !== block) {
        const header = headers.get(number)!;
        block = number;
        timestamp = hexNumber(header.timestamp);
        out.push({ kind: 'block', number, hash: header.hash, parentHash: header.parentHash, timestamp });
        this.remember(number, header.hash);
      }
      this.decode(all[i]!, number, timestamp, created, out);
    }
    return out;
  }

  /** An address in lowercase; the last one asked for is kept (a pool's logs come in runs). */
  private lower(address: string): string {
    if (address !== this.lastAddress) {
      this.lastAddress = address;
      this.lastLower = address.toLowerCase();
    }
    return this.lastLower;
  }

  /**
   * topicAddress of a topic; the last two asked for are kept (routers repeat as sender and
   * recipient, a Balancer swap's tokens in and out alternate).
   */
  private topicAddress(topic: string): string {
    if (topic === this.lastTopic) return this.lastTopicAddress;
    const address = topic === this.beforeTopic ? this.beforeTopicAddress : topicAddress(topic);
    this.beforeTopic = this.lastTopic;
    this.beforeTopicAddress = this.lastTopicAddress;
    this.lastTopic = topic;
    this.lastTopicAddress = address;
    return address;
  }

  private remember(number: number, hash: string): void {
    // Blocks are remembered in increasing order (a reorganisation first forgets those after the
    // fork), so the map's first key is the oldest.
    this.recent.set(number, hash);
    if (this.recent.size > RECENT_HASHES) this.recent.delete(this.recent.keys().next().value!);
  }

  /** Tells the decoders that no reorganisation reaches back past the oldest block hash kept. */
  private forgetUndos(): void {
    if (this.decoders.size === 0 || this.recent.size === 0) return;
    const oldest = this.recent.keys().next().value!;
    for (const d of this.decoders.values()) d.forget(oldest);
  }

  private async headers(numbers: readonly number[]): Promise<Map<number, BlockHeader>> {
    const out = new Map<number, BlockHeader>();
    for (let i = 0; i < numbers.length; i += HEADER_BATCH) {
      const chunk = numbers.slice(i, i + HEADER_BATCH);
      const got = await this.rpc.batch<BlockHeader | null>(chunk.map((n) => ({ method: 'eth_getBlockByNumber', params: [hex(n), false] })));
      got.forEach((h, k) => {
        if (!h) throw new RpcError(`${this.config.id}: block ${chunk[k]} not found at the node`, 0, true);
        out.set(chunk[k]!, h);
      });
    }
    return out;
  }

  /** Registers the pools created by these factory logs, reading their tokens' metadata; returns their creation data. */
  private async discoverPools(logs: readonly RpcLog[]): Promise<Map<string, CreatedPool>> {
    const out = new Map<string, CreatedPool>();
    const found: { pool: string; t0: string; t1: string; feePpm: number; factory: EvmFactoryConfig; block: number; weights?: readonly [bigint, bigint] }[] = [];
    const call: ViewCall = (to, data) => viewCall(this.rpc, to, data, 'latest');
    const creations: { c: PoolCreation; factory: EvmFactoryConfig; block: number }[] = [];
    for (const l of logs) {
      const factory = this.factories.get(l.address.toLowerCase());
      if (!factory || l.removed) continue;
      if (hexNumber(l.blockNumber) < this.factoryStart.get(l.address.toLowerCase())!) continue;
      const c = FAMILIES[factory.protocol].creation(l, factory.feePpm, factory.stableFeePpm);
      if (c) creations.push({ c, factory, block: hexNumber(l.blockNumber) });
    }
    // What a log does not state is read from the pool (a Balancer pool's weights), a few pools at once.
    for (let i = 0; i < creations.length; i += TAKE_UP_CONCURRENCY) {
      const chunk = creations.slice(i, i + TAKE_UP_CONCURRENCY);
      const done = await Promise.all(chunk.map(({ c, factory }) => (FAMILIES[factory.protocol].complete?.(call, c) ?? Promise.resolve(c))));
      chunk.forEach(({ factory, block }, k) => {
        const c = done[k];
        if (c) found.push({ pool: c.pool, t0: c.token0, t1: c.token1, feePpm: c.feePpm, factory, block, ...(c.weights ? { weights: c.weights } : {}) });
      });
    }
    await this.readTokens(found.flatMap((f) => [f.t0, f.t1]));
    for (const f of found) {
      out.set(f.pool, { token0: this.tokens.get(f.t0)!, token1: this.tokens.get(f.t1)!, feePpm: f.feePpm, factory: f.factory, ...(f.weights ? { weights: f.weights } : {}) });
      this.pools.set(f.pool, FAMILIES[f.factory.protocol]);
      this.decoderOf(FAMILIES[f.factory.protocol]);
      this.countPool(f.pool, f.factory.address.toLowerCase());
      if (!this.poolBlocks.has(f.pool)) this.poolBlocks.set(f.pool, f.block);
    }
    return out;
  }

  /** Reads the metadata of the tokens not known yet. */
  private async readTokens(addresses: readonly string[]): Promise<void> {
    const missing = [...new Set(addresses)].filter((t) => !this.tokens.has(t));
    if (missing.length === 0) return;
    // The native token (address zero, Uniswap v4's native currency) is named after the wrapped one: no call to address zero.
    const wrapped = (): Promise<TokenMetadata> => {
      const w = this.tokens.get(this.config.wrappedNative.toLowerCase());
      return w ? Promise.resolve(w) : readTokenMetadata(this.rpc, this.config.wrappedNative);
    };
    const metas = await Promise.all(missing.map((t) => (t === NATIVE_ADDRESS ? wrapped().then(nativeMetadata) : readTokenMetadata(this.rpc, t))));
    missing.forEach((t, i) => this.tokens.set(t, tokenInfo(t, metas[i]!, tokenRole(t, this.config.stablecoins, this.config.wrappedNative, this.config.pegged))));
  }

  /**
   * Turns recentDays into the first block to read: the first block whose timestamp is at or after
   * now minus those days, by a binary search over block headers (about 25 requests on a long chain).
   */
  private async startFromRecent(): Promise<void> {
    const days = this.config.recentDays!;
    const since = Math.floor(this.now() - days * DAY_S);
    const timeOf = async (n: number): Promise<number> => {
      const h = await this.rpc.request<BlockHeader | null>('eth_getBlockByNumber', [hex(n), false]);
      if (!h) throw new RpcError(`${this.config.id}: block ${n} not found at the node`, 0, true);
      return hexNumber(h.timestamp);
    };
    let lo = 0;
    let hi = hexNumber(await this.rpc.request<string>('eth_blockNumber', []));
    if ((await timeOf(hi)) < since) lo = hi;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await timeOf(mid)) >= since) hi = mid;
      else lo = mid + 1;
    }
    this.nextBlock = Math.max(this.nextBlock, lo);
    this.scanStart = this.nextBlock;
    for (const [a, b] of this.factoryStart) this.factoryStart.set(a, Math.max(b, lo));
    this.recentPending = false;
    this.log(`${this.config.id}: starting ${days} day${days === 1 ? '' : 's'} back, at block ${this.nextBlock} (first block at or after ${new Date(since * 1000).toISOString()}); pools created before it are taken up when they first trade`);
  }

  /**
   * Takes up the pools of these addresses (each with its first log of the range) that a configured
   * factory created before the scan's start: the pool's `factory()` must be one configured whose family
   * emits the log's topic, and that factory's registry must name the pool (take-up.ts). A
   * concentrated pool's token balances and price before the block of its first log are read too
   * (`eth_call` at that block's parent), so that its reserves are its balances from then on.
   * Returns the pools taken up; the others are never asked about again.
   */
  private async takeUpPools(unknown: ReadonlyMap<string, RpcLog>): Promise<Set<string>> {
    const call: ViewCall = (to, data) => viewCall(this.rpc, to, data, 'latest');
    const found: { pool: string; first: RpcLog; factory: EvmFactoryConfig; creation: PoolCreation; protocol: PoolProtocol; balances: readonly [bigint, bigint] | null; sqrtPriceX96: bigint }[] = [];
    const check = async (pool: string, first: RpcLog): Promise<void> => {
      const f = await call(pool, VIEW.factory);
      const factoryAddress = f !== null && f.length >= 66 ? `0x${f.slice(26, 66)}`.toLowerCase() : '';
      const factory = this.factories.get(factoryAddress);
      const family = factory ? FAMILIES[factory.protocol] : undefined;
      if (!factory || !family?.takeUp || family.poolIdTopic !== undefined || !family.poolTopics.includes(first.topics[0]!)) {
        this.refused.add(pool);
        return;
      }
      const creation = await family.takeUp(call, pool, factoryAddress, factory.feePpm, factory.stableFeePpm);
      if (creation === null) {
        this.refused.add(pool);
        return;
      }
      const protocol = creation.protocol ?? family.poolProtocol;
      let balances: readonly [bigint, bigint] | null = null;
      let sqrtPriceX96 = 0n;
      if (protocol === PoolProtocol.Concentrated) {
        // The state before the first log's block: its logs then move it as they would have.
        const before = hex(hexNumber(first.blockNumber) - 1);
        const [b0, b1, price] = await Promise.all([
          viewCall(this.rpc, creation.token0, VIEW.balanceOf + wordOf(pool), before),
          viewCall(this.rpc, creation.token1, VIEW.balanceOf + wordOf(pool), before),
          family.priceView !== undefined ? viewCall(this.rpc, pool, family.priceView, before) : Promise.resolve(null),
        ]);
        if (b0 === null || b1 === null) {
          this.log(`${this.config.id}: pool ${pool} (${factory.dexId}) not taken up: its token balances at block ${hexNumber(before)} could not be read (the node may keep no state that old)`);
          this.refused.add(pool);
          return;
        }
        balances = [BigInt(b0.slice(0, 66)), BigInt(b1.slice(0, 66))];
        sqrtPriceX96 = price !== null && price.length >= 66 ? BigInt(price.slice(0, 66)) & ((1n << 160n) - 1n) : 0n;
      }
      found.push({ pool, first, factory, creation, protocol, balances, sqrtPriceX96 });
    };
    const entries = [...unknown];
    for (let i = 0; i < entries.length; i += TAKE_UP_CONCURRENCY) await Promise.all(entries.slice(i, i + TAKE_UP_CONCURRENCY).map(([pool, first]) => check(pool, first)));
    await this.readTokens(found.flatMap((f) => [f.creation.token0, f.creation.token1]));
    const taken = new Set<string>();
    for (const f of found) {
      const created: CreatedPool = { token0: this.tokens.get(f.creation.token0)!, token1: this.tokens.get(f.creation.token1)!, feePpm: f.creation.feePpm, factory: f.factory };
      this.takeUps.set(f.pool, { created, protocol: f.protocol, balances: f.balances, sqrtPriceX96: f.sqrtPriceX96 });
      this.pools.set(f.pool, FAMILIES[f.factory.protocol]);
      this.countPool(f.pool, f.factory.address.toLowerCase());
      if (!this.poolBlocks.has(f.pool)) this.poolBlocks.set(f.pool, hexNumber(f.first.blockNumber));
      this.takenUpCount++;
      taken.add(f.pool);
    }
    if (taken.size > 0) this.log(`${this.config.id}: took up ${taken.size} pool${taken.size === 1 ? '' : 's'} created before block ${this.scanStart} at ${taken.size === 1 ? 'its' : 'their'} first trade (${this.takenUpCount} so far)`);
    return taken;
  }

  /** A pool taken up and not yet announced: its creation, then its state before this, its first log (same key). */
  private announce(pool: string, key: EventKey, timestamp: number, out: ChainEvent[]): void {
    const t = this.takeUps.get(pool);
    if (t === undefined) return;
    this.takeUps.delete(pool);
    const c = t.created;
    out.push({ kind: 'pool_created', key, timestamp, pool, dexId: c.factory.dexId, factory: c.factory.address.toLowerCase(), protocol: t.protocol, feePpm: c.feePpm, token0: c.token0, token1: c.token1 });
    if (t.balances !== null && (t.balances[0] > 0n || t.balances[1] > 0n)) out.push({ kind: 'reserve_delta', key, timestamp, pool, amount0: t.balances[0], amount1: t.balances[1] });
    if (t.sqrtPriceX96 > 0n) out.push({ kind: 'sync', key, timestamp, pool, reserve0: 0n, reserve1: 0n, sqrtPriceX96: t.sqrtPriceX96 });
  }

  /** The pool a log is of: its address, or for a singleton's pool log the id in its topic; null when the pool is unknown. */
  private poolOf(l: RpcLog): string | null {
    const a = this.lower(l.address);
    const singleton = this.singletons.get(a);
    if (singleton && !singleton.factoryTopics.includes(l.topics[0]!)) {
      const id = l.topics[singleton.poolIdTopic!]?.toLowerCase();
      return id !== undefined && this.pools.has(id) ? id : null;
    }
    return this.pools.has(a) || this.factories.has(a) ? a : null;
  }

  private decoderOf(family: ProtocolFamily): FamilyDecoder | null {
    if (!family.decoder) return null;
    let d = this.decoders.get(family);
    if (!d) {
      d = family.decoder();
      this.decoders.set(family, d);
    }
    return d;
  }

  /** Appends the log's events to `out`: a pool's log decoded by its family, or a factory's pool creation. */
  private decode(l: RpcLog, blockNumber: number, timestamp: number, created: ReadonlyMap<string, CreatedPool>, out: ChainEvent[]): void {
    const key = { blockNumber, txIndex: hexNumber(l.transactionIndex), logIndex: logIndexOf(l) };
    const pool = this.poolOf(l);
    if (pool === null) return;
    const family = this.pools.get(pool);
    if (family) {
      if (this.takeUps.size > 0) this.announce(pool, key, timestamp, out);
      const decoder = this.decoderOf(family);
      if (decoder) decoder.decode(l, key, timestamp, pool, this.address, out);
      else {
        const ev = family.decode(l, key, timestamp, pool, this.address);
        if (ev) out.push(ev);
      }
      return;
    }
    // A factory log (keep() passes only those and known pools' logs): a creation found by discoverPools.
    const factory = this.factories.get(pool);
    if (!factory) return;
    const factoryFamily = FAMILIES[factory.protocol];
    const creation = factoryFamily.creation(l, factory.feePpm, factory.stableFeePpm);
    const c = creation ? created.get(creation.pool) : undefined;
    if (!creation || !c || c.factory.address.toLowerCase() !== pool) return;
    out.push({
      kind: 'pool_created',
      key,
      timestamp,
      pool: creation.pool,
      dexId: c.factory.dexId,
      factory: pool,
      protocol: creation.protocol ?? factoryFamily.poolProtocol,
      feePpm: c.feePpm,
      token0: c.token0,
      token1: c.token1,
      ...(c.weights ? { weights: c.weights } : {}),
    });
    // A singleton's creation log is also the new pool's first log (its starting price).
    if (factoryFamily.poolIdTopic !== undefined) {
      const decoder = this.decoderOf(factoryFamily);
      if (decoder) decoder.decode(l, key, timestamp, creation.pool, this.address, out);
      else {
        const ev = factoryFamily.decode(l, key, timestamp, creation.pool, this.address);
        if (ev) out.push(ev);
      }
    }
  }

  /**
   * Rebuilds the decoding states after a restart: the logs of the families that have one, from the
   * first block scanned to the last one ingested, decoded again with their events dropped.
   */
  private async replay(): Promise<void> {
    const to = this.nextBlock - 1;
    const from = this.replayFrom;
    const families = new Set<ProtocolFamily>();
    for (const f of this.factories.values()) if (FAMILIES[f.protocol].decoder) families.add(FAMILIES[f.protocol]);
    for (const family of families) {
      if (to < from) continue;
      this.decoders.delete(family);
      const decoder = this.decoderOf(family)!;
      const own = [...this.factories].filter(([, f]) => FAMILIES[f.protocol] === family);
      const addresses = own.map(([a]) => a);
      // From the first block any of the family's factories is scanned from.
      const first = Math.max(from, Math.min(...own.map(([, f]) => f.startBlock ?? this.config.startBlock)));
      if (family.poolIdTopic === undefined) for (const [pool, f] of this.pools) if (f === family) addresses.push(pool);
      const filter = { address: addresses.length <= MAX_FILTER_ADDRESSES ? addresses : null, topics0: [...family.factoryTopics, ...family.poolTopics] };
      // A step's worth of blocks at a time: the logs of a whole history are not held at once.
      let count = 0;
      for (let start = first; start <= to; start += this.config.stepBlocks) {
        const end = Math.min(to, start + this.config.stepBlocks - 1);
        const logs = await this.logs.read(start, end, filter);
        for (const l of logs) {
          if (l.removed) continue;
          const creation = family.creation(l, 0, undefined);
          const pool = creation ? creation.pool : this.poolOf(l);
          if (pool === null || !this.pools.has(pool)) continue;
          decoder.decode(l, { blockNumber: hexNumber(l.blockNumber), txIndex: hexNumber(l.transactionIndex), logIndex: logIndexOf(l) }, 0, pool, this.address, this.discard);
          this.discard.length = 0;
        }
        count += logs.length;
        // Undo records are kept only for the blocks a reorganisation can still reach.
        const oldest = this.recent.size > 0 ? this.recent.keys().next().value! : to;
        decoder.forget(Math.min(end, oldest));
      }
      this.log(`${this.config.id}: ${family.id} pool states rebuilt from ${count} logs of blocks ${first}..${to}`);
    }
    // Done only once it succeeded: a failed read leaves it to the next step (the states are made anew).
    this.replayFrom = -1;
  }
}
