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
import { LargeUniverse } from './large.js';
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
  LargeUniverse,
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

/** True for a value v8 copies as it is: neither an object nor a function. */
function primitive(v: unknown): boolean {
  return (typeof v !== 'object' || v === null) && typeof v !== 'function';
}

/** True for an array of primitives only (most of the state: per-pool numbers): v8 copies it as it is. */
function primitives(a: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (!primitive(a[i])) return false;
  return true;
}

/** True for a Map or Set whose keys and values are all primitives: v8 copies it as it is. */
function primitiveEntries(m: ReadonlyMap<unknown, unknown> | ReadonlySet<unknown>): boolean {
  for (const [k, v] of m.entries()) if (!primitive(k) || !primitive(v)) return false;
  return true;
}

/**
 * Copies a graph of arrays, Maps, Sets and objects, shared references staying shared; `make` gives
 * the empty copy of an object (a tagged plain object, or an instance on its class's prototype), and
 * the property `skip` is not copied.
 */
function copyGraph(value: unknown, memo: Map<object, unknown>, make: (obj: object) => Record<string, unknown>, skip?: string): unknown {
  if (typeof value === 'function') throw new TypeError('the simulator state holds a function');
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const done = memo.get(value);
  if (done !== undefined) return done;
  const again = (v: unknown) => copyGraph(v, memo, make, skip);
  if (Array.isArray(value)) {
    if (primitives(value)) return value;
    const out: unknown[] = [];
    memo.set(value, out);
    for (const v of value) out.push(again(v));
    return out;
  }
  if (value instanceof Map) {
    if (primitiveEntries(value)) return value;
    const out = new Map<unknown, unknown>();
    memo.set(value, out);
    for (const [k, v] of value) out.set(again(k), again(v));
    return out;
  }
  if (value instanceof Set) {
    if (primitiveEntries(value)) return value;
    const out = new Set<unknown>();
    memo.set(value, out);
    for (const v of value) out.add(again(v));
    return out;
  }
  // A plain object of primitives (a token's or pool's description) needs neither a tag nor a copy.
  const proto = Object.getPrototypeOf(value) as object | null;
  if ((proto === Object.prototype || proto === null) && !(skip !== undefined && skip in value) && primitives(Object.values(value))) return value;
  const out = make(value);
  memo.set(value, out);
  for (const key of Object.keys(value)) if (key !== skip) out[key] = again((value as Record<string, unknown>)[key]);
  return out;
}

/** A class instance becomes a plain object tagged with its class's name. */
function tagged(obj: object): Record<string, unknown> {
  const proto = Object.getPrototypeOf(obj) as object | null;
  if (proto === Object.prototype || proto === null) return {};
  const name = NAME_OF.get(proto);
  if (name === undefined) throw new TypeError(`the simulator state holds an instance of an unlisted class (${obj.constructor?.name})`);
  return { [CLASS_TAG]: name };
}

/** A tagged object becomes an instance of its class, made without running the constructor. */
function untagged(obj: object): Record<string, unknown> {
  const tag = (obj as Partial<Tagged>)[CLASS_TAG];
  return tag === undefined ? {} : (Object.create(CLASSES[tag]!.prototype) as Record<string, unknown>);
}

export function saveGraph(root: object): Uint8Array {
  return serialize(copyGraph(root, new Map(), tagged));
}

export function loadGraph<T>(bytes: Uint8Array): T {
  return copyGraph(deserialize(bytes), new Map(), untagged, CLASS_TAG) as T;
}
