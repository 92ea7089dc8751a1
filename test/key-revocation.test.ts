/**
 * A key revoked or replaced while in use: its open event streams end at once (an `error` event, then
 * the end of the body), on the calling thread and on stream threads alike, and its agent-protocol
 * sessions end with their streams; other keys' streams and sessions go on. The revocation is made
 * in-process and, like an operator does, by the `dexdata keys` command from another process.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, postJson } from './agent-support.js';
import { DAY, NOW, plansWith, startAccessFixture, type AccessFixture } from './support/access.js';
import { CLI } from './support/service.js';
import { isData, openRaw, POOL_A, START, startStreamFixture, WETH, wethTrade, type RawStream, type StreamFixture } from './support/streams.js';

const ROOMY = { requestsPerMinute: 100_000, credits: 10_000_000, concurrentStreams: 1_000 };
const PLANS = plansWith({ keyless: ROOMY, free: ROOMY, dev: ROOMY, pro: ROOMY, enterprise: ROOMY });
/** The watch looks every 250 ms; the streams must be gone well within a second. */
const ENDED_WITHIN_MS = 1_000;

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))]);
}

for (const threads of [0, 2]) {
  describe(`streams of a key that stops working (${threads} stream threads)`, () => {
    let fx: StreamFixture;
    let t = START;

    beforeAll(async () => {
      fx = await startStreamFixture(PLANS, { streamThreads: threads });
      await fx.trade([wethTrade(t, 2000)]);
    });

    afterAll(async () => {
      await fx?.close();
    });

    const swaps = () => `${fx.url('paidStream')}/sse/transactions?chain=ethereum&address=${POOL_A}&method=pool`;
    const prices = () => `${fx.url('paidStream')}/sse/prices?chain=ethereum&address=${WETH.address}`;

    for (const how of ['revoke', 'regenerate'] as const) {
      it(`${how}: every open stream of the key ends with an error event, the others go on`, async () => {
        const { account, key } = fx.keys.create('dev', `to ${how}`, fx.now);
        const mine: RawStream[] = [];
        // Several streams, so that with threads the kernel spreads them over more than one.
        for (let i = 0; i < 6; i++) mine.push(await openRaw(i % 3 === 2 ? prices() : swaps(), { key }));
        const theirs = await openRaw(swaps(), { key: fx.key('pro') });
        for (const s of [...mine, theirs]) expect(s.status).toBe(200);
        await fx.trade([wethTrade(++t, 2001 + t - START)]);
        for (const s of [...mine, theirs]) await s.waitFrames(1);

        const at = performance.now();
        if (how === 'revoke') fx.keys.revoke(account.id, fx.now);
        else fx.keys.regenerate(account.id);
        await within(Promise.all(mine.map((s) => s.ended)), ENDED_WITHIN_MS, 'streams of the revoked key ended');
        expect(performance.now() - at).toBeLessThan(ENDED_WITHIN_MS);
        for (const s of mine) {
          const last = s.frames[s.frames.length - 1]!;
          expect(last.event).toBe('error');
          expect(JSON.parse(last.data).message).toMatch(/API key of this stream was revoked or replaced/);
        }
        // The other key's stream goes on.
        expect(theirs.isEnded()).toBe(false);
        await fx.trade([wethTrade(++t, 2001 + t - START)]);
        await theirs.waitFrames(2);
        theirs.close();
        // The old key is refused from now on.
        expect((await openRaw(swaps(), { key })).status).toBe(401);
      });
    }
  });
}

describe('agent sessions of a key revoked with the dexdata keys command', () => {
  let fx: AccessFixture;

  beforeAll(async () => {
    fx = await startAccessFixture(PLANS);
  });

  afterAll(async () => {
    await fx?.close();
  });

  /** GET /sse with `key`: resolves with the session's message path once the endpoint event came, and when the stream ends. */
  async function openSse(key: string) {
    const r = await fetch(`${fx.url('agent')}/sse`, { headers: { accept: 'text/event-stream', authorization: key } });
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    let text = '';
    let endpoint = '';
    while (endpoint === '') {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended early');
      text += new TextDecoder().decode(value);
      endpoint = /data: (\/messages\?sessionId=[0-9a-f-]+)/.exec(text)?.[1] ?? '';
    }
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return;
    })();
    return { endpoint, ended };
  }

  /** A Streamable HTTP session of `key` with its GET stream open; resolves when that stream ends. */
  async function openStreamable(key: string) {
    const init = await postJson(`${fx.url('agent')}/streamable-http`, INITIALIZE, { authorization: key, accept: 'application/json' });
    const sessionId = init.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    const r = await fetch(`${fx.url('agent')}/streamable-http`, { headers: { accept: 'text/event-stream', authorization: key, 'mcp-session-id': sessionId } });
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return;
    })();
    return { sessionId, ended };
  }

  it('end at once, streams included; another key keeps its sessions', async () => {
    const { account, key } = fx.keys.create('dev', 'agent to revoke', NOW - DAY);
    const other = fx.keys.create('pro', 'agent kept', NOW - DAY).key;
    const sse = await openSse(key);
    const streamable = await openStreamable(key);
    const kept = await openSse(other);
    expect((await postJson(fx.url('agent') + sse.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: key })).status).toBe(202);

    const cli = spawnSync(process.execPath, [CLI, 'keys', 'revoke', String(account.id), '--data-dir', fx.dir], { encoding: 'utf8' });
    expect(cli.status, cli.stderr).toBe(0);
    const at = performance.now();
    await within(Promise.all([sse.ended, streamable.ended]), ENDED_WITHIN_MS, 'agent streams of the revoked key ended');
    expect(performance.now() - at).toBeLessThan(ENDED_WITHIN_MS);
    // The sessions are gone, not only their streams.
    expect((await postJson(fx.url('agent') + sse.endpoint, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(404);
    expect((await postJson(fx.url('agent') + '/streamable-http', { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': streamable.sessionId })).status).toBe(404);
    // The other key's session goes on.
    expect((await postJson(fx.url('agent') + kept.endpoint, { jsonrpc: '2.0', id: 3, method: 'ping' }, { authorization: other })).status).toBe(202);
  });
});
