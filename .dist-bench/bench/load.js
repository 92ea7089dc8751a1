/** Load generation: autocannon in its own process pinned to one core, its JSON result parsed. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
const AUTOCANNON = fileURLToPath(new URL('../../node_modules/autocannon/autocannon.js', import.meta.url));
export function hasTaskset() {
    return new Promise((resolve) => execFile('taskset', ['-p', String(process.pid)], (err) => resolve(!err)));
}
export function hasWrk() {
    return new Promise((resolve) => execFile('wrk', ['--version'], (err, stdout, stderr) => resolve(!err || /wrk/.test(`${stdout}${stderr}`))));
}
function ms(value, unit) {
    const v = Number(value);
    return unit === 'us' ? v / 1000 : unit === 's' ? v * 1000 : v;
}
/** wrk (one thread, pinned): the lighter load generator, preferred where installed. */
export async function runWrk(o) {
    const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency'];
    for (const [k, v] of Object.entries(o.headers ?? {}))
        args.push('-H', `${k}: ${v}`);
    let script = null;
    if (o.paths !== undefined) {
        script = join(mkdtempSync(join(tmpdir(), 'dexdata-wrk-')), 'paths.lua');
        const list = o.paths.map((p) => `  ${JSON.stringify(p)},`).join('\n');
        writeFileSync(script, `local paths = {\n${list}\n}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format(nil, paths[(i % #paths) + 1])\nend\n`);
        args.push('-s', script);
    }
    args.push(o.url);
    const [cmd, argv] = o.core === null ? ['wrk', args] : ['taskset', ['-c', String(o.core), 'wrk', ...args]];
    const out = await new Promise((resolve, reject) => execFile(cmd, argv, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout)))).finally(() => {
        if (script !== null)
            rmSync(dirname(script), { recursive: true, force: true });
    });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
    const p50 = /50%\s+([\d.]+)(us|ms|s)/.exec(out);
    const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
    const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    const bytes = /requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB) read/.exec(out);
    const scale = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const errors = (/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1) ?? []).reduce((a, b) => a + Number(b), 0);
    return {
        requestsPerSecond: rps,
        p50Ms: p50 ? ms(p50[1], p50[2]) : NaN,
        p99Ms: p99 ? ms(p99[1], p99[2]) : NaN,
        errors,
        non2xx,
        bytesPerRequest: bytes && total > 0 ? (Number(bytes[1]) * scale[bytes[2]]) / total : 0,
    };
}
export async function runLoad(o) {
    if (o.paths !== undefined)
        throw new Error('a path list needs wrk');
    const args = [AUTOCANNON, '-j', '-c', String(o.connections), '-d', String(o.seconds), '-p', '1'];
    for (const [k, v] of Object.entries(o.headers ?? {}))
        args.push('-H', `${k}=${v}`);
    args.push(o.url);
    const [cmd, argv] = o.core === null ? [process.execPath, args] : ['taskset', ['-c', String(o.core), process.execPath, ...args]];
    const out = await new Promise((resolve, reject) => execFile(cmd, argv, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout))));
    const r = JSON.parse(out);
    return {
        requestsPerSecond: r.requests.average,
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        errors: r.errors,
        non2xx: r.non2xx,
        bytesPerRequest: r.requests.total > 0 ? r.throughput.total / r.requests.total : 0,
    };
}
//# sourceMappingURL=load.js.map