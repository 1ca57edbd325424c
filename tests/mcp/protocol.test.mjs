// protocol.test.mjs — JSON-RPC and MCP lifecycle edge cases over raw stdio
// lines: things a well-behaved SDK never sends but a server must survive.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { INIT, pgrep, rawStdio, sessionDirs, tmpdir, waitFor } from './lib.mjs';

const parse = (lines) => lines.map((l) => JSON.parse(l));
const byId = (msgs, id) => msgs.find((m) => JSON.stringify(m.id) === JSON.stringify(id));

test('ids are echoed exactly: strings, big and float-looking numbers', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  await s.lines(1);
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  s.send('{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}');
  s.send('{"jsonrpc":"2.0","id":-0.5e+3,"method":"ping"}');
  s.send('{"jsonrpc":"2.0","id":"a\\"b\\u00e9","method":"ping"}');
  s.send('{"jsonrpc":"2.0","id":0,"method":"ping"}');
  const lines = await s.lines(5);
  await s.end();
  const raw = lines.slice(1).join('\n');
  assert.match(raw, /"id":12345678901234567890123,/, 'digits kept, not rounded through a double');
  assert.match(raw, /"id":-0\.5e\+3,/);
  assert.match(raw, /"id":"a\\"b\\u00e9",/);
  assert.match(raw, /"id":0,/);
});

test('notifications are never answered; responses from the client are ignored', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}');
  s.send('{"jsonrpc":"2.0","method":"no/such/notification"}');
  s.send('{"jsonrpc":"2.0","id":77,"result":{}}');
  s.send('{"jsonrpc":"2.0","id":2,"method":"ping"}');
  const lines = await s.lines(2);
  await s.end();
  assert.equal(lines.length, 2, s.output());
  assert.deepEqual(parse(lines).map((m) => m.id), [1, 2]);
});

test('batches, garbage and bad envelopes get the standard error codes', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  await s.lines(1);
  s.send('[{"jsonrpc":"2.0","id":2,"method":"ping"}]');
  s.send('{"jsonrpc":"2.0","id":3,"method":"ping"');
  s.sendBytes(Buffer.from([0x22, 0xff, 0xfe, 0x22, 0x0a])); // "\xff\xfe": not UTF-8
  s.send('{"jsonrpc":"1.0","id":4,"method":"ping"}');
  s.send('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}');
  s.send('{"jsonrpc":"2.0","id":5,"method":7}');
  s.send('{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}');
  s.send('{"jsonrpc":"2.0","id":7,"method":"resources/list"}');
  s.send('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}');
  s.send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_policy","arguments":[]}}');
  s.send('{"jsonrpc":"2.0","id":01,"method":"ping"}');
  const msgs = parse(await s.lines(12));
  await s.end();
  // requests run on a worker pool: compare without order
  const key = (x) => JSON.stringify(x);
  const codes = msgs.slice(1).map((m) => [m.id, m.error?.code]).sort((a, b) => key(a).localeCompare(key(b)));
  assert.deepEqual(codes, [
    [null, -32600], // batch
    [null, -32700], // truncated JSON
    [null, -32700], // not UTF-8
    [4, -32600],    // wrong jsonrpc version
    [null, -32600], // object id
    [5, -32600],    // method not a string
    [6, -32602],    // params not an object
    [7, -32601],    // unknown method
    [8, -32602],    // tools/call without a name
    [9, -32602],    // arguments not an object
    [null, -32700], // 01 is not JSON
  ].sort((a, b) => key(a).localeCompare(key(b))));
});

test('a notification with params that are not an object is not answered; a request gets -32602', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  await s.lines(1);
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}');
  s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}');
  s.send('{"jsonrpc":"2.0","id":2,"method":"ping","params":[]}');
  s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}');
  const msgs = parse(await s.lines(3));
  await s.end();
  assert.equal(msgs.length, 3, s.output());
  assert.equal(byId(msgs, 2).error.code, -32602);
  assert.deepEqual(byId(msgs, 3).result, {});
});

test('requests before initialize are refused; ping is allowed; initialize only once', async () => {
  const s = rawStdio();
  s.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  s.send('{"jsonrpc":"2.0","id":2,"method":"ping"}');
  await s.lines(2);
  s.send(INIT(3));
  await s.lines(3);
  s.send(INIT(4));
  const msgs = parse(await s.lines(4));
  await s.end();
  assert.equal(byId(msgs, 1).error.code, -32600);
  assert.match(byId(msgs, 1).error.message, /initialize/);
  assert.deepEqual(byId(msgs, 2).result, {});
  assert.equal(byId(msgs, 3).result.protocolVersion, '2025-11-25');
  assert.equal(byId(msgs, 4).error.code, -32600);
});

