/** The explorer's own paths under /explorer/, read from and written to the address bar. */

export const BASE = '/explorer/';

export type Route =
  | { readonly name: 'home' }
  | { readonly name: 'network'; readonly network: string }
  | { readonly name: 'search'; readonly params: URLSearchParams }
  | { readonly name: 'pool'; readonly network: string; readonly address: string }
  | { readonly name: 'token'; readonly network: string; readonly address: string }
  | { readonly name: 'not_found'; readonly path: string };

export function parseRoute(pathname: string, search: string): Route {
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname.replace(/^\/explorer\/?/, '');
  const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  if (parts.length === 0) return { name: 'home' };
  if (parts[0] === 'search' && parts.length === 1) return { name: 'search', params: new URLSearchParams(search) };
  if (parts[0] === 'networks' && parts.length === 2) return { name: 'network', network: parts[1]! };
  if (parts[0] === 'pools' && parts.length === 3) return { name: 'pool', network: parts[1]!, address: parts[2]! };
  if (parts[0] === 'tokens' && parts.length === 3) return { name: 'token', network: parts[1]!, address: parts[2]! };
  return { name: 'not_found', path };
}

const e = encodeURIComponent;
export const paths = {
  home: () => BASE,
  network: (network: string) => `${BASE}networks/${e(network)}`,
  pool: (network: string, address: string) => `${BASE}pools/${e(network)}/${e(address)}`,
  token: (network: string, address: string) => `${BASE}tokens/${e(network)}/${e(address)}`,
  search: (params: Readonly<Record<string, string>> | URLSearchParams) => {
    const q = params instanceof URLSearchParams ? params : new URLSearchParams(params);
    const text = q.toString();
    return `${BASE}search${text ? `?${text}` : ''}`;
  },
};

let navigator: (href: string) => void = (href) => location.assign(href);

/** Registers how the page moves to another of its paths (main.ts). */
export function setNavigator(f: (href: string) => void): void {
  navigator = f;
}

/** Shows another of the explorer's paths. */
export function navigate(href: string): void {
  navigator(href);
}
