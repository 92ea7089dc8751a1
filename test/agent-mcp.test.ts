/**
 * The agent host's Model Context Protocol over real sockets, with the official SDK client on each
 * of its session transports (Streamable HTTP and the older HTTP+SSE pair): the twenty tools are
 * listed, every tool's structured answer validates against its declared output schema and equals
 * the REST answer of the same data, invalid arguments come back as tool errors a model can act on,
 * the key in Authorization sets the plan, and each call is metered like its REST request.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../gateway/agent/tools/catalog.js';
import { openFeedbackStore } from '../gateway/agent/feedback.js';
import { connectClient, outputValidators, textOf, type McpTransportName } from './agent-support.js';
import { call, DAY, NOW, plansWith, POOL, startAccessFixture, TOKENS, type AccessFixture } from './support/access.js';

const [USDC, WETH] = TOKENS as [string, string];
const FACTORY = '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f';
const UNKNOWN_TOKEN = '0x000000000000000000000000000000000000dEaD';

let fx: AccessFixture;
let devKey = '';
let freeKey = '';

beforeAll(async () => {
  const roomy = { requestsPerMinute: 100_000, credits: 1_000_000 };
  fx = await startAccessFixture(plansWith({ keyless: roomy, free: roomy, dev: roomy, pro: roomy, enterprise: roomy }));
  devKey = fx.keys.create('dev', 'agent test', NOW - 10 * DAY).key;
  freeKey = fx.keys.create('free', 'agent test free', NOW - DAY).key;
});

afterAll(async () => {
  await fx?.close();
});

const agentUrl = () => fx.url('agent');
/** GET on the free REST host (keyless), the reference answer of a keyless tool call. */
const rest = async (path: string) => {
  const r = await call(fx.url('freeRest') + path);
  expect(r.status, path).toBe(200);
  return r.body;
};
/** GET on the paid REST host with the dev key. */
const paidRest = async (path: string) => {
  const r = await call(fx.url('paidRest') + path, devKey);
  expect(r.status, path).toBe(200);
  return r.body;
};

/** One valid call per tool and the REST answer it must equal (after `shape`). */
interface ToolCase {
  readonly name: (typeof TOOL_NAMES)[number];
  readonly args: Record<string, unknown>;
  /** Key of the connection: keyless unless set. */
  readonly key?: 'dev';
  readonly expected?: () => Promise<unknown>;
  /** Checks beyond equality with REST. */
  readonly check?: (structured: any) => void;
}

