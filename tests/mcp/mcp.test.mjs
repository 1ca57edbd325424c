// mcp.test.mjs — drun-mcp driven by the official MCP SDK client, over stdio
// and over Streamable HTTP: every tool, path escapes, timeouts, binary and
// huge output, reload on edit (in-place and rename writers), a broken config
// keeping the last good policy, session isolation, the env allowlist,
// cancellation and progress.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { TRANSPORTS, start, withServer, sharedServers, sessionDirs, writeInPlace, writeRename, pgrep, waitFor, sleep } from './lib.mjs';

const TOOLS = [
  'create_session', 'session_list', 'session_close', 'session_bash', 'session_write_file',
  'session_read_file', 'session_list_files', 'session_fetch', 'session_get_env', 'get_policy',
  'session_package_install',
  // the session model (sessions.test.mjs)
  'session_mount', 'session_export', 'session_history', 'session_diff', 'session_rollback',
  'session_fork', 'session_label', 'session_snapshot', 'session_restore', 'list_snapshots',
];


const bash = (srv, sid, command, extra = {}) => srv.call('session_bash', { session_id: sid, command, ...extra });

/* One server per transport, under bash_timeout_ms = 60000, for the tests
 * that ask nothing of the server itself (sharedServers): each makes its own
 * sessions on it and checks what it checked on a server of its own. The
 * tests where the config, a limit, a reload, an env, startup or closing is
 * the point keep a fresh one (withServer). */
const SHARED_CONFIG = 'bash_timeout_ms = 60000\n';
const withShared = sharedServers({ config: SHARED_CONFIG });

