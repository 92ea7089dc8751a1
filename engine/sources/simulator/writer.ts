/**
 * Event keys, blocks and hashes of one network's event stream.
 *
 * Invariants: blocks only move forward; a block's Block event is written right before its first
 * transaction, so blocks without transactions never appear; tx indices restart at 0 in each
 * block and log indices count all logs of the block (EVM semantics); every event carries its
 * block's timestamp.
 */
import type { ChainEvent, EventKey } from '../../events/model.js';
import type { BlockClock } from './clock.js';
import { randomBlockHash, randomTxHash, type AddressFormat } from './encoding.js';
import { Rng } from './prng.js';

const TAG_BLOCK_HASH = 0x0b10c;
const TAG_TX_HASH = 0x7a5;
const TWO_POW_32 = 4294967296;

export class EventWriter {
  /** Timestamp of the current block; the timestamp of every event written now. */
  timestamp = 0;

  private out: ChainEvent[] = [];
  private readonly clock: BlockClock;
  private readonly format: AddressFormat;
  private readonly hashKey: number;
  private readonly rng = new Rng(0);
  private block = -1;
  private blockHash = '';
  /** Block that the next transaction goes into. */
  private pendingBlock = -1;
  private nextTx = 0;
  private nextLog = 0;

  /** `hashKey` makes block and tx hashes differ between networks and seeds. */
  constructor(clock: BlockClock, format: AddressFormat, hashKey: number) {
    this.clock = clock;
    this.format = format;
    this.hashKey = hashKey;
  }

  /** Hands over the events written since the last call. */
  take(): ChainEvent[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  /** Subsequent transactions go into `block` (which must not be before the current one). */
  moveTo(block: number): void {
    this.pendingBlock = block;
  }

  /** Opens a transaction and returns its index, writing the block's Block event first if the block is new. */
  beginTx(): number {
    if (this.pendingBlock !== this.block) this.enterBlock(this.pendingBlock);
    return this.nextTx++;
  }

  /** Key of the next log of transaction `txIndex`. */
  key(txIndex: number): EventKey {
    return { blockNumber: this.block, txIndex, logIndex: this.nextLog++ };
  }

  write(event: ChainEvent): void {
    this.out.push(event);
  }

  /** Unique per (network, block, tx index): the generator state is an injective function of those. */
  txHash(txIndex: number): string {
    const block = this.block;
    this.rng.setWords(this.hashKey ^ TAG_TX_HASH, block >>> 0, Math.floor(block / TWO_POW_32) >>> 0, txIndex);
    return randomTxHash(this.rng, this.format);
  }

  private enterBlock(block: number): void {
    const parentHash = block - 1 === this.block ? this.blockHash : this.hashOfBlock(block - 1);
    const hash = this.hashOfBlock(block);
    this.block = block;
    this.blockHash = hash;
    this.timestamp = this.clock.timestampOf(block);
    this.nextTx = 0;
    this.nextLog = 0;
    this.out.push({ kind: 'block', number: block, hash, parentHash, timestamp: this.timestamp });
  }

  private hashOfBlock(block: number): string {
    this.rng.setWords(this.hashKey, block >>> 0, Math.floor(block / TWO_POW_32) >>> 0, TAG_BLOCK_HASH);
    return randomBlockHash(this.rng, this.format);
  }
}
