/**
 * The web explorer on the free REST host: the page and its bundle (built by scripts/build-explorer.ts
 * into dist/explorer/, loaded into memory at start), and the session the page starts from.
 *
 *   GET /explorer              308 to /explorer/
 *   GET /explorer/assets/...   the bundle: content-hashed names, cached for a year (immutable)
 *   GET /explorer/session      the explorer key (for the browsers of `clients`) and where the other hosts are
 *   GET /explorer/key          the plan of the key in the Authorization header (one a reader entered),
 *                              so the page knows which host serves it without asking the wrong one
 *   GET /explorer/...          index.html (the page routes in the browser)
 *
 * Answers carry a strong ETag per encoding (If-None-Match answers 304), are brotli- or gzip-encoded
 * when the browser takes it (the bundle is compressed at build time), and the page's HTML carries a
 * Content-Security-Policy that lets it load only its own files. The page reads data only through the
 * public REST and stream hosts, with the explorer key (metered on the `explorer` plan, gateway/auth
 * and gateway/metering as any key) or a key its user enters; nothing here reads the engine.
 *
 * The session hands the key only to a browser whose address is among `clients` (loopback by
 * default) and whose Host header names this host by an address, `localhost` or a configured public
 * name: a page served under another DNS name rebound to this address never gets it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { errorText, fallbackLog, type Log } from '../../engine/read/index.js';
import { hostNameOf, parseHostHeader } from '../http/host-header.js';
import type { ExplorerKey } from './key.js';

export const EXPLORER_PATH = '/explorer/';
const ASSETS_PREFIX = 'assets/';

export interface ExplorerOptions {
  /** Hand the page a key of the explorer plan (false: the page browses keyless or with a key entered). */
  readonly issueKey: boolean;
  /** Addresses or CIDRs of the browsers the key is handed to. */
  readonly clients: readonly string[];
  /** Folder of the built bundle; default dist/explorer/ (scripts/build-explorer.ts). */
  readonly assetsDir?: string;
}

/** Where the page finds the other hosts: their ports, and the public name configured for each, if any. */
export interface ExplorerLinks {
  readonly ports: Readonly<Record<'freeRest' | 'paidRest' | 'freeStream' | 'paidStream', number | null>>;
  readonly hosts: Readonly<Record<'freeRest' | 'paidRest' | 'freeStream' | 'paidStream', string | null>>;
}

export interface ExplorerServeOptions extends ExplorerOptions {
  /** The key handed out; null when none is issued. */
  readonly key: ExplorerKey | null;
  /** Public names of the free REST host (listeners.freeRest.hosts). */
  readonly hostNames: readonly string[];
  /** The client's address as the gateway counts it (the peer, or the client a trusted proxy names). */
  readonly clientOf: (res: HttpResponse, req: HttpRequest) => string;
  readonly links: () => ExplorerLinks;
  /** The plan of a live key, or null for a malformed, unknown or revoked one (the key store's verify). */
  readonly planOf: (key: string) => string | null;
  readonly log?: Log;
}

export interface Explorer {
  /** Registers the explorer's routes on the free REST host's app (before its catch-all route). */
  register(app: TemplatedApp): void;
  /** Whether the bundle was found. */
  readonly built: boolean;
}

interface Asset {
  readonly type: string;
  readonly raw: Buffer;
  readonly gzip: Buffer | null;
  readonly br: Buffer | null;
  /** Quoted ETag of the raw bytes (the encodings add a suffix inside the quotes). */
  readonly tag: string;
  readonly cacheControl: string;
  readonly html: boolean;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
/** The page loads only its own files; it connects to the other hosts of the service (other ports, maybe other names). */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' http: https:; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The bundle's folder: dist/explorer/ beside the compiled gateway, or from the sources' folder. */
function defaultAssetsDir(): string {
  const candidates = [new URL('../../explorer/', import.meta.url), new URL('../../dist/explorer/', import.meta.url)].map((u) => fileURLToPath(u));
  return candidates.find((d) => existsSync(join(d, 'index.html'))) ?? candidates[0]!;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** The precompressed file beside `path` when there is one, else compressed now. */
function encoded(path: string, raw: Buffer, kind: 'gzip' | 'br'): Buffer {
  const ready = `${path}${kind === 'gzip' ? '.gz' : '.br'}`;
  if (existsSync(ready)) return readFileSync(ready);
  return kind === 'gzip' ? gzipSync(raw, { level: 9 }) : brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } });
}

