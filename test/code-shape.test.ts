/**
 * The shape of the compiled code (dist/, built before the tests): what the gateway may import from
 * the engine, and that no module imports itself in a circle. Type-only imports are gone from the
 * compiled files, so these are the imports that run.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm;

function jsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsFiles(p));
    else if (p.endsWith('.js')) out.push(p);
  }
  return out;
}

/** Relative imports of each compiled file of `folders`, as paths relative to dist/. */
function importGraph(folders: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const folder of folders) {
    for (const f of jsFiles(join(DIST, folder))) {
      const src = readFileSync(f, 'utf8');
      const to = [...src.matchAll(IMPORT)].map((m) => relative(DIST, resolve(dirname(f), (m[1] ?? m[2])!)));
      graph.set(relative(DIST, f), to);
    }
  }
  return graph;
}

/** Every circle of imports, each as the chain of files around it. */
function circles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (n: string): void => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (!graph.has(m)) continue;
      if (state.get(m) === 'open') found.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return found;
}

describe('code shape', () => {
  const graph = importGraph(['engine', 'gateway', 'scripts']);

  it('has no import circles in the engine, the gateway or the command line', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(circles(graph).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('the gateway imports from the engine only through engine/read', () => {
    const outside: string[] = [];
    let throughSurface = 0;
    for (const [file, imports] of graph) {
      if (!file.startsWith('gateway/')) continue;
      for (const to of imports) {
        if (!to.startsWith('engine/')) continue;
        if (to.startsWith('engine/read/')) throughSurface++;
        else outside.push(`${file} -> ${to}`);
      }
    }
    expect(throughSurface).toBeGreaterThan(10);
    expect(outside).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const g = new Map([
      ['a.js', ['b.js']],
      ['b.js', ['c.js']],
      ['c.js', ['a.js']],
      ['d.js', ['a.js']],
    ]);
    expect(circles(g).map((c) => c.join(' -> '))).toEqual(['a.js -> b.js -> c.js -> a.js']);
  });
});
