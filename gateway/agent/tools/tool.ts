/**
 * What an agent tool is: a name, words for a model, an input schema, an output schema and a
 * function from parsed arguments to the structured answer. Tools throw ToolFailure (or an ApiError
 * from the query layer) for anything the caller can fix; the catalog turns both into tool errors.
 */
import type { z } from 'zod';
import type { Caller } from '../../auth/access.js';

/** The agent-protocol transports. */
export type TransportName = 'streamable-http' | 'sse' | 'json-rpc';

/** Who makes one tool call, and over what. */
export interface ToolCall {
  /** From the Authorization header of the HTTP request that carried the call. */
  readonly caller: Caller;
  readonly transport: TransportName;
  /** clientInfo of the session's initialize request, when there was one. */
  readonly client: { readonly name: string; readonly version: string } | undefined;
}

export interface ToolSpec<I extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly title: string;
  /** For a model: what it answers, what to call first, which identifier to pass, what empty means. */
  readonly description: string;
  readonly input: I;
  readonly output: z.ZodObject;
  /** Credits one call costs, as told to callers ("1", "1 per token", "0"). */
  readonly credits: string;
  /** Needs a dev, pro or enterprise key. */
  readonly paidOnly: boolean;
  /** Reads only (every tool but submitFeedback). */
  readonly readOnly: boolean;
  run(args: z.output<I>, call: ToolCall): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/** Keeps the argument type of `run` tied to the input schema. */
export function defineTool<I extends z.ZodObject>(spec: ToolSpec<I>): ToolSpec {
  return spec as unknown as ToolSpec;
}

/** A call the caller can correct: the message says what to do instead. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
}
