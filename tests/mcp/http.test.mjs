// http.test.mjs — the Streamable HTTP transport's rules, checked with plain
// fetch: Accept (406), Content-Type (415), Mcp-Session-Id (400/404), DELETE,
// MCP-Protocol-Version (400), Origin and Host (403: DNS rebinding), the
// bearer token (401), GET (405), notifications (202), the body cap (413).
import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';

import { INIT, sharedServers, start } from './lib.mjs';

const JSON_SSE = 'application/json, text/event-stream';

function post(url, body, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: JSON_SSE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function initSession(url, headers = {}) {
  const r = await post(url, INIT(1), headers);
  assert.equal(r.status, 200);
  const sid = r.headers.get('mcp-session-id');
  assert.match(sid, /^[0-9a-f]{32}$/);
  const body = await r.json();
  assert.equal(body.result.protocolVersion, '2025-11-25');
  const n = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'Mcp-Session-Id': sid, ...headers });
  assert.equal(n.status, 202);
  assert.equal(await n.text(), '');
  return sid;
}

/** A raw request with a Host header of our choosing (fetch sets its own). */
function rawRequest(url, { method = 'POST', headers = {}, body = '' } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function withHttp(opts, fn) {
  const srv = await start('http', { config: '', ...opts });
  try {
    return await fn(srv, srv.url);
  } finally {
    await srv.close();
  }
}

/* The tests with the server's defaults share one server (sharedServers):
 * each opens MCP sessions of its own on it (initSession), and none counts
 * or limits them; the body cap and the token keep servers of their own. */
const withShared = sharedServers({ config: '' });
const withSharedHttp = (fn) => withShared('http', (srv) => fn(srv, srv.url));

test('http: initialize issues an Mcp-Session-Id that later requests must carry', async () => {
  await withSharedHttp(async (srv, url) => {
    const sid = await initSession(url);
    const ok = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type'), /^application\/json/);
    assert.equal((await ok.json()).result.tools.length, 21);
    const none = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    assert.equal(none.status, 400);
    assert.match((await none.json()).error.message, /Mcp-Session-Id/);
    const unknown = await post(url, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { 'Mcp-Session-Id': 'f'.repeat(32) });
    assert.equal(unknown.status, 404);
  });
});

test('http: DELETE ends the MCP session', async () => {
  await withSharedHttp(async (srv, url) => {
    const sid = await initSession(url);
    assert.equal((await fetch(url, { method: 'DELETE' })).status, 400);
    const del = await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
    assert.equal(del.status, 200);
    const after = await post(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'Mcp-Session-Id': sid });
    assert.equal(after.status, 404);
    assert.equal((await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } })).status, 404);
  });
});

test('http: Accept must list application/json and text/event-stream (406)', async () => {
  await withSharedHttp(async (srv, url) => {
    assert.equal((await post(url, INIT(1), { Accept: 'application/json' })).status, 406);
    assert.equal((await post(url, INIT(1), { Accept: 'text/html' })).status, 406);
    assert.equal((await post(url, INIT(1), { Accept: '*/*' })).status, 200);
    assert.equal((await post(url, INIT(1), { Accept: 'application/*, text/*;q=0.5' })).status, 200);
  });
});

test('http: Content-Type must be application/json (415)', async () => {
  await withSharedHttp(async (srv, url) => {
    assert.equal((await post(url, INIT(1), { 'Content-Type': 'text/plain' })).status, 415);
    assert.equal((await post(url, INIT(1), { 'Content-Type': 'application/jsonx' })).status, 415);
    assert.equal((await post(url, INIT(1), { 'Content-Type': 'application/json; charset=utf-8' })).status, 200);
  });
});

test('http: a foreign Origin or Host is refused with 403 (DNS rebinding)', async () => {
  await withSharedHttp(async (srv, url) => {
    const port = new URL(url).port;
    for (const origin of ['http://evil.example', `http://evil.example:${port}`, 'null',
      `https://127.0.0.1:${port}`, `http://127.0.0.1:${Number(port) + 1}`]) {
      const r = await post(url, INIT(1), { Origin: origin });
      assert.equal(r.status, 403, origin);
      assert.match((await r.json()).error.message, /Origin/);
    }
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]) {
      assert.equal((await post(url, INIT(1), { Origin: origin })).status, 200, origin);
    }
    const h = { 'Content-Type': 'application/json', Accept: JSON_SSE };
    assert.equal((await rawRequest(url, { headers: { ...h, Host: `evil.example:${port}` }, body: INIT(1) })).status, 403);
    assert.equal((await rawRequest(url, { headers: { ...h, Host: `attacker.127.0.0.1.nip.io:${port}` }, body: INIT(1) })).status, 403);
    assert.equal((await rawRequest(url, { headers: { ...h, Host: `localhost:${port}` }, body: INIT(1) })).status, 200);
  });
});

test('http: MCP-Protocol-Version is checked (400 when unsupported)', async () => {
  await withSharedHttp(async (srv, url) => {
    const sid = await initSession(url);
    const ping = (v) => post(url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': v });
    assert.equal((await ping('1999-01-01')).status, 400);
    assert.equal((await ping('not-a-version')).status, 400);
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) assert.equal((await ping(v)).status, 200, v);
  });
});

