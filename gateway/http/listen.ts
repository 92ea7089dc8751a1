/**
 * Listening sockets of the uWS apps. uWS listens with SO_REUSEPORT unless told otherwise, and the
 * kernel lets every process of the same user share such a port: a second service started on the
 * port of a running one would then take half of its connections without an error. A port one app
 * holds alone is listened on exclusively (a port in use fails to listen); only the stream threads
 * share theirs (gateway/streams/threads.ts).
 */
import { readFileSync } from 'node:fs';
import uWS from 'uWebSockets.js';
import type { TemplatedApp, us_listen_socket, us_socket } from 'uWebSockets.js';

/** A port the service cannot listen on (in use, or not this machine's address): what to tell the operator. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** uWS's LIBUS_LISTEN_EXCLUSIVE_PORT: listen without SO_REUSEPORT. */
const EXCLUSIVE_PORT = 1;

type ListenWithOptions = (host: string, port: number, options: number, cb: (token: us_listen_socket | false) => void) => TemplatedApp;

/** The TCP state of a listening socket in /proc/net/tcp. */
const LISTEN_STATE = '0A';

/** Listens on host:port alone (0: a port the kernel picks); the socket, or false when the port cannot be had. */
export function listenExclusive(app: TemplatedApp, host: string, port: number, cb: (token: us_listen_socket | false) => void): void {
  // The native listen takes (host, port, options, callback); the bundled types omit that form.
  (app.listen as unknown as ListenWithOptions).call(app, host, port, EXCLUSIVE_PORT, cb);
}

/** The port a listen socket is bound to. */
export function listenPort(token: us_listen_socket): number {
  return uWS.us_socket_local_port(token as unknown as us_socket);
}

/**
 * Inodes of the listening TCP sockets on `port`, any address, IPv4 and IPv6 (Linux: /proc/net/tcp
 * and tcp6 of this network namespace, every process's); null where that is not known.
 */
export function listeningInodes(port: number): Set<string> | null {
  const out = new Set<string>();
  let known = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    known = true;
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== LISTEN_STATE) continue;
      const local = f[1]!;
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) out.add(f[9]!);
    }
  }
  return known ? out : null;
}
