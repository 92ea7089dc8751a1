/**
 * Encoding of chain events into FlatBuffers batches (the log and thread-boundary format), and a
 * full decoder for tools and tests. The engine's hot path reads batches with the generated
 * accessors directly instead (see engine/shards/apply.ts).
 */
import * as flatbuffers from 'flatbuffers';
import {
  Block as FbBlock,
  Burn as FbBurn,
  Event as FbEvent,
  EventBatch as FbEventBatch,
  EventBody,
  EventKey as FbEventKey,
  Mint as FbMint,
  PoolCreated as FbPoolCreated,
  Reorg as FbReorg,
  ReserveDelta as FbReserveDelta,
  Swap as FbSwap,
  Sync as FbSync,
  TokenInfo as FbTokenInfo,
  U128 as FbU128,
  U160 as FbU160,
} from './fb/events_generated.js';
import { SwapFlags } from './fb/dex/events/swap-flags.js';
import { ReserveDeltaFlags } from './fb/dex/events/reserve-delta-flags.js';
import type { ChainEvent, EventKey, PoolProtocol, TokenInfo, TokenRole } from './model.js';

const MAX_U64 = (1n << 64n) - 1n;
const MAX_U128 = (1n << 128n) - 1n;
const MAX_U160 = (1n << 160n) - 1n;

export class EventRangeError extends Error {
  override readonly name = 'EventRangeError';
}

/** Dense ids for addresses, assigned by ingest. */
export interface IdResolver {
  poolId(address: string): number;
  tokenId(address: string): number;
}

// Scratch for splitting a bigint into u32 words without BigInt arithmetic: a BigUint64Array store
// keeps the value's low 64 bits, read back as two little-endian u32 words. Words [0..1] hold bits
// 0..63, [2..3] bits 64..127, [4..5] bits 128..191; only encode below uses it, synchronously.
const scratch64 = new BigUint64Array(3);
const scratch32 = new Uint32Array(scratch64.buffer);

/** Splits x (0 <= x < 2^192) into scratch32[0..5]. */
function split(x: bigint): void {
  scratch64[0] = x;
  if (x > MAX_U64) {
    const high = x >> 64n;
    scratch64[1] = high;
    scratch64[2] = high > MAX_U64 ? high >> 64n : 0n;
  } else {
    scratch64[1] = 0n;
    scratch64[2] = 0n;
  }
}

function u128(b: flatbuffers.Builder, x: bigint): flatbuffers.Offset {
  if (x < 0n || x > MAX_U128) throw new EventRangeError(`value ${x} does not fit 128 bits`);
  split(x);
  return FbU128.createU128(b, scratch32[0]!, scratch32[1]!, scratch32[2]!, scratch32[3]!);
}

function u160(b: flatbuffers.Builder, x: bigint): flatbuffers.Offset {
  if (x < 0n || x > MAX_U160) throw new EventRangeError(`value ${x} does not fit 160 bits`);
  split(x);
  return FbU160.createU160(b, scratch32[0]!, scratch32[1]!, scratch32[2]!, scratch32[3]!, scratch32[4]!);
}

function key(b: flatbuffers.Builder, k: EventKey): flatbuffers.Offset {
  return FbEventKey.createEventKey(b, k.blockNumber, k.txIndex, k.logIndex);
}

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

function tokenInfo(b: flatbuffers.Builder, id: number, t: TokenInfo): flatbuffers.Offset {
  const address = b.createString(t.address);
  const name = b.createString(t.name);
  const symbol = b.createString(t.symbol);
  const supply = b.createString(t.totalSupply.toString());
  FbTokenInfo.startTokenInfo(b);
  FbTokenInfo.addTokenId(b, id);
  FbTokenInfo.addAddress(b, address);
  FbTokenInfo.addName(b, name);
  FbTokenInfo.addSymbol(b, symbol);
  FbTokenInfo.addDecimals(b, t.decimals);
  FbTokenInfo.addTotalSupply(b, supply);
  FbTokenInfo.addRole(b, t.role);
  return FbTokenInfo.endTokenInfo(b);
}

