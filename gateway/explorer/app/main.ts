/**
 * The explorer's start: the session (which key to use), the header's search and key panel, and the
 * page router (history API under /explorer/, links opened in place, focus moved to each new page's
 * heading so keyboard and screen-reader users land on it).
 */
import { access, enterKey, explorerSession, forgetKey, isAbort, onAccessChange, onNotice, start, usage, type Access } from './api.js';
import { fill, h } from './dom.js';
import * as fmt from './format.js';
import { homePage } from './pages/home.js';
import { networkPage } from './pages/network.js';
import { poolPage } from './pages/pool.js';
import { searchPage } from './pages/search.js';
import { tokenPage } from './pages/token.js';
import { BASE, parseRoute, paths, setNavigator } from './router.js';
import { heading, problem, Scope } from './ui.js';

const main = document.getElementById('main') as HTMLElement;
const notice = document.getElementById('notice') as HTMLElement;
const keyBox = document.getElementById('key') as HTMLDetailsElement;
const keySummary = keyBox.querySelector('summary') as HTMLElement;
const keyPanel = document.getElementById('key-panel') as HTMLElement;
const quick = document.getElementById('quick') as HTMLFormElement;

// A page that goes away abandons its requests: nothing to report.
window.addEventListener('unhandledrejection', (e) => {
  if (isAbort(e.reason)) e.preventDefault();
});

let scope: Scope | null = null;
let shownPath = '';

async function render(): Promise<void> {
  scope?.dispose();
  const s = new Scope();
  scope = s;
  shownPath = location.pathname + location.search;
  const route = parseRoute(location.pathname, location.search);
  document.title = 'dexdata explorer';
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav.sections a')) {
    const here = a.pathname === location.pathname && (a.search === '' || a.search === location.search || (route.name === 'search' && route.params.get('kind') === new URLSearchParams(a.search).get('kind')));
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  try {
    switch (route.name) {
      case 'home':
        await homePage(main, s);
        break;
      case 'network':
        await networkPage(main, s, route.network);
        break;
      case 'search':
        await searchPage(main, s, route.params);
        break;
      case 'pool':
        await poolPage(main, s, route.network, route.address, new URLSearchParams(location.search));
        break;
      case 'token':
        await tokenPage(main, s, route.network, route.address, new URLSearchParams(location.search));
        break;
      default:
        fill(main, heading('Not found'), h('p', null, 'The explorer has no page here. ', h('a', { href: paths.home() }, 'Back to the markets')));
    }
  } catch (err) {
    if (!isAbort(err) && s.alive) main.append(problem(err, 'The page failed'));
  }
}

/** Moves to `href` (a path of the explorer) without reloading. */
function go(href: string, replace = false): void {
  if (href === location.pathname + location.search && !replace) return;
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.scrollTo(0, 0);
  void render();
  // The new page's heading is there as soon as it starts: focus moves to it from the link that was followed.
  document.getElementById('page-title')?.focus({ preventScroll: true });
}
setNavigator((href) => go(href));

document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE) || url.pathname.startsWith(`${BASE}assets/`)) return;
  e.preventDefault();
  go(url.pathname + url.search);
});
window.addEventListener('popstate', () => {
  if (location.pathname + location.search !== shownPath) void render();
});

quick.addEventListener('submit', (e) => {
  e.preventDefault();
  const q = (new FormData(quick).get('q') ?? '').toString().trim();
  go(paths.search(q ? { q } : {}));
});

// ---- notices (rate limits, credits) ----
let noticeTimer = 0;
onNotice((message) => {
  notice.textContent = message;
  notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = window.setTimeout(() => {
    notice.hidden = true;
  }, 15_000);
});

// ---- the key panel ----
function planLine(a: Access): string {
  const from = a.source === 'explorer' ? 'the explorer’s key' : a.source === 'entered' ? 'your key' : 'no key';
  return `${a.plan} plan · ${from}`;
}

function renderKeyPanel(a: Access): void {
  keySummary.textContent = `Key: ${a.plan} plan`;
  keySummary.setAttribute('aria-label', `Key and plan: ${planLine(a)}`);
  const session = explorerSession();
  const usageLine = h('p', { class: 'muted small', id: 'usage-line' }, '');
  const input = h('input', { id: 'key-input', type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false', placeholder: 'api_…', required: true });
  const message = h('p', { class: 'small', role: 'status' });
  const form = h(
    'form',
    { class: 'key-form' },
    h('label', { for: 'key-input' }, 'Use another API key'),
    h('div', { class: 'inline' }, input, h('button', { type: 'submit' }, 'Use key')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    message.textContent = 'Checking the key…';
    enterKey(input.value).then(
      (x) => {
        message.textContent = `Using your key: ${x.plan} plan.`;
        input.value = '';
      },
      (err: unknown) => {
        message.textContent = `The key was not accepted: ${err instanceof Error ? err.message : String(err)}`;
      },
    );
  });
  fill(
    keyPanel,
    h('p', null, h('strong', null, planLine(a))),
    usageLine,
    a.source === 'explorer'
      ? h('p', { class: 'small' }, 'The service handed this page a key of its explorer plan: your requests are metered on it like any other key’s (see /usage). The operator sets its limits or switches it off in the config.')
      : a.source === 'none' && session?.reason
        ? h('p', { class: 'small' }, `No explorer key: ${session.reason}. Without a key the interface’s keyless limits apply.`)
        : null,
    form,
    a.source === 'entered' ? h('button', { type: 'button', onclick: () => forgetKey() }, 'Forget my key') : null,
    message,
    h('p', { class: 'muted small' }, 'A key you enter is kept in this browser only (localStorage) and sent only to this service, in the Authorization header.'),
  );
}

keyBox.addEventListener('toggle', () => {
  if (!keyBox.open) return;
  const line = document.getElementById('usage-line');
  if (line === null) return;
  line.textContent = 'Reading usage…';
  usage().then(
    (u) => {
      line.textContent = `${fmt.count(u.credits_used)} of ${fmt.count(u.credits_limit)} credits used, ${fmt.count(u.requests_per_minute)} requests a minute, ${fmt.count(u.concurrent_streams)} streams; resets ${fmt.dateTime(u.resets_at)}.`;
    },
    (err: unknown) => {
      line.textContent = `Usage not read: ${err instanceof Error ? err.message : String(err)}`;
    },
  );
});

onAccessChange((a) => {
  renderKeyPanel(a);
  // What a page shows depends on the plan: show it again with the new key.
  if (scope !== null) void render();
});

start().then(
  () => {
    renderKeyPanel(access());
    void render().then(() => undefined);
  },
  (err: unknown) => fill(main, heading('The explorer could not start'), problem(err, 'The session could not be read')),
);
