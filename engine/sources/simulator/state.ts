/**
 * The simulator's whole state as bytes, so a restart resumes where it was instead of regenerating
 * its history from genesis (which grows with every day of history).
 *
 * The state is the object graph of the running simulator: instances of the classes below, plain
 * objects, arrays, typed arrays, Maps, Sets and primitives. It is written with v8's structured
 * serialiser after each class instance is tagged with its class name (v8 keeps plain objects only);
 * shared instances stay shared. Reading rebuilds each instance on its class's prototype without
 * running its constructor. A resumed simulator produces byte for byte the events the uninterrupted
 * one would have (test/simulator.test.ts).
 */
import { deserialize, serialize } from 'node:v8';
import { ChainSim } from './chain.js';
import { BlockClock } from './clock.js';
import { PoolBook } from './pools.js';
import { LocalPriceWalks, SharedPricePaths } from './prices.js';
import { Rng, RngBank } from './prng.js';
import { Schedule } from './schedule.js';
import { ChainTokens } from './tokens.js';
import { EventWriter } from './writer.js';

/** Every class whose instances the simulator's graph holds, by a stable name. */
const CLASSES: Readonly<Record<string, { readonly prototype: object }>> = {
  ChainSim,
  BlockClock,
  PoolBook,
  SharedPricePaths,
  LocalPriceWalks,
  Rng,
  RngBank,
  Schedule,
  ChainTokens,
  EventWriter,
};
const NAME_OF = new Map<object, string>(Object.entries(CLASSES).map(([name, c]) => [c.prototype, name]));
const CLASS_TAG = '\u0000class';

type Tagged = { [CLASS_TAG]: string } & Record<string, unknown>;

/** True for an array of primitives only (most of the state: per-pool numbers): v8 copies it as it is. */
function primitives(a: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if ((typeof v === 'object' && v !== null) || typeof v === 'function') return false;
  }
  return true;
}

function encode(value: unknown, memo: Map<object, unknown>): unknown {
  if (typeof value === 'function') throw new TypeError('the simulator state holds a function');
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const done = memo.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    if (primitives(value)) return value;
    const out: unknown[] = [];
    memo.set(value, out);
    for (const v of value) out.push(encode(v, memo));
    return out;
  }
  if (value instanceof Map) {
    const out = new Map<unknown, unknown>();
    memo.set(value, out);
    for (const [k, v] of value) out.set(encode(k, memo), encode(v, memo));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set<unknown>();
    memo.set(value, out);
    for (const v of value) out.add(encode(v, memo));
    return out;
  }
  const proto = Object.getPrototypeOf(value) as object | null;
  const out: Record<string, unknown> = {};
  memo.set(value, out);
  if (proto !== Object.prototype && proto !== null) {
    const name = NAME_OF.get(proto);
    if (name === undefined) throw new TypeError(`the simulator state holds an instance of an unlisted class (${(value as object).constructor?.name})`);
    out[CLASS_TAG] = name;
  }
  for (const key of Object.keys(value)) out[key] = encode((value as Record<string, unknown>)[key], memo);
  return out;
}

function decode(value: unknown, memo: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const done = memo.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    if (primitives(value)) return value;
    const out: unknown[] = [];
    memo.set(value, out);
    for (const v of value) out.push(decode(v, memo));
    return out;
  }
  if (value instanceof Map) {
    const out = new Map<unknown, unknown>();
    memo.set(value, out);
    for (const [k, v] of value) out.set(decode(k, memo), decode(v, memo));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set<unknown>();
    memo.set(value, out);
    for (const v of value) out.add(decode(v, memo));
    return out;
  }
  const tag = (value as Partial<Tagged>)[CLASS_TAG];
  const out: Record<string, unknown> = tag === undefined ? {} : (Object.create(CLASSES[tag]!.prototype) as Record<string, unknown>);
  memo.set(value, out);
  for (const key of Object.keys(value)) if (key !== CLASS_TAG) out[key] = decode((value as Record<string, unknown>)[key], memo);
  return out;
}

export function saveGraph(root: object): Uint8Array {
  return serialize(encode(root, new Map()));
}

export function loadGraph<T>(bytes: Uint8Array): T {
  return decode(deserialize(bytes), new Map()) as T;
}
