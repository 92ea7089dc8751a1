/**
 * Pool search over a large universe: the service started on 1,200,000 simulated pools (1,020,000
 * exist at the start of history) with a short history, then a mix of 256 distinct searches, each
 * with two filters and an ordering, on the paid host (no URL cache), every answer checked for 200.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { searchPaths } from './search-paths.js';
export async function benchSearch(o) {
    const dataDir = mkdtempSync(join(tmpdir(), 'dexdata-bench-search-'));
    const configFile = join(dataDir, 'bench-config.json');
    writeFileSync(configFile, JSON.stringify({ plans: { pro: { requestsPerMinute: 1_000_000, credits: 2_000_000_000 } } }));
    const created = execFileSync(process.execPath, [o.cli, 'keys', 'create', '--plan', 'pro', '--label', 'bench', '--data-dir', dataDir, '--config', configFile], { encoding: 'utf8' });
    const key = /key: (api_\w+)/.exec(created)[1];
    const args = ['serve', '--config', configFile, '--data-dir', dataDir, '--port', '0', '--metrics-port', '0', '--pools', String(o.pools), '--backfill-days', '0.1'];
    const service = spawn(process.execPath, [o.cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
        const paid = await o.waitForLine(service, /paid REST listening on http:\/\/[\d.]+:(\d+)/, 10 * 60_000);
        await o.waitForLine(service, /caught up: (\d+) events/, 30 * 60_000);
        const base = `http://127.0.0.1:${paid[1]}`;
        const headers = { authorization: key };
        const stats = (await (await fetch(`${base}/stats`, { headers })).json());
        const networks = (await (await fetch(`${base}/networks`, { headers })).json()).map((n) => n.id);
        const paths = searchPaths(networks, Math.floor(Date.now() / 1000));
        // Every search answers 200; the first of each ordering also builds that figure's sorted index.
        for (const p of paths) {
            const r = await fetch(`${base}${p}`, { headers });
            if (r.status !== 200)
                throw new Error(`${p} answered ${r.status}: ${await r.text()}`);
            await r.arrayBuffer();
        }
        const quiet = (await o.waitQuiet?.(service.pid)) ?? '';
        const run = () => o.load({ url: `${base}/`, paths, seconds: o.seconds, connections: o.connections, core: o.pinning ? o.loadCore : null, headers });
        const allCores = await run();
        if (o.pinning)
            execFileSync('taskset', ['-a', '-cp', String(o.serverCore), String(service.pid)], { stdio: 'ignore' });
        const oneCore = await run();
        for (const [name, r] of [['service on every core', allCores], ['service on one core', oneCore]]) {
            o.print(`| ${name} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} |${r.errors + r.non2xx > 0 ? ` ${r.errors} socket errors, ${r.non2xx} non-2xx |` : ''}`);
        }
        return { pools: stats.pools, paths: paths.length, allCores, oneCore, quiet };
    }
    finally {
        service.kill('SIGTERM');
        await new Promise((r) => service.once('exit', r));
        rmSync(dataDir, { recursive: true, force: true });
    }
}
//# sourceMappingURL=search.js.map