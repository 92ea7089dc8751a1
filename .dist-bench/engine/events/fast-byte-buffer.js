import * as flatbuffers from 'flatbuffers';
/**
 * A flatbuffers ByteBuffer whose scalar reads go through one DataView instead of assembling bytes
 * one by one: the generated accessors stay as they are, and each read becomes a single load.
 * FlatBuffers data is little-endian.
 */
export class FastByteBuffer extends flatbuffers.ByteBuffer {
    view;
    constructor(bytes) {
        super(bytes);
        this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    readInt8(offset) {
        return this.view.getInt8(offset);
    }
    readUint8(offset) {
        return this.view.getUint8(offset);
    }
    readInt16(offset) {
        return this.view.getInt16(offset, true);
    }
    readUint16(offset) {
        return this.view.getUint16(offset, true);
    }
    readInt32(offset) {
        return this.view.getInt32(offset, true);
    }
    readUint32(offset) {
        return this.view.getUint32(offset, true);
    }
    readFloat32(offset) {
        return this.view.getFloat32(offset, true);
    }
    readFloat64(offset) {
        return this.view.getFloat64(offset, true);
    }
}
//# sourceMappingURL=fast-byte-buffer.js.map