const VALID: readonly ToolCase[] = [
  {
    name: 'getCapabilities',
    args: {},
    check: (s) => {
      expect(s.plan.name).toBe('keyless');
      expect(s.plan.paid_tools_allowed).toBe(false);
      expect(s.plan.ohlcv_finest_interval).toBe('1h');
      expect(s.networks).toEqual([{ id: 'ethereum', display_name: 'Ethereum' }]);
      expect(s.network_synonyms.eth).toBe('ethereum');
      expect(s.tools.map((t: { name: string }) => t.name)).toEqual([...TOOL_NAMES]);
      expect(s.tools.find((t: { name: string }) => t.name === 'getTokenOHLCV').needs_paid_plan).toBe(true);
      expect(s.limits.multi_prices_tokens_max).toBe(10);
    },
  },
  { name: 'getNetworks', args: {}, expected: async () => ({ networks: await rest('/networks') }) },
  { name: 'getStats', args: {}, expected: () => rest('/stats') },
  {
    name: 'search',
    args: { query: 'usd' },
    expected: () => rest('/search?query=usd'),
    check: (s) => {
      expect(s.pools.length).toBeGreaterThan(0);
      for (const p of s.pools) expect(p.factory_id).toBe(FACTORY);
    },
  },
  { name: 'getNetworkDexes', args: { network: 'eth', page: 1, limit: 5 }, expected: () => rest('/networks/ethereum/dexes?page=1&limit=5') },
  {
    name: 'getNetworkPools',
    args: { network: 'ethereum', limit: 5, sort_by: 'liquidity_usd', sort_dir: 'asc' },
    expected: () => rest('/networks/ethereum/pools/search?limit=5&order_by=liquidity_usd&sort=asc'),
    check: (s) => expect(s.results.map((r: { id: string }) => r.id)).toEqual([POOL.toLowerCase()]),
  },
  {
    name: 'getDexPools',
    args: { network: 'ETH', dex: 'UNISWAP_V2', order_by: 'volume_usd' },
    expected: () => rest('/networks/ethereum/pools/search?dex_name=uniswap_v2&order_by=volume_usd_24h'),
  },
  {
    name: 'getNetworkPoolsFilter',
    args: { network: 'ethereum', liquidity_usd_min: '1', volume_24h_min: 0, created_before: NOW },
    expected: () => rest(`/networks/ethereum/pools/search?liquidity_usd_min=1&volume_usd_24h_min=0&created_before=${NOW}`),
    check: (s) => expect(s.results).toHaveLength(1),
  },
  { name: 'getPoolDetails', args: { network: 'ethereum', pool_address: POOL, inversed: true }, expected: () => rest(`/networks/ethereum/pools/${POOL}?inversed=true`) },
  {
    name: 'getPoolOHLCV',
    args: { network: 'ethereum', pool_address: POOL.toUpperCase().replace('0X', '0x'), start: NOW - DAY, interval: '1h', limit: 5 },
    expected: async () => ({ ohlcv: await rest(`/networks/ethereum/pools/${POOL}/ohlcv?start=${NOW - DAY}&interval=1h&limit=5`) }),
    check: (s) => expect(s.ohlcv.length).toBeGreaterThan(0),
  },
  {
    name: 'getPoolTransactions',
    key: 'dev',
    args: { network: 'ethereum', pool_address: POOL, limit: 3 },
    expected: async () => {
      const rows = await paidRest(`/networks/ethereum/pools/${POOL}/transactions?limit=3`);
      return { transactions: rows, page_info: { page: 1, limit: 3 }, next_cursor: rows[2].id };
    },
  },
  {
    name: 'getPoolIndicators',
    args: { network: 'ethereum', pool_address: POOL, start: '-1d', interval: '1h', indicators: ['sma', 'rsi'], period: 3 },
    expected: async () => ({ indicators: await rest(`/networks/ethereum/pools/${POOL}/indicators?start=-1d&interval=1h&indicators=sma,rsi&period=3`) }),
    check: (s) => {
      expect(s.indicators.length).toBeGreaterThan(0);
      expect(Object.keys(s.indicators[0]).sort()).toEqual(['close', 'rsi', 'sma', 'time_close', 'time_open', 'timestamp']);
    },
  },
  { name: 'getTokenDetails', args: { network: 'ethereum', token_address: WETH }, expected: () => rest(`/networks/ethereum/tokens/${WETH}`) },
  { name: 'getTokenPools', args: { network: 'ethereum', token_address: USDC, limit: 2 }, expected: () => rest(`/networks/ethereum/pools/search?token_address=${USDC}&limit=2`) },
  {
    name: 'getTokenMultiPrices',
    args: { network: 'ethereum', tokens: [USDC, WETH, UNKNOWN_TOKEN] },
    expected: async () => ({ prices: await rest(`/networks/ethereum/multi/prices?tokens=${USDC},${WETH},${UNKNOWN_TOKEN}`), missing_tokens: [UNKNOWN_TOKEN] }),
    check: (s) => expect(s.prices).toHaveLength(2),
  },
  {
    name: 'getTokenOHLCV',
    key: 'dev',
    args: { network: 'ethereum', token_address: WETH, start: '-2d', interval: '6h' },
    expected: async () => ({ ohlcv: await paidRest(`/networks/ethereum/tokens/${WETH}/ohlcv?start=-2d&interval=6h`) }),
    check: (s) => expect(s.ohlcv.length).toBeGreaterThan(0),
  },
  {
    name: 'getTokenIndicators',
    key: 'dev',
    args: { network: 'ethereum', token_address: USDC, start: '-10d', interval: '24h', indicators: 'ema,macd', macd_fast: 3, macd_slow: 5, macd_signal: 2 },
    expected: async () => ({
      indicators: await paidRest(`/networks/ethereum/tokens/${USDC}/indicators?start=-10d&interval=24h&indicators=ema,macd&macd_fast=3&macd_slow=5&macd_signal=2`),
    }),
  },
  {
    name: 'getTopTokens',
    args: { network: 'ethereum', sort_by: 'liquidity', limit: 1 },
    expected: () => rest('/networks/ethereum/tokens/search?order_by=liquidity_usd&limit=1'),
    check: (s) => {
      expect(s.results).toHaveLength(1);
      expect(s.has_next_page).toBe(true);
    },
  },
  {
    name: 'filterNetworkTokens',
    args: { network: 'ethereum', fdv_min: 1, txns_24h_min: 1, sort_by: 'fdv' },
    expected: () => rest('/networks/ethereum/tokens/search?fdv_usd_min=1&txns_24h_min=1&order_by=fdv_usd'),
  },
  {
    name: 'submitFeedback',
    args: { message: 'The 1h candles of this pool look right.', category: 'data_quality', tool: 'getPoolOHLCV', rating: 5 },
    check: (s) => {
      expect(s.status).toBe('stored');
      expect(s.id).toMatch(/^fb-\d+$/);
    },
  },
];