function encodeBody(b: flatbuffers.Builder, e: ChainEvent, ids: IdResolver): [EventBody, flatbuffers.Offset] {
  switch (e.kind) {
    case 'swap': {
      // Shared: a transaction's events repeat its hash, and routers repeat as sender and recipient.
      const txHash = b.createSharedString(e.txHash);
      const sender = b.createSharedString(e.sender);
      const recipient = b.createSharedString(e.recipient);
      FbSwap.startSwap(b);
      FbSwap.addKey(b, key(b, e.key));
      FbSwap.addTimestamp(b, e.timestamp);
      FbSwap.addPoolId(b, ids.poolId(e.pool));
      FbSwap.addAmount0(b, u128(b, abs(e.amount0)));
      FbSwap.addAmount1(b, u128(b, abs(e.amount1)));
      FbSwap.addFlags(b, (e.amount0 < 0n ? SwapFlags.Amount0Negative : 0) | (e.amount1 < 0n ? SwapFlags.Amount1Negative : 0));
      FbSwap.addSqrtPriceX96(b, u160(b, e.sqrtPriceX96));
      FbSwap.addLiquidity(b, u128(b, e.liquidity));
      FbSwap.addTick(b, e.tick);
      FbSwap.addTxHash(b, txHash);
      FbSwap.addSender(b, sender);
      FbSwap.addRecipient(b, recipient);
      return [EventBody.Swap, FbSwap.endSwap(b)];
    }
    case 'sync': {
      FbSync.startSync(b);
      FbSync.addKey(b, key(b, e.key));
      FbSync.addTimestamp(b, e.timestamp);
      FbSync.addPoolId(b, ids.poolId(e.pool));
      FbSync.addReserve0(b, u128(b, e.reserve0));
      FbSync.addReserve1(b, u128(b, e.reserve1));
      if (e.sqrtPriceX96 !== undefined) FbSync.addSqrtPriceX96(b, u160(b, e.sqrtPriceX96));
      return [EventBody.Sync, FbSync.endSync(b)];
    }
    case 'reserve_delta': {
      FbReserveDelta.startReserveDelta(b);
      FbReserveDelta.addKey(b, key(b, e.key));
      FbReserveDelta.addTimestamp(b, e.timestamp);
      FbReserveDelta.addPoolId(b, ids.poolId(e.pool));
      FbReserveDelta.addAmount0(b, u128(b, abs(e.amount0)));
      FbReserveDelta.addAmount1(b, u128(b, abs(e.amount1)));
      FbReserveDelta.addFlags(b, (e.amount0 < 0n ? ReserveDeltaFlags.Amount0Negative : 0) | (e.amount1 < 0n ? ReserveDeltaFlags.Amount1Negative : 0));
      return [EventBody.ReserveDelta, FbReserveDelta.endReserveDelta(b)];
    }
    case 'mint':
    case 'burn': {
      const M = e.kind === 'mint' ? FbMint : FbBurn;
      const owner = b.createSharedString(e.owner);
      const txHash = b.createSharedString(e.txHash);
      // Mint and Burn share a field layout; the generated builders are interchangeable by slot.
      if (e.kind === 'mint') FbMint.startMint(b);
      else FbBurn.startBurn(b);
      M.addKey(b, key(b, e.key));
      M.addTimestamp(b, e.timestamp);
      M.addPoolId(b, ids.poolId(e.pool));
      M.addAmount0(b, u128(b, e.amount0));
      M.addAmount1(b, u128(b, e.amount1));
      M.addLiquidity(b, u128(b, e.liquidity));
      M.addTickLower(b, e.tickLower);
      M.addTickUpper(b, e.tickUpper);
      M.addOwner(b, owner);
      M.addTxHash(b, txHash);
      return e.kind === 'mint' ? [EventBody.Mint, FbMint.endMint(b)] : [EventBody.Burn, FbBurn.endBurn(b)];
    }
    case 'pool_created': {
      const address = b.createString(e.pool);
      const dexId = b.createString(e.dexId);
      const factory = b.createString(e.factory);
      const t0 = tokenInfo(b, ids.tokenId(e.token0.address), e.token0);
      const t1 = tokenInfo(b, ids.tokenId(e.token1.address), e.token1);
      FbPoolCreated.startPoolCreated(b);
      FbPoolCreated.addKey(b, key(b, e.key));
      FbPoolCreated.addTimestamp(b, e.timestamp);
      FbPoolCreated.addPoolId(b, ids.poolId(e.pool));
      FbPoolCreated.addAddress(b, address);
      FbPoolCreated.addDexId(b, dexId);
      FbPoolCreated.addFactory(b, factory);
      FbPoolCreated.addProtocol(b, e.protocol);
      FbPoolCreated.addFeePpm(b, e.feePpm);
      FbPoolCreated.addToken0(b, t0);
      FbPoolCreated.addToken1(b, t1);
      if (e.weights) {
        FbPoolCreated.addWeight0(b, e.weights[0]);
        FbPoolCreated.addWeight1(b, e.weights[1]);
      }
      return [EventBody.PoolCreated, FbPoolCreated.endPoolCreated(b)];
    }
    case 'block': {
      const hash = b.createString(e.hash);
      const parent = b.createString(e.parentHash);
      FbBlock.startBlock(b);
      FbBlock.addNumber(b, e.number);
      FbBlock.addHash(b, hash);
      FbBlock.addParentHash(b, parent);
      FbBlock.addTimestamp(b, e.timestamp);
      return [EventBody.Block, FbBlock.endBlock(b)];
    }
    case 'reorg': {
      const hash = b.createString(e.toHash);
      FbReorg.startReorg(b);
      FbReorg.addToBlock(b, e.toBlock);
      FbReorg.addToHash(b, hash);
      return [EventBody.Reorg, FbReorg.endReorg(b)];
    }
  }
}

