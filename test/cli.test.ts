/**
 * The command line as a user runs it: the built `dist/scripts/dexdata.cjs` as a child process, its
 * exit code, stdout and stderr.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_OVERRIDES } from '../engine/config.js';
import { CLI, startService } from './support/service.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dexdata-cli-'));
  dirs.push(dir);
  return dir;
}

/** Environment without DEXDATA_* variables of the machine running the tests. */
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DEXDATA_')));

function run(args: readonly string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...CLEAN_ENV, ...env }, timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Help text with its wrapped lines joined, so a flag's description reads as one line. */
function unwrapped(help: string): string {
  return help.replace(/\n {20,}/g, ' ');
}

describe('help', () => {
  it('dexdata --help and dexdata help list every command and exit 0', () => {
    for (const args of [['--help'], ['help'], ['-h']]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      for (const command of ['serve', 'keys', 'status', 'feedback']) expect(r.stdout, args.join(' ')).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      expect(r.stderr).toBe('');
    }
  });

  it('dexdata serve --help lists every flag with its default and its environment variable', () => {
    const r = run(['serve', '--help']);
    expect(r.code).toBe(0);
    const help = unwrapped(r.stdout);
    for (const o of CONFIG_OVERRIDES) {
      const line = help.split('\n').find((l) => l.trimStart().startsWith(`--${o.flag} <`));
      expect(line, o.flag).toBeDefined();
      expect(line, o.flag).toMatch(/default: \S/);
      expect(line, o.flag).toContain(`env ${o.env}`);
    }
    // A few defaults, as documented.
    expect(help).toMatch(/--port <N> .*default: 8080\)/);
    expect(help).toMatch(/--data-dir <DIR> .*default: \.\/data\)/);
    expect(help).toMatch(/--paid-port <N> .*default: port \+ 1\)/);
    expect(help).toMatch(/--log-level <LEVEL> .*default: info\)/);
    expect(help).toMatch(/--metrics-port <N> .*default: 9464\)/);
    expect(help).toMatch(/--metrics-host <HOST> .*default: 127\.0\.0\.1\)/);
    expect(help).toMatch(/--trusted-proxies <LIST> .*default: none\)/);
    expect(help).toMatch(/--config <FILE>/);
  });

  it('every subcommand answers --help with its flags and exits 0', () => {
    const cases: [string[], RegExp][] = [
      [['keys', '--help'], /create .*\n[\s\S]*credits \[options\] <account> <n>/],
      [['keys', 'create', '--help'], /--plan <plan>[\s\S]*"enterprise"[\s\S]*--label <text>[\s\S]*--data-dir <DIR>/],
      [['keys', 'show', '--help'], /<account>[\s\S]*--data-dir/],
      [['keys', 'list', '--help'], /--data-dir/],
      [['keys', 'regenerate', '--help'], /<account>/],
      [['keys', 'revoke', '--help'], /<account>/],
      [['keys', 'credits', '--help'], /<account> <n>/],
      [['status', '--help'], /--host <host>[\s\S]*default: "127\.0\.0\.1"[\s\S]*--port <n>[\s\S]*default: "8080"/],
      [['feedback', '--help'], /list[\s\S]*count/],
      [['feedback', 'list', '--help'], /--limit <n>[\s\S]*--since <time>[\s\S]*--json/],
      [['feedback', 'count', '--help'], /--data-dir/],
      [['help', 'keys'], /regenerate/],
    ];
    for (const [args, pattern] of cases) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(pattern);
    }
  });
});

describe('usage errors: one line on stderr, exit code 2', () => {
  it('rejects unknown flags and commands, and missing arguments', () => {
    const cases: [string[], RegExp][] = [
      [['--prot', '1'], /unknown option '--prot'.*--port/],
      [['serve', '--nope'], /unknown option '--nope'/],
      [['keys', 'list', '--nope'], /unknown option '--nope'/],
      [['keys', 'create'], /required option '--plan <plan>' not specified/],
      [['keys', 'create', '--plan', 'gold'], /'gold' is invalid.*free, dev, pro, enterprise|Allowed choices are free, dev, pro, enterprise/],
      [['keys', 'show'], /missing required argument 'account'/],
      [['status', '--verbose'], /unknown option '--verbose'/],
      [['feedback', 'list', '--nope'], /unknown option '--nope'/],
      [['nope'], /unknown command 'nope'/],
      [['keys', 'nope'], /unknown command 'nope'/],
    ];
    for (const [args, pattern] of cases) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(pattern);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('lists every configuration problem from flags, environment and file together', () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ gateway: { port: 70_000 }, metrics: { enabled: 'yes' } }));
    const r = run(['serve', '--config', file, '--log-level', 'loud', '--trusted-proxies', '10.0.0.0/8,not-an-address', '--data-dir', join(dir, 'data')], { DEXDATA_SHARDS: '0', DEXDATA_METRICS_PORT: 'x' });
    expect(r.code).toBe(2);
    const problems = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(r.stderr).toMatch(/^invalid configuration:/);
    expect(problems.join('\n')).toMatch(/gateway\.port/);
    expect(problems.join('\n')).toMatch(/metrics\.enabled/);
    expect(problems.join('\n')).toMatch(/log\.level/);
    expect(problems.join('\n')).toMatch(/trustedProxies\.1: must be an IP address or CIDR/);
    expect(problems.join('\n')).toMatch(/^ {2}- shards:/m);
    expect(problems.join('\n')).toMatch(/environment variable DEXDATA_METRICS_PORT must be a number, got "x"/);
    expect(problems).toHaveLength(6);
  });
});