/** One invalid call per tool and what its error text must say. */
const INVALID: readonly { name: string; args: Record<string, unknown>; says: RegExp[]; key?: 'free' }[] = [
  { name: 'getCapabilities', args: { extra: true }, says: [] },
  { name: 'submitFeedback', args: { rating: 9 }, says: [/message is required/, /rating must be a whole number from 1 to 5/] },
  { name: 'getNetworks', args: { unused: 1 }, says: [] },
  { name: 'getStats', args: { unused: 1 }, says: [] },
  { name: 'search', args: { query: '   ' }, says: [/query must not be empty/] },
  { name: 'getNetworkDexes', args: { network: 'atlantis' }, says: [/Unknown network "atlantis"/, /ethereum/, /getNetworks/] },
  { name: 'getNetworkPools', args: { network: 'ethereum', sort_by: 'volume' }, says: [/sort_by must be one of volume_usd_24h, /, /price_change_percentage_5m/] },
  { name: 'getDexPools', args: { network: 'ethereum', dex: 'Uniswap V2' }, says: [/display name/, /"uniswap_v2"/] },
  { name: 'getNetworkPoolsFilter', args: { network: 'ethereum', created_after: 'last tuesday' }, says: [/Invalid argument created_after/, /relative offset/] },
  { name: 'getPoolDetails', args: { network: 'ethereum', pool_address: WETH }, says: [/is a token on ethereum, not a pool/, /getTokenPools/] },
  { name: 'getPoolOHLCV', args: { network: 'ethereum', pool_address: POOL }, says: [/start is required/] },
  { name: 'getPoolTransactions', args: { network: 'ethereum', pool_address: POOL }, says: [/needs a paid plan/, /sends no key/, /Authorization/] },
  { name: 'getPoolIndicators', args: { network: 'ethereum', pool_address: POOL, start: '-1d', indicators: ['sma', 'vwap'] }, says: [/indicators must be a list drawn from sma, ema, rsi, macd, bbands/] },
  { name: 'getTokenDetails', args: { network: 'ethereum', token_address: POOL }, says: [/is a pool on ethereum, not a token/, /getPoolDetails/] },
  { name: 'getTokenPools', args: { network: 'ethereum', token_address: UNKNOWN_TOKEN }, says: [/No token 0x0+dEaD on ethereum/, /search/] },
  { name: 'getTokenMultiPrices', args: { network: 'ethereum', tokens: Array.from({ length: 11 }, (_, i) => `0x${i}`) }, says: [/tokens must be a list of 1 to 10 token addresses/] },
  { name: 'getTokenOHLCV', args: { network: 'ethereum', token_address: WETH, start: '-1d' }, key: 'free', says: [/needs a paid plan \(dev or higher\)/, /on the free plan/] },
  { name: 'getTokenIndicators', args: { network: 'ethereum', token_address: WETH, start: '-1d', interval: '2h' }, says: [/interval must be one of 1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h, 24h/] },
  { name: 'getTopTokens', args: { network: 'ethereum', sort_by: 'price_usd' }, says: [/sort_by must be one of volume_usd_24h, volume_usd_7d, volume_usd_30d, liquidity_usd, txns_24h, price_change_percentage_24h, created_at, fdv_usd/] },
  { name: 'filterNetworkTokens', args: { network: 'ethereum', fdv_min: 10, fdv_usd_min: 20 }, says: [/fdv_usd_min and fdv_min are the same setting/] },
];

