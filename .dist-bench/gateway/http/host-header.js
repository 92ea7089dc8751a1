/**
 * The Host header as RFC 9110 §7.2 defines it (`uri-host [ ":" port ]`), read strictly enough to
 * decide whether a request names this machine: a host listening on loopback answers only requests
 * whose Host is a loopback literal, `localhost` or one of its configured public names, so a web page
 * cannot reach it through a DNS name rebound to 127.0.0.1 (`127.0.0.1.evil.example` is a DNS name,
 * not an address).
 */
import { isIPv4, isIPv6 } from 'node:net';
const PORT = /^[0-9]{1,5}$/;
/** A DNS name: dot-separated labels of letters, digits and hyphens (one trailing dot allowed). */
const DNS_NAME = /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/;
/** The parts of a Host header value, or null when it is not one (userinfo, a path, a bad port, stray characters). */
export function parseHostHeader(value) {
    const v = value.trim().toLowerCase();
    let name;
    let rest;
    if (v.startsWith('[')) {
        const close = v.indexOf(']');
        if (close < 0)
            return null;
        name = v.slice(1, close);
        rest = v.slice(close + 1);
        if (!isIPv6(name) || name.includes('%'))
            return null;
    }
    else {
        const colon = v.indexOf(':');
        name = colon < 0 ? v : v.slice(0, colon);
        rest = colon < 0 ? '' : v.slice(colon);
    }
    if (rest !== '' && !(rest.startsWith(':') && PORT.test(rest.slice(1)) && Number(rest.slice(1)) <= 65_535))
        return null;
    if (v.startsWith('['))
        return { name, kind: 'ipv6' };
    if (isIPv4(name))
        return { name, kind: 'ipv4' };
    if (!DNS_NAME.test(name))
        return null;
    return { name: name.endsWith('.') ? name.slice(0, -1) : name, kind: 'dns' };
}
/** Whether a parsed Host names the loopback interface: 127.0.0.0/8, ::1, ::ffff:127.x.y.z, or `localhost`. */
export function isLoopbackHost(h) {
    if (h.kind === 'ipv4')
        return h.name.startsWith('127.');
    if (h.kind === 'ipv6')
        return h.name === '::1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(h.name) || h.name === '0:0:0:0:0:0:0:1';
    return h.name === 'localhost';
}
/** Whether an address a server listens on is a loopback one (its Host header is then checked). */
export function isLoopbackAddress(address) {
    const h = parseHostHeader(isIPv6(address) ? `[${address}]` : address);
    return h !== null && isLoopbackHost(h);
}
/** `https://mcp.example.com:443/` or `mcp.example.com` (a configured public name) -> its host name, lower case. */
export function hostNameOf(configured) {
    const bare = configured.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/.*$/, '');
    return parseHostHeader(bare)?.name ?? bare.toLowerCase();
}
/**
 * The DNS-rebinding guard of a host listening on `listenHost`: on a loopback address, a request is
 * served when its Host header is absent (no browser sends that), a loopback name or literal, or one
 * of `publicNames`; any Host is served on other addresses.
 */
export function createHostGuard(listenHost, publicNames) {
    if (!isLoopbackAddress(listenHost))
        return () => true;
    const allowed = new Set(publicNames.map(hostNameOf));
    return (header) => {
        if (header === '')
            return true;
        const h = parseHostHeader(header);
        return h !== null && (isLoopbackHost(h) || allowed.has(h.name));
    };
}
//# sourceMappingURL=host-header.js.map