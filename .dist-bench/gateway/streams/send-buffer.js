/**
 * The kernel memory a stuck stream reader can pin. By default Linux grows a connection's send buffer
 * up to tcp_wmem's maximum (4 MiB here) while the reader lags, and the server sees backpressure only
 * once that is full, so a reader that stopped reading holds megabytes of kernel memory for minutes
 * before it is noticed. The stream hosts' listening sockets get a small SO_SNDBUF instead, which
 * Linux gives to every connection they accept and which turns autotuning off for them: a stuck
 * stream socket holds at most STREAM_SNDBUF_KERNEL_BYTES in the kernel, and backpressure (which the
 * slow-reader rule in client.ts times) starts as soon as that is full.
 *
 * uWS exposes no socket options, so the listening sockets are found by port in /proc/self/net/tcp[6]
 * and /proc/self/fd, and setsockopt(2) is called through the C library (koffi). Only this process's
 * own sockets are touched; nothing machine-wide is changed.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import koffi from 'koffi';
/** SO_SNDBUF asked for on each stream socket. */
export const STREAM_SNDBUF_BYTES = 64 * 1024; // 64 KiB
/** What the kernel then allows the socket's send queue (it doubles the value asked for, for its bookkeeping). */
export const STREAM_SNDBUF_KERNEL_BYTES = 2 * STREAM_SNDBUF_BYTES; // 128 KiB
const SOL_SOCKET = 1;
const SO_SNDBUF = 7;
/** tcp state LISTEN in /proc/net/tcp. */
const TCP_LISTEN = '0A';
let setsockopt;
function libcSetsockopt() {
    if (setsockopt === undefined) {
        try {
            setsockopt = koffi.load('libc.so.6').func('int setsockopt(int, int, int, const void *, uint32_t)');
        }
        catch {
            setsockopt = null;
        }
    }
    return setsockopt;
}
/** Inodes of this process's listening TCP sockets on `port`, IPv4 and IPv6. */
function listeningInodes(port) {
    const out = new Set();
    for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
        let text;
        try {
            text = readFileSync(file, 'latin1');
        }
        catch {
            continue;
        }
        for (const line of text.split('\n').slice(1)) {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            const f = line.trim().split(/\s+/);
            if (f.length < 10 || f[3] !== TCP_LISTEN)
                continue;
            const local = f[1];
            if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port)
                out.add(f[9]);
        }
    }
    return out;
}
/**
 * Sets SO_SNDBUF on every listening socket of this process on `ports` (a port shared by several
 * stream threads has one per thread); returns how many were set. Where that cannot be done (no
 * /proc, no C library), returns 0 and the streams run with the kernel's default buffers.
 */
export function limitSendBuffers(ports, bytes = STREAM_SNDBUF_BYTES) {
    const set = libcSetsockopt();
    if (set === null || ports.length === 0)
        return 0;
    const inodes = new Set();
    for (const port of ports)
        for (const inode of listeningInodes(port))
            inodes.add(inode);
    if (inodes.size === 0)
        return 0;
    const value = Buffer.alloc(4);
    value.writeInt32LE(bytes);
    let done = 0;
    let fds;
    try {
        fds = readdirSync('/proc/self/fd');
    }
    catch {
        return 0;
    }
    for (const fd of fds) {
        let link;
        try {
            link = readlinkSync(`/proc/self/fd/${fd}`);
        }
        catch {
            continue;
        }
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m !== null && inodes.has(m[1]) && set(Number(fd), SOL_SOCKET, SO_SNDBUF, value, 4) === 0)
            done++;
    }
    return done;
}
//# sourceMappingURL=send-buffer.js.map