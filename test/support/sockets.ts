/**
 * What the kernel holds for TCP connections, for the tests of stuck readers: the server side's send
 * queue and send buffer as `ss` reports them, and a client socket whose receive buffer is made
 * small (through setsockopt in the C library), so a reader that stops reading is felt by the server
 * after kilobytes rather than after the tens of megabytes Linux lets a receive buffer grow to.
 */
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import koffi from 'koffi';

const SOL_SOCKET = 1;
const SO_RCVBUF = 8;

let setsockopt: ((fd: number, level: number, name: number, value: Buffer, length: number) => number) | null = null;

/** Sets SO_RCVBUF of a connected client socket (the kernel doubles the value). */
export function limitReceiveBuffer(socket: Socket, bytes: number): void {
  setsockopt ??= koffi.load('libc.so.6').func('int setsockopt(int, int, int, const void *, uint32_t)');
  const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
  const value = Buffer.alloc(4);
  value.writeInt32LE(bytes);
  if (setsockopt!(fd, SOL_SOCKET, SO_RCVBUF, value, 4) !== 0) throw new Error('setsockopt(SO_RCVBUF) failed');
}

/** Opens a raw connection, sends `head` and stops reading at once; the receive buffer is `rcvbuf` bytes. */
export async function stuckReader(port: number, head: string, rcvbuf = 4096): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((ok, fail) => {
    socket.once('connect', () => ok());
    socket.once('error', fail);
  });
  socket.on('error', () => undefined);
  limitReceiveBuffer(socket, rcvbuf);
  socket.pause();
  socket.write(head);
  return socket;
}

export interface KernelSocket {
  /** Bytes in the send queue, not yet acknowledged by the peer. */
  readonly sendQ: number;
  /** The socket's send buffer (`tb` of skmem): what the kernel lets it hold. */
  readonly sndbuf: number;
  readonly peerPort: number;
}

/** The server side's established connections on `port`, as `ss` reports them; null when `ss` is missing. */
export function serverSockets(port: number): KernelSocket[] | null {
  let text: string;
  try {
    text = execFileSync('ss', ['-tmnH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  } catch {
    return null;
  }
  const out: KernelSocket[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // With a state filter: Recv-Q Send-Q Local:Port Peer:Port, then a line with skmem:(...).
    const f = lines[i]!.trim().split(/\s+/);
    if (f.length < 4 || !/^\d+$/.test(f[0]!)) continue;
    const mem = /tb(\d+)/.exec(lines[i + 1] ?? '');
    out.push({ sendQ: Number(f[1]), sndbuf: mem === null ? NaN : Number(mem[1]), peerPort: Number(f[3]!.slice(f[3]!.lastIndexOf(':') + 1)) });
  }
  return out;
}
