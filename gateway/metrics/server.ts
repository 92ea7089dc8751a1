/**
 * The operator port: GET /metrics in the Prometheus text format, on its own listener (loopback by
 * default), never on the public hosts. Other paths answer 404 JSON.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Registry } from 'prom-client';
import { errorText, fallbackLog, type Log } from '../../engine/read/index.js';
import { INTERNAL_ERROR, routeNotFound } from '../errors.js';
import { ListenError, listenExclusive, listenPort } from '../http/listen.js';

export const METRICS_PATH = '/metrics';

export interface MetricsServer {
  readonly port: number;
  close(): void;
}

export function startMetricsServer(registry: Registry, host: string, port: number, log: Log = fallbackLog()): Promise<MetricsServer> {
  const app = uWS.App();
  app.get(METRICS_PATH, (res: HttpResponse) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    registry.metrics().then(
      (text) => {
        if (!aborted) res.cork(() => res.writeHeader('content-type', registry.contentType).end(text));
      },
      (err: unknown) => {
        log.error({ path: METRICS_PATH }, `metrics: scrape failed: ${errorText(err)}`);
        if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('content-type', 'application/json').end(INTERNAL_ERROR.body));
      },
    );
  });
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const err = routeNotFound(req.getMethod().toUpperCase(), req.getUrl());
    res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json').end(err.body);
  });
  return new Promise((resolve, reject) => {
    listenExclusive(app, host, port, (token) => {
      if (token === false) {
        reject(new ListenError(`metrics: cannot listen on ${host}:${port}${port === 0 ? '' : ': the port is in use or the address is not this machine\'s'}`));
        return;
      }
      resolve({
        port: listenPort(token),
        close() {
          uWS.us_listen_socket_close(token);
          (app as unknown as { close?: () => void }).close?.();
        },
      });
    });
  });
}
