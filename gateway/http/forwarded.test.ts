import { describe, expect, it } from 'vitest';
import { canonicalAddress, createTrustedProxies, NO_PROXIES } from './forwarded.js';

const raw = (...bytes: number[]) => new Uint8Array(bytes).buffer;

describe('trusted proxies', () => {
  it('reads nothing when none is configured', () => {
    expect(NO_PROXIES.any).toBe(false);
    expect(NO_PROXIES.client(raw(127, 0, 0, 1), '203.0.113.9', '')).toBeNull();
    expect(NO_PROXIES.clientOf('127.0.0.1', '203.0.113.9', '')).toBeNull();
  });

  it('honours X-Forwarded-For only from a listed address or CIDR, taking the right-most untrusted address', () => {
    const p = createTrustedProxies(['10.0.0.0/8', '192.0.2.1', 'fd00::/8']);
    expect(p.client(raw(10, 1, 2, 3), '203.0.113.9', '')).toBe('203.0.113.9');
    expect(p.client(raw(192, 0, 2, 1), '198.51.100.7, 203.0.113.9', '')).toBe('203.0.113.9');
    // A proxy chain: trusted hops on the right are skipped.
    expect(p.client(raw(10, 0, 0, 1), '203.0.113.9, 10.0.0.2, 10.0.0.3', '')).toBe('203.0.113.9');
    // An untrusted peer's header is ignored.
    expect(p.client(raw(192, 0, 2, 2), '203.0.113.9', '')).toBeNull();
    expect(p.client(raw(11, 0, 0, 1), '203.0.113.9', '')).toBeNull();
    // Nothing readable: the peer is the client.
    expect(p.client(raw(10, 0, 0, 1), '', '')).toBeNull();
    expect(p.client(raw(10, 0, 0, 1), 'unknown', '')).toBeNull();
    // Everything trusted: the left-most.
    expect(p.client(raw(10, 0, 0, 1), '10.0.0.9, 10.0.0.8', '')).toBe('10.0.0.9');
    // IPv6 peer and addresses, in the eight-group form the keyless limits are keyed by.
    const fd = raw(0xfd, 0, ...Array<number>(13).fill(0), 1);
    expect(p.client(fd, '2001:db8::1', '')).toBe('2001:0db8:0000:0000:0000:0000:0000:0001');
    expect(p.trusts('::ffff:10.9.9.9')).toBe(true);
  });

  it('reads Forwarded for= when there is no X-Forwarded-For', () => {
    const p = createTrustedProxies(['127.0.0.1']);
    expect(p.clientOf('127.0.0.1', '', 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"')).toBe('2001:0db8:cafe:0000:0000:0000:0000:0017');
    expect(p.clientOf('127.0.0.1', '', 'for=192.0.2.60')).toBe('192.0.2.60');
    expect(p.clientOf('127.0.0.1', '198.51.100.1', 'for=192.0.2.60')).toBe('198.51.100.1');
  });

  it('writes addresses as the peer text form and refuses what is not an address', () => {
    expect(canonicalAddress(' 203.0.113.9 ')).toBe('203.0.113.9');
    expect(canonicalAddress('203.0.113.9:5555')).toBe('203.0.113.9');
    expect(canonicalAddress('[::1]:80')).toBe('0000:0000:0000:0000:0000:0000:0000:0001');
    expect(canonicalAddress('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(canonicalAddress('_hidden')).toBeNull();
    expect(canonicalAddress('1.2.3.400')).toBeNull();
    expect(() => createTrustedProxies(['proxy.example'])).toThrow(/not an IP address or CIDR/);
  });
});
