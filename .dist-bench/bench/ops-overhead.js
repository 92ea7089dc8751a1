/**
 * What metrics and logs cost on reads: two services on the same data, one with metrics on (the
 * default: requests counted by host, route and status with a latency histogram) and one with
 * `--metrics false`, both logging at the default level, are loaded in turn with the reads of
 * `npm run bench` (pool details on the free host from its URL cache, and on the paid host), server
 * on core 0 and load generator on core 1. Rounds alternate; the best round of each side is compared.
 *
 *   node dist/bench/ops-overhead.js [--rounds N] [--seconds N]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hasTaskset, hasWrk, runLoad, runWrk } from './load.js';
const CLI = fileURLToPath(new URL('../scripts/dexdata.js', import.meta.url));
const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 4);
const SECONDS = Number(values.seconds ?? 5);
const CONNECTIONS = 64;
const SERVER_CORE = 0;
const LOAD_CORE = 1;
function print(line) {
    process.stdout.write(`${line}\n`);
}
function start(args) {
    const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    return new Promise((resolve, reject) => {
        child.stdout.on('data', (b) => {
            out += b.toString();
            const free = /(?<!paid )REST listening on http:\/\/[\d.]+:(\d+)/.exec(out);
            const paid = /paid REST listening on http:\/\/[\d.]+:(\d+)/.exec(out);
            if (free && paid && /caught up/.test(out))
                resolve({ child, free: Number(free[1]), paid: Number(paid[1]) });
        });
        child.once('exit', (code) => reject(new Error(`service exited (${code}):\n${out.slice(-2000)}`)));
    });
}
async function main() {
    const pinning = await hasTaskset();
    const wrk = await hasWrk();
    const load = (o) => (wrk ? runWrk(o) : runLoad(o));
    print(`# metrics and logs overhead, ${new Date().toISOString()}`);
    print(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}; load ${wrk ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds${pinning ? '' : ' (unpinned)'}`);
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-ops-bench-'));
    const children = [];
    try {
        const roomy = { requestsPerMinute: 1_000_000_000, credits: 2_000_000_000 };
        const config = join(dir, 'config.json');
        writeFileSync(config, JSON.stringify({ plans: { keyless: roomy, free: roomy, pro: roomy } }));
        const common = ['--config', config, '--port', '0', '--pools', '2000', '--backfill-days', '1'];
        // One data directory each (LMDB allows one writer process): the same seed makes the same data.
        const dirs = [join(dir, 'on'), join(dir, 'off')];
        const key = /key: (api_\w+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', dirs[0], '--config', config], { encoding: 'utf8' }))[1];
        const keyOff = /key: (api_\w+)/.exec(execFileSync(process.execPath, [CLI, 'keys', 'create', '--plan', 'pro', '--data-dir', dirs[1], '--config', config], { encoding: 'utf8' }))[1];
        const on = await start([...common, '--data-dir', dirs[0], '--metrics-port', '0']);
        children.push(on.child);
        const off = await start([...common, '--data-dir', dirs[1], '--metrics', 'false']);
        children.push(off.child);
        for (const s of [on, off])
            if (pinning)
                execFileSync('taskset', ['-a', '-cp', String(SERVER_CORE), String(s.child.pid)], { stdio: 'ignore' });
        await new Promise((r) => setTimeout(r, 20_000)); // LMDB commits after the catch-up settle
        const top = (await (await fetch(`http://127.0.0.1:${on.free}/networks/ethereum/pools/search?limit=1`)).json());
        const pool = top.results[0].id;
        print('');
        print(`| read | metrics off req/s | metrics on req/s | on / off (best of ${ROUNDS}) | median of the ${ROUNDS} paired rounds | rounds on/off % |`);
        print('|---|---|---|---|---|---|');
        for (const [name, url, headers] of [
            ['pool details, free host (cached by URL)', (p) => `http://127.0.0.1:${p.free}/networks/ethereum/pools/${pool}`, () => ({})],
            ['pool details, paid host (no URL cache)', (p) => `http://127.0.0.1:${p.paid}/networks/ethereum/pools/${pool}`, (p) => ({ authorization: p === on ? key : keyOff })],
        ]) {
            const withOn = [];
            const withOff = [];
            for (let r = 0; r < ROUNDS; r++) {
                withOff.push(await load({ url: url(off), seconds: SECONDS, connections: CONNECTIONS, core: pinning ? LOAD_CORE : null, headers: headers(off) }));
                withOn.push(await load({ url: url(on), seconds: SECONDS, connections: CONNECTIONS, core: pinning ? LOAD_CORE : null, headers: headers(on) }));
            }
            const best = (runs) => runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
            const ratio = best(withOn).requestsPerSecond / best(withOff).requestsPerSecond;
            const paired = withOn.map((m, i) => m.requestsPerSecond / withOff[i].requestsPerSecond);
            const sorted = [...paired].sort((a, b) => a - b);
            const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
            const rounds = paired.map((r) => (r * 100).toFixed(1)).join('/');
            const failures = [...withOn, ...withOff].reduce((n, m) => n + m.errors + m.non2xx, 0);
            print(`| ${name} | ${Math.round(best(withOff).requestsPerSecond)} | ${Math.round(best(withOn).requestsPerSecond)} | ${(ratio * 100).toFixed(1)} % | ${(median * 100).toFixed(1)} % | ${rounds}${failures > 0 ? ` (${failures} failures)` : ''} |`);
        }
    }
    finally {
        for (const c of children) {
            c.kill('SIGTERM');
            await new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)));
        }
        rmSync(dir, { recursive: true, force: true });
    }
}
main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
});
//# sourceMappingURL=ops-overhead.js.map