/**
 * Server-sent events over fetch (EventSource sends no Authorization header): the stream is read as
 * text, split into events, and reconnected after it ends with Last-Event-ID (the service first sends
 * what was missed) and an exponential backoff. A refusal (4xx) ends it, except 429, which is retried
 * after its Retry-After.
 */
import { access, renewExplorerKey, type Access } from './api.js';

export interface StreamEvent {
  readonly event: string;
  readonly id: string | null;
  readonly data: unknown;
}

export interface StreamHandlers {
  /** Data events, and `warning` events. */
  onEvent(e: StreamEvent): void;
  /** 'live' when connected, 'retrying' between connections, 'stopped' with the reason when refused. */
  onState?(state: 'live' | 'retrying' | 'stopped', message?: string): void;
}

export interface Stream {
  close(): void;
}

const MAX_BACKOFF_MS = 30_000;

/** Opens `path` (with its query) on the stream host of the key in use; POST when `body` is given. */
export function openStream(path: string, handlers: StreamHandlers, body?: unknown, a: Access = access()): Stream {
  const controller = new AbortController();
  let lastId: string | null = null;
  let retryMs = 1000;
  let backoff = retryMs;
  let closed = false;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      controller.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });

  async function once(): Promise<'again' | 'stop'> {
    const headers: Record<string, string> = {};
    if (a.key) headers['Authorization'] = a.key;
    if (lastId !== null) headers['Last-Event-ID'] = lastId;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${a.stream}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: controller.signal,
      cache: 'no-store',
    });
    if (!res.ok || res.body === null) {
      const text = await res.text();
      let message = `the stream host answered ${res.status}`;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        // not JSON
      }
      if (res.status === 429) {
        handlers.onState?.('retrying', message);
        await wait(Math.max(1, Number(res.headers.get('retry-after') ?? 5)) * 1000);
        return 'again';
      }
      if (res.status === 401 && a.key === access().key) renewExplorerKey();
      handlers.onState?.(res.status >= 500 ? 'retrying' : 'stopped', message);
      return res.status >= 500 ? 'again' : 'stop';
    }
    handlers.onState?.('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let event = 'message';
    let id: string | null = null;
    let data: string[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'again';
      buffer += value;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length > 0) {
            if (id !== null) lastId = id;
            backoff = retryMs;
            const text = data.join('\n');
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // plain text
            }
            if (event === 'error') {
              handlers.onState?.('retrying', (parsed as { message?: string }).message ?? String(parsed));
            } else if (event !== 'ping') handlers.onEvent({ event, id, data: parsed });
          }
          event = 'message';
          id = null;
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = v;
        else if (field === 'data') data.push(v);
        else if (field === 'id') id = v;
        else if (field === 'retry' && /^\d+$/.test(v)) retryMs = backoff = Number(v);
      }
    }
  }

  void (async () => {
    while (!closed) {
      let next: 'again' | 'stop';
      try {
        next = await once();
      } catch {
        next = 'again';
      }
      if (closed || next === 'stop') return;
      handlers.onState?.('retrying');
      await wait(backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  })();

  return {
    close() {
      closed = true;
      controller.abort();
    },
  };
}
