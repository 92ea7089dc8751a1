#!/usr/bin/env node
/**
 * dexdata, the command (scripts/cli.ts). CommonJS: it runs before Node's module loader first uses
 * libuv's thread pool, so it can size the pool for the store's writers (thread-pool.cts) unless
 * UV_THREADPOOL_SIZE is set already. `npm run build` also bundles the command, with the worker
 * threads' entries, into dist/bundle/ (scripts/build-bundle.ts): about 45 module files instead of
 * some 280 that a start would otherwise resolve, read and compile one by one before it can listen.
 * This runs the bundle when the build made one, else the compiled modules. Stack traces name the
 * bundle's lines; with NODE_OPTIONS=--enable-source-maps they name the TypeScript sources (the maps
 * are read and parsed as each module loads: a few hundred ms more before a start serves).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { shardsAskedFor, threadPoolSize } from './thread-pool.cjs';

process.env.UV_THREADPOOL_SIZE ??= String(threadPoolSize(shardsAskedFor(process.argv.slice(2), process.env)));
const bundled = join(__dirname, '..', 'bundle', 'dexdata.js');
import(pathToFileURL(existsSync(bundled) ? bundled : join(__dirname, 'cli.js')).href).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