describe.each(['streamable-http', 'sse'] as McpTransportName[])('over %s', (transport) => {
  let keyless: Client;
  let dev: Client;
  let free: Client;
  let tools: Tool[];
  let validators: Map<string, (value: unknown) => string | null>;

  beforeAll(async () => {
    keyless = await connectClient(agentUrl(), transport);
    dev = await connectClient(agentUrl(), transport, devKey);
    free = await connectClient(agentUrl(), transport, freeKey);
    tools = (await keyless.listTools()).tools;
    validators = outputValidators(tools);
  });

  afterAll(async () => {
    await Promise.all([keyless?.close(), dev?.close(), free?.close()]);
  });

  it('initialize names the service and its instructions', () => {
    expect(keyless.getServerVersion()?.name).toBe('dexdata');
    expect(keyless.getServerCapabilities()?.tools).toBeDefined();
    expect(keyless.getInstructions()).toMatch(/getNetworks/);
  });

  it('lists the twenty tools, each with a description, an input schema and an output schema', () => {
    expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(validators.has(t.name), t.name).toBe(true);
      expect(t.annotations?.readOnlyHint, t.name).toBe(t.name !== 'submitFeedback');
    }
    // No `rationale` is required anywhere.
    for (const t of tools) expect(t.inputSchema.required ?? [], t.name).not.toContain('rationale');
  });

  it('every tool answers valid arguments with structured content that fits its schema and equals the REST answer', async () => {
    expect(new Set(VALID.map((c) => c.name))).toEqual(new Set(TOOL_NAMES));
    for (const c of VALID) {
      const client = c.key === 'dev' ? dev : keyless;
      const result = (await client.callTool({ name: c.name, arguments: c.args })) as CallToolResult;
      expect(result.isError ?? false, `${c.name}: ${textOf(result)}`).toBe(false);
      const s = result.structuredContent as Record<string, unknown>;
      expect(validators.get(c.name)!(s), c.name).toBeNull();
      // The text block carries the same JSON, for clients that read only text.
      expect(JSON.parse(textOf(result)), c.name).toEqual(s);
      if (c.expected !== undefined) {
        const expected = (await c.expected()) as Record<string, unknown>;
        if (c.name === 'search') {
          const pools = (s['pools'] as Record<string, unknown>[]).map(({ factory_id: _f, ...rest }) => rest);
          expect({ ...s, pools }, c.name).toEqual(expected);
        } else {
          expect(s, c.name).toEqual(expected);
        }
      }
      c.check?.(s);
    }
  });

  it('every tool answers invalid arguments with a tool error naming what to change, and keeps serving', async () => {
    for (const c of INVALID) {
      const client = c.key === 'free' ? free : keyless;
      const result = (await client.callTool({ name: c.name, arguments: c.args })) as CallToolResult;
      if (c.says.length === 0) {
        // Tools without arguments ignore unknown ones, as the REST interface ignores unknown parameters.
        expect(result.isError ?? false, c.name).toBe(false);
        continue;
      }
      expect(result.isError, `${c.name}: ${textOf(result)}`).toBe(true);
      expect(result.structuredContent, c.name).toBeUndefined();
      for (const pattern of c.says) expect(textOf(result), c.name).toMatch(pattern);
    }
    const after = (await keyless.callTool({ name: 'getStats', arguments: {} })) as CallToolResult;
    expect(after.isError ?? false).toBe(false);
  });

  it('an unknown tool is a protocol error (invalid params), after which the session keeps working', async () => {
    await expect(keyless.callTool({ name: 'getWeather', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown tool "getWeather"/) });
    await expect(keyless.request({ method: 'tools/call', params: { arguments: {} } } as never, (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema)).rejects.toMatchObject({ code: -32602 });
    expect(((await keyless.callTool({ name: 'getNetworks', arguments: {} })) as CallToolResult).isError ?? false).toBe(false);
  });

  it('the key of the connection sets the plan: paid tools, plan windows and capabilities follow it', async () => {
    const caps = (await dev.callTool({ name: 'getCapabilities', arguments: {} })) as CallToolResult;
    const plan = (caps.structuredContent as { plan: Record<string, unknown> }).plan;
    expect(plan['name']).toBe('dev');
    expect(plan['paid_tools_allowed']).toBe(true);
    expect(plan['ohlcv_finest_interval']).toBe('1m');

    // 1m candles: beyond the keyless plan, within dev.
    const args = { network: 'ethereum', pool_address: POOL, start: NOW - 2 * DAY, interval: '1m' };
    const refused = (await keyless.callTool({ name: 'getPoolOHLCV', arguments: args })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/interval is beyond the keyless plan/);
    expect(textOf(refused)).toMatch(/dev plan or higher/);
    const allowed = (await dev.callTool({ name: 'getPoolOHLCV', arguments: args })) as CallToolResult;
    expect(allowed.isError ?? false, textOf(allowed)).toBe(false);
    expect(allowed.structuredContent).toEqual({ ohlcv: await paidRest(`/networks/ethereum/pools/${POOL}/ohlcv?start=${NOW - 2 * DAY}&interval=1m`) });

    // A start wholly before the free plan's 7 days is refused naming the plan needed.
    const old = (await free.callTool({ name: 'getPoolOHLCV', arguments: { network: 'ethereum', pool_address: POOL, start: NOW - 20 * DAY, end: NOW - 10 * DAY, interval: '1h' } })) as CallToolResult;
    expect(old.isError).toBe(true);
    expect(textOf(old)).toMatch(/Argument start is beyond the free plan/);
    expect(textOf(old)).toMatch(/dev plan or higher/);

    // Paging transactions: next_cursor leads to the next, older page, as the REST cursor does.
    const first = (await dev.callTool({ name: 'getPoolTransactions', arguments: { network: 'ethereum', pool_address: POOL, limit: 2 } })) as CallToolResult;
    const cursor = (first.structuredContent as { next_cursor: string }).next_cursor;
    const second = (await dev.callTool({ name: 'getPoolTransactions', arguments: { network: 'ethereum', pool_address: POOL, limit: 2, cursor } })) as CallToolResult;
    expect((second.structuredContent as { transactions: unknown[] }).transactions).toEqual(
      await paidRest(`/networks/ethereum/pools/${POOL}/transactions?limit=2&cursor=${encodeURIComponent(cursor)}`),
    );
  });

  it('each tool call is metered like its REST request: credits go down per call, one per token for batch prices, none for refusals', async () => {
    const usage = async () => (await call(`${fx.url('paidRest')}/usage`, devKey)).body.credits_used as number;
    const before = await usage();
    await dev.callTool({ name: 'getNetworks', arguments: {} });
    expect(await usage()).toBe(before + 1);
    await dev.callTool({ name: 'getPoolDetails', arguments: { network: 'ethereum', pool_address: POOL } });
    expect(await usage()).toBe(before + 2);
    await dev.callTool({ name: 'getTokenMultiPrices', arguments: { network: 'ethereum', tokens: [USDC, WETH, UNKNOWN_TOKEN] } });
    expect(await usage()).toBe(before + 5);
    // No market data read: no credits.
    await dev.callTool({ name: 'getCapabilities', arguments: {} });
    await dev.callTool({ name: 'getNetworkPools', arguments: { network: 'ethereum', limit: 0 } });
    await dev.callTool({ name: 'getPoolOHLCV', arguments: { network: 'ethereum', pool_address: POOL, start: '-1d', interval: 'nope' } });
    expect(await usage()).toBe(before + 5);
    const caps = (await dev.callTool({ name: 'getCapabilities', arguments: {} })) as CallToolResult;
    expect((caps.structuredContent as { plan: { credits_used: number } }).plan.credits_used).toBe(before + 5);
  });

  it('submitFeedback stores the feedback durably with the sender\'s plan and client', async () => {
    const message = `feedback over ${transport}: token search is handy`;
    const result = (await dev.callTool({ name: 'submitFeedback', arguments: { message, category: 'missing_feature' } })) as CallToolResult;
    const id = Number((result.structuredContent as { id: string }).id.slice(3));
    const stored = openFeedbackStore(fx.store).list({ after: id - 1, limit: 1 })[0]!;
    expect(stored).toMatchObject({ id, message, category: 'missing_feature', plan: 'dev', tool: null, rating: null, transport, client: { name: 'agent-test', version: '1.2.3' } });
    expect(stored.account).toBeGreaterThan(0);
  });
});

