/** Child processes of the benchmarks: what they printed, waiting for a line, their resident memory. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Everything each child printed so far, so a wait also sees lines printed before it began. */
const printed = new WeakMap<ChildProcess, { text: string }>();

export function output(child: ChildProcess): { text: string } {
  let o = printed.get(child);
  if (!o) {
    const acc = { text: '' };
    child.stdout!.on('data', (b: Buffer) => (acc.text += b.toString()));
    printed.set(child, acc);
    o = acc;
  }
  return o;
}

export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const out = output(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}:\n${out.text.slice(-2000)}`)), timeoutMs);
    const check = () => {
      const m = out.text.match(pattern);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve(m);
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before ${pattern}:\n${out.text.slice(-2000)}`)));
    check();
  });
}

/** Resident memory split: anonymous (engine views, heaps) and file-backed (LMDB pages in the page cache). */
export function residentBytes(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
  return { total: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

