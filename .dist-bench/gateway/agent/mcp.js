/**
 * The Model Context Protocol server of one connection: the SDK's Server (initialize, ping, version
 * negotiation, JSON-RPC semantics) with tools/list and tools/call answered from the tool catalog.
 * The caller of each call comes from the HTTP request that carried it (authInfo.extra.caller, set by
 * the transports), so the plan of a key applies per request.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
export const SERVER_INSTRUCTIONS = [
    'DEX market data: networks, DEXes, liquidity pools, tokens, USD prices, OHLCV candles, transactions and technical indicators, read-only.',
    '',
    'Start with getNetworks (network ids) or getCapabilities (your plan, limits, typical call sequences). Every market tool takes a `network` id from getNetworks; short names such as eth, sol, bnb are accepted.',
    'To go from a name or symbol to addresses, call search; each token and pool it returns carries `chain` (the network id) and `id` (the address to pass as token_address or pool_address).',
    'Pools: getNetworkPools, getDexPools (dex = a dex_id from getNetworkDexes), getTokenPools, getNetworkPoolsFilter; then getPoolDetails, getPoolOHLCV, getPoolIndicators, getPoolTransactions.',
    'Tokens: getTopTokens, filterNetworkTokens, getTokenDetails, getTokenMultiPrices (up to 10 at once), getTokenOHLCV, getTokenIndicators.',
    'Listings page with cursors: pass next_cursor back as cursor with the same sort_by/sort_dir. Empty lists are valid answers (nothing matched, or no trades in the range).',
    'Plans: the key in the Authorization header of this connection sets the plan (keyless without one). getPoolTransactions, getTokenOHLCV and getTokenIndicators need a paid plan; candle intervals and history are capped per plan.',
    'Tool errors say what to change: the argument and accepted values, the identifier to use, the plan needed, or how long to wait before retrying. Retry only rate limits and internal errors.',
    'Found a wrong figure or missing something? Tell the operators with submitFeedback.',
].join('\n');
/** What the transports attach to each message: the caller of the HTTP request that carried it. */
export function authInfoFor(caller) {
    return { token: '', clientId: caller.plan, scopes: [], extra: { caller } };
}
function callerOf(authInfo) {
    const caller = authInfo?.extra?.['caller'];
    if (caller === undefined)
        throw new McpError(ErrorCode.InternalError, 'request arrived without a caller');
    return caller;
}
// Requests are matched on the method only; the SDK's Server checks the tools/call parameters itself
// and answers a malformed call with invalid params (-32602) rather than an internal error.
const toolsListRequest = z.looseObject({ method: z.literal('tools/list'), params: z.unknown().optional() });
const toolsCallRequest = z.looseObject({ method: z.literal('tools/call'), params: z.unknown().optional() });
export function createMcpServer(catalog, info, transport) {
    const server = new Server({ name: info.name, title: 'dexdata DEX market data', version: info.version }, { capabilities: { tools: { listChanged: false } }, instructions: SERVER_INSTRUCTIONS });
    server.setRequestHandler(toolsListRequest, () => ({ tools: [...catalog.definitions] }));
    server.setRequestHandler(toolsCallRequest, (request, extra) => {
        const params = request.params;
        // One server serves every /json-rpc request: clientInfo of some other client's initialize means nothing there.
        const client = transport === 'json-rpc' ? undefined : server.getClientVersion();
        return catalog.call(params.name, params.arguments, {
            caller: callerOf(extra.authInfo),
            transport,
            client: client === undefined ? undefined : { name: client.name, version: client.version },
        });
    });
    // Transport errors are the clients' own mistakes (bad headers, closed streams): they get their
    // answer on the wire and are not logged here.
    server.onerror = () => { };
    return server;
}
//# sourceMappingURL=mcp.js.map