for (const T of TRANSPORTS) {
  test(`${T}: initialize negotiates 2025-11-25 and lists the tools with schemas`, async () => {
    await withShared(T, async (srv) => {
      assert.equal(srv.client.getServerVersion().name, 'drun-mcp');
      assert.ok(srv.client.getServerCapabilities().tools);
      const { tools } = await srv.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.equal(t.outputSchema.type, 'object', t.name);
        assert.equal(t.inputSchema.additionalProperties, false, t.name);
        assert.ok(t.description.length > 20, t.name);
      }
    });
  });

  test(`${T}: create_session, session_list and session_close manage workspace directories`, async () => {
    await withServer(T, { config: 'max_sessions = 2\n' }, async (srv) => {
      const a = await srv.call('create_session', { label: 'first' });
      assert.match(a.session_id, /^[0-9a-f]{32}$/);
      assert.ok(fs.statSync(a.workspace).isDirectory());
      assert.equal(fs.statSync(a.workspace).mode & 0o777, 0o700);
      assert.ok(fs.statSync(a.scratch).isDirectory());
      assert.equal(a.limits.max_sessions, 2);
      const b = await srv.call('create_session', {});
      assert.match(await srv.fail('create_session', {}), /max_sessions \(2\)/);
      const list = await srv.call('session_list', {});
      assert.equal(list.count, 2);
      assert.deepEqual(list.sessions.map((s) => s.session_id).sort(), [a.session_id, b.session_id].sort());
      assert.equal(list.sessions.find((s) => s.session_id === a.session_id).label, 'first');
      assert.deepEqual(await srv.call('session_close', { session_id: a.session_id }),
        { session_id: a.session_id, closed: true });
      assert.ok(!fs.existsSync(a.workspace), 'workspace removed on close');
      assert.match(await srv.fail('session_close', { session_id: a.session_id }), /no session/);
      assert.match(await srv.fail('session_bash', { session_id: a.session_id, command: 'true' }), /no session/);
      assert.equal((await srv.call('session_list', {})).count, 1);
    });
  });

  test(`${T}: session_bash runs under the sandbox in the workspace`, async () => {
    await withShared(T, async (srv) => {
      const s = await srv.call('create_session', {});
      const r = await bash(srv, s.session_id, 'echo out; echo err >&2; pwd; id -u; exit 7');
      assert.equal(r.exit_code, 7);
      assert.equal(r.signal, null);
      assert.equal(r.timed_out, false);
      const [out, pwd, uid] = r.stdout.trim().split('\n');
      assert.equal(out, 'out');
      assert.equal(pwd, s.workspace);
      assert.notEqual(uid, '0', 'the sandboxed command never runs as root');
      assert.equal(r.stderr, 'err\n');
      assert.ok(r.duration_ms > 0);
      const w = await bash(srv, s.session_id, 'echo hello > made.txt && cat made.txt');
      assert.equal(w.stdout, 'hello\n');
      assert.equal(fs.readFileSync(path.join(s.workspace, 'made.txt'), 'utf8'), 'hello\n');
      const stdin = await bash(srv, s.session_id, 'tr a-z A-Z', { stdin: 'piped in\n' });
      assert.equal(stdin.stdout, 'PIPED IN\n');
      const net = await bash(srv, s.session_id, 'cat /sys/class/net/*/operstate 2>/dev/null | wc -l; ls /sys/class/net');
      assert.doesNotMatch(net.stdout, /eth|ens|wlan/, 'no host network interfaces in the sandbox');
    });
  });

  test(`${T}: files round-trip through write, read and list (text and binary)`, async () => {
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const w = await srv.call('session_write_file', { session_id, path: 'src/deep/a.txt', content: 'héllo\n' });
      assert.equal(w.bytes, 7);
      assert.equal(w.created, true);
      const w2 = await srv.call('session_write_file', { session_id, path: './src//deep/a.txt', content: 'x' });
      assert.equal(w2.created, false);
      assert.equal(w2.path, 'src/deep/a.txt');
      assert.match(await srv.fail('session_write_file', { session_id, path: 'src/deep/a.txt', content: 'y', overwrite: false }), /exists/);
      const r = await srv.call('session_read_file', { session_id, path: 'src/deep/a.txt' });
      assert.deepEqual([r.content, r.encoding, r.size, r.truncated], ['x', 'utf-8', 1, false]);
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await srv.call('session_write_file', { session_id, path: 'bin/all.bytes', content: bytes.toString('base64'), encoding: 'base64' });
      const rb = await srv.call('session_read_file', { session_id, path: 'bin/all.bytes' });
      assert.equal(rb.encoding, 'base64');
      assert.deepEqual(Buffer.from(rb.content, 'base64'), bytes);
      const part = await srv.call('session_read_file', { session_id, path: 'bin/all.bytes', offset: 250, max_bytes: 3, encoding: 'base64' });
      assert.deepEqual(Buffer.from(part.content, 'base64'), Buffer.from([250, 251, 252]));
      assert.equal(part.truncated, true);
      assert.match(await srv.fail('session_write_file', { session_id, path: 'x', content: '%%%', encoding: 'base64' }), /base64/);
      const l = await srv.call('session_list_files', { session_id, recursive: true });
      assert.deepEqual(l.entries.map((e) => `${e.type} ${e.path}`),
        ['dir bin', 'file bin/all.bytes', 'dir src', 'dir src/deep', 'file src/deep/a.txt']);
      const top = await srv.call('session_list_files', { session_id });
      assert.deepEqual(top.entries.map((e) => e.path), ['bin', 'src']);
      const capped = await srv.call('session_list_files', { session_id, recursive: true, max_entries: 2 });
      assert.equal(capped.entries.length, 2);
      assert.equal(capped.truncated, true);
      assert.match(await srv.fail('session_read_file', { session_id, path: 'src' }), /directory/);
      assert.match(await srv.fail('session_read_file', { session_id, path: 'nope' }), /does not exist/);
    });
  });

  test(`${T}: paths that would leave the workspace are refused`, async () => {
    await withShared(T, async (srv) => {
      const { session_id, workspace } = await srv.call('create_session', {});
      await bash(srv, session_id, 'ln -s /etc/passwd link && ln -s / rootlink && ln -s .. up && mkdir d && mkfifo d/fifo');
      for (const p of ['../x', '/etc/passwd', 'a/../../x', '..', 'a/..']) {
        assert.match(await srv.fail('session_read_file', { session_id, path: p }), /absolute|\.\./, p);
        assert.match(await srv.fail('session_write_file', { session_id, path: p, content: 'x' }), /absolute|\.\./, p);
      }
      for (const p of ['link', 'rootlink/etc/passwd', 'up/x', 'up/' + path.basename(path.dirname(workspace))]) {
        assert.match(await srv.fail('session_read_file', { session_id, path: p }), /symbolic link/, p);
      }
      assert.match(await srv.fail('session_write_file', { session_id, path: 'link', content: 'pwned' }), /symbolic link/);
      assert.match(await srv.fail('session_write_file', { session_id, path: 'rootlink/tmp/x', content: 'x' }), /symbolic link/);
      assert.match(await srv.fail('session_list_files', { session_id, path: 'rootlink' }), /symbolic link/);
      assert.match(await srv.fail('session_read_file', { session_id, path: 'd/fifo' }), /not a regular file/);
      assert.match(await srv.fail('session_write_file', { session_id, path: 'bad\nname', content: 'x' }), /control character/);
      const l = await srv.call('session_list_files', { session_id });
      assert.equal(l.entries.find((e) => e.path === 'link').target, '/etc/passwd');
      assert.notEqual(fs.readFileSync('/etc/passwd', 'utf8'), 'pwned');
    });
  });

  test(`${T}: a timeout kills the whole process group`, async () => {
    const marker = `31.${process.pid}${T === 'http' ? 1 : 2}`;
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const t0 = Date.now();
      const r = await bash(srv, session_id, `sleep ${marker} & sleep ${marker}; echo never`, { timeout_ms: 700 });
      assert.equal(r.timed_out, true);
      assert.equal(r.exit_code, null);
      assert.equal(r.signal, 'SIGKILL');
      assert.ok(Date.now() - t0 < 10000);
      assert.ok(await waitFor(() => pgrep(`sleep ${marker}`).length === 0, 10000), 'no sleep survives');
      const capped = await bash(srv, session_id, 'echo quick', { timeout_ms: 999999 });
      assert.equal(capped.timeout_ms, 60000, 'timeout_ms is capped at bash_timeout_ms');
    });
  });

  test(`${T}: binary and invalid UTF-8 output stays valid JSON with the exact bytes in base64`, async () => {
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const r = await bash(srv, session_id, "printf 'ok\\377\\376\\000end'; printf '\\300\\200' >&2");
      assert.equal(r.stdout, 'ok\ufffd\ufffd\ufffdend');
      assert.deepEqual(Buffer.from(r.stdout_base64, 'base64'), Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0, 0x65, 0x6e, 0x64]));
      assert.equal(r.stdout_bytes, 8);
      assert.deepEqual(Buffer.from(r.stderr_base64, 'base64'), Buffer.from([0xc0, 0x80]));
      const clean = await bash(srv, session_id, 'printf "плохо ✓"');
      assert.equal(clean.stdout, 'плохо ✓');
      assert.equal(clean.stdout_base64, undefined);
      const rnd = await bash(srv, session_id, 'head -c 200000 /dev/urandom');
      assert.equal(rnd.stdout_bytes, 200000);
      assert.equal(Buffer.from(rnd.stdout_base64, 'base64').length, 200000);
    });
  });

  test(`${T}: a huge output is capped at 1 MiB and counted`, async () => {
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const r = await bash(srv, session_id, "head -c 6000000 /dev/zero | tr '\\0' a; echo done >&2");
      assert.equal(r.exit_code, 0);
      assert.equal(r.stdout_bytes, 6000000);
      assert.equal(r.stdout_truncated, true);
      assert.equal(r.stdout.length, 1024 * 1024);
      assert.equal(r.stderr, 'done\n');
    });
  });

  test(`${T}: an in-place config edit applies to the next call`, async () => {
    await withServer(T, { config: 'bash_timeout_ms = 11111\nenv_allowlist = ["DRUN_T_A"]\n' }, async (srv) => {
      const before = await srv.call('get_policy', {});
      assert.equal(before.policy.settings.bash_timeout_ms, 11111);
      const ino = fs.statSync(srv.configPath).ino;
      writeInPlace(srv.configPath, 'bash_timeout_ms = 22222\nenv_allowlist = ["DRUN_T_B"]\n');
      assert.equal(fs.statSync(srv.configPath).ino, ino);
      const s = await srv.call('create_session', {});
      assert.equal(s.limits.bash_timeout_ms, 22222);
      const env = await srv.call('session_get_env', { session_id: s.session_id });
      assert.deepEqual(env.allowlist, ['DRUN_T_B']);
      const after = await srv.call('get_policy', {});
      assert.equal(after.state, 'ok');
      assert.equal(after.generation, before.generation + 1);
      assert.equal(after.counters.reloads, before.counters.reloads + 1);
    });
  });

  test(`${T}: a rename-writer config edit applies to the next call; unchanged files are not recompiled`, async () => {
    await withServer(T, { config: 'bash_timeout_ms = 11111\n' }, async (srv) => {
      const p0 = await srv.call('get_policy', {});
      for (let i = 0; i < 5; i++) await srv.call('session_list', {});
      const p1 = await srv.call('get_policy', {});
      assert.equal(p1.counters.compiles, p0.counters.compiles, 'no re-parse of an unchanged file');
      assert.equal(p1.counters.checks, p0.counters.checks + 6, 'one check per call');
      writeRename(srv.configPath, 'bash_timeout_ms = 33333\n');
      const s = await srv.call('create_session', {});
      assert.equal(s.limits.bash_timeout_ms, 33333);
      const p2 = await srv.call('get_policy', {});
      assert.equal(p2.counters.compiles, p1.counters.compiles + 1);
    });
  });

  test(`${T}: a broken config keeps the last good policy and every result says why (file:line:col)`, async () => {
    await withServer(T, { config: 'bash_timeout_ms = 22222\nbash_command_denylist = ["rm -rf"]\n' }, async (srv) => {
      const s = await srv.call('create_session', {});
      writeInPlace(srv.configPath, 'bash_timeout_ms = 44444\nbash_command_denylist = []\n[broken\n');
      const r = await srv.callRaw('create_session', {});
      assert.equal(r.isError, false);
      assert.equal(r.structuredContent.limits.bash_timeout_ms, 22222, 'last good policy in force');
      assert.match(r.structuredContent.policy_warning, /config\.toml:3:\d+: error:/);
      assert.match(r.content[0].text, /last good policy/);
      // the denylist of the last good policy still applies
      const denied = await srv.callRaw('session_bash', { session_id: s.session_id, command: 'rm -fr x' });
      assert.equal(denied.isError, true);
      assert.match(denied.content[0].text, /bash_command_denylist/);
      assert.match(denied.content[0].text, /config\.toml:3:\d+: error:/);
      const pol = await srv.call('get_policy', {});
      assert.equal(pol.state, 'stale');
      assert.match(pol.error, /config\.toml:3:\d+: error: .*\n.*\[broken/);
      assert.equal(pol.policy.settings.bash_timeout_ms, 22222);
      const failures = pol.counters.failures;
      await srv.call('session_list', {});
      assert.equal((await srv.call('get_policy', {})).counters.failures, failures, 'a broken file is not re-parsed either');
      writeInPlace(srv.configPath, 'bash_timeout_ms = 55555\n');
      const fixed = await srv.call('get_policy', {});
      assert.equal(fixed.state, 'ok');
      assert.equal(fixed.error, undefined);
      assert.equal(fixed.policy.settings.bash_timeout_ms, 55555);
    });
  });

  test(`${T}: with no good policy ever, sandboxed tools refuse until the config compiles`, async () => {
    await withServer(T, { config: 'bash_timeout_ms = "soon"\n' }, async (srv) => {
      assert.match(await srv.fail('create_session', {}), /never compiled[\s\S]*config\.toml:1:\d+: error:/);
      const pol = await srv.call('get_policy', {});
      assert.equal(pol.state, 'none');
      assert.match(pol.error, /config\.toml:1:\d+: error:/);
      writeRename(srv.configPath, 'bash_timeout_ms = 9000\n');
      const s = await srv.call('create_session', {});
      assert.equal(s.limits.bash_timeout_ms, 9000);
    });
  });

  test(`${T}: sessions are isolated from each other`, async () => {
    await withShared(T, async (srv) => {
      const a = await srv.call('create_session', {});
      const b = await srv.call('create_session', {});
      await srv.call('session_write_file', { session_id: a.session_id, path: 'secret.txt', content: 'only a' });
      assert.match(await srv.fail('session_read_file', { session_id: b.session_id, path: 'secret.txt' }), /does not exist/);
      const peek = await bash(srv, b.session_id, `cat ${a.workspace}/secret.txt`);
      assert.notEqual(peek.exit_code, 0);
      assert.doesNotMatch(peek.stdout, /only a/);
      const ls = await bash(srv, b.session_id, `ls -a ${path.dirname(path.dirname(a.workspace))}`);
      assert.doesNotMatch(ls.stdout, new RegExp(a.session_id), 'another session is not even visible');
      const write = await bash(srv, b.session_id, `echo x > ${a.workspace}/planted`);
      assert.notEqual(write.exit_code, 0);
      assert.ok(!fs.existsSync(path.join(a.workspace, 'planted')));
      const own = await bash(srv, a.session_id, 'cat secret.txt');
      assert.equal(own.stdout, 'only a');
    });
  });

  test(`${T}: session_get_env reveals env_allowlist names only; commands see none of the host env`, async () => {
    const env = { DRUN_T_VISIBLE: 'shown-value', DRUN_T_SECRET: 'hidden-value' };
    await withServer(T, { config: 'env_allowlist = ["DRUN_T_VISIBLE", "DRUN_T_UNSET"]\n', env }, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const all = await srv.call('session_get_env', { session_id });
      assert.deepEqual(all.variables, { DRUN_T_VISIBLE: 'shown-value' });
      assert.deepEqual(all.unset, ['DRUN_T_UNSET']);
      const one = await srv.call('session_get_env', { session_id, names: ['DRUN_T_VISIBLE'] });
      assert.deepEqual(one.variables, { DRUN_T_VISIBLE: 'shown-value' });
      const denied = await srv.fail('session_get_env', { session_id, names: ['DRUN_T_SECRET'] });
      assert.match(denied, /Not in env_allowlist: DRUN_T_SECRET/);
      assert.doesNotMatch(denied, /hidden-value/);
      const r = await bash(srv, session_id, 'echo "[$DRUN_T_VISIBLE][$DRUN_T_SECRET]"; env | grep -c DRUN_T_ || true');
      assert.equal(r.stdout, '[][]\n0\n');
    });
  });

  test(`${T}: the command lists refuse with the entry and its location`, async () => {
    await withServer(T, { config: 'bash_command_denylist = ["rm -rf", "curl"]\n' }, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const t = await srv.fail('session_bash', { session_id, command: 'echo hi && r\'\'m -fr /tmp/x' });
      assert.match(t, /bash_command_denylist entry "rm -rf" \(.*config\.toml:1:\d+\)/);
      assert.equal((await bash(srv, session_id, 'echo fine')).stdout, 'fine\n');
    });
  });

  test(`${T}: arguments are validated against the input schema`, async () => {
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      assert.match(await srv.fail('session_bash', {}), /arguments\.session_id is required/);
      assert.match(await srv.fail('session_bash', { session_id, command: 'true', bogus: 1 }), /arguments\.bogus is not a known argument/);
      assert.match(await srv.fail('session_read_file', { session_id, path: 5 }), /arguments\.path must be a string/);
      assert.match(await srv.fail('session_bash', { session_id, command: 'true', timeout_ms: 0 }), /timeout_ms must be at least 1/);
      assert.match(await srv.fail('session_bash', { session_id, command: '' }), /at least 1 character/);
      assert.match(await srv.fail('session_write_file', { session_id, path: 'a', content: 'x', encoding: 'rot13' }), /must be one of/);
      assert.match(await srv.fail('session_bash', { session_id: 'x'.repeat(32), command: 'true' }), /no session/);
      await assert.rejects(srv.client.callTool({ name: 'no_such_tool', arguments: {} }),
        (e) => e instanceof McpError && e.code === -32602 && /Unknown tool/.test(e.message));
    });
  });

  test(`${T}: max_workspace_mb refuses a write that would exceed it`, async () => {
    await withServer(T, { config: 'max_workspace_mb = 1\n' }, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const big = 'a'.repeat(600 * 1024);
      await srv.call('session_write_file', { session_id, path: 'one', content: big });
      const t = await srv.fail('session_write_file', { session_id, path: 'two', content: big });
      assert.match(t, /max_workspace_mb \(1 MB/);
      const same = await srv.call('session_write_file', { session_id, path: 'one', content: big });
      assert.equal(same.workspace_bytes, 600 * 1024, 'replacing a file counts once');
    });
  });

  test(`${T}: cancelling a call kills the command's process group`, async () => {
    const marker = `41.${process.pid}${T === 'http' ? 1 : 2}`;
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const ac = new AbortController();
      const p = srv.callRaw('session_bash', { session_id, command: `sleep ${marker} & sleep ${marker}` }, { signal: ac.signal });
      assert.ok(await waitFor(() => pgrep(`sleep ${marker}`).length >= 2, 10000), 'command started');
      ac.abort();
      await assert.rejects(p);
      assert.ok(await waitFor(() => pgrep(`sleep ${marker}`).length === 0, 10000), `process group killed: ${pgrep(`sleep ${marker}`)}\n${srv.stderr().slice(-2000)}`);
      // the session is still usable
      assert.equal((await bash(srv, session_id, 'echo alive')).stdout, 'alive\n');
    });
  });

  test(`${T}: a long command sends progress notifications`, async () => {
    await withShared(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      const seen = [];
      const r = await srv.callRaw('session_bash', { session_id, command: 'sleep 2.6; echo finished' },
        { onprogress: (p) => seen.push(p) });
      assert.equal(r.structuredContent.stdout, 'finished\n');
      assert.ok(seen.length >= 2, `progress notifications: ${JSON.stringify(seen)}`);
      assert.ok(seen[1].progress > seen[0].progress);
      assert.equal(seen[0].total, 60);
      assert.match(seen[0].message, /running for 1 s/);
    });
  });

  test(`${T}: closing the client removes every session directory`, async () => {
    const srv = await start(T, { config: '' });
    let stateDir;
    try {
      stateDir = srv.stateDir;
      await srv.call('create_session', {});
      await srv.call('create_session', {});
      assert.equal(sessionDirs(stateDir).length, 2);
    } finally {
      await srv.close();
    }
    assert.ok(await waitFor(() => sessionDirs(stateDir).length === 0, 5000), 'sessions removed at exit');
  });
}

