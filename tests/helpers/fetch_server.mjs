// fetch_server.mjs — the local HTTP server that session_fetch's tests fetch from.
// Imported by tests/mcp/fetch.test.mjs; run as a script by tests/suites/62-fetch
// (`node fetch_server.mjs [HOST]` prints the port on stdout, serves until killed).
//
//   /hello                  200 text/plain "hello world\n"
//   /json                   200 application/json
//   /status/N               status N, text/html body
//   /redirect?to=U&code=C   C (302) with Location: U (body is 1 MiB of 'R')
//   /chain/N                302 -> /chain/N-1 ... /chain/0 200 "end of chain\n"
//   /big?n=B[&chunked=1]    B bytes of 'x', with Content-Length unless chunked
//   /stall                  headers + 5 bytes, then nothing (never ends)
//   /hang                   never answers
//   /noloc                  302 without Location (a final response)
//   /twoloc                 302 with two Location headers
//   /headers                200 application/json: the request headers
import http from 'node:http';
import { fileURLToPath } from 'node:url';

function handle(req, res) {
  const u = new URL(req.url, 'http://x');
  const p = u.pathname;
  if (p === '/hello') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    return res.end('hello world\n');
  }
  if (p === '/json') {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    return res.end('{"a":1}\n');
  }
  let m = p.match(/^\/status\/(\d+)$/);
  if (m) {
    res.writeHead(Number(m[1]), { 'Content-Type': 'text/html' });
    return res.end('<p>status ' + m[1] + '</p>\n');
  }
  if (p === '/redirect') {
    const code = Number(u.searchParams.get('code') || 302);
    res.writeHead(code, { Location: u.searchParams.get('to') || '/hello', 'Content-Type': 'text/plain' });
    return res.end('R'.repeat(1 << 20));
  }
  m = p.match(/^\/chain\/(\d+)$/);
  if (m) {
    const n = Number(m[1]);
    if (n === 0) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return res.end('end of chain\n');
    }
    res.writeHead(302, { Location: '/chain/' + (n - 1) });
    return res.end();
  }
  if (p === '/big') {
    const n = Number(u.searchParams.get('n') || 0);
    const headers = { 'Content-Type': 'application/octet-stream' };
    if (!u.searchParams.get('chunked')) headers['Content-Length'] = String(n);
    res.writeHead(200, headers);
    const block = Buffer.alloc(65536, 'x');
    let left = n;
    const pump = () => {
      while (left > 0) {
        const k = Math.min(left, block.length);
        left -= k;
        if (!res.write(block.subarray(0, k))) return res.once('drain', pump);
      }
      res.end();
    };
    res.on('error', () => {});
    return pump();
  }
  if (p === '/stall') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    return res.write('start');
  }
  if (p === '/hang') return;
  if (p === '/noloc') {
    res.writeHead(302, { 'Content-Type': 'text/plain' });
    return res.end('no location\n');
  }
  if (p === '/twoloc') {
    res.setHeader('Location', ['/hello', '/json']);
    res.writeHead(302);
    return res.end();
  }
  if (p === '/headers') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify(req.headers) + '\n');
  }
  res.writeHead(404, { 'Content-Type': 'text/plain' });
  res.end('no such path\n');
}

// Starts a server on host (127.0.0.1) and a free port; resolves to
// { port, url(path), close() }. Stalled connections are destroyed on close.
export function startFetchServer(host = '127.0.0.1') {
  const sockets = new Set();
  const server = http.createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      const port = server.address().port;
      resolve({
        port,
        url: (path) => `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const srv = await startFetchServer(process.argv[2] || '127.0.0.1');
  process.stdout.write(`${srv.port}\n`);
  process.on('SIGTERM', () => srv.close().then(() => process.exit(0)));
}