for (const [asked, answered] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'],
  ['2025-03-26', '2025-03-26'], ['2024-11-05', '2025-11-25'], ['1999-01-01', '2025-11-25']]) {
  test(`version negotiation: ${asked} is answered with ${answered}`, async () => {
    const s = rawStdio();
    s.send(INIT(1, asked));
    const [line] = await s.lines(1);
    await s.end();
    assert.equal(JSON.parse(line).result.protocolVersion, answered);
  });
}

test('an over-long line is answered with an error and the stream resyncs at the newline', async () => {
  const s = rawStdio(['--max-message', '4096']);
  s.send(INIT(1));
  await s.lines(1);
  s.send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"${'x'.repeat(100000)}"}}`);
  s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}');
  const msgs = parse(await s.lines(3));
  await s.end();
  assert.equal(msgs[1].error.code, -32600);
  assert.match(msgs[1].error.message, /longer than/);
  assert.deepEqual(msgs[2], { jsonrpc: '2.0', id: 3, result: {} });
});

test('U+0000 in a string argument is refused, not truncated', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  await s.lines(1);
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{"label":"a\\u0000b"}}}');
  const msgs = parse(await s.lines(2));
  await s.end();
  assert.equal(msgs[1].result.isError, true);
  assert.match(msgs[1].result.content[0].text, /U\+0000/);
});

test('EOF: requests already read are answered, then the server exits and cleans up', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{}}}');
  s.send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_policy","arguments":{}}}');
  const { code } = await s.end();
  assert.equal(code, 0);
  const msgs = parse(s.output().split('\n').filter(Boolean));
  assert.deepEqual(msgs.map((m) => m.id).sort(), [1, 2, 3]);
  assert.equal(byId(msgs, 2).result.isError, false);
  assert.deepEqual(sessionDirs(path.join(s.dir, 'state')), []);
});

test('SIGTERM stops a running command and exits cleanly', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{}}}');
  const msgs = parse(await s.lines(2));
  const sid = byId(msgs, 2).result.structuredContent.session_id;
  s.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'session_bash', arguments: { session_id: sid, command: 'sleep 30' } } }));
  await new Promise((r) => setTimeout(r, 500));
  const t0 = Date.now();
  s.child.kill('SIGTERM');
  const { code } = await s.exited;
  assert.equal(code, 0);
  assert.ok(Date.now() - t0 < 5000);
  assert.deepEqual(sessionDirs(path.join(s.dir, 'state')), []);
});

test('stdout carries protocol only; --help and --version work; bad usage exits 2', async () => {
  const { execFileSync, spawnSync } = await import('node:child_process');
  const { BIN } = await import('./lib.mjs');
  assert.match(execFileSync(BIN, ['--version'], { encoding: 'utf8' }), /^drun-mcp \d/);
  assert.match(execFileSync(BIN, ['--help'], { encoding: 'utf8' }), /--listen ADDR:PORT/);
  assert.equal(spawnSync(BIN, ['--bogus']).status, 2);
  assert.equal(spawnSync(BIN, ['--config', 'a', '--artifacts', 'b']).status, 2);
  // The state dir's ancestors must be out of other users' reach (safe_path).
  const open = tmpdir('open-');
  fs.chmodSync(open, 0o777); // writable by everyone, not sticky
  let r = spawnSync(BIN, ['--state-dir', path.join(open, 'state')], { input: '' });
  assert.equal(r.status, 2, 'a state dir below a world-writable directory is refused');
  assert.match(String(r.stderr), /is writable by everyone/);
  if (process.getuid() === 0) {
    const foreign = tmpdir('foreign-');
    fs.chownSync(foreign, 4242, 4242);
    r = spawnSync(BIN, ['--state-dir', path.join(foreign, 'state')], { input: '' });
    assert.equal(r.status, 2, "a state dir below another user's directory is refused");
    assert.match(String(r.stderr), /belongs to uid 4242/);
  }
  // /tmp is sticky: a directory of our own below it is out of others' reach
  const own = fs.mkdtempSync(path.join(os.tmpdir(), 'drun-own-'));
  try {
    r = spawnSync(BIN, ['--state-dir', path.join(own, 'state')], { input: '' });
    assert.equal(r.status, 0, `a state dir in a private directory under /tmp is fine: ${r.stderr}`);
  } finally {
    fs.rmSync(own, { recursive: true, force: true });
  }
  const s = rawStdio(['--log-level', 'debug']);
  s.send(INIT(1));
  s.send('not json');
  await s.lines(2);
  await s.end();
  for (const line of s.output().split('\n').filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);
  assert.match(s.stderr(), /drun-mcp: /);
});

test('the default chain: $DRUN_CONFIG, then ~/.drun/config.toml, then the built-in default', async () => {
  const home = tmpdir('home-');
  const call = async (env) => {
    const s = rawStdio([], { HOME: home, ...env });
    s.send(INIT(1));
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_policy","arguments":{}}}');
    const msgs = parse(await s.lines(2));
    await s.end();
    return byId(msgs, 2).result.structuredContent;
  };
  const env0 = { DRUN_CONFIG: '' };
  let p = await call(env0);
  assert.equal(p.mode, 'default-chain');
  assert.equal(p.source, '<default>');
  fs.mkdirSync(path.join(home, '.drun'));
  fs.writeFileSync(path.join(home, '.drun', 'config.toml'), 'bash_timeout_ms = 4242\n');
  p = await call(env0);
  assert.equal(p.policy.settings.bash_timeout_ms, 4242);
  const other = path.join(home, 'other.toml');
  fs.writeFileSync(other, 'bash_timeout_ms = 4343\n');
  p = await call({ DRUN_CONFIG: other });
  assert.equal(p.policy.settings.bash_timeout_ms, 4343);
  assert.equal(p.source, other);
});

test('a stale session directory left by a killed server is swept at the next start', async () => {
  const s = rawStdio();
  s.send(INIT(1));
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{}}}');
  await s.lines(2);
  const state = path.join(s.dir, 'state');
  assert.equal(sessionDirs(state).length, 1);
  s.child.kill('SIGKILL');
  await s.exited;
  assert.equal(sessionDirs(state).length, 1, 'kill -9 leaves the directory behind');
  const { spawnSync } = await import('node:child_process');
  const { BIN } = await import('./lib.mjs');
  const r = spawnSync(BIN, ['--state-dir', state], { input: '', env: { ...process.env, HOME: s.dir } });
  assert.equal(r.status, 0);
  assert.ok(await waitFor(() => sessionDirs(state).length === 0, 2000), 'swept at start');
});

test('examples/client.mjs runs against drun-mcp over stdio', async () => {
  const { spawnSync } = await import('node:child_process');
  const { BIN, ROOT } = await import('./lib.mjs');
  const dir = tmpdir('example-');
  // the example imports the SDK as a user's project would: from its own node_modules
  fs.symlinkSync(path.join(ROOT, 'tests/mcp/node_modules'), path.join(dir, 'node_modules'));
  fs.copyFileSync(path.join(ROOT, 'examples/client.mjs'), path.join(dir, 'client.mjs'));
  fs.writeFileSync(path.join(dir, 'config.toml'), 'bash_timeout_ms = 9000\n');
  const r = spawnSync('node', [path.join(dir, 'client.mjs')], {
    encoding: 'utf8',
    timeout: 60000,
    env: { ...process.env, HOME: dir, DRUN_MCP: BIN, DRUN_CONFIG: path.join(dir, 'config.toml'),
      XDG_STATE_HOME: path.join(dir, 'state') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /offers 21 tools/); // 10, session_package_install and the session model's 10
  assert.match(r.stdout, /time out after 9000 ms/);
  assert.match(r.stdout, /exit 0 in/);
  assert.match(r.stdout, /hello from \//);
  assert.match(r.stdout, /"\.\." components are not accepted/);
  assert.match(r.stdout, /policy: ok, generation 1/);
});

test('a stdio client that goes away mid-call (closes its end of stdout) has its command killed', async () => {
  const s = rawStdio();
  const marker = `300.${process.pid}71`;
  s.send(INIT(1));
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{}}}');
  const sid = parse(await s.lines(2)).find((m) => m.id === 2).result.structuredContent.session_id;
  s.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'session_bash', arguments: { session_id: sid, command: `sleep ${marker} & sleep ${marker}; wait` } } }));
  assert.ok(await waitFor(() => pgrep(`sleep ${marker}`).length >= 2, 10000), 'the command runs');
  s.child.stdout.destroy(); // the client is gone: nobody reads the answer
  s.child.stdin.end();
  assert.ok(await waitFor(() => pgrep(`sleep ${marker}`).length === 0, 10000),
    `still running after the client left: ${pgrep(`sleep ${marker}`)}`);
  const r = await s.exited;
  assert.equal(r.sig, null);
  assert.ok(sessionDirs(`${s.dir}/state`).length === 0, 'sessions removed at exit');
});
