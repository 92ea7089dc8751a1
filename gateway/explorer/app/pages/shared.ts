/** What several pages read: the networks (once per key), a network's DEXes. */
import { get, onAccessChange } from '../api.js';
import type { NetworkRow } from '../ui.js';

let networksOnce: Promise<NetworkRow[]> | null = null;
onAccessChange(() => {
  networksOnce = null;
});

/** The networks, read once (again after a failure or a change of key). */
export function networks(signal?: AbortSignal): Promise<NetworkRow[]> {
  if (networksOnce === null) {
    // Not tied to one page: a page that goes away does not cancel what the next one reuses.
    networksOnce = get<NetworkRow[]>('/networks');
    networksOnce.catch(() => {
      networksOnce = null;
    });
  }
  const p = networksOnce;
  if (signal === undefined) return p;
  return new Promise((resolve, reject) => {
    const abort = () => reject(new DOMException('page left', 'AbortError'));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    p.then(resolve, reject);
  });
}

export async function networkName(id: string, signal?: AbortSignal): Promise<string> {
  try {
    return (await networks(signal)).find((n) => n.id === id)?.display_name ?? id;
  } catch {
    return id;
  }
}

export interface DexRow {
  readonly dex_id: string;
  readonly dex_name: string;
  readonly chain: string;
  readonly protocol: string;
  readonly volume_usd_24h: number;
  readonly txns_24h: number;
  readonly pools_count: number;
}

export interface DexPage {
  readonly dexes: DexRow[];
  readonly page_info: { readonly limit: number; readonly page: number; readonly total_items: number; readonly total_pages: number };
}

export function dexes(network: string, page: number, limit: number, signal?: AbortSignal): Promise<DexPage> {
  return get<DexPage>(`/networks/${encodeURIComponent(network)}/dexes`, { page, limit }, signal);
}