test('http: GET offers no stream (405), other paths 404, notifications 202, bad JSON 400', async () => {
  await withSharedHttp(async (srv, url) => {
    const g = await fetch(url, { headers: { Accept: 'text/event-stream' } });
    assert.equal(g.status, 405);
    assert.match(g.headers.get('allow'), /POST/);
    assert.equal((await post(url.replace('/mcp', '/other'), INIT(1))).status, 404);
    const sid = await initSession(url);
    assert.equal((await post(url, { jsonrpc: '2.0', method: 'notifications/whatever' }, { 'Mcp-Session-Id': sid })).status, 202);
    const bad = await post(url, '{"jsonrpc":', { 'Mcp-Session-Id': sid });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.code, -32700);
    const batch = await post(url, '[]', { 'Mcp-Session-Id': sid });
    assert.equal(batch.status, 400);
    assert.equal((await batch.json()).error.code, -32600);
  });
});

test('http: the body cap refuses larger requests with 413', async () => {
  await withHttp({ args: ['--max-message', '4096'] }, async (srv, url) => {
    const sid = await initSession(url);
    const big = { jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(10000) } };
    assert.equal((await post(url, big, { 'Mcp-Session-Id': sid })).status, 413);
    assert.equal((await post(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'Mcp-Session-Id': sid })).status, 200);
  });
});

test('http: with --token-file every request needs the bearer token (401), compared exactly', async () => {
  const token = 'tok-0123456789abcdef-secret';
  await withHttp({ token }, async (srv, url) => {
    // the SDK client in start() authenticated and works
    assert.equal((await srv.call('session_list', {})).count, 0);
    const no = await post(url, INIT(1));
    assert.equal(no.status, 401);
    assert.match(no.headers.get('www-authenticate'), /^Bearer/);
    for (const bad of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, 'Bearer ', `Basic ${token}`, token]) {
      assert.equal((await post(url, INIT(1), { Authorization: bad })).status, 401, bad);
    }
    assert.equal((await post(url, INIT(1), { Authorization: `Bearer ${token}` })).status, 200);
    // the Origin check comes first: a token does not make a foreign page acceptable
    assert.equal((await post(url, INIT(1), { Authorization: `Bearer ${token}`, Origin: 'http://evil.example' })).status, 403);
  });
});

test('http: a progress token turns a tools/call response into an event stream', async () => {
  await withSharedHttp(async (srv, url) => {
    const sid = await initSession(url);
    const h = { 'Mcp-Session-Id': sid };
    const cs = await (await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_session', arguments: {} } }, h)).json();
    const session_id = cs.result.structuredContent.session_id;
    const r = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/call',
      params: { name: 'session_bash', arguments: { session_id, command: 'sleep 1.3; echo x' }, _meta: { progressToken: 'p1' } } }, h);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/event-stream/);
    const events = (await r.text()).split('\n\n').filter(Boolean).map((e) => JSON.parse(e.match(/^data: (.*)$/m)[1]));
    assert.equal(events[0].method, 'notifications/progress');
    assert.equal(events[0].params.progressToken, 'p1');
    const last = events[events.length - 1];
    assert.equal(last.id, 3);
    assert.equal(last.result.structuredContent.stdout, 'x\n');
  });
});

// The status rule (docs/runtime.md): 400 only for a message that is not a
// usable JSON-RPC request; any response to a well-formed request, error or
// not, comes with 200 — whatever the error, and on both transports the same
// code (protocol.test.mjs checks stdio).
test('http: a JSON-RPC error to a well-formed request comes with 200; only an unusable message gets 400', async () => {
  await withSharedHttp(async (srv, url) => {
    const sid = await initSession(url);
    const h = { 'Mcp-Session-Id': sid };
    const cases = [
      [{ jsonrpc: '2.0', id: 2, method: 'tools/list', params: [1] }, 200, -32602], // params not an object
      [{ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 5 } }, 200, -32602],
      [{ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } }, 200, -32602],
      [{ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'no_such_tool' } }, 200, -32602],
      [{ jsonrpc: '2.0', id: 6, method: 'resources/list' }, 200, -32601],
      ['{"jsonrpc":"2.0","id":7,"method":', 400, -32700],
      [{ jsonrpc: '1.0', id: 8, method: 'ping' }, 400, -32600],
      ['[{"jsonrpc":"2.0","id":9,"method":"ping"}]', 400, -32600],
    ];
    for (const [msg, status, code] of cases) {
      const r = await post(url, msg, h);
      const body = await r.json();
      assert.equal(r.status, status, JSON.stringify(msg));
      assert.equal(body.error.code, code, JSON.stringify(msg));
    }
    // a notification with bad params is not answered: 202, as any notification
    const n = await post(url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: [1] }, h);
    assert.equal(n.status, 202);
  });
});

test('http: a second initialize on an MCP session is refused with -32600 and makes no new session', async () => {
  await withSharedHttp(async (srv, url) => {
    const sid = await initSession(url);
    const r = await post(url, INIT(2), { 'Mcp-Session-Id': sid });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('mcp-session-id'), null, 'no new Mcp-Session-Id');
    const body = await r.json();
    assert.equal(body.id, 2);
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /initialized already/);
    // the session still works, and an unknown one is a 404 as for any request
    assert.equal((await post(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'Mcp-Session-Id': sid })).status, 200);
    assert.equal((await post(url, INIT(4), { 'Mcp-Session-Id': 'f'.repeat(32) })).status, 404);
  });
});
