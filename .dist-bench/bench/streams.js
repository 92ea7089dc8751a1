/**
 * Stream figures: the most concurrent streams one process holds (and its memory per stream), the
 * events per second delivered to 10,000 streams, and the latency from an event's creation to its
 * receipt by a client (p50, p99).
 *
 * Three processes: this one directs; a server (gateway with its stream hosts over an in-process
 * engine: ingest, shard writer on the same thread, LMDB log) pinned to one core; a load generator
 * pinned to the other, holding raw sockets, counting events as bytes arrive and timing a sample of
 * them (bench/sse-load.c, compiled with the machine's C compiler; the Node reader below when there
 * is none). The server creates swaps at a set rate (each carries its creation time on the system's
 * monotonic clock, in microseconds, as its transaction hash), so latency covers ingest, the shard
 * writer, the change feed, the hub's batching tick and the socket.
 *
 * Delivery is measured for each stream-thread layout side by side: the streams on the gateway's
 * main thread (server pinned to one core, load generator to the other), then on N stream threads
 * sharing the port (server and two load generators free on both cores).
 *
 * `node dist/bench/streams.js [--quick] [--layouts 0,2] [--rates 50,100] [--block-ms 100]` runs it alone (`--block-ms`:
 * swaps arrive in blocks that often instead of each in its own block); bench/run.ts runs it as section 5.
 */
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DEFAULT_PLANS } from '../engine/config.js';
import { Ingest } from '../engine/ingest/ingest.js';
import { LocalShards } from '../engine/shards/local.js';
import { EngineViews } from '../engine/state/views.js';
import { openStore } from '../engine/store/store.js';
import { openKeyStore } from '../gateway/auth/key-store.js';
import { startGateway } from '../gateway/server.js';
const SELF = fileURLToPath(import.meta.url);
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const POOL = '0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc';
const STREAM_PATH = `/sse/transactions?method=token&chain=ethereum&address=${WETH}`;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
/** The system's monotonic clock in microseconds (CLOCK_MONOTONIC: one clock for every process of the machine, as sse-load.c reads it). */
function nowMicros() {
    return Number(process.hrtime.bigint() / 1000n);
}
// ---------------------------------------------------------------- server
async function server(streamThreads) {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-streams-bench-'));
    const store = openStore(dir);
    const views = EngineViews.create({ pools: 64, tokens: 64, chains: 4 });
    const shards = new LocalShards(views);
    const ingest = new Ingest(store, views, shards);
    await ingest.registerNetworks([
        {
            id: 'ethereum',
            displayName: 'Ethereum',
            blockTimeSeconds: 12,
            dexes: [{ id: 'uniswap_v2', name: 'Uniswap V2', protocol: 'uniswap_v2', poolProtocol: 0, factory: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f' }],
        },
    ]);
    let block = 100;
    let time = Math.floor(Date.now() / 1000);
    const created = {
        kind: 'pool_created',
        key: { blockNumber: block, txIndex: 0, logIndex: 0 },
        timestamp: time,
        pool: POOL,
        dexId: 'uniswap_v2',
        factory: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f',
        protocol: 0,
        feePpm: 3000,
        token0: { address: WETH, name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, totalSupply: 10n ** 24n, role: 2 },
        token1: { address: USDC, name: 'USD Coin', symbol: 'USDC', decimals: 6, totalSupply: 10n ** 15n, role: 0 },
    };
    await (await ingest.ingest([{ chain: 'ethereum', events: [created] }])).applied;
    const plans = {};
    for (const p of Object.keys(DEFAULT_PLANS))
        plans[p] = { ...DEFAULT_PLANS[p] };
    plans.enterprise = { ...plans.enterprise, concurrentStreams: 1_000_000, requestsPerMinute: 1_000_000 };
    const key = openKeyStore(store).create('enterprise', 'bench', time).key;
    const gateway = await startGateway({ views, registry: ingest.registry, store, ranker: shards, now: () => Date.now() / 1000, swaps: shards.swapFeed }, { host: '127.0.0.1', port: 0, access: { plans, paidStream: { port: 0 }, meterSlots: 64, streamThreads } });
    const threads = gateway.streamThreads;
    const streamCount = async () => (threads === null ? gateway.streams.hub.stats().streams : (await threads.stats()).streams);
    /** Percentiles of the hubs' wait before a write (ms); `reset` starts a new count. */
    const hubDelay = async (percentiles, reset = false) => threads === null ? gateway.streams.hub.writeDelay(percentiles, reset) : (await threads.stats(percentiles, reset)).writeDelay;
    // Creation to the change feed (ingest, durable commit, shard writer): the part before the gateway.
    const feedLatencies = [];
    shards.swapFeed.subscribe((swaps) => {
        const at = nowMicros();
        for (const sw of swaps)
            feedLatencies.push((at - parseInt(sw.txHash.slice(2), 16)) / 1000);
    });
    /**
     * `rate` swaps per second for `seconds`, each hash its creation time: a block every `blockMs`
     * carrying the swaps of that interval (0: each swap in its own block, one every 1/rate s).
     */
    async function trade(rate, seconds, blockMs) {
        const perTick = blockMs > 0 ? Math.max(1, Math.round((rate * blockMs) / 1000)) : 1;
        const stepMs = (1000 * perTick) / rate;
        const end = performance.now() + seconds * 1000;
        let n = 0;
        let next = performance.now();
        const inFlight = [];
        while (performance.now() < end) {
            const events = [];
            time = Math.max(time, Math.floor(Date.now() / 1000));
            block++;
            for (let i = 0; i < perTick; i++) {
                const price = 2000n + BigInt(n % 7);
                const key = (logIndex) => ({ blockNumber: block, txIndex: i, logIndex });
                events.push({ kind: 'sync', key: key(0), timestamp: time, pool: POOL, reserve0: 1000n * E18, reserve1: price * 1000n * E6 }, {
                    kind: 'swap',
                    key: key(1),
                    timestamp: time,
                    pool: POOL,
                    amount0: -E18,
                    amount1: price * E6,
                    sqrtPriceX96: 0n,
                    liquidity: 0n,
                    tick: 0,
                    txHash: `0x${nowMicros().toString(16).padStart(64, '0')}`,
                    sender: '0x1111111111111111111111111111111111111111',
                    recipient: '0x2222222222222222222222222222222222222222',
                });
                n++;
            }
            // Commits overlap (as in the service): only the hand-over is in order.
            inFlight.push((await ingest.ingest([{ chain: 'ethereum', events }])).applied);
            while (inFlight.length > 16)
                await inFlight.shift();
            next += stepMs;
            const wait = next - performance.now();
            if (wait > 0)
                await new Promise((r) => setTimeout(r, wait));
        }
        await Promise.all(inFlight);
        return n;
    }
    process.on('message', (m) => {
        void (async () => {
            if (m.cmd === 'mem') {
                globalThis.gc?.();
                await new Promise((r) => setTimeout(r, 200));
                globalThis.gc?.();
                const u = process.memoryUsage();
                process.send({ rss: u.rss, heapUsed: u.heapUsed, external: u.external, streams: await streamCount() });
            }
            else if (m.cmd === 'trade') {
                feedLatencies.length = 0;
                await hubDelay([], true);
                const cpu0 = process.cpuUsage();
                const wall0 = performance.now();
                const swaps = await trade(m.rate, m.seconds, m.blockMs ?? 0);
                const cpu = process.cpuUsage(cpu0);
                const busy = (cpu.user + cpu.system) / 1000 / (performance.now() - wall0);
                feedLatencies.sort((a, b) => a - b);
                const q = (p) => feedLatencies[Math.min(feedLatencies.length - 1, Math.floor(p * feedLatencies.length))] ?? NaN;
                process.send({ swaps, streams: await streamCount(), feedP50: q(0.5), feedP99: q(0.99), busy, hubDelay: await hubDelay([0.5, 0.99]) });
            }
            else if (m.cmd === 'stop') {
                await gateway.close();
                await store.close();
                rmSync(dir, { recursive: true, force: true });
                process.exit(0);
            }
        })();
    });
    process.send({ port: gateway.ports.paidStream, key });
}
// ---------------------------------------------------------------- load generator
async function load(port, key, connections, timedSockets) {
    const sockets = [];
    let events = 0;
    let closed = 0;
    const latencies = [];
    let timing = false;
    const marker = Buffer.from('\nevent: ');
    const hashMarker = Buffer.from('"tx_hash":"0x');
    const request = `GET ${STREAM_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\n\r\n`;
    // Every socket reads into this one buffer (`onread`: no buffer allocated and no stream machinery
    // per read; each read is handled before the next), so the reading side costs little beside the
    // server it measures.
    const readBuffer = Buffer.allocUnsafe(256 * 1024);
    /** Length of the longest end of `chunk` that begins the marker (a marker split across two reads). */
    const partialMarker = (chunk) => {
        for (let k = Math.min(marker.length - 1, chunk.length); k > 0; k--) {
            let same = true;
            for (let j = 0; j < k && same; j++)
                same = chunk[chunk.length - k + j] === marker[j];
            if (same)
                return k;
        }
        return 0;
    };
    const openOne = (i) => new Promise((resolve, reject) => {
        let ok = false;
        let carried = 0;
        const onRead = (n, buf) => {
            const chunk = buf.subarray(0, n);
            if (!ok) {
                if (chunk.indexOf('200 OK') < 0) {
                    reject(new Error(`stream refused: ${chunk.toString('latin1', 0, 200)}`));
                    return true;
                }
                ok = true;
                resolve();
            }
            // A marker split across reads: its first `carried` bytes ended the last read.
            if (carried > 0 && chunk.length >= marker.length - carried && chunk.compare(marker, carried, marker.length, 0, marker.length - carried) === 0)
                events++;
            let at = chunk.indexOf(marker);
            while (at >= 0) {
                events++;
                at = chunk.indexOf(marker, at + marker.length);
            }
            carried = partialMarker(chunk);
            if (timing && i < timedSockets) {
                const received = nowMicros();
                let h = chunk.indexOf(hashMarker);
                while (h >= 0) {
                    const hex = chunk.toString('latin1', h + hashMarker.length, h + hashMarker.length + 64);
                    if (hex.length === 64)
                        latencies.push((received - parseInt(hex, 16)) / 1000);
                    h = chunk.indexOf(hashMarker, h + hashMarker.length);
                }
            }
            return true;
        };
        const s = connect({ port, host: '127.0.0.1', onread: { buffer: readBuffer, callback: onRead } });
        s.on('connect', () => s.write(request));
        s.on('error', () => undefined);
        s.on('close', () => {
            closed++;
            if (!ok)
                reject(new Error('stream closed before it opened'));
        });
        sockets.push(s);
    });
    // Open in waves so the listen backlog never overflows.
    for (let i = 0; i < connections; i += 250) {
        await Promise.all(Array.from({ length: Math.min(250, connections - i) }, (_, k) => openOne(i + k)));
    }
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    process.on('message', (m) => {
        if (m.cmd === 'start') {
            loopDelay.reset();
            events = 0;
            latencies.length = 0;
            timing = true;
            process.send({ started: performance.now() });
        }
        else if (m.cmd === 'stop') {
            timing = false;
            latencies.sort((a, b) => a - b);
            const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
            process.send({ events, closed, samples: latencies.length, p50: q(0.5), p99: q(0.99), max: latencies[latencies.length - 1] ?? NaN, loopP99: loopDelay.percentile(99) / 1e6, latencies });
        }
        else if (m.cmd === 'exit') {
            for (const s of sockets)
                s.destroy();
            process.exit(0);
        }
    });
    process.send({ open: sockets.length });
}
// ---------------------------------------------------------------- director
/** `cores`: the CPUs the child may run on (taskset -c), null = any. */
function child(args, cores, nodeFlags = []) {
    const argv = [...nodeFlags, SELF, ...args];
    const [cmd, all] = cores === null ? [process.execPath, argv] : ['taskset', ['-c', cores, process.execPath, ...argv]];
    return spawn(cmd, all, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}
/** bench/sse-load.c, spoken to over its stdin and stdout (one JSON answer per line). */
class NativeLoader extends EventEmitter {
    proc;
    constructor(proc) {
        super();
        this.proc = proc;
        createInterface({ input: proc.stdout }).on('line', (line) => this.emit('message', JSON.parse(line)));
        proc.on('exit', (code) => this.emit('exit', code));
    }
    send(message) {
        this.proc.stdin.write(`${message.cmd}\n`);
    }
    get exitCode() {
        return this.proc.exitCode;
    }
}
let nativeLoader;
/** Compiles bench/sse-load.c once (null when no C compiler is found: the Node load generator is used). */
function nativeLoaderPath(print) {
    if (nativeLoader !== undefined)
        return nativeLoader;
    const source = join(dirname(SELF), '../../bench/sse-load.c');
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-sse-load-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'sse-load');
    const cc = spawnSync(process.env['CC'] ?? 'cc', ['-O2', '-o', out, source], { encoding: 'utf8' });
    nativeLoader = cc.status === 0 ? out : null;
    if (nativeLoader === null)
        print(`(no C compiler for bench/sse-load.c: ${(cc.error?.message ?? cc.stderr).trim()}; the Node load generator reads the streams)`);
    return nativeLoader;
}
/** A load generator holding `connections` streams, timing the swaps of the first `timed`. */
function loader(port, key, connections, timed, cores, print) {
    const native = nativeLoaderPath(print);
    if (native === null)
        return child(['--role', 'load', String(port), key, String(connections), String(timed)], cores);
    const args = [String(port), key, String(connections), String(timed), STREAM_PATH];
    const [cmd, all] = cores === null ? [native, args] : ['taskset', ['-c', cores, native, ...args]];
    return new NativeLoader(spawn(cmd, all, { stdio: ['pipe', 'pipe', 'inherit'] }));
}
function ask(c, message, timeoutMs = 600_000) {
    return new Promise((resolve, reject) => {
        const exited = (code) => {
            clearTimeout(timer);
            reject(new Error(`bench child exited (${code})`));
        };
        const timer = setTimeout(() => {
            c.off('exit', exited);
            reject(new Error('bench child did not answer'));
        }, timeoutMs);
        c.once('message', (m) => {
            clearTimeout(timer);
            c.off('exit', exited);
            resolve(m);
        });
        c.once('exit', exited);
        if (message !== undefined)
            c.send(message);
    });
}
const fmt = (n) => Math.round(n).toLocaleString('en-US');
/**
 * How a layout is placed on the machine. Streams on the main thread: the server on one core, the
 * load generator on the other. Stream threads: the server may use every core and the load
 * generators too (two of them, so the reading side is not one event loop): they share the cores.
 */
function placement(threads, o) {
    if (threads === 0) {
        return { threads, serverCores: o.pinning ? String(o.serverCore) : null, loadCores: o.pinning ? String(o.loadCore) : null, loaders: 1, label: 'streams on the main thread (server core 0, load generator core 1)' };
    }
    return { threads, serverCores: null, loadCores: null, loaders: 2, label: `${threads} stream thread${threads > 1 ? 's' : ''} (server and two load generators share both cores)` };
}
/** Delivery to `streams` streams at each rate, for one layout: rows printed, the best returned. */
async function delivery(o, layout, streams, rates, seconds) {
    const srv = child(['--role', 'server', '--threads', String(layout.threads)], layout.serverCores, ['--expose-gc']);
    const { port, key } = await ask(srv);
    const loaders = [];
    try {
        const per = Math.ceil(streams / layout.loaders);
        for (let i = 0; i < layout.loaders; i++) {
            const l = loader(port, key, Math.min(per, streams - i * per), Math.ceil(200 / layout.loaders), layout.loadCores, o.print);
            loaders.push(l);
            await ask(l);
        }
        let best = null;
        for (const swapsPerSecond of rates) {
            await Promise.all(loaders.map((l) => ask(l, { cmd: 'start' })));
            const t0 = performance.now();
            const traded = await ask(srv, { cmd: 'trade', rate: swapsPerSecond, seconds, blockMs: o.blockMs ?? 0 });
            await new Promise((r) => setTimeout(r, 300));
            const stops = await Promise.all(loaders.map((l) => ask(l, { cmd: 'stop' })));
            const elapsed = (performance.now() - t0) / 1000;
            const events = stops.reduce((n, r) => n + r.events, 0);
            const latencies = stops.flatMap((r) => r.latencies).sort((x, y) => x - y);
            const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
            const row = {
                threads: layout.threads,
                swapsPerSecond,
                eventsPerSecond: events / elapsed,
                p50: q(0.5),
                p99: q(0.99),
                samples: latencies.length,
                dropped: streams - traded.streams,
            };
            o.print(`| ${layout.label}: ${fmt(streams)} streams, ${fmt(traded.swaps / seconds)} swaps/s created | ${fmt(row.eventsPerSecond)} events/s delivered, latency p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms (${fmt(row.samples)} samples; creation to change feed p50 ${traded.feedP50.toFixed(1)} ms, p99 ${traded.feedP99.toFixed(1)} ms, then in the hub until written p50 ${traded.hubDelay[0]} ms, p99 ${traded.hubDelay[1]} ms; server ${(traded.busy * 100).toFixed(0)} % of a core; load generators' loop lag p99 ${stops.map((r) => r.loopP99.toFixed(0)).join(', ')} ms), ${row.dropped} streams dropped |`);
            if (row.dropped > 0)
                break;
            // The figure kept: the highest rate delivered with p99 under 100 ms (else the fastest one).
            if (best === null || (row.p99 < 100 ? best.p99 >= 100 || row.eventsPerSecond > best.eventsPerSecond : best.p99 >= 100 && row.eventsPerSecond > best.eventsPerSecond))
                best = row;
            if (row.p99 > 1000 || traded.swaps < swapsPerSecond * seconds * 0.9)
                break;
        }
        return best;
    }
    finally {
        for (const l of loaders)
            l.send({ cmd: 'exit' });
        await Promise.all(loaders.map((l) => new Promise((r) => (l.exitCode !== null ? r(null) : l.once('exit', r)))));
        srv.send({ cmd: 'stop' });
        await new Promise((r) => srv.once('exit', r));
    }
}
export async function benchStreams(o) {
    const maxStreams = o.quick ? 2_000 : 19_000;
    const rateStreams = o.quick ? 1_000 : 10_000;
    const seconds = o.quick ? 3 : 10;
    const rates = o.rates ?? (o.quick ? [50, 100, 200] : [25, 50, 75, 100, 125, 150]);
    const serverCore = o.pinning ? String(o.serverCore) : null;
    const loadCore = o.pinning ? String(o.loadCore) : null;
    const srv = child(['--role', 'server', '--threads', '0'], serverCore, ['--expose-gc']);
    const { port, key } = await ask(srv);
    let held;
    let bytesPerStream;
    let heapBytesPerStream;
    let lr;
    try {
        // 1. Holding streams: memory per stream.
        const base = await ask(srv, { cmd: 'mem' });
        const holder = loader(port, key, maxStreams, 0, loadCore, o.print);
        const opened = await ask(holder);
        held = await ask(srv, { cmd: 'mem' });
        holder.send({ cmd: 'exit' });
        await new Promise((r) => holder.once('exit', r));
        bytesPerStream = (held.rss - base.rss) / held.streams;
        heapBytesPerStream = (held.heapUsed - base.heapUsed) / held.streams;
        o.print(`| concurrent streams held by one process | ${fmt(held.streams)} (of ${fmt(opened.open)} opened) |`);
        o.print(`| memory per stream (resident, of which JS heap) | ${fmt(bytesPerStream)} B (${fmt(heapBytesPerStream)} B) |`);
        await new Promise((r) => setTimeout(r, 1000));
        // 2. Latency where the load generator keeps up: 1,000 streams at 100 swaps/s.
        const light = loader(port, key, 1000, 200, loadCore, o.print);
        await ask(light);
        await ask(light, { cmd: 'start' });
        const lightTraded = await ask(srv, { cmd: 'trade', rate: 100, seconds });
        await new Promise((r) => setTimeout(r, 300));
        lr = await ask(light, { cmd: 'stop' });
        o.print(`| 1,000 streams, ${fmt(lightTraded.swaps / seconds)} swaps/s created | ${fmt(lr.events / (seconds + 0.3))} events/s delivered, latency p50 ${lr.p50.toFixed(1)} ms, p99 ${lr.p99.toFixed(1)} ms (${fmt(lr.samples)} samples; server core ${(lightTraded.busy * 100).toFixed(0)} % busy; load generator's loop lag p99 ${lr.loopP99.toFixed(0)} ms) |`);
        light.send({ cmd: 'exit' });
        await new Promise((r) => light.once('exit', r));
    }
    finally {
        srv.send({ cmd: 'stop' });
        await new Promise((r) => srv.once('exit', r));
    }
    // 3. Delivery at rateStreams streams, all on one token's swaps (every swap is rateStreams events),
    // for each stream-thread layout in turn.
    const layouts = [];
    for (const threads of o.layouts ?? [0, 2]) {
        const best = await delivery(o, placement(threads, o), rateStreams, rates, seconds);
        if (best !== null)
            layouts.push(best);
    }
    const best = layouts.find((r) => r.threads === 0) ?? layouts[0] ?? null;
    return {
        maxStreams: held.streams,
        bytesPerStream,
        heapBytesPerStream,
        streamsForRate: rateStreams,
        swapsPerSecond: best?.swapsPerSecond ?? 0,
        eventsPerSecond: best?.eventsPerSecond ?? 0,
        droppedStreams: best?.dropped ?? 0,
        p50Ms: best?.p50 ?? NaN,
        p99Ms: best?.p99 ?? NaN,
        latencySamples: best?.samples ?? 0,
        lightP50Ms: lr.p50,
        lightP99Ms: lr.p99,
        layouts,
    };
}
// ---------------------------------------------------------------- entry
const isMain = process.argv[1] === SELF;
if (isMain) {
    const { values, positionals } = parseArgs({
        options: { role: { type: 'string' }, quick: { type: 'boolean' }, threads: { type: 'string' }, layouts: { type: 'string' }, rates: { type: 'string' }, 'block-ms': { type: 'string' } },
        allowPositionals: true,
    });
    const list = (v) => (v === undefined ? undefined : v.split(',').map(Number));
    const run = async () => {
        if (values.role === 'server')
            return server(Number(values.threads ?? '0'));
        if (values.role === 'load')
            return load(Number(positionals[0]), positionals[1], Number(positionals[2]), Number(positionals[3]));
        const print = (line) => process.stdout.write(`${line}\n`);
        print('| stream figure | value |');
        print('|---|---|');
        const layouts = list(values.layouts);
        const rates = list(values.rates);
        const blockMs = values['block-ms'] === undefined ? undefined : Number(values['block-ms']);
        await benchStreams({ quick: values.quick === true, pinning: true, serverCore: 0, loadCore: 1, print, ...(layouts ? { layouts } : {}), ...(rates ? { rates } : {}), ...(blockMs !== undefined ? { blockMs } : {}) });
    };
    run().catch((err) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exit(1);
    });
}
//# sourceMappingURL=streams.js.map