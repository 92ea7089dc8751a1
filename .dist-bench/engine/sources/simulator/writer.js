import { randomBlockHash, randomTxHash } from './encoding.js';
import { Rng } from './prng.js';
const TAG_BLOCK_HASH = 0x0b10c;
const TAG_TX_HASH = 0x7a5;
const TWO_POW_32 = 4294967296;
export class EventWriter {
    /** Timestamp of the current block; the timestamp of every event written now. */
    timestamp = 0;
    out = [];
    clock;
    format;
    hashKey;
    rng = new Rng(0);
    block = -1;
    blockHash = '';
    /** Block that the next transaction goes into. */
    pendingBlock = -1;
    nextTx = 0;
    nextLog = 0;
    /** `hashKey` makes block and tx hashes differ between networks and seeds. */
    constructor(clock, format, hashKey) {
        this.clock = clock;
        this.format = format;
        this.hashKey = hashKey;
    }
    /** Hands over the events written since the last call. */
    take() {
        const out = this.out;
        this.out = [];
        return out;
    }
    /** Subsequent transactions go into `block` (which must not be before the current one). */
    moveTo(block) {
        this.pendingBlock = block;
    }
    /** Opens a transaction and returns its index, writing the block's Block event first if the block is new. */
    beginTx() {
        if (this.pendingBlock !== this.block)
            this.enterBlock(this.pendingBlock);
        return this.nextTx++;
    }
    /** Key of the next log of transaction `txIndex`. */
    key(txIndex) {
        return { blockNumber: this.block, txIndex, logIndex: this.nextLog++ };
    }
    write(event) {
        this.out.push(event);
    }
    /** Unique per (network, block, tx index): the generator state is an injective function of those. */
    txHash(txIndex) {
        const block = this.block;
        this.rng.setWords(this.hashKey ^ TAG_TX_HASH, block >>> 0, Math.floor(block / TWO_POW_32) >>> 0, txIndex);
        return randomTxHash(this.rng, this.format);
    }
    enterBlock(block) {
        const parentHash = block - 1 === this.block ? this.blockHash : this.hashOfBlock(block - 1);
        const hash = this.hashOfBlock(block);
        this.block = block;
        this.blockHash = hash;
        this.timestamp = this.clock.timestampOf(block);
        this.nextTx = 0;
        this.nextLog = 0;
        this.out.push({ kind: 'block', number: block, hash, parentHash, timestamp: this.timestamp });
    }
    hashOfBlock(block) {
        this.rng.setWords(this.hashKey, block >>> 0, Math.floor(block / TWO_POW_32) >>> 0, TAG_BLOCK_HASH);
        return randomBlockHash(this.rng, this.format);
    }
}
//# sourceMappingURL=writer.js.map