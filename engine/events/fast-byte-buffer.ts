import * as flatbuffers from 'flatbuffers';

/**
 * A flatbuffers ByteBuffer whose scalar reads go through one DataView instead of assembling bytes
 * one by one: the generated accessors stay as they are, and each read becomes a single load.
 * FlatBuffers data is little-endian.
 */
export class FastByteBuffer extends flatbuffers.ByteBuffer {
  private readonly view: DataView;

  constructor(bytes: Uint8Array) {
    super(bytes);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  override readInt8(offset: number): number {
    return this.view.getInt8(offset);
  }

  override readUint8(offset: number): number {
    return this.view.getUint8(offset);
  }

  override readInt16(offset: number): number {
    return this.view.getInt16(offset, true);
  }

  override readUint16(offset: number): number {
    return this.view.getUint16(offset, true);
  }

  override readInt32(offset: number): number {
    return this.view.getInt32(offset, true);
  }

  override readUint32(offset: number): number {
    return this.view.getUint32(offset, true);
  }

  override readFloat32(offset: number): number {
    return this.view.getFloat32(offset, true);
  }

  override readFloat64(offset: number): number {
    return this.view.getFloat64(offset, true);
  }
}
