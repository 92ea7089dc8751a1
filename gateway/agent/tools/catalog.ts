/**
 * The twenty agent tools, their published definitions (JSON Schema generated once from the zod
 * schemas) and the one way a call is answered: arguments checked against the input schema, the tool
 * run, the answer returned as structured content plus its JSON text. Every refusal becomes a tool
 * error (isError) with text a model can act on; nothing a caller sends makes the call itself fail,
 * except naming a tool that does not exist (a JSON-RPC invalid-params error, as the protocol asks).
 */
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { errorText, fallbackLog, type Log } from '../../../engine/read/index.js';
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import type { FeedbackStore } from '../feedback.js';
import { discoveryTools } from './discovery.js';
import { describeApiError, internalFailure } from './errors.js';
import { poolTools } from './pools.js';
import type { QueryLayer } from './query.js';
import { serviceTools, type ServiceInfo } from './service.js';
import { tokenTools } from './tokens.js';
import { ToolFailure, type ToolCall, type ToolSpec } from './tool.js';

/** Tool names in the order tools/list gives them. */
export const TOOL_NAMES = [
  'getCapabilities',
  'submitFeedback',
  'getNetworks',
  'getStats',
  'search',
  'getNetworkDexes',
  'getNetworkPools',
  'getDexPools',
  'getNetworkPoolsFilter',
  'getPoolDetails',
  'getPoolOHLCV',
  'getPoolTransactions',
  'getPoolIndicators',
  'getTokenDetails',
  'getTokenPools',
  'getTokenMultiPrices',
  'getTokenOHLCV',
  'getTokenIndicators',
  'getTopTokens',
  'filterNetworkTokens',
] as const;

type JsonSchema = Record<string, unknown>;

/** The JSON Schema of a zod schema as published (no `$schema`: clients apply their default dialect). */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'throw' }) as JsonSchema;
  delete json['$schema'];
  return json;
}

function issueText(issue: z.core.$ZodIssue): string {
  const at = issue.path.map(String).join('.');
  if (at === '' || issue.message.startsWith(String(issue.path[0]))) return issue.message;
  return `${at}: ${issue.message}`;
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

export class ToolCatalog {
  readonly definitions: readonly Tool[];
  private readonly tools = new Map<string, ToolSpec>();

  private readonly log: Log;

  constructor(specs: readonly ToolSpec[], log: Log = fallbackLog()) {
    this.log = log;
    for (const spec of specs) {
      if (this.tools.has(spec.name)) throw new Error(`tool ${spec.name} is defined twice`);
      this.tools.set(spec.name, spec);
    }
    this.definitions = specs.map((spec) => ({
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: jsonSchemaOf(spec.input, 'input') as Tool['inputSchema'],
      outputSchema: jsonSchemaOf(spec.output, 'output') as Tool['outputSchema'],
      annotations: {
        title: spec.title,
        readOnlyHint: spec.readOnly,
        destructiveHint: false,
        idempotentHint: spec.readOnly,
        openWorldHint: false,
      },
    }));
  }

  get specs(): readonly ToolSpec[] {
    return [...this.tools.values()];
  }

  /** Answers one tools/call. */
  async call(name: string, args: Record<string, unknown> | undefined, call: ToolCall): Promise<CallToolResult> {
    const tool = this.tools.get(name);
    if (tool === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name.slice(0, 80)}". The tools are: ${[...this.tools.keys()].join(', ')}.`);
    }
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) {
      return failure(`Invalid arguments for ${name}: ${parsed.error.issues.map(issueText).join('; ')}. Correct them and call ${name} again.`);
    }
    try {
      const structured = await tool.run(parsed.data, call);
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (err) {
      if (err instanceof ToolFailure) return failure(err.message);
      if (err instanceof ApiError) return failure(describeApiError(err, name));
      // Arguments and headers are not logged: they may carry keys or personal text.
      this.log.error({ tool: name }, `agent: tool failed: ${errorText(err)}`);
      return failure(internalFailure(name));
    }
  }
}

/** All twenty tools over one query layer. */
export function createToolCatalog(q: QueryLayer, feedback: FeedbackStore, info: ServiceInfo, log?: Log): ToolCatalog {
  let catalog: ToolCatalog | undefined;
  const specs = [
    ...serviceTools(q, feedback, info, () => catalog?.specs ?? []),
    ...discoveryTools(q),
    ...poolTools(q),
    ...tokenTools(q),
  ];
  const byName = new Map(specs.map((s) => [s.name, s]));
  const ordered = TOOL_NAMES.map((n) => {
    const spec = byName.get(n);
    if (spec === undefined) throw new Error(`tool ${n} is not defined`);
    return spec;
  });
  if (ordered.length !== specs.length) throw new Error('a tool is defined that TOOL_NAMES does not list');
  catalog = new ToolCatalog(ordered, log);
  return catalog;
}
