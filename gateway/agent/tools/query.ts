/**
 * The tools' way into the query layer: the same main router the REST hosts answer from, called
 * in-process with a main-interface path and query string, under the same rules as a REST request
 * of the same caller: paid-only endpoints refused first at no cost, then the per-minute limit and
 * the credits (meter.admit), then the route with the caller's plan window, and credits charged only
 * for an answer. Also the identifier lookups that let a tool say which identifier to use instead.
 */
import { type Catalog, type DexRecord, type NetworkEntry, normalizeAddress, type PlanLimits, type PlanName, type PoolRecord, type TokenRecord } from '../../../engine/read/index.js';
import type { Caller } from '../../auth/access.js';
import { checkPaidOnly } from '../../auth/paid-only.js';
import type { ServeContext } from '../../context.js';
import type { Meter, Usage } from '../../metering/meter.js';
import type { OhlcvPlanGate } from '../../rest/plan-window.js';
import { NETWORK_SYNONYMS } from '../../rest/api-subset.js';
import { ToolFailure } from './tool.js';

/** The main router: a main-interface path (segments percent-encoded) and raw query to JSON bytes, at once or once ranked; throws (or rejects with) ApiError. */
export type QueryRoute = (path: string, query: string, gate?: OhlcvPlanGate) => Uint8Array | Promise<Uint8Array>;

export interface QueryLayerOptions {
  readonly ctx: ServeContext;
  readonly route: QueryRoute;
  readonly meter: Meter;
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
}

export class QueryLayer {
  readonly ctx: ServeContext;
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
  private readonly route: QueryRoute;
  private readonly meter: Meter;

  constructor(options: QueryLayerOptions) {
    this.ctx = options.ctx;
    this.route = options.route;
    this.meter = options.meter;
    this.plans = options.plans;
  }

  get registry(): Catalog {
    return this.ctx.read.catalog;
  }

  /** The parsed answer of a main-interface request made by `caller`, costing `cost` credits. */
  async get(caller: Caller, path: string, query: string, cost = 1): Promise<unknown> {
    checkPaidOnly(path, caller.plan);
    const now = this.ctx.now();
    const slot = this.meter.admit(caller, cost, now);
    const body = await this.route(path, query, { tier: caller.plan, plans: this.plans });
    this.meter.charge(slot, cost, now);
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as unknown;
  }

  /** Throws the refusal of a paid-only main-interface path for the caller's plan (no cost). */
  checkPaidOnly(caller: Caller, path: string): void {
    checkPaidOnly(path, caller.plan);
  }

  /** Counts a call that reads no market data against the per-minute limit (no credits); throws 429. */
  admit(caller: Caller): void {
    this.meter.admit(caller, 0, this.ctx.now());
  }

  usage(caller: Caller): Usage {
    return this.meter.usage(caller, this.ctx.now());
  }

  /** The network a `network` argument names (id in any case, or a short name), or a failure listing the ids. */
  network(raw: string): NetworkEntry {
    const text = raw.trim().toLowerCase();
    const id = NETWORK_SYNONYMS[text] ?? text;
    const net = this.registry.networkOf(id);
    if (net !== undefined) return net;
    throw new ToolFailure(
      `Unknown network "${clip(raw)}". Pass a network id from getNetworks: ${this.registry.networks.map((n) => n.id).join(', ')}` +
        ` (short names ${Object.keys(NETWORK_SYNONYMS).join(', ')} work too).`,
    );
  }

  /** The pool at `address` on `net`, or a failure saying where the address does belong. */
  pool(net: NetworkEntry, address: string): PoolRecord {
    const a = normalizeAddress(address.trim());
    const pool = this.registry.poolId(net.index, a);
    if (pool >= 0) return this.registry.pool(pool);
    if (this.registry.tokenId(net.index, a) >= 0) {
      throw new ToolFailure(`${clip(address)} is a token on ${net.id}, not a pool. getTokenPools lists the pools holding it; pass one of their ids as pool_address.`);
    }
    const elsewhere = this.otherNetwork(net, (n) => this.registry.poolId(n.index, a) >= 0);
    if (elsewhere !== undefined) throw new ToolFailure(`Pool ${clip(address)} is on ${elsewhere.id}, not ${net.id}: call again with network "${elsewhere.id}".`);
    throw new ToolFailure(
      `No pool ${clip(address)} on ${net.id}. Pool addresses are the \`id\` of pool rows from getNetworkPools, getTokenPools or search (search finds pools by token name or symbol).`,
    );
  }

  /** The token at `address` on `net`, or a failure saying where the address does belong. */
  token(net: NetworkEntry, address: string): TokenRecord {
    const a = normalizeAddress(address.trim());
    const token = this.registry.tokenId(net.index, a);
    if (token >= 0) return this.registry.token(token);
    if (this.registry.poolId(net.index, a) >= 0) {
      throw new ToolFailure(`${clip(address)} is a pool on ${net.id}, not a token. getPoolDetails shows its two tokens; pass one of their ids as token_address.`);
    }
    const elsewhere = this.otherNetwork(net, (n) => this.registry.tokenId(n.index, a) >= 0);
    if (elsewhere !== undefined) throw new ToolFailure(`Token ${clip(address)} is on ${elsewhere.id}, not ${net.id}: call again with network "${elsewhere.id}".`);
    throw new ToolFailure(`No token ${clip(address)} on ${net.id}. Find token addresses with search (by name or symbol) or getTopTokens.`);
  }

  /** The DEX a `dex` argument names by dex_id (any case), or a failure naming the ids of the network. */
  dex(net: NetworkEntry, raw: string): DexRecord {
    const text = raw.trim().toLowerCase();
    const dex = net.dexes.find((d) => d.id.toLowerCase() === text);
    if (dex !== undefined) return dex;
    const byName = net.dexes.find((d) => d.name.toLowerCase() === text);
    if (byName !== undefined) throw new ToolFailure(`"${clip(raw)}" is the display name of a DEX; pass its dex_id "${byName.id}" instead.`);
    const ids = net.dexes.map((d) => d.id);
    throw new ToolFailure(`No DEX "${clip(raw)}" on ${net.id}. Its dex_id values: ${ids.length > 0 ? ids.join(', ') : '(none)'} (getNetworkDexes lists them by volume).`);
  }

  private otherNetwork(net: NetworkEntry, has: (n: NetworkEntry) => boolean): NetworkEntry | undefined {
    return this.registry.networks.find((n) => n !== net && has(n));
  }
}

/** At most 80 characters of caller text, for messages. */
export function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A main-interface path from segments, each percent-encoded. */
export function pathOf(...segments: string[]): string {
  return `/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
}

/** A raw query string from name/value pairs; undefined values are left out. */
export function queryOf(params: Readonly<Record<string, string | number | boolean | undefined>>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  }
  return parts.join('&');
}

/** The one value of an argument that has an alias; a failure when both are given and differ. */
export function eitherOf<T>(name: string, value: T | undefined, alias: string, aliasValue: T | undefined): T | undefined {
  if (value !== undefined && aliasValue !== undefined && value !== aliasValue) {
    throw new ToolFailure(`${name} and ${alias} are the same setting and were given different values (${String(value)}, ${String(aliasValue)}); pass only ${name}.`);
  }
  return value ?? aliasValue;
}
