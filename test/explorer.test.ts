/**
 * The web explorer end to end, as its reader meets it: the real service (simulator, small universe)
 * started as `dexdata serve` does, and Debian's Chromium driven by playwright-core. The first page's
 * weight and caching; then a reader searches a pool, opens it, sees its chart drawn with as many
 * candles as the REST answer holds, sees trades arrive live, switches the interval with the
 * keyboard and opens a token; no console error on the way. The explorer's requests are metered on
 * its own plan: /usage of its key and the credits metric say so. Screenshots go to
 * test-artifacts/explorer/ (gitignored). Without Chromium the setup installs it (apt-get); when that
 * fails, the browser tests are skipped with the reason printed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from './support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/explorer/', import.meta.url));
/** The issue's budget for the first page, compressed. */
const FIRST_PAGE_BUDGET = 200 * 1024;
/** A network with short blocks (the simulator's Solana: 0.4 s), so trades arrive within seconds. */
const NETWORK = 'solana';

let service: RunningService | null = null;
let browser: Browser | null = null;
let skipReason: string | null = null;
const dir = mkdtempSync(join(tmpdir(), 'dexdata-explorer-'));

/** Chromium from Debian's package: installed here when missing; a reason to skip when that fails. */
function ensureChromium(): string | null {
  if (existsSync(CHROMIUM)) return null;
  const apt = (args: string[]) => spawnSync('apt-get', args, { stdio: 'inherit', timeout: 540_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  let r = apt(['install', '-y', 'chromium']);
  if (r.status !== 0) {
    apt(['update']);
    r = apt(['install', '-y', 'chromium']);
  }
  if (existsSync(CHROMIUM)) return null;
  return `Chromium is not installed and apt-get install chromium failed (${r.error ? r.error.message : `exit code ${r.status}`})`;
}

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The bytes on the wire (not decoded). */
  readonly bytes: Buffer;
}

/** GET without decoding the body, to weigh what travels. */
function raw(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * What fails the page's accessibility checks: text whose contrast with the background behind it is
 * under 4.5:1 (WCAG AA), form controls and buttons without an accessible name.
 */
async function accessibilityProblems(page: Page): Promise<string[]> {
  const { problems, texts } = await page.evaluate(() => {
    // Runs in the page: its DOM, typed loosely (the tests are compiled without the DOM library).
    const { document, getComputedStyle, Node } = globalThis as any;
    const problems: string[] = [];
    let texts = 0;
    const rgb = (c: string): number[] => (c.match(/[\d.]+/g) ?? []).map(Number);
    const luminance = ([r, g, b]: number[]): number => {
      const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
    };
    const background = (el: any): number[] => {
      for (; el !== null; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3]! > 0.9)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    for (const el of document.querySelectorAll('body *')) {
      const own = [...el.childNodes].some((n: { nodeType: number; textContent: string | null }) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '');
      if (!own || el.offsetParent === null || el.closest('.sr-only, .chart, .skip')) continue;
      texts++;
      const fg = luminance(rgb(getComputedStyle(el).color));
      const bg = luminance(background(el));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < 4.5) problems.push(`contrast ${ratio.toFixed(2)}: ${el.tagName.toLowerCase()}.${el.className} "${el.textContent!.trim().slice(0, 30)}"`);
    }
    for (const el of document.querySelectorAll('input:not([type=hidden]), select, button, a[href]')) {
      const labelled = el.labels?.length || el.getAttribute('aria-label') || el.textContent!.trim() || el.closest('label');
      if (!labelled) problems.push(`no accessible name: ${el.outerHTML.slice(0, 80)}`);
    }
    return { problems, texts };
  });
  if (texts < 20) problems.push(`only ${texts} texts checked`);
  return problems;
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  skipReason = ensureChromium();
  if (skipReason !== null) process.stdout.write(`explorer browser tests skipped: ${skipReason}\n`);
  // A small universe with a short history: caught up within seconds, then live.
  service = await startService(['--data-dir', dir, '--pools', '60', '--backfill-days', '0.1', '--swaps-per-second', '10', '--shards', '1', '--stream-threads', '0']);
  await service.waitFor(/caught up/, 90_000);
  if (skipReason === null) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  if (service !== null && service.child.exitCode === null) await service.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the explorer served by the service', () => {
  it('serves its first page under 200 KB compressed, with ETags, long caching of the hashed bundle and a 304 on revalidation', async () => {
    const base = service!.url;
    const redirect = await raw(`${base}/explorer`);
    expect(redirect.status).toBe(308);
    expect(redirect.headers['location']).toBe('/explorer/');

    const html = await raw(`${base}/explorer/`, { 'accept-encoding': 'gzip' });
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.headers['content-encoding']).toBe('gzip');
    expect(html.headers['cache-control']).toBe('no-cache');
    expect(html.headers['content-security-policy']).toContain("script-src 'self'");
    const page = (await fetch(`${base}/explorer/`)).text();
    const assets = [...(await page).matchAll(/(?:src|href)="(\/explorer\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    let total = html.bytes.length;
    for (const a of assets) {
      const r = await raw(`${base}${a}`, { 'accept-encoding': 'gzip' });
      expect(r.status, a).toBe(200);
      expect(r.headers['content-encoding'], a).toBe('gzip');
      expect(r.headers['cache-control'], a).toBe('public, max-age=31536000, immutable');
      expect(r.headers['content-type'], a).toMatch(a.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      total += r.bytes.length;
      // Revalidation: the same ETag answers 304 without a body.
      const again = await raw(`${base}${a}`, { 'accept-encoding': 'gzip', 'if-none-match': String(r.headers['etag']) });
      expect(again.status, a).toBe(304);
      expect(again.bytes.length).toBe(0);
    }
    expect(total).toBeLessThan(FIRST_PAGE_BUDGET);
    // Brotli where the browser takes it, smaller still.
    const br = await raw(`${base}${assets.find((a) => a.endsWith('.js'))}`, { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    // A page route is the page; a missing file is a 404.
    expect((await raw(`${base}/explorer/pools/solana/x`)).headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await raw(`${base}/explorer/assets/nothing.js`)).status).toBe(404);
  });

  it('hands the explorer key only under a name of this host, never to a page under another DNS name', async () => {
    const session = (await (await fetch(`${service!.url}/explorer/session`)).json()) as { key: string | null; plan: string; ports: Record<string, number> };
    expect(session.key).toMatch(/^api_[0-9A-Za-z]{32}$/);
    expect(session.plan).toBe('explorer');
    expect(session.ports['freeStream']).toBeGreaterThan(0);
    const rebound = await raw(`${service!.url}/explorer/session`, { host: `rebound.example:${service!.port}` });
    expect(JSON.parse(rebound.bytes.toString()).key).toBeNull();
  });

  it('lets web pages call the REST and stream hosts (CORS), and leaves answers to other clients as they were', async () => {
    const session = (await (await fetch(`${service!.url}/explorer/session`)).json()) as { ports: Record<string, number> };
    const at = (role: string, path: string) => `http://127.0.0.1:${session.ports[role]}${path}`;
    const origin = { origin: service!.url };
    for (const url of [at('paidRest', '/networks'), at('freeStream', '/sse/reserves'), at('paidStream', '/sse/transactions')]) {
      const r = await fetch(url, { method: 'OPTIONS', headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,last-event-id' } });
      expect(r.status, url).toBe(204);
      expect(r.headers.get('access-control-allow-origin'), url).toBe('*');
      expect(r.headers.get('access-control-allow-headers'), url).toContain('Authorization');
      expect(r.headers.get('access-control-allow-headers'), url).toContain('Last-Event-ID');
    }
    const page = await fetch(`${service!.url}/networks`, { headers: origin });
    expect(page.headers.get('access-control-allow-origin')).toBe('*');
    expect(page.headers.get('access-control-expose-headers')).toContain('X-Api-Plan');
    // A refusal reaches the page too (here: no key for the swap stream).
    const refused = await fetch(at('freeStream', `/sse/transactions?method=pool&chain=${NETWORK}&address=x`), { headers: origin });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    // Without Origin: no CORS header, and OPTIONS that is no preflight is still a 404.
    expect((await fetch(`${service!.url}/networks`)).headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${service!.url}/networks`, { method: 'OPTIONS' })).status).toBe(404);
  });

  it('browses: a pool searched and opened, its chart drawn from the REST candles, trades live, the interval switched, a token opened; no console error', async (ctx) => {
    if (skipReason !== null) {
      process.stdout.write(`skipped: ${skipReason}\n`);
      ctx.skip();
    }
    const base = service!.url;
    // The pool to look for: the busiest of a network with short blocks.
    const top = (await (await fetch(`${base}/networks/${NETWORK}/pools/search?order_by=txns_24h&limit=1`)).json()) as { results: { id: string; tokens: { symbol: string }[] }[] };
    const pool = top.results[0]!;
    const page: Page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => {
      // A stream the page closes itself (on leaving a page) is aborted by design.
      if (!r.failure()?.errorText.includes('ERR_ABORTED')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    try {
      await page.goto(`${base}/explorer/`);
      await page.getByRole('heading', { name: /Markets/ }).waitFor();
      await page.locator('section[aria-labelledby="pools-h"] table').waitFor();
      await expect.poll(() => page.locator('summary').first().textContent()).toBe('Key: explorer plan');
      await page.screenshot({ path: join(ARTIFACTS, '1-home.png'), fullPage: true });
      // The keyboard starts at the skip link, which leads to the content.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement?.textContent)).toBe('Skip to content');
      expect(await accessibilityProblems(page)).toEqual([]);

      // Search the pool by its address, as a reader pasting it would.
      await page.getByRole('searchbox', { name: /Search pools and tokens/ }).fill(pool.id.slice(0, 12));
      await page.keyboard.press('Enter');
      const result = page.locator(`main table a[href="/explorer/pools/${NETWORK}/${pool.id}"]`);
      await result.waitFor();
      await page.screenshot({ path: join(ARTIFACTS, '2-search.png'), fullPage: true });
      expect(await accessibilityProblems(page)).toEqual([]);

      const candlesAnswer = page.waitForResponse((r) => r.url().includes(`/pools/${pool.id}/ohlcv`) && r.url().includes('interval=1m'));
      await result.click();
      const rest = (await (await candlesAnswer).json()) as unknown[];
      expect(rest.length).toBeGreaterThan(10);
      const chart = page.locator('#pool-chart');
      await expect.poll(() => chart.getAttribute('data-candles-loaded')).toBe(String(rest.length));
      expect(Number(await chart.getAttribute('data-candles'))).toBeGreaterThanOrEqual(rest.length);
      expect(await chart.getAttribute('data-interval')).toBe('60');
      // Drawn: lightweight-charts' canvases fill the box.
      const canvas = await chart.locator('canvas').first().boundingBox();
      expect(canvas!.width).toBeGreaterThan(400);
      await expect.poll(() => page.title()).toContain(pool.tokens.map((t) => t.symbol).join(' / '));

      // Live: a trade arrives on the tape and moves the chart.
      await page.locator('#trades tr[data-live]').first().waitFor({ timeout: 20_000 });
      await expect.poll(() => chart.getAttribute('data-live-updates'), { timeout: 10_000 }).not.toBe('0');
      await expect.poll(() => page.locator('.headline .live').getAttribute('class')).toBe('live on');
      await page.screenshot({ path: join(ARTIFACTS, '3-pool-live.png'), fullPage: true });
      expect(await accessibilityProblems(page)).toEqual([]);

      // Another interval, chosen with the keyboard: the chart is drawn again from its own REST answer.
      const fiveMinutes = page.waitForResponse((r) => r.url().includes(`/pools/${pool.id}/ohlcv`) && r.url().includes('interval=5m'));
      await page.getByRole('group', { name: 'Candle interval' }).getByRole('button', { name: '1m', exact: true }).focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Enter');
      const rest5 = (await (await fiveMinutes).json()) as unknown[];
      await expect.poll(() => chart.getAttribute('data-interval')).toBe('300');
      await expect.poll(() => chart.getAttribute('data-candles-loaded')).toBe(String(rest5.length));
      expect(await page.getByRole('button', { name: '5m', exact: true }).getAttribute('aria-pressed')).toBe('true');
      expect(page.url()).toContain('interval=5m');
      await page.screenshot({ path: join(ARTIFACTS, '4-pool-5m.png') });

      // A token of the pool: its price chart and its pools.
      await page.locator('section[aria-labelledby="res-h"] a[href*="/tokens/"]').first().click();
      await page.locator('#token-chart[data-candles-loaded]').waitFor();
      await page.locator('section[aria-labelledby="tp-h"] table').waitFor();
      expect(Number(await page.locator('#token-chart').getAttribute('data-candles'))).toBeGreaterThan(0);
      await page.screenshot({ path: join(ARTIFACTS, '5-token.png'), fullPage: true });

      // Back to the pool with the browser's back button: the page is shown again.
      await page.goBack();
      await page.locator('#pool-chart[data-candles-loaded]').waitFor();
    } finally {
      await page.close();
    }
    expect(problems).toEqual([]);
  });

  it("meters the explorer's requests on its own plan: /usage of its key and the credits metric", async () => {
    const session = (await (await fetch(`${service!.url}/explorer/session`)).json()) as { key: string };
    const usage = (await (await fetch(`${service!.url}/usage`, { headers: { authorization: session.key } })).json()) as { plan: string; credits_used: number; credits_limit: number };
    expect(usage.plan).toBe('explorer');
    expect(usage.credits_limit).toBe(30_000_000);
    // The browser test's requests and stream events were charged (without a browser, at least this one's neighbours).
    if (skipReason === null) expect(usage.credits_used).toBeGreaterThan(5);
    const metricsUrl = /metrics listening on (http:\/\/[\d.]+:\d+\/metrics)/.exec(service!.output())![1]!;
    const metrics = await (await fetch(metricsUrl)).text();
    const spent = /dexdata_credits_spent_total\{plan="explorer"\} (\d+)/.exec(metrics);
    expect(spent).not.toBeNull();
    if (skipReason === null) expect(Number(spent![1])).toBeGreaterThan(5);
  });
});