/** Encodes one chain's events, resolving addresses to dense ids. */
export function encodeBatch(chain: string, events: readonly ChainEvent[], ids: IdResolver, builder?: flatbuffers.Builder): Uint8Array {
  const b = builder ?? new flatbuffers.Builder(256 + events.length * 200);
  b.clear();
  const offsets = new Array<flatbuffers.Offset>(events.length);
  for (let i = 0; i < events.length; i++) {
    const [type, body] = encodeBody(b, events[i]!, ids);
    offsets[i] = FbEvent.createEvent(b, type, body);
  }
  const vec = FbEventBatch.createEventsVector(b, offsets);
  const chainOff = b.createString(chain);
  FbEventBatch.startEventBatch(b);
  FbEventBatch.addChain(b, chainOff);
  FbEventBatch.addEvents(b, vec);
  b.finish(FbEventBatch.endEventBatch(b));
  return b.asUint8Array().slice();
}

export function batchRoot(bytes: Uint8Array): FbEventBatch {
  return FbEventBatch.getRootAsEventBatch(new flatbuffers.ByteBuffer(bytes));
}

export function readU128(s: FbU128): bigint {
  return BigInt(s.w0()) | (BigInt(s.w1()) << 32n) | (BigInt(s.w2()) << 64n) | (BigInt(s.w3()) << 96n);
}

export function readU160(s: FbU160): bigint {
  return (
    BigInt(s.w0()) | (BigInt(s.w1()) << 32n) | (BigInt(s.w2()) << 64n) | (BigInt(s.w3()) << 96n) | (BigInt(s.w4()) << 128n)
  );
}

/** A decoded event with the dense ids the batch carries. */
export type DecodedEvent = ChainEvent & { readonly poolId?: number; readonly token0Id?: number; readonly token1Id?: number };

function readKey(k: FbEventKey | null): EventKey {
  return { blockNumber: k!.blockNumber(), txIndex: k!.txIndex(), logIndex: k!.logIndex() };
}

function readToken(t: FbTokenInfo): TokenInfo & { id: number } {
  return {
    id: t.tokenId(),
    address: t.address()!,
    name: t.name() ?? '',
    symbol: t.symbol() ?? '',
    decimals: t.decimals(),
    totalSupply: BigInt(t.totalSupply() ?? '0'),
    role: t.role() as TokenRole,
  };
}

