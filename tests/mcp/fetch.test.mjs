// fetch.test.mjs — session_fetch end to end: drun-mcp driven over stdio by the
// official MCP SDK client, fetching from a local Node HTTP server on 127.0.0.1.
// Covers SPEC §12 / §11: private addresses, the allowlist on the URL and on every
// redirect, the redirect limit, the body cap (no file left behind), the timeout,
// status and content type, non-http schemes and IP-literal disguises.
//
// Run by tests/suites/60-mcp with the other *.test.mjs files (lib.mjs starts $B/drun-mcp);
// the server is tests/helpers/fetch_server.mjs, shared with tests/suites/62-fetch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { start } from './lib.mjs';
import { startFetchServer } from '../helpers/fetch_server.mjs';

let srv;
let A, B, C; // A: allowlist 127.0.0.1, private off; B: private on, small caps; C: allowlist example.com

// One drun-mcp (stdio: the engine does not depend on the transport) under a
// config, with one session; call(url, dest) runs session_fetch.
async function startMcp(config) {
  const m = await start('stdio', { config });
  const { session_id: sid } = await m.call('create_session', {});
  assert.ok(sid, 'create_session returns a session_id');
  return {
    m,
    async call(url, dest = 'out.bin') {
      const r = await m.callRaw('session_fetch', { session_id: sid, url, save_as: dest });
      const text = (r.content || []).map((c) => c.text || '').join('\n');
      return { ...r, all: text + '\n' + JSON.stringify(r.structuredContent || {}) };
    },
    read: (dest) => m.callRaw('session_read_file', { session_id: sid, path: dest }),
  };
}

before(async () => {
  srv = await startFetchServer('127.0.0.1');
  A = await startMcp('domain_allowlist = ["127.0.0.1"]\n[network]\nallow_private_addresses = false\n');
  B = await startMcp(
    'domain_allowlist = ["127.0.0.1"]\nfetch_timeout_ms = 1500\nconnect_timeout_ms = 1000\n' +
      '[network]\nallow_private_addresses = true\nfetch_max_bytes = 1000\n',
  );
  C = await startMcp('domain_allowlist = ["example.com"]\n[network]\nallow_private_addresses = true\n');
});

after(async () => {
  for (const x of [A, B, C]) if (x) await x.m.close().catch(() => {});
  if (srv) await srv.close();
});

// The destination must not exist after a refused or failed fetch: no partial body.
async function assertNoFile(inst, dest) {
  const r = await inst.read(dest);
  assert.equal(r.isError, true, `${dest} must not exist after a failed fetch`);
}

test('127.0.0.1 is refused without allow_private_addresses', async () => {
  const r = await A.call(srv.url('/hello'), 'a1.txt');
  assert.equal(r.isError, true);
  assert.match(r.all, /loopback/);
  await assertNoFile(A, 'a1.txt');
});

test('127.0.0.1 is fetched with allow_private_addresses; status, type, bytes reported', async () => {
  const r = await B.call(srv.url('/hello'), 'b1.txt');
  assert.notEqual(r.isError, true, r.all);
  assert.match(r.all, /200/);
  assert.match(r.all, /text\/plain/);
  assert.match(r.all, /12/);
  const f = await B.read('b1.txt');
  assert.notEqual(f.isError, true);
  assert.match(JSON.stringify(f), /hello world/);
});

test('content type and status of the final response are reported', async () => {
  const r = await B.call(srv.url('/json'), 'b2.json');
  assert.notEqual(r.isError, true, r.all);
  assert.match(r.all, /application\/json/);
  const nf = await B.call(srv.url('/status/404'), 'b3.html');
  assert.match(nf.all, /404/);
});

test('a host outside domain_allowlist is refused', async () => {
  const r = await C.call(srv.url('/hello'), 'c1.txt');
  assert.equal(r.isError, true);
  assert.match(r.all, /domain_allowlist/);
  assert.match(r.all, /127\.0\.0\.1/);
  await assertNoFile(C, 'c1.txt');
});

test('a redirect to a host outside the allowlist is refused and named', async () => {
  const r = await B.call(srv.url(`/redirect?to=http://localhost:${srv.port}/hello`), 'b4.txt');
  assert.equal(r.isError, true);
  assert.match(r.all, /localhost/);
  assert.match(r.all, /domain_allowlist/);
  await assertNoFile(B, 'b4.txt');
});

test('a redirect inside the allowlist is followed', async () => {
  const r = await B.call(srv.url('/chain/1'), 'b5.txt');
  assert.notEqual(r.isError, true, r.all);
  assert.match(r.all, /chain\/0/);
});

test('a redirect chain past the limit stops', async () => {
  const r = await B.call(srv.url('/chain/30'), 'b6.txt');
  assert.equal(r.isError, true);
  assert.match(r.all, /redirect/i);
  await assertNoFile(B, 'b6.txt');
});

test('a body over fetch_max_bytes fails and leaves no file', async () => {
  const r = await B.call(srv.url('/big?n=5000&chunked=1'), 'b7.bin');
  assert.equal(r.isError, true);
  assert.match(r.all, /fetch_max_bytes/);
  await assertNoFile(B, 'b7.bin');
  const announced = await B.call(srv.url('/big?n=1001'), 'b8.bin');
  assert.equal(announced.isError, true);
  await assertNoFile(B, 'b8.bin');
  const exact = await B.call(srv.url('/big?n=1000'), 'b9.bin');
  assert.notEqual(exact.isError, true, exact.all);
});

test('a stalled server times out at fetch_timeout_ms', async () => {
  const t0 = Date.now();
  const r = await B.call(srv.url('/stall'), 'b10.txt');
  assert.equal(r.isError, true);
  assert.match(r.all, /fetch_timeout_ms|timed out/);
  assert.ok(Date.now() - t0 < 6000, 'returned promptly');
  await assertNoFile(B, 'b10.txt');
});

test('non-http schemes are refused', async () => {
  for (const u of ['ftp://127.0.0.1/', 'file:///etc/passwd', `gopher://127.0.0.1:${srv.port}/_x`]) {
    const r = await B.call(u, 'b11.txt');
    assert.equal(r.isError, true, u);
    assert.match(r.all, /http/, u);
  }
});

test('IP-literal disguises of loopback are refused', async () => {
  const p = srv.port;
  for (const u of [
    `http://2130706433:${p}/hello`,
    `http://0x7f.1:${p}/hello`,
    `http://0177.0.0.1:${p}/hello`,
    `http://127.1:${p}/hello`,
    `http://[::ffff:127.0.0.1]:${p}/hello`,
    `http://[::1]:${p}/hello`,
    `http://localhost:${p}/hello`,
    'http://169.254.169.254/latest/meta-data/',
  ]) {
    const r = await A.call(u, 'a2.txt');
    assert.equal(r.isError, true, u);
    await assertNoFile(A, 'a2.txt');
  }
});
