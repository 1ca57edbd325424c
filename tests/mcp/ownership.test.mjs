// ownership.test.mjs — who sees what (SPEC §12, issue 13 item 2): a sandbox
// session belongs to the MCP session that created it; session_list shows a
// client its own; an ID (128 random bits) is a capability for any client of
// the same principal; with several bearer tokens a principal never sees or
// uses another's sessions. Checked on the host: the files and directories of
// the victim's session, after the other client tried.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { INIT, sessionDirs, tmpdir } from './lib.mjs';
import { initSession, post, sdkClient, spawnHttp } from './rawhttp.mjs';

const TOK_A = 'principal-A-0123456789abcdef';
const TOK_B = 'principal-B-fedcba9876543210';

test('ownership: two HTTP clients of one principal see only their own sessions, yet an ID handed over works', async () => {
  const srv = await spawnHttp();
  const a = await sdkClient(srv.url);
  const b = await sdkClient(srv.url);
  try {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await a.call('create_session', { label: `a${i}` })).session_id);
    for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/, '128 bits, hex');
    assert.equal(new Set(ids).size, 3);
    await a.call('session_write_file', { session_id: ids[0], path: 'mine.txt', content: 'A wrote this\n' });
    const mine = (await b.call('create_session', { label: 'b' })).session_id;

    const la = await a.call('session_list', {});
    assert.deepEqual(la.sessions.map((s) => s.session_id).sort(), [...ids].sort());
    const lb = await b.call('session_list', {});
    assert.deepEqual(lb.sessions.map((s) => s.session_id), [mine], 'B sees its own session only');
    assert.equal(lb.count, 1);

    // handed over, the ID is a capability
    const r = await b.call('session_read_file', { session_id: ids[0], path: 'mine.txt' });
    assert.equal(r.content, 'A wrote this\n');
    const sh = await b.call('session_bash', { session_id: ids[0], command: 'echo from-b > b.txt; cat mine.txt' });
    assert.equal(sh.stdout, 'A wrote this\n');
    const ws = path.join(srv.stateDir, 'sessions', ids[0], 'workspace');
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'from-b\n');
    // ... and still not listed for B
    assert.equal((await b.call('session_list', {})).count, 1);
  } finally {
    await a.close();
    await b.close();
    await srv.close();
  }
});

test('ownership: two tokens are two principals that never see or use each other\'s sessions', async () => {
  const srv = await spawnHttp({ tokens: [TOK_A, TOK_B] });
  const a = await sdkClient(srv.url, TOK_A);
  const b = await sdkClient(srv.url, TOK_B);
  const a2 = await sdkClient(srv.url, TOK_A);
  try {
    const id = (await a.call('create_session', { label: 'secret' })).session_id;
    await a.call('session_write_file', { session_id: id, path: 'secret.txt', content: 'top secret\n' });
    const ws = path.join(srv.stateDir, 'sessions', id, 'workspace');

    assert.equal((await b.call('session_list', {})).count, 0);
    // every tool that takes an ID: "no such session", exactly as a wrong ID
    const wrong = 'f'.repeat(32);
    const unknownText = (await b.fail('session_read_file', { session_id: wrong, path: 'secret.txt' })).replace(wrong, 'ID');
    for (const [tool, args] of [
      ['session_read_file', { path: 'secret.txt' }],
      ['session_write_file', { path: 'secret.txt', content: 'B was here\n' }],
      ['session_bash', { command: 'echo pwned > secret.txt; echo pwned > pwned.txt' }],
      ['session_list_files', {}],
      ['session_get_env', {}],
      ['session_close', {}],
    ]) {
      const text = await b.fail(tool, { session_id: id, ...args });
      assert.match(text, /no session/, `${tool}: ${text}`);
      if (tool === 'session_read_file') assert.equal(text.replace(id, 'ID'), unknownText, 'indistinguishable from an unknown ID');
    }
    // the host: A's session is whole and untouched
    assert.equal(fs.readFileSync(path.join(ws, 'secret.txt'), 'utf8'), 'top secret\n');
    assert.ok(!fs.existsSync(path.join(ws, 'pwned.txt')));
    assert.ok(sessionDirs(srv.stateDir).includes(id), 'B could not close it');
    // the same principal on another MCP session may use it when handed the ID
    assert.equal((await a2.call('session_read_file', { session_id: id, path: 'secret.txt' })).content, 'top secret\n');

    // A's MCP session is A's too: B's token on A's Mcp-Session-Id is a 404
    const sidA = await initSession(srv.url, { Authorization: `Bearer ${TOK_A}` });
    const cross = await post(srv.url, { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { Authorization: `Bearer ${TOK_B}`, 'Mcp-Session-Id': sidA });
    assert.equal(cross.status, 404);
    const own = await post(srv.url, { jsonrpc: '2.0', id: 6, method: 'tools/list' },
      { Authorization: `Bearer ${TOK_A}`, 'Mcp-Session-Id': sidA });
    assert.equal(own.status, 200);
    // and a third string is no token at all
    assert.equal((await post(srv.url, INIT(1), { Authorization: 'Bearer principal-C-0000000000000000' })).status, 401);
  } finally {
    await a.close();
    await a2.close();
    await b.close();
    await srv.close();
  }
});

test('ownership: a token file with a short token is refused at start, naming the line', async () => {
  const dir = tmpdir('raw-');
  const tf = path.join(dir, 'tokens');
  fs.writeFileSync(tf, `# comment\n${TOK_A}\n\nshort\n`, { mode: 0o600 });
  const { spawnSync } = await import('node:child_process');
  const { BIN } = await import('./lib.mjs');
  const r = spawnSync(BIN, ['--state-dir', path.join(dir, 'st'), '--listen', '127.0.0.1:0', '--token-file', tf], { encoding: 'utf8', timeout: 10000 });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /tokens:4: a token must have at least 16 characters/);
});
