/** The first page: every network with its 24 h figures, and the pools and tokens trading most. */
import { get } from '../api.js';
import { fill, h, link, table, td } from '../dom.js';
import * as fmt from '../format.js';
import { paths } from '../router.js';
import { attempt, heading, loading, POOL_HEADERS, poolRow, TOKEN_HEADERS, tokenRow, type NetworkRow, type PoolRow, type Scope, type TokenRow } from '../ui.js';
import { networks } from './shared.js';

export async function homePage(main: HTMLElement, scope: Scope): Promise<void> {
  const nets = h('section', { 'aria-labelledby': 'nets-h' }, h('h2', { id: 'nets-h' }, 'Networks'), loading('networks'));
  const pools = h('section', { 'aria-labelledby': 'pools-h' }, h('h2', { id: 'pools-h' }, 'Most traded pools'), loading('pools'));
  const tokens = h('section', { 'aria-labelledby': 'tokens-h' }, h('h2', { id: 'tokens-h' }, 'Most traded tokens'), loading('tokens'));
  fill(main, heading('Markets', 'networks, pools and tokens, live from this service'), nets, pools, tokens);

  // The three tables are read at once, each filled when its answer comes.
  const showNetworks = async (): Promise<void> => {
    const list = await attempt(scope, nets, 'Networks could not be read', () => networks(scope.signal));
    if (list === undefined) return;
    const rows = [...list]
      .sort((a, b) => b.volume_usd_24h - a.volume_usd_24h)
      .map((n: NetworkRow) =>
        h('tr', null, h('th', { scope: 'row' }, link(paths.network(n.id), n.display_name)), td(fmt.usd(n.volume_usd_24h, true), 'num'), td(fmt.count(n.txns_24h), 'num'), td(fmt.count(n.pools_count), 'num')),
      );
    fill(nets, h('h2', { id: 'nets-h' }, 'Networks'), table('Networks by 24 h volume', ['Network', ['Volume 24 h', 'num'], ['Txns 24 h', 'num'], ['Pools', 'num']], rows));
  };
  const showPools = async (): Promise<void> => {
    const top = await attempt(scope, pools, 'Pools could not be read', () => get<{ results: PoolRow[] }>('/pools/search', { limit: 10, order_by: 'volume_usd_24h' }, scope.signal));
    if (top === undefined) return;
    fill(
      pools,
      h('h2', { id: 'pools-h' }, 'Most traded pools'),
      table('Pools by 24 h volume, all networks', POOL_HEADERS, top.results.map((p) => poolRow(p, true))),
      h('p', null, link(paths.search({ kind: 'pools' }), 'Search and filter pools →')),
    );
  };
  const showTokens = async (): Promise<void> => {
    const best = await attempt(scope, tokens, 'Tokens could not be read', () => get<{ results: TokenRow[] }>('/tokens/search', { limit: 10, order_by: 'volume_usd_24h' }, scope.signal));
    if (best === undefined) return;
    fill(
      tokens,
      h('h2', { id: 'tokens-h' }, 'Most traded tokens'),
      table('Tokens by 24 h volume, all networks', TOKEN_HEADERS, best.results.map((t) => tokenRow(t, true))),
      h('p', null, link(paths.search({ kind: 'tokens' }), 'Search and filter tokens →')),
    );
  };
  await Promise.all([showNetworks(), showPools(), showTokens()]);
}
