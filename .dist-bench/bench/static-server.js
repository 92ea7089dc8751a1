/**
 * The ceiling for read benchmarks: a uWS server that answers every request with one fixed body of
 * the requested size and the same headers the gateway sends. Run: node static-server.js PORT BYTES
 */
import uWS from 'uWebSockets.js';
const port = Number(process.argv[2]);
const bytes = Number(process.argv[3]);
if (typeof uWS.getParts !== 'function')
    throw new Error('uWebSockets.js native binary did not load');
const body = Buffer.alloc(bytes, 0x20);
body.write('{"static":true}');
uWS
    .App()
    .any('/*', (res) => {
    res.cork(() => {
        res.writeStatus('200 OK').writeHeader('content-type', 'application/json').writeHeader('x-api-plan', 'keyless').end(body);
    });
})
    .listen('127.0.0.1', port, (socket) => {
    if (!socket) {
        process.stderr.write(`cannot listen on ${port}\n`);
        process.exit(1);
    }
    process.stdout.write(`listening ${port}\n`);
});
//# sourceMappingURL=static-server.js.map