/** The bundle as served, by path under /explorer/. */
export function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(join(dir, 'index.html'))) return assets;
  for (const path of filesUnder(dir)) {
    if (path.endsWith('.gz') || path.endsWith('.br')) continue;
    const ext = extname(path);
    const raw = readFileSync(path);
    const compress = COMPRESSIBLE.has(ext) && raw.length > 256;
    const name = relative(dir, path).split(sep).join('/');
    const gzip = compress ? encoded(path, raw, 'gzip') : null;
    const br = compress ? encoded(path, raw, 'br') : null;
    assets.set(name, {
      type: TYPES[ext] ?? 'application/octet-stream',
      raw,
      gzip: gzip !== null && gzip.length < raw.length ? gzip : null,
      br: br !== null && br.length < raw.length ? br : null,
      tag: createHash('sha256').update(raw).digest('base64url').slice(0, 22),
      cacheControl: name.startsWith(ASSETS_PREFIX) ? IMMUTABLE : REVALIDATE,
      html: ext === '.html',
    });
  }
  return assets;
}

/** Whether `accept` (an Accept-Encoding value) takes `coding` (a q=0 refuses it). */
export function accepts(accept: string, coding: string): boolean {
  for (const part of accept.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (name !== coding && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** Whether an If-None-Match value names `etag` (weak comparison, as RFC 9110 asks for it). */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** A set of addresses and CIDRs. */
function addressSet(list: readonly string[]): (address: string) => boolean {
  const blocks = new BlockList();
  for (const entry of list) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address!);
    if (family === 0) throw new TypeError(`explorer.clients: "${entry}" is not an IP address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) blocks.addAddress(address!, type);
    else blocks.addSubnet(address!, Number(prefix), type);
  }
  return (address) => {
    // The gateway writes IPv6 as eight groups; an IPv4-mapped one is checked as IPv4.
    const mapped = /^(?:0000:){5}ffff:([0-9a-f]{4}):([0-9a-f]{4})$/i.exec(address);
    if (mapped !== null) {
      const a = parseInt(mapped[1]!, 16);
      const b = parseInt(mapped[2]!, 16);
      address = `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
    }
    const family = isIP(address);
    return family !== 0 && blocks.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * Whether a Host header may be handed the key: an IP literal (a page can only be at this address
 * under its own address), `localhost`, or a configured public name; any other DNS name may be one
 * rebound to this address by someone else's page.
 */
function keyHostGuard(publicNames: readonly string[]): (host: string) => boolean {
  const allowed = new Set(publicNames.map(hostNameOf));
  return (header) => {
    if (header === '') return true;
    const h = parseHostHeader(header);
    return h !== null && (h.kind !== 'dns' || h.name === 'localhost' || allowed.has(h.name));
  };
}

const NOT_BUILT = Buffer.from(
  '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>dexdata explorer</title></head><body>' +
    '<h1>The explorer is not built</h1><p>Run <code>npm run build</code>, then start the service again.</p></body></html>\n',
);
const NOT_FOUND = Buffer.from('{"error":"not_found","message":"no such file of the explorer"}');

export function createExplorer(options: ExplorerServeOptions): Explorer {
  const log = options.log ?? fallbackLog();
  const dir = options.assetsDir ?? defaultAssetsDir();
  const assets = loadAssets(dir);
  const index = assets.get('index.html');
  if (index === undefined) log.warn(`explorer: no bundle in ${dir}; run npm run build (the explorer answers with a page saying so)`);
  const isClient = addressSet(options.clients);
  const hostMayHaveKey = keyHostGuard(options.hostNames);

  function send(res: HttpResponse, req: HttpRequest, asset: Asset): void {
    const accept = req.getHeader('accept-encoding');
    const [body, coding] = asset.br !== null && accepts(accept, 'br') ? [asset.br, 'br'] : asset.gzip !== null && accepts(accept, 'gzip') ? [asset.gzip, 'gzip'] : [asset.raw, ''];
    const etag = coding === '' ? `"${asset.tag}"` : `"${asset.tag}-${coding}"`;
    const notModified = matches(req.getHeader('if-none-match'), etag);
    res.writeStatus(notModified ? '304 Not Modified' : '200 OK');
    res.writeHeader('ETag', etag).writeHeader('Cache-Control', asset.cacheControl);
    if (asset.gzip !== null || asset.br !== null) res.writeHeader('Vary', 'Accept-Encoding');
    if (notModified) {
      res.endWithoutBody();
      return;
    }
    res.writeHeader('Content-Type', asset.type).writeHeader('X-Content-Type-Options', 'nosniff');
    if (coding !== '') res.writeHeader('Content-Encoding', coding);
    if (asset.html) res.writeHeader('Content-Security-Policy', CSP).writeHeader('Referrer-Policy', 'no-referrer');
    res.end(body);
  }

  function session(res: HttpResponse, req: HttpRequest): void {
    let key: string | null = null;
    let reason: string | null = null;
    if (options.key === null) reason = 'the explorer plan is switched off on this service (explorer.plan)';
    else if (!hostMayHaveKey(req.getHeader('host'))) reason = 'the explorer key is handed out only under an address, localhost or a configured public name of this host';
    else if (!isClient(options.clientOf(res, req))) reason = "this browser's address is not among the explorer's clients (explorer.clients)";
    else key = options.key.key;
    const body = JSON.stringify({ key, plan: key === null ? null : 'explorer', reason, ...options.links() });
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'application/json').writeHeader('Cache-Control', 'no-store').writeHeader('X-Content-Type-Options', 'nosniff');
    res.end(body);
  }

  /** The plan of the entered key: 200 `{plan}`, or 401 `invalid_key` as any host answers an unknown key. */
  function keyPlan(res: HttpResponse, req: HttpRequest): void {
    const key = req.getHeader('authorization').trim();
    const plan = key === '' ? null : options.planOf(key);
    const body =
      plan === null
        ? JSON.stringify({ error: 'invalid_key', message: key === '' ? 'send the key in the Authorization header' : 'the key is malformed, unknown or revoked', param: 'Authorization' })
        : JSON.stringify({ plan });
    res.writeStatus(plan === null ? '401 Unauthorized' : '200 OK');
    res.writeHeader('Content-Type', 'application/json').writeHeader('Cache-Control', 'no-store').writeHeader('X-Content-Type-Options', 'nosniff');
    res.end(body);
  }

  function page(res: HttpResponse, req: HttpRequest): void {
    try {
      const url = req.getUrl();
      const path = url.slice(EXPLORER_PATH.length);
      if (path === 'session') return session(res, req);
      if (path === 'key') return keyPlan(res, req);
      const asset = assets.get(path);
      if (asset !== undefined && path !== 'index.html') return send(res, req, asset);
      // A file that is not there is a 404; any other path is one of the page's own routes.
      if (path.startsWith(ASSETS_PREFIX) || /\.[a-z0-9]+$/i.test(path)) {
        res.writeStatus('404 Not Found').writeHeader('Content-Type', 'application/json').end(NOT_FOUND);
        return;
      }
      if (index !== undefined) return send(res, req, index);
      res.writeStatus('503 Service Unavailable').writeHeader('Content-Type', 'text/html; charset=utf-8').writeHeader('Cache-Control', 'no-store').end(NOT_BUILT);
    } catch (err) {
      log.error(`explorer: answer not written: ${errorText(err)}`);
      res.writeStatus('500 Internal Server Error').end();
    }
  }

  return {
    built: index !== undefined,
    register(app) {
      app.get('/explorer', (res, req) => {
        const query = req.getQuery();
        res.writeStatus('308 Permanent Redirect').writeHeader('Location', `${EXPLORER_PATH}${query ? `?${query}` : ''}`).end();
      });
      app.get('/explorer/*', page);
    },
  };
}
