/** Whether a raw address (4 bytes IPv4, 16 bytes IPv6) is 127.0.0.0/8, ::1 or ::ffff:127.x.x.x. */
function isLoopback(raw) {
    const b = new Uint8Array(raw);
    if (b.length === 4)
        return b[0] === 127;
    if (b.length !== 16)
        return false;
    for (let i = 0; i < 10; i++)
        if (b[i] !== 0)
            return false;
    if (b[10] === 0xff && b[11] === 0xff)
        return b[12] === 127;
    return b[10] === 0 && b[11] === 0 && b[12] === 0 && b[13] === 0 && b[14] === 0 && b[15] === 1;
}
/** Raw address (4 bytes IPv4, 16 bytes IPv6), as uWS's getRemoteAddress gives it. */
export function peerAddress(res) {
    const raw = res.getRemoteAddress();
    if (!isLoopback(raw))
        return raw;
    const proxied = res.getProxiedRemoteAddress();
    return proxied.byteLength > 0 ? proxied : raw;
}
/** The same as text (dotted IPv4, or eight groups of four hex digits), as getRemoteAddressAsText gives it. */
export function peerAddressText(res) {
    const raw = res.getRemoteAddress();
    const proxied = isLoopback(raw) ? res.getProxiedRemoteAddressAsText() : null;
    return Buffer.from(proxied !== null && proxied.byteLength > 0 ? proxied : res.getRemoteAddressAsText()).toString('latin1');
}
//# sourceMappingURL=peer.js.map