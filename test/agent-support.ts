/**
 * Helpers of the agent-protocol tests: MCP clients of the official SDK on each transport, raw HTTP
 * exchanges, and a JSON Schema validator for the tools' declared output schemas.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

export type McpTransportName = 'streamable-http' | 'sse';

/** An SDK client connected to the agent host over `transport`, with `key` as the Authorization value ('' = none). */
export async function connectClient(baseUrl: string, transport: McpTransportName, key = ''): Promise<Client> {
  const headers: Record<string, string> = key === '' ? {} : { Authorization: key };
  const client = new Client({ name: 'agent-test', version: '1.2.3' });
  if (transport === 'streamable-http') {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/streamable-http`), { requestInit: { headers } }));
  } else {
    await client.connect(new SSEClientTransport(new URL(`${baseUrl}/sse`), { requestInit: { headers } }));
  }
  return client;
}

/** Validators of each tool's declared outputSchema, compiled as JSON Schema 2020-12 (independently of the server's zod). */
export function outputValidators(tools: readonly Tool[]): Map<string, (value: unknown) => string | null> {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const out = new Map<string, (value: unknown) => string | null>();
  for (const tool of tools) {
    if (tool.outputSchema === undefined) continue;
    const validate = ajv.compile(tool.outputSchema);
    out.set(tool.name, (value) => (validate(value) ? null : ajv.errorsText(validate.errors)));
  }
  return out;
}

/** The text of a tool result's first content block. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first !== undefined && first.type === 'text' ? first.text : '';
}

export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One HTTP exchange; the body is parsed when the answer is JSON. */
export async function raw(url: string, init: RequestInit = {}): Promise<RawReply> {
  const r = await fetch(url, init);
  const text = await r.text();
  let body: unknown = null;
  if ((r.headers.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
  return { status: r.status, headers: r.headers, text, body };
}

/** POST of a JSON-RPC body (already serialized when a string). */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawReply> {
  return raw(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The data of every `message` event in a text/event-stream body. */
export function sseMessages(text: string): any[] {
  const out: any[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n');
    if (!lines.includes('event: message')) continue;
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    out.push(JSON.parse(data));
  }
  return out;
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '0.0.1' } },
} as const;
