#!/usr/bin/env node
/**
 * dexdata, the command (scripts/cli.ts). `npm run build` also bundles it, with the worker threads'
 * entries, into dist/bundle/ (scripts/build-bundle.ts): about 45 module files instead of some 280
 * that a start would otherwise resolve, read and compile one by one before it can listen. This runs
 * the bundle when the build made one, else the compiled modules. Stack traces name the bundle's
 * lines; with NODE_OPTIONS=--enable-source-maps they name the TypeScript sources (the maps are read
 * and parsed as each module loads: a few hundred ms more before a start serves).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundled = new URL('../bundle/dexdata.js', import.meta.url);
await import(existsSync(fileURLToPath(bundled)) ? bundled.href : './cli.js');
