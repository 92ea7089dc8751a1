/** A few DOM helpers: elements from a tag, attributes and children, without a framework. */

export type Child = Node | string | number | null | undefined | false | readonly Child[];
type Attr = string | number | boolean | null | undefined | ((e: Event) => void);
export type Attrs = Readonly<Record<string, Attr>>;

/** `h('a', { href, class: 'x', onclick }, 'text', child)`: attributes false/null/undefined are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      if (typeof value === 'function') el.addEventListener(name.slice(2), value);
      else if (name === 'class') el.className = String(value);
      else el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c as readonly Child[]);
    else parent.appendChild(typeof c === 'object' ? (c as Node) : document.createTextNode(String(c)));
  }
}

/** Replaces the element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A link inside the explorer: a plain anchor the router intercepts (so it can be opened in a new tab too). */
export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href }, ...children);
}

/**
 * A table with a caption (visually hidden when `hiddenCaption`), header cells and rows, in a box
 * that scrolls sideways when the screen is narrower than the table.
 */
export function table(caption: string, headers: readonly (string | readonly [string, string])[], rows: readonly HTMLTableRowElement[], hiddenCaption = true): HTMLDivElement {
  const t = h(
    'table',
    null,
    h('caption', { class: hiddenCaption ? 'sr-only' : null }, caption),
    h('thead', null, h('tr', null, headers.map((x) => (typeof x === 'string' ? h('th', { scope: 'col' }, x) : h('th', { scope: 'col', class: x[1] }, x[0]))))),
    h('tbody', null, rows),
  );
  return h('div', { class: 'tw' }, t);
}

/** A table cell; `num` right-aligns it with tabular figures. */
export function td(content: Child, cls?: string): HTMLTableCellElement {
  return h('td', cls ? { class: cls } : null, content);
}
