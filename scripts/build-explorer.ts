/**
 * Bundles the web explorer (gateway/explorer/app) into dist/explorer/ for the service to serve
 * (gateway/explorer/serve.ts): esbuild bundles the TypeScript and its npm libraries (no CDN: the
 * page works offline), splits the chart library into a chunk loaded by the pages that draw one,
 * minifies, names each file by a hash of its content (so it can be cached for a year), writes
 * index.html pointing at them, and compresses every text file with brotli and gzip ahead of time.
 * Run by `npm run build` after tsc (which type-checks the browser code with its own tsconfig).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const APP = join(ROOT, 'gateway', 'explorer', 'app');
const OUT = join(ROOT, 'dist', 'explorer');
const ASSETS = join(OUT, 'assets');
const PUBLIC_ASSETS = '/explorer/assets/';
/** What the first page may weigh, compressed (the budget). */
export const FIRST_PAGE_BUDGET_BYTES = 200 * 1024;
const TEXT = /\.(?:html|js|css|svg|json|txt)$/;

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

async function main(): Promise<void> {
  const started = performance.now();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(ASSETS, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: join(APP, 'main.ts'), style: join(APP, 'style.css') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari16'],
    minify: true,
    legalComments: 'eof',
    outdir: ASSETS,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    metafile: true,
    logLevel: 'warning',
    tsconfig: join(APP, 'tsconfig.json'),
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = (name: string) => {
    const found = outputs.find(([, o]) => o.entryPoint !== undefined && basename(o.entryPoint).startsWith(name));
    if (found === undefined) throw new Error(`explorer build: no output for ${name}`);
    return PUBLIC_ASSETS + basename(found[0]);
  };
  const script = entry('main.ts');
  const style = entry('style.css');
  const html = readFileSync(join(APP, 'index.html'), 'utf8').replace('%SCRIPT%', script).replace('%STYLE%', style);
  writeFileSync(join(OUT, 'index.html'), html);

  // Precompressed beside each text file: the service serves them as they are.
  const sizes = new Map<string, { raw: number; br: number; gzip: number }>();
  for (const f of files(OUT)) {
    if (!TEXT.test(f)) continue;
    const raw = readFileSync(f);
    const br = brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } });
    const gzip = gzipSync(raw, { level: 9 });
    writeFileSync(`${f}.br`, br);
    writeFileSync(`${f}.gz`, gzip);
    sizes.set(relative(OUT, f), { raw: raw.length, br: br.length, gzip: gzip.length });
  }
  const first = ['index.html', relative(OUT, join(ASSETS, basename(script))), relative(OUT, join(ASSETS, basename(style)))];
  const firstGzip = first.reduce((a, f) => a + (sizes.get(f)?.gzip ?? 0), 0);
  const firstBr = first.reduce((a, f) => a + (sizes.get(f)?.br ?? 0), 0);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  // Every file's weight with --verbose; one line otherwise (npm start and npm test build first).
  if (process.argv.includes('--verbose')) for (const [f, s] of sizes) process.stdout.write(`explorer: ${f} ${kb(s.raw)} (gzip ${kb(s.gzip)}, brotli ${kb(s.br)})\n`);
  const total = [...sizes.values()].reduce((a, s) => a + s.gzip, 0);
  process.stdout.write(`explorer: bundled into dist/explorer/ in ${Math.round(performance.now() - started)} ms: first page ${kb(firstGzip)} gzip (${kb(firstBr)} brotli), everything ${kb(total)} gzip\n`);
  if (firstGzip > FIRST_PAGE_BUDGET_BYTES) throw new Error(`explorer build: the first page weighs ${kb(firstGzip)} gzip, over the ${kb(FIRST_PAGE_BUDGET_BYTES)} budget`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
