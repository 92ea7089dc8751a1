/**
 * The client behind a reverse proxy: `X-Forwarded-For` (or, without it, `Forwarded: for=`) is
 * honoured only when the peer itself is one of the configured trusted proxies (addresses or CIDRs,
 * matched with node's BlockList); from any other peer those headers are ignored, so a caller cannot
 * choose the address it is limited by. With no proxy configured nothing is read.
 *
 * The client is the right-most address of the chain that is not a trusted proxy (each proxy appends
 * the peer it saw), in the text form the keyless limits are keyed by (addressText: dotted IPv4,
 * eight four-digit groups for IPv6).
 */
import { BlockList, isIP } from 'node:net';
import { addressText } from '../auth/access.js';
/** An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, or its eight-group form) as IPv4, else as given. */
function unmapped(address) {
    const m = /^(?:::ffff:|0000:0000:0000:0000:0000:ffff:)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (m !== null)
        return m[1];
    const h = /^0000:0000:0000:0000:0000:ffff:([0-9a-f]{4}):([0-9a-f]{4})$/i.exec(address);
    if (h !== null) {
        const a = parseInt(h[1], 16);
        const b = parseInt(h[2], 16);
        return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
    }
    return address;
}
/** An IPv6 address in the eight four-digit groups form addressText gives. */
function expandedIPv6(address) {
    let text = address.toLowerCase();
    const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
    if (v4 !== null) {
        const p = v4[1].split('.').map(Number);
        text = `${text.slice(0, v4.index)}${((p[0] << 8) | p[1]).toString(16)}:${((p[2] << 8) | p[3]).toString(16)}`;
    }
    const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
    const left = head === '' ? [] : head.split(':');
    const right = tail === undefined || tail === '' ? [] : tail.split(':');
    const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
    return groups.map((g) => g.padStart(4, '0')).join(':');
}
/** An address from a header in addressText's form, or null when it is not an IP address. */
export function canonicalAddress(raw) {
    let a = raw.trim().replace(/^"|"$/g, '');
    if (a.startsWith('['))
        a = a.slice(1, a.indexOf(']') < 0 ? a.length : a.indexOf(']'));
    else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(a))
        a = a.slice(0, a.lastIndexOf(':'));
    const zone = a.indexOf('%');
    if (zone >= 0)
        a = a.slice(0, zone);
    const family = isIP(a);
    if (family === 4)
        return a;
    if (family === 6)
        return unmapped(expandedIPv6(a));
    return null;
}
/** `for=` values of a Forwarded header, in order (RFC 7239). */
function forwardedFor(header) {
    const out = [];
    for (const element of header.split(',')) {
        for (const pair of element.split(';')) {
            const eq = pair.indexOf('=');
            if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === 'for')
                out.push(pair.slice(eq + 1));
        }
    }
    return out;
}
export function createTrustedProxies(list) {
    const blocks = new BlockList();
    for (const entry of list) {
        const [address, prefix] = entry.split('/');
        const family = isIP(address);
        if (family === 0)
            throw new TypeError(`trustedProxies: "${entry}" is not an IP address or CIDR`);
        const type = family === 4 ? 'ipv4' : 'ipv6';
        if (prefix === undefined)
            blocks.addAddress(address, type);
        else
            blocks.addSubnet(address, Number(prefix), type);
    }
    const any = list.length > 0;
    const trusts = (address) => {
        if (!any)
            return false;
        const a = canonicalAddress(address);
        if (a === null)
            return false;
        return blocks.check(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
    };
    const clientOf = (peer, xForwardedFor, forwarded) => {
        if (!trusts(peer))
            return null;
        const chain = xForwardedFor !== '' ? xForwardedFor.split(',') : forwarded !== '' ? forwardedFor(forwarded) : [];
        let client = null;
        // Right to left: the first address that is not a trusted proxy is the client.
        for (let i = chain.length - 1; i >= 0; i--) {
            const a = canonicalAddress(chain[i]);
            if (a === null)
                return client;
            client = a;
            if (!trusts(a))
                return a;
        }
        return client;
    };
    return {
        any,
        trusts,
        trustsRaw: (raw) => any && trusts(addressText(new Uint8Array(raw))),
        client: (peerRaw, xff, fwd) => (any ? clientOf(addressText(new Uint8Array(peerRaw)), xff, fwd) : null),
        clientOf: (peer, xff, fwd) => (any ? clientOf(peer, xff, fwd) : null),
    };
}
/** No proxy trusted: forwarding headers are never read. */
export const NO_PROXIES = createTrustedProxies([]);
//# sourceMappingURL=forwarded.js.map