describe('keys', () => {
  it('creates, lists, shows and revokes an account in the data directory', () => {
    const dir = join(tempDir(), 'data');
    const created = run(['keys', 'create', '--plan', 'pro', '--label', 'bot', '--data-dir', dir]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^account 1: plan pro, label "bot", created \S+, active$/m);
    const key = /^key: (\S+)$/m.exec(created.stdout)![1]!;
    expect(key).toMatch(/^api_/);
    const listed = run(['keys', 'list'], { DEXDATA_DATA_DIR: dir });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^account 1: plan pro/m);
    expect(listed.stdout).not.toContain(key);
    expect(run(['keys', 'revoke', '1', '--data-dir', dir]).stdout).toMatch(/account 1: .* revoked /);
    const missing = run(['keys', 'show', '7', '--data-dir', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('no account 7\n');
  });
});

describe('serve', () => {
  it('refuses to start on a port a running service listens on, in one line naming it, and exits 1', async () => {
    const dir = tempDir();
    const running = await startService(['--data-dir', join(dir, 'a'), '--pools', '100', '--backfill-days', '0.01', '--stream-threads', '2']);
    try {
      const streamPort = Number(/streams listening on http:\/\/[\d.]+:(\d+) \(free\)/.exec(await running.waitFor(/streams listening on .*/))![1]);
      const start = (args: readonly string[]) => run(['serve', '--data-dir', join(dir, 'b'), '--pools', '100', '--backfill-days', '0.01', '--metrics-port', '0', ...args]);
      // Its REST port (uWS alone on the port), then its free stream port (shared by its two stream threads).
      const rest = start(['--port', String(running.port)]);
      expect(rest.code).toBe(1);
      expect(rest.stdout + rest.stderr).toContain(`"msg":"cannot listen on 127.0.0.1:${running.port}: the port is in use or the address is not this machine's"`);
      expect(rest.stderr).not.toMatch(/\n\s+at /);
      const stream = start(['--port', '0', '--stream-port', String(streamPort), '--stream-threads', '2']);
      expect(stream.code).toBe(1);
      expect(stream.stdout + stream.stderr).toContain(`"msg":"streams: cannot listen on 127.0.0.1:${streamPort}: the port is in use"`);
      // The running service still answers on both (no connection went to the refused one).
      expect((await fetch(`${running.url}/health`)).status).toBe(200);
      for (let i = 0; i < 8; i++) {
        const r = await fetch(`http://127.0.0.1:${streamPort}/sse/prices?chain=ethereum`);
        expect(r.status).toBe(400);
        expect(((await r.json()) as { message: string }).message).toMatch(/address/);
      }
    } finally {
      await running.stop();
    }
  });

  it('sizes the thread pool for its shards, keeps one set in the environment, and warns when that is too small', async () => {
    const dir = tempDir();
    const env = Object.fromEntries(Object.entries(CLEAN_ENV).filter(([k]) => k !== 'UV_THREADPOOL_SIZE'));
    const args = ['--pools', '100', '--backfill-days', '0.01', '--log-format', 'json'];
    // A writer per shard and the main thread's, and four more; at least 8.
    const cases = [
      { shards: '2', pool: undefined, size: 8, warns: false },
      { shards: '6', pool: undefined, size: 11, warns: false },
      { shards: '2', pool: '32', size: 32, warns: false },
      { shards: '3', pool: '4', size: 4, warns: true },
    ];
    for (const [i, c] of cases.entries()) {
      const s = await startService(['--data-dir', join(dir, String(i)), '--shards', c.shards, ...args], 60_000, c.pool === undefined ? env : { ...env, UV_THREADPOOL_SIZE: c.pool });
      expect(s.output()).toMatch(new RegExp(`starting: data [^"]*, ${c.shards} shards, thread pool ${c.size}, simulator`));
      const warning = /libuv's thread pool has (\d+) threads and the store's (\d+) writers[^"]*start with UV_THREADPOOL_SIZE=(\d+)/.exec(s.output());
      if (c.warns) expect(warning?.slice(1)).toEqual([String(c.size), String(Number(c.shards) + 1), '8']);
      else expect(warning, s.output()).toBeNull();
      expect(await s.stop()).toBe(0);
    }
  }, 120_000);

  it('logs human-readable lines with --log-format pretty, and nothing below --log-level', async () => {
    const dir = tempDir();
    const pretty = await startService(['--data-dir', join(dir, 'a'), '--pools', '100', '--backfill-days', '0.01', '--log-format', 'pretty']);
    await pretty.waitFor(/caught up/);
    expect(await pretty.stop()).toBe(0);
    const lines = pretty.output().split('\n').filter((l) => l !== '');
    for (const line of lines) expect(line).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d{4}\] (INFO|WARN|ERROR|DEBUG): /);
    expect(pretty.output()).toMatch(/\] INFO: REST listening on http:\/\/127\.0\.0\.1:\d+$/m);
    expect(pretty.output()).toMatch(/\] INFO: engine: caught up: /);

    // At warn, nothing at info is printed: the service is found by its port instead of its line.
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const quiet = spawn(process.execPath, [CLI, 'serve', '--data-dir', join(dir, 'b'), '--pools', '100', '--backfill-days', '0.01', '--log-level', 'warn', '--port', String(port), '--metrics', 'false'], { stdio: ['ignore', 'pipe', 'pipe'], env: CLEAN_ENV });
    let out = '';
    quiet.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    quiet.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => quiet.once('exit', r));
    let up = false;
    for (let i = 0; i < 600 && !up; i++) {
      up = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    expect(up).toBe(true);
    quiet.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toBe('');
  });
});
