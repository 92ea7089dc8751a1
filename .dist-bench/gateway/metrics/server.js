/**
 * The operator port: GET /metrics in the Prometheus text format, on its own listener (loopback by
 * default), never on the public hosts. Other paths answer 404 JSON.
 */
import uWS from 'uWebSockets.js';
import { errorText, fallbackLog } from '../../engine/log.js';
import { INTERNAL_ERROR, routeNotFound } from '../errors.js';
export const METRICS_PATH = '/metrics';
export function startMetricsServer(registry, host, port, log = fallbackLog()) {
    const app = uWS.App();
    app.get(METRICS_PATH, (res) => {
        let aborted = false;
        res.onAborted(() => {
            aborted = true;
        });
        registry.metrics().then((text) => {
            if (!aborted)
                res.cork(() => res.writeHeader('content-type', registry.contentType).end(text));
        }, (err) => {
            log.error({ path: METRICS_PATH }, `metrics: scrape failed: ${errorText(err)}`);
            if (!aborted)
                res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('content-type', 'application/json').end(INTERNAL_ERROR.body));
        });
    });
    app.any('/*', (res, req) => {
        const err = routeNotFound(req.getMethod().toUpperCase(), req.getUrl());
        res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json').end(err.body);
    });
    return new Promise((resolve, reject) => {
        app.listen(host, port, (token) => {
            if (token === false) {
                reject(new Error(`metrics: cannot listen on ${host}:${port}`));
                return;
            }
            resolve({
                port: uWS.us_socket_local_port(token),
                close() {
                    uWS.us_listen_socket_close(token);
                    app.close?.();
                },
            });
        });
    });
}
//# sourceMappingURL=server.js.map