/** Decodes a whole batch into plain objects (addresses of pools are not in non-creation events: `pool` is `#<id>`). */
export function decodeBatch(bytes: Uint8Array): { chain: string; events: DecodedEvent[] } {
  const root = batchRoot(bytes);
  const events: DecodedEvent[] = [];
  const n = root.eventsLength();
  for (let i = 0; i < n; i++) {
    const ev = root.events(i)!;
    switch (ev.bodyType()) {
      case EventBody.Swap: {
        const s = ev.body(new FbSwap()) as FbSwap;
        const flags = s.flags();
        const a0 = readU128(s.amount0()!);
        const a1 = readU128(s.amount1()!);
        events.push({
          kind: 'swap',
          key: readKey(s.key()),
          timestamp: s.timestamp(),
          pool: `#${s.poolId()}`,
          poolId: s.poolId(),
          amount0: flags & SwapFlags.Amount0Negative ? -a0 : a0,
          amount1: flags & SwapFlags.Amount1Negative ? -a1 : a1,
          sqrtPriceX96: readU160(s.sqrtPriceX96()!),
          liquidity: readU128(s.liquidity()!),
          tick: s.tick(),
          txHash: s.txHash() ?? '',
          sender: s.sender() ?? '',
          recipient: s.recipient() ?? '',
        });
        break;
      }
      case EventBody.Sync: {
        const s = ev.body(new FbSync()) as FbSync;
        const q = s.sqrtPriceX96();
        events.push({
          kind: 'sync',
          key: readKey(s.key()),
          timestamp: s.timestamp(),
          pool: `#${s.poolId()}`,
          poolId: s.poolId(),
          reserve0: readU128(s.reserve0()!),
          reserve1: readU128(s.reserve1()!),
          ...(q !== null ? { sqrtPriceX96: readU160(q) } : {}),
        });
        break;
      }
      case EventBody.ReserveDelta: {
        const r = ev.body(new FbReserveDelta()) as FbReserveDelta;
        const flags = r.flags();
        const a0 = readU128(r.amount0()!);
        const a1 = readU128(r.amount1()!);
        events.push({
          kind: 'reserve_delta',
          key: readKey(r.key()),
          timestamp: r.timestamp(),
          pool: `#${r.poolId()}`,
          poolId: r.poolId(),
          amount0: flags & ReserveDeltaFlags.Amount0Negative ? -a0 : a0,
          amount1: flags & ReserveDeltaFlags.Amount1Negative ? -a1 : a1,
        });
        break;
      }
      case EventBody.Mint:
      case EventBody.Burn: {
        const isMint = ev.bodyType() === EventBody.Mint;
        const m = (isMint ? ev.body(new FbMint()) : ev.body(new FbBurn())) as FbMint;
        events.push({
          kind: isMint ? 'mint' : 'burn',
          key: readKey(m.key()),
          timestamp: m.timestamp(),
          pool: `#${m.poolId()}`,
          poolId: m.poolId(),
          amount0: readU128(m.amount0()!),
          amount1: readU128(m.amount1()!),
          liquidity: readU128(m.liquidity()!),
          tickLower: m.tickLower(),
          tickUpper: m.tickUpper(),
          owner: m.owner() ?? '',
          txHash: m.txHash() ?? '',
        });
        break;
      }
      case EventBody.PoolCreated: {
        const p = ev.body(new FbPoolCreated()) as FbPoolCreated;
        const t0 = readToken(p.token0()!);
        const t1 = readToken(p.token1()!);
        events.push({
          kind: 'pool_created',
          key: readKey(p.key()),
          timestamp: p.timestamp(),
          pool: p.address()!,
          poolId: p.poolId(),
          dexId: p.dexId() ?? '',
          factory: p.factory() ?? '',
          protocol: p.protocol() as PoolProtocol,
          feePpm: p.feePpm(),
          token0: t0,
          token1: t1,
          token0Id: t0.id,
          token1Id: t1.id,
          ...(p.weight0() > 0n ? { weights: [p.weight0(), p.weight1()] as const } : {}),
        });
        break;
      }
      case EventBody.Block: {
        const k = ev.body(new FbBlock()) as FbBlock;
        events.push({ kind: 'block', number: k.number(), hash: k.hash() ?? '', parentHash: k.parentHash() ?? '', timestamp: k.timestamp() });
        break;
      }
      case EventBody.Reorg: {
        const r = ev.body(new FbReorg()) as FbReorg;
        events.push({ kind: 'reorg', toBlock: r.toBlock(), toHash: r.toHash() ?? '' });
        break;
      }
      default:
        throw new EventRangeError(`unknown event body type ${ev.bodyType()}`);
    }
  }
  return { chain: root.chain() ?? '', events };
}
