/**
 * Bundles the command (scripts/cli.ts) and the entries of its worker threads into dist/bundle/ with
 * esbuild, from tsc's output and its source maps: a start then loads about 45 module files, not some
 * 280 of its own and of its libraries one by one (resolving, reading and compiling each cost
 * more than evaluating them). Run by `npm run build` after tsc; scripts/dexdata.cts runs the bundle.
 *
 * - Splitting: what the entries share is in chunks; what is imported on first use (the agent
 *   protocol, the chain sources, the metrics registry, the OpenAPI document) stays in chunks of its
 *   own, loaded only then.
 * - The worker threads are started from files beside the code that starts them (`new URL('./worker.js',
 *   import.meta.url)`): each entry keeps its file name, and every output file is in the one folder.
 *   The explorer's files are found from there too (gateway/explorer/serve.ts looks in ../../dist/explorer/).
 * - Left outside: native addons (uWebSockets.js, lmdb, koffi, msgpackr's) and Piscina, which starts
 *   its threads from its own files.
 * - CommonJS libraries inside an ES module bundle get `require` from createRequire.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const DIST = fileURLToPath(new URL('../', import.meta.url));
const OUT = join(DIST, 'bundle');

/** Entry name -> compiled file; the names are those the code starting each thread looks for. */
export const BUNDLE_ENTRIES = {
  dexdata: 'scripts/cli.js',
  worker: 'engine/shards/worker.js',
  'block-loader-thread': 'engine/snapshot/block-loader-thread.js',
  'write-thread': 'engine/snapshot/write-thread.js',
  thread: 'gateway/streams/thread.js',
} as const;

const EXTERNAL = ['uWebSockets.js', 'lmdb', 'koffi', 'msgpackr', 'piscina'];

async function main(): Promise<void> {
  const started = performance.now();
  rmSync(OUT, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: DIST,
    entryPoints: Object.fromEntries(Object.entries(BUNDLE_ENTRIES).map(([name, file]) => [name, join(DIST, file)])),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: OUT,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    sourcemap: 'linked',
    // The maps name the sources on disk without carrying them: a start with source maps on reads them whole.
    sourcesContent: false,
    external: EXTERNAL,
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'warning',
  });
  for (const name of Object.keys(BUNDLE_ENTRIES)) if (!existsSync(join(OUT, `${name}.js`))) throw new Error(`bundle: no ${name}.js written`);
  const outputs = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith('.js'));
  const bytes = outputs.reduce((a, [, o]) => a + o.bytes, 0);
  process.stdout.write(`bundle: ${outputs.length} files into dist/bundle/ in ${(performance.now() - started).toFixed(0)} ms (${(bytes / 2 ** 20).toFixed(1)} MiB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