test('stdio: requests are answered concurrently (ping while a command runs)', async () => {
  await withShared('stdio', async (srv) => {
    const { session_id } = await srv.call('create_session', {});
    const slow = bash(srv, session_id, 'sleep 1.5; echo slow');
    await sleep(200);
    const t0 = Date.now();
    await srv.client.ping();
    await srv.call('session_list', {});
    assert.ok(Date.now() - t0 < 1000, 'ping not held up by a running command');
    assert.equal((await slow).stdout, 'slow\n');
  });
});

test('stdio: --artifacts serves precompiled artifacts, reloads them, and refuses tampered ones', async () => {
  const { execFileSync } = await import('node:child_process');
  const { ROOT, B, tmpdir } = await import('./lib.mjs');
  const policy = path.resolve(ROOT, B, 'drun-policy');
  const dir = tmpdir('artifacts-');
  const cfg = path.join(dir, 'reviewed.toml');
  const out = path.join(dir, 'out');
  fs.writeFileSync(cfg, 'bash_timeout_ms = 7777\n');
  execFileSync(policy, ['compile', cfg, '-o', out]);
  await withServer('stdio', { dir, args: ['--artifacts', out] }, async (srv) => {
    const p = await srv.call('get_policy', {});
    assert.equal(p.mode, 'artifacts');
    assert.equal(p.state, 'ok');
    assert.equal(p.policy.settings.bash_timeout_ms, 7777);
    const { session_id } = await srv.call('create_session', {});
    assert.equal((await bash(srv, session_id, 'echo ok')).stdout, 'ok\n');
    // CI publishes a new reviewed set: it applies to the next call
    fs.writeFileSync(cfg, 'bash_timeout_ms = 8888\n');
    execFileSync(policy, ['compile', cfg, '-o', out]);
    assert.equal((await srv.call('get_policy', {})).policy.settings.bash_timeout_ms, 8888);
    // a tampered artifact fails its manifest hash: the last good set stays
    const args = path.join(out, 'bwrap.args');
    fs.writeFileSync(`${args}.tmp`, `${fs.readFileSync(args, 'utf8')}--bind\n/\n/\n`);
    fs.renameSync(`${args}.tmp`, args);
    const stale = await srv.call('get_policy', {});
    assert.equal(stale.state, 'stale');
    assert.equal(stale.policy.settings.bash_timeout_ms, 8888);
    assert.match(stale.error, /artifacts/);
  });
});
