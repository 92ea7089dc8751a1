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
 * Listening TCP sockets on `port`, any address, any process (Linux: /proc/net/tcp and tcp6 of this
 * network namespace); null where that is not known.
 */
export function listenersOn(port: number): number | null {
  let n = 0;
  let known = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    known = true;
    // Rows: "sl local_address rem_address st ...", addresses as HEX_IP:HEX_PORT, st 0A = LISTEN.
    for (const line of text.split('\n')) {
      const c = line.trim().split(/\s+/);
      if (c[3] !== LISTEN_STATE || c[1] === undefined) continue;
      if (parseInt(c[1].slice(c[1].lastIndexOf(':') + 1), 16) === port) n++;
    }
  }
  return known ? n : null;
}
