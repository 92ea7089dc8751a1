/**
 * The agent protocol's endpoints behind the agent host (host.ts): the tool catalog and the three
 * transports. They hold the Model Context Protocol SDK and the tools' schemas, the largest modules
 * of the gateway, which no REST answer needs: the host imports this module on its first agent
 * request, not at start.
 */
import type { Log } from '../../engine/read/index.js';
import type { FeedbackStore } from './feedback.js';
import type { SessionLimits } from './sessions.js';
import { createToolCatalog } from './tools/catalog.js';
import type { QueryLayer } from './tools/query.js';
import type { ServiceInfo } from './tools/service.js';
import { JsonRpcEndpoint } from './transports/json-rpc.js';
import { SseEndpoint } from './transports/sse.js';
import { StreamableHttpEndpoint } from './transports/streamable-http.js';

export interface AgentEndpoints {
  readonly streamable: StreamableHttpEndpoint;
  readonly sse: SseEndpoint;
  readonly jsonRpc: JsonRpcEndpoint;
}

export function createAgentEndpoints(query: QueryLayer, feedback: FeedbackStore, info: ServiceInfo, limits: SessionLimits, log: Log): AgentEndpoints {
  const catalog = createToolCatalog(query, feedback, info, log);
  return {
    streamable: new StreamableHttpEndpoint({ catalog, info, limits }),
    sse: new SseEndpoint({ catalog, info, limits }),
    jsonRpc: new JsonRpcEndpoint({ catalog, info }),
  };
}
