/**
 * Readers judged by what they fail to read over time: a reader that keeps up with a burst of more
 * than a mebibyte in one tick is not cut; readers that stop reading pin at most the stream sockets'
 * small send buffer in the kernel and are dropped SLOW_READER_MS after they fell behind, while a
 * reader beside them gets every event. Real sockets against the real gateway; the kernel's view of
 * each connection is read with `ss`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOW_READER_MS } from '../gateway/streams/client.js';
import { STREAM_SNDBUF_KERNEL_BYTES } from '../gateway/streams/send-buffer.js';
import { plansWith } from './support/access.js';
import { serverSockets, stuckReader } from './support/sockets.js';
import { isData, openRaw, POOL_A, sleep, START, startStreamFixture, wethTrade, type StreamFixture } from './support/streams.js';

const ROOMY = { requestsPerMinute: 100_000, credits: 100_000_000, concurrentStreams: 1_000 };
const PLANS = plansWith({ dev: ROOMY, pro: ROOMY });
const PATH = `/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`;

let fx: StreamFixture;
let t = START;

beforeAll(async () => {
  fx = await startStreamFixture(PLANS);
  await fx.trade([wethTrade(t, 2000)]);
});

afterAll(async () => {
  await fx?.close();
});

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  for (const end = performance.now() + ms; !check(); await sleep(10)) if (performance.now() > end) throw new Error(`timed out: ${what}`);
}

describe('slow readers', () => {
  it('a reader that keeps up with a burst of more than 1 MiB in one tick gets all of it and is not cut', async () => {
    const s = await openRaw(`${fx.url('paidStream')}${PATH}`, { key: fx.key('dev') });
    expect(s.status).toBe(200);
    const burst = 4_000;
    t += 1;
    fx.now = t;
    await fx.trade(
      Array.from({ length: burst }, (_, i) => wethTrade(t, 2000 + (i % 50))),
      true,
    );
    const frames = await s.waitFrames(burst, isData, 20_000);
    expect(frames.reduce((n, f) => n + f.data.length, 0)).toBeGreaterThan(1024 * 1024);
    await sleep(100);
    expect(s.isEnded()).toBe(false);
    expect(s.frames.filter((f) => f.event === 'error')).toEqual([]);
    s.close();
  }, 30_000);

  it('readers that stop reading hold at most the small send buffer in the kernel and are dropped SLOW_READER_MS after falling behind', async (ctx) => {
    const port = fx.gateway.ports.paidStream!;
    if (serverSockets(port) === null) {
      console.warn('skipped: `ss` (iproute2) is not installed, so the kernel side of the sockets cannot be read');
      ctx.skip();
    }
    const key = fx.key('pro');
    const hub = fx.gateway.streams!.hub;
    await until(() => hub.stats().streams === 0, 'earlier streams gone');
    const stuck = await Promise.all(Array.from({ length: 8 }, () => stuckReader(port, `GET ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\n\r\n`)));
    const fast = await openRaw(`${fx.url('paidStream')}${PATH}`, { key });
    await until(() => hub.stats().streams === 9, 'streams open');
    const stuckPorts = new Set(stuck.map((s) => s.localPort!));

    // The gateway's clock stands still: whatever is cut now is cut for its size, not its time.
    let sent = 0;
    for (let b = 0; b < 20; b++) {
      await fx.trade(Array.from({ length: 250 }, (_, i) => wethTrade(t, 2000 + (i % 50))), true);
      sent += 250;
      await sleep(5);
    }
    await fast.waitFrames(sent, isData, 20_000);
    await sleep(200);
    const kernel = serverSockets(port)!.filter((k) => stuckPorts.has(k.peerPort));
    expect(kernel).toHaveLength(8);
    for (const k of kernel) {
      // Filled (the reader stopped), but never past the send buffer the stream sockets get.
      expect(k.sendQ).toBeGreaterThan(16 * 1024);
      expect(k.sndbuf).toBe(STREAM_SNDBUF_KERNEL_BYTES);
      expect(k.sendQ).toBeLessThanOrEqual(STREAM_SNDBUF_KERNEL_BYTES);
    }
    // Megabytes behind, still open: not cut for the size of their backlog.
    expect(hub.stats().streams).toBe(9);
    expect(hub.stats().maxBacklogBytes).toBeGreaterThan(1024 * 1024);

    // Now one second of the gateway's clock per step, with a few swaps each.
    const behindFrom = t;
    while (hub.stats().streams > 1 && t - behindFrom <= SLOW_READER_MS / 1000 + 5) {
      t += 1;
      fx.now = t;
      await fx.trade([wethTrade(t, 2000 + (t % 50))]);
      sent += 1;
      await sleep(40);
    }
    expect(hub.stats().streams).toBe(1);
    // Dropped once behind for more than SLOW_READER_MS, not before, within one step after.
    expect(t - behindFrom).toBeGreaterThan(SLOW_READER_MS / 1000);
    expect(t - behindFrom).toBeLessThanOrEqual(SLOW_READER_MS / 1000 + 2);
    await until(() => serverSockets(port)!.filter((k) => stuckPorts.has(k.peerPort)).length === 0, 'stuck connections closed');
    // The reader beside them got everything.
    await fast.waitFrames(sent, isData, 10_000);
    expect(fast.isEnded()).toBe(false);
    fast.close();
    for (const s of stuck) s.destroy();
  }, 60_000);
});
