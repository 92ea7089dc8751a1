/** A network: its DEXes by 24 h volume (paged) and its most traded pools. */
import { enc, get } from '../api.js';
import { fill, h, link, table, td } from '../dom.js';
import * as fmt from '../format.js';
import { paths } from '../router.js';
import { attempt, breadcrumbs, heading, loading, POOL_HEADERS, poolRow, type PoolRow, type Scope } from '../ui.js';
import { dexes, networkName } from './shared.js';

const DEXES_PER_PAGE = 20;

export async function networkPage(main: HTMLElement, scope: Scope, network: string): Promise<void> {
  const title = heading(network);
  const dexSection = h('section', { 'aria-labelledby': 'dex-h' }, h('h2', { id: 'dex-h' }, 'DEXes'), loading('DEXes'));
  const poolSection = h('section', { 'aria-labelledby': 'np-h' }, h('h2', { id: 'np-h' }, 'Most traded pools'), loading('pools'));
  fill(main, breadcrumbs(['Markets', paths.home()], network), title, dexSection, poolSection);
  void networkName(network, scope.signal).then((name) => {
    if (!scope.alive) return;
    title.firstChild!.textContent = name;
    document.title = `${name} · dexdata explorer`;
    main.querySelector('.crumbs li:last-child span')!.textContent = name;
  });

  const showDexes = async (page: number): Promise<void> => {
    const r = await attempt(scope, dexSection, 'DEXes could not be read', () => dexes(network, page, DEXES_PER_PAGE, scope.signal));
    if (r === undefined) return;
    const rows = r.dexes.map((d) =>
      h(
        'tr',
        null,
        h('th', { scope: 'row' }, d.dex_name),
        td(d.protocol),
        td(fmt.usd(d.volume_usd_24h, true), 'num'),
        td(fmt.count(d.txns_24h), 'num'),
        td(fmt.count(d.pools_count), 'num'),
        td(link(paths.search({ kind: 'pools', network, dex: d.dex_id }), h('span', null, 'Pools'), h('span', { class: 'sr-only' }, ` of ${d.dex_name}`))),
      ),
    );
    const info = r.page_info;
    const pager = info.total_pages <= 1 ? null : h(
      'div',
      { class: 'pager' },
      h('button', { type: 'button', disabled: info.page <= 1, onclick: () => void showDexes(info.page - 1) }, '← Previous'),
      h('span', { class: 'muted' }, `Page ${info.page} of ${Math.max(1, info.total_pages)} · ${fmt.count(info.total_items)} DEXes`),
      h('button', { type: 'button', disabled: info.page >= info.total_pages, onclick: () => void showDexes(info.page + 1) }, 'Next →'),
    );
    fill(dexSection, h('h2', { id: 'dex-h' }, 'DEXes'), table('DEXes by 24 h volume', ['DEX', 'Protocol', ['Volume 24 h', 'num'], ['Txns 24 h', 'num'], ['Pools', 'num'], ''], rows), pager);
  };
  await showDexes(1);

  const pools = await attempt(scope, poolSection, 'Pools could not be read', () =>
    get<{ results: PoolRow[] }>(`/networks/${enc(network)}/pools/search`, { limit: 15, order_by: 'volume_usd_24h' }, scope.signal),
  );
  if (pools !== undefined) {
    fill(
      poolSection,
      h('h2', { id: 'np-h' }, 'Most traded pools'),
      table('Pools of the network by 24 h volume', POOL_HEADERS, pools.results.map((p) => poolRow(p, false))),
      h('p', null, link(paths.search({ kind: 'pools', network }), 'All pools of this network, with filters →')),
    );
  }
}
