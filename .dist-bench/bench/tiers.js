/**
 * Hot and quiet pools at scale: the service started on two universe sizes with the same market
 * activity (so about the same pools trade), pools quiet for an hour giving their rings back.
 * Prints, per size, the pools hot and quiet, the ring blocks touched, the resident memory, and a
 * restart (SIGTERM, start again: serving, caught up); then the memory one more pool costs (the
 * difference between the two sizes over the difference in pools: almost all of them quiet) beside
 * the shared-memory row of a pool and of a token, from the column table.
 *
 *   node dist/bench/tiers.js [--quick] [--pools 250000,1000000] [--backfill-days 1]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EngineViews } from '../engine/state/views.js';
import { ringBlockBytes } from '../engine/state/ring-blocks.js';
import { residentBytes, waitForLine } from './process.js';
const CLI = fileURLToPath(new URL('../scripts/dexdata.js', import.meta.url));
const { values } = parseArgs({ options: { quick: { type: 'boolean' }, pools: { type: 'string' }, 'backfill-days': { type: 'string' } } });
const quick = values.quick === true;
const sizes = (values.pools ?? (quick ? '20000,80000' : '250000,1000000')).split(',').map(Number);
const backfillDays = Number(values['backfill-days'] ?? 1);
const QUIET_AFTER_S = 3_600;
/** Sweeps free the blocks of pools quiet since the backfill within a few seconds of the catch-up. */
const SETTLE_MS = 15_000;
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const fmt = (n) => n.toLocaleString('en-US');
function start(args) {
    return spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
}
async function stop(child) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
}
async function measure(pools) {
    const dataDir = mkdtempSync(join(tmpdir(), 'dexdata-bench-tiers-'));
    const args = ['serve', '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', '--pools', String(pools), '--backfill-days', String(backfillDays), '--quiet-after', String(QUIET_AFTER_S), '--log-format', 'json'];
    let child = start(args);
    try {
        const port = Number((await waitForLine(child, /(?<!paid )REST listening on http:\/\/[\d.]+:(\d+)/, 30 * 60_000))[1]);
        const events = Number((await waitForLine(child, /caught up: (\d+) events/, 60 * 60_000))[1]);
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        const stats = (await (await fetch(`http://127.0.0.1:${port}/stats`)).json());
        const anonBytes = residentBytes(child.pid).anon;
        await stop(child);
        const t0 = performance.now();
        child = start(args);
        await waitForLine(child, /(?<!paid )REST listening on/, 30 * 60_000);
        const servingSeconds = (performance.now() - t0) / 1000;
        await waitForLine(child, /caught up/, 30 * 60_000);
        const caughtUpSeconds = (performance.now() - t0) / 1000;
        return { pools: stats.pools, tokens: stats.tokens, events, engine: stats.engine, anonBytes, restart: { servingSeconds, caughtUpSeconds } };
    }
    finally {
        await stop(child).catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
    }
}
function rowBytes(views, scope) {
    let n = 0;
    for (const c of views.columnTable)
        if (c.scope === scope)
            n += c.stride * c.array.BYTES_PER_ELEMENT;
    return n;
}
async function main() {
    const print = (line) => process.stdout.write(`${line}\n`);
    print(`# hot and quiet pools (${new Date().toISOString()}, ${cpus()[0]?.model ?? 'cpu'} x ${cpus().length}, ${mib(totalmem())})`);
    print(`${backfillDays} day(s) of simulated history, pools quiet for ${QUIET_AFTER_S} s give their rings back`);
    print('');
    print('| pools | tokens | events | pools hot / quiet | tokens hot / quiet | ring blocks touched | resident (anon) | per pool | restart: serving / caught up |');
    print('|---|---|---|---|---|---|---|---|---|');
    const results = [];
    for (const size of sizes) {
        const r = await measure(size);
        results.push(r);
        const e = r.engine;
        print(`| ${fmt(r.pools)} | ${fmt(r.tokens)} | ${fmt(r.events)} | ${fmt(e.pools_hot)} / ${fmt(e.pools_quiet)} | ${fmt(e.tokens_hot)} / ${fmt(e.tokens_quiet)} | ${fmt(e.ring_blocks.touched)} (${mib(e.ring_blocks.touched * e.ring_blocks.bytes_each)}) | ${mib(r.anonBytes)} | ${fmt(Math.round(r.anonBytes / r.pools))} B | ${r.restart.servingSeconds.toFixed(1)} s / ${r.restart.caughtUpSeconds.toFixed(1)} s |`);
    }
    const views = EngineViews.create({ pools: 1, tokens: 1, chains: 1, blocks: 1, secondBlocks: 1 });
    print('');
    if (results.length >= 2) {
        const a = results[0];
        const b = results[results.length - 1];
        const perPool = (b.anonBytes - a.anonBytes - (b.engine.ring_blocks.touched - a.engine.ring_blocks.touched) * b.engine.ring_blocks.bytes_each) / (b.pools - a.pools);
        print(`one more pool (with its share of tokens, the id registry and the search index), blocks aside: ${fmt(Math.round(perPool))} B (target for a quiet pool: at most 400 B)`);
        print(`extrapolated: 10,000,000 pools ${mib(a.anonBytes + perPool * (10_000_000 - a.pools))}; 37,700,000 pools ${mib(a.anonBytes + perPool * (37_700_000 - a.pools))} (blocks of the hot pools of the smaller run included)`);
    }
    print(`shared-memory row: ${rowBytes(views, 'pool')} B per pool, ${rowBytes(views, 'token')} B per token; a ring block ${fmt(ringBlockBytes(views))} B, a second block ${ringBlockBytes(views, 'secondBlock')} B`);
}
await main();
//# sourceMappingURL=tiers.js.map