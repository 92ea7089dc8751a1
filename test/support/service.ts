/** Starts the real service (`dist/scripts/dexdata.cjs serve`) as a child process for tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/scripts/dexdata.cjs', import.meta.url));

export interface RunningService {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves when a printed line matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
}

/** `env`: the child's environment (default: this process's). */
export async function startService(args: readonly string[], timeoutMs = 60_000, env: NodeJS.ProcessEnv = process.env): Promise<RunningService> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--metrics-port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of [...waiters]) {
      const m = out.match(w.pattern);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m[0]);
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  // How it ended, for a start that dies before it listens: its exit code, or the signal that ended it.
  let ended = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = code !== null ? `code ${code}` : `signal ${signal}`;
      resolve(code);
    }),
  );
  const waitFor = (pattern: RegExp, ms = timeoutMs) =>
    new Promise<string>((resolve, reject) => {
      const m = out.match(pattern);
      if (m) return resolve(m[0]);
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`)), ms);
      waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      void exited.then(() => reject(new Error(`service exited (${ended}) before ${pattern}; output:\n${out}`)));
    });
  // A start that never listens is killed here: no caller holds it to stop it later.
  const line = await waitFor(/REST listening on http:\/\/[\d.]+:(\d+)/).catch(async (err: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw err;
  });
  const port = Number(/:(\d+)$/.exec(line)![1]);
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    waitFor,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
