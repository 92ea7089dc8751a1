import { readFileSync } from 'node:fs';
/** Everything each child printed so far, so a wait also sees lines printed before it began. */
const printed = new WeakMap();
export function output(child) {
    let o = printed.get(child);
    if (!o) {
        const acc = { text: '' };
        child.stdout.on('data', (b) => (acc.text += b.toString()));
        printed.set(child, acc);
        o = acc;
    }
    return o;
}
export function waitForLine(child, pattern, timeoutMs) {
    const out = output(child);
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}:\n${out.text.slice(-2000)}`)), timeoutMs);
        const check = () => {
            const m = out.text.match(pattern);
            if (!m)
                return;
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve(m);
        };
        child.stdout.on('data', check);
        child.once('exit', (code) => reject(new Error(`process exited (${code}) before ${pattern}:\n${out.text.slice(-2000)}`)));
        check();
    });
}
/** Resident memory split: anonymous (engine views, heaps) and file-backed (LMDB pages in the page cache). */
export function residentBytes(pid) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
    return { total: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}
//# sourceMappingURL=process.js.map