describe('connections', () => {
  it('an unknown key is refused at connect with 401; a "Bearer " prefix is accepted for a valid key', async () => {
    await expect(connectClient(agentUrl(), 'streamable-http', 'api_notakey')).rejects.toThrow(/401|api key verification has failed/);
    const bearer = await connectClient(agentUrl(), 'streamable-http', `Bearer ${devKey}`);
    const caps = (await bearer.callTool({ name: 'getCapabilities', arguments: {} })) as CallToolResult;
    expect((caps.structuredContent as { plan: { name: string } }).plan.name).toBe('dev');
    await bearer.close();
  });

  it('many clients at once each get their own answers', async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => connectClient(agentUrl(), i % 2 === 0 ? 'streamable-http' : 'sse')));
    const answers = await Promise.all(
      clients.map((c, i) => c.callTool({ name: 'search', arguments: { query: i % 2 === 0 ? 'usdc' : 'weth', limit: 1 } }) as Promise<CallToolResult>),
    );
    answers.forEach((a, i) => {
      const tokens = (a.structuredContent as { tokens: { symbol: string }[] }).tokens;
      expect(tokens).toHaveLength(1);
      expect(tokens[0]!.symbol).toBe(i % 2 === 0 ? 'USDC' : 'WETH');
    });
    await Promise.all(clients.map((c) => c.close()));
  });
});
