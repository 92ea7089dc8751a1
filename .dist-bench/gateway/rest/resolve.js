/** Path segments to registry entries; anything unknown is not_found. */
import { normalizeAddress } from '../../engine/ingest/registry.js';
import { notFound } from '../errors.js';
export function networkOrNotFound(registry, id) {
    const net = registry.networkOf(id);
    if (net === undefined)
        throw notFound('network', id);
    return net;
}
/** EVM hex addresses match in any case (`0X` prefix included); others (base58) exactly. */
function normalPathAddress(address) {
    const hex = address.length > 2 && address.charCodeAt(0) === 48 && (address.charCodeAt(1) | 32) === 120;
    return hex ? address.toLowerCase() : normalizeAddress(address);
}
export function poolOrNotFound(registry, network, address) {
    const pool = registry.poolOf(network.index, normalPathAddress(address));
    if (pool === undefined)
        throw notFound('pool', address, network.id);
    return pool;
}
export function tokenOrNotFound(registry, network, address) {
    const token = registry.tokenOf(network.index, normalPathAddress(address));
    if (token === undefined)
        throw notFound('token', address, network.id);
    return token;
}
//# sourceMappingURL=resolve.js.map