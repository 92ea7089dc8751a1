import * as flatbuffers from 'flatbuffers';
import { describe, expect, it } from 'vitest';
import { FastByteBuffer } from './fast-byte-buffer.js';

describe('FastByteBuffer', () => {
  it('reads every scalar exactly like the reference ByteBuffer, at any offset', () => {
    const bytes = new Uint8Array(4096);
    let x = 0x9e37_79b9;
    for (let i = 0; i < bytes.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      bytes[i] = x & 0xff;
    }
    // A view that does not start at offset 0 of its buffer, as LMDB and Buffer pools hand out.
    const view = bytes.subarray(3, 4093);
    const ref = new flatbuffers.ByteBuffer(view);
    const fast = new FastByteBuffer(view);
    for (let o = 0; o + 8 <= view.length; o++) {
      expect(fast.readInt8(o)).toBe(ref.readInt8(o));
      expect(fast.readUint8(o)).toBe(ref.readUint8(o));
      expect(fast.readInt16(o)).toBe(ref.readInt16(o));
      expect(fast.readUint16(o)).toBe(ref.readUint16(o));
      expect(fast.readInt32(o)).toBe(ref.readInt32(o));
      expect(fast.readUint32(o)).toBe(ref.readUint32(o));
      expect(Object.is(fast.readFloat32(o), ref.readFloat32(o)) || (Number.isNaN(fast.readFloat32(o)) && Number.isNaN(ref.readFloat32(o)))).toBe(true);
      expect(Object.is(fast.readFloat64(o), ref.readFloat64(o)) || (Number.isNaN(fast.readFloat64(o)) && Number.isNaN(ref.readFloat64(o)))).toBe(true);
    }
  });
});
