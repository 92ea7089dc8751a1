/**
 * The kernel memory a stuck stream reader can pin. By default Linux grows a connection's send buffer
 * up to tcp_wmem's maximum (4 MiB here) while the reader lags, and the server sees backpressure only
 * once that is full, so a reader that stopped reading holds megabytes of kernel memory for minutes
 * before it is noticed. The stream hosts' listening sockets get a small SO_SNDBUF instead, which
 * Linux gives to every connection they accept and which turns autotuning off for them: a stuck
 * stream socket holds at most STREAM_SNDBUF_KERNEL_BYTES in the kernel, and backpressure (which the
 * slow-reader rule in client.ts times) starts as soon as that is full.
 *
 * uWS exposes no socket options, so the listening sockets are found by port in /proc/net/tcp[6]
 * (http/listen.ts listeningInodes) and among /proc/self/fd, and setsockopt(2) is called through
 * the C library (koffi). Only this process's own sockets are touched; nothing machine-wide is changed.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { listeningInodes } from '../http/listen.js';
import koffi from 'koffi';

/** SO_SNDBUF asked for on each stream socket. */
export const STREAM_SNDBUF_BYTES = 64 * 1024; // 64 KiB
/** What the kernel then allows the socket's send queue (it doubles the value asked for, for its bookkeeping). */
export const STREAM_SNDBUF_KERNEL_BYTES = 2 * STREAM_SNDBUF_BYTES; // 128 KiB

const SOL_SOCKET = 1;
const SO_SNDBUF = 7;

type SetSockOpt = (fd: number, level: number, name: number, value: Buffer, length: number) => number;
let setsockopt: SetSockOpt | null | undefined;

function libcSetsockopt(): SetSockOpt | null {
  if (setsockopt === undefined) {
    try {
      setsockopt = koffi.load('libc.so.6').func('int setsockopt(int, int, int, const void *, uint32_t)') as SetSockOpt;
    } catch {
      setsockopt = null;
    }
  }
  return setsockopt;
}

/**
 * Sets SO_SNDBUF on every listening socket of this process on `ports` (a port shared by several
 * stream threads has one per thread); returns how many were set. Where that cannot be done (no
 * /proc, no C library), returns 0 and the streams run with the kernel's default buffers.
 */
export function limitSendBuffers(ports: readonly number[], bytes: number = STREAM_SNDBUF_BYTES): number {
  const set = libcSetsockopt();
  if (set === null || ports.length === 0) return 0;
  const inodes = new Set<string>();
  for (const port of ports) for (const inode of listeningInodes(port) ?? []) inodes.add(inode);
  if (inodes.size === 0) return 0;
  const value = Buffer.alloc(4);
  value.writeInt32LE(bytes);
  let done = 0;
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return 0;
  }
  for (const fd of fds) {
    let link: string;
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m !== null && inodes.has(m[1]!) && set(Number(fd), SOL_SOCKET, SO_SNDBUF, value, 4) === 0) done++;
  }
  return done;
}
