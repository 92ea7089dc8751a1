import { describe, expect, it } from 'vitest';
import { request } from 'node:http';
import uWS from 'uWebSockets.js';
import type { us_listen_socket } from 'uWebSockets.js';
import { addressText, keylessCaller, keylessCallerAt } from './access.js';
import { DEFAULT_PLANS } from '../../engine/read/index.js';

/** What uWS reports for a peer, raw and as text, for one request from `host`. */
async function peerAt(host: string): Promise<{ raw: ArrayBuffer; text: string } | null> {
  const app = uWS.App();
  let seen: { raw: ArrayBuffer; text: string } | null = null;
  app.get('/*', (res) => {
    seen = { raw: res.getRemoteAddress().slice(0), text: Buffer.from(res.getRemoteAddressAsText()).toString('latin1') };
    res.end('ok');
  });
  const token = await new Promise<us_listen_socket | false>((resolve) => app.listen(host, 0, resolve));
  if (token === false) return null; // no such loopback on this machine
  const port = uWS.us_socket_local_port(token as never);
  try {
    await new Promise<void>((resolve, reject) => {
      const req = request({ host, port, path: '/' }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    uWS.us_listen_socket_close(token);
    (app as unknown as { close?: () => void }).close?.();
  }
  return seen;
}

describe('keyless callers by peer address', () => {
  const plans = DEFAULT_PLANS;

  it('names an IPv4 peer as uWS does and reuses one caller per address', async () => {
    const peer = await peerAt('127.0.0.1');
    expect(peer).not.toBeNull();
    expect(addressText(new Uint8Array(peer!.raw))).toBe(peer!.text);
    const a = keylessCallerAt(plans, peer!.raw);
    expect(a.key).toBe(`ip:${peer!.text}`);
    expect(keylessCallerAt(plans, peer!.raw.slice(0))).toBe(a);
    // The same subject as the text path (streams use it): one counter per address.
    expect(keylessCaller(plans, peer!.text)).toBe(a);
  });

  it('names an IPv6 peer as uWS does', async () => {
    const peer = await peerAt('::1');
    if (peer === null) return; // IPv6 loopback not configured here
    expect(peer.raw.byteLength).toBe(16);
    expect(addressText(new Uint8Array(peer.raw))).toBe(peer.text);
    expect(keylessCallerAt(plans, peer.raw).key).toBe(`ip:${peer.text}`);
  });

  it('keeps distinct addresses apart', () => {
    const a = keylessCallerAt(plans, new Uint8Array([10, 0, 0, 1]).buffer);
    const b = keylessCallerAt(plans, new Uint8Array([10, 0, 0, 2]).buffer);
    expect(a.key).toBe('ip:10.0.0.1');
    expect(b.key).toBe('ip:10.0.0.2');
    const v6 = new Uint8Array(16);
    v6[15] = 1;
    expect(keylessCallerAt(plans, v6.buffer).key).toBe('ip:0000:0000:0000:0000:0000:0000:0000:0001');
  });
});
