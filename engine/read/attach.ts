/**
 * A reader on another thread: the engine's shared buffers and the catalog's, plus the networks by
 * chain index (they are plain records, posted once), attached without copying.
 */
import { Catalog, type CatalogBuffers } from '../catalog/catalog.js';
import { EngineViews, type EngineBuffers } from '../state/views.js';
import type { NetworkRecord } from '../store/store.js';
import { EngineReader } from './reader.js';

/** What a thread needs to attach its own reader (structured-clonable: shared buffers and records). */
export interface ReaderBuffers {
  readonly engine: EngineBuffers;
  readonly catalog: CatalogBuffers;
  /** Networks by chain index. */
  readonly networks: readonly NetworkRecord[];
}

/** The buffers a reader on another thread attaches to (see attachEngineReader). */
export function readerBuffers(read: EngineReader): ReaderBuffers {
  return { engine: read.buffers, catalog: read.catalog.buffers, networks: read.catalog.networks.map(({ dexes: _, ...n }) => n) };
}

/** A reader over buffers another thread shares (no store and no search shards: stream reads, lookups, prices). */
export function attachEngineReader(b: ReaderBuffers): EngineReader {
  const views = EngineViews.attach(b.engine);
  return new EngineReader({ views, registry: Catalog.attach(b.catalog, views, b.networks) });
}
