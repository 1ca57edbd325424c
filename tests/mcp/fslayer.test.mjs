// fslayer.test.mjs — the access-time layer through drun-mcp (SPEC §16):
// session_bash's sandbox is served by the FUSE layer, so protected names
// made in a subdirectory during the call are refused, and the result says
// which and why (fs_denied: time, op, path, deciding rule), deduplicated.
// Checked on the HOST afterwards: the protected names do not exist, the
// ordinary neighbours do.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { TRANSPORTS, start, tmpdir } from './lib.mjs';

const POLICY = '[filesystem]\ndeny_read = ["**/*.secret"]\n';

for (const T of TRANSPORTS) {
  test(`${T}: session_bash cannot make protected names at depth; fs_denied names each refusal and its rule`, async (t) => {
    if (!fs.existsSync('/dev/fuse')) return t.skip('no /dev/fuse');
    const srv = await start(T, { config: POLICY });
    try {
      const { session_id } = await srv.call('create_session', {});
      const r = await srv.call('session_bash', {
        session_id,
        command: 'mkdir -p sub/deeper sub/.git; mkdir sub/.git/hooks; echo x > sub/.mcp.json; echo x > sub/.mcp.json; ' +
          'echo p > sub/deeper/.profile; echo s > sub/deeper/k.secret; echo ok > sub/ok.txt; echo END',
      });
      assert.match(r.stdout, /END/);
      const ws = path.join(srv.stateDir, 'sessions', session_id, 'workspace');
      for (const p of ['sub/.git/hooks', 'sub/.mcp.json', 'sub/deeper/.profile', 'sub/deeper/k.secret'])
        assert.ok(!fs.existsSync(path.join(ws, p)), `${p} was made on the host`);
      assert.equal(fs.readFileSync(path.join(ws, 'sub/ok.txt'), 'utf8'), 'ok\n');
      assert.ok(Array.isArray(r.fs_denied), `no fs_denied in ${JSON.stringify(r)}`);
      const seen = r.fs_denied.map((d) => `${d.op} ${path.relative(ws, d.path)} ${d.rule}`);
      assert.ok(seen.some((s) => /^mkdir sub\/\.git\/hooks protect\.git_hooks/.test(s)), seen.join('\n'));
      assert.ok(seen.some((s) => /^create sub\/\.mcp\.json protect\.agent_config/.test(s)), seen.join('\n'));
      assert.ok(seen.some((s) => /^create sub\/deeper\/k\.secret .*filesystem\.deny_read "\*\*\/\*\.secret"/.test(s)), seen.join('\n'));
      assert.equal(seen.filter((s) => s.startsWith('create sub/.mcp.json')).length, 1, 'deduplicated');
      for (const d of r.fs_denied) assert.match(d.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    } finally {
      await srv.close();
    }
  });
}

// A served tree's root swapped for a symlink after the compile (drun-mcp
// compiles once per config version): a sandbox that could write the root's
// ancestor in an earlier run, or the host meanwhile, turned ~/data into a
// link to a directory holding a secret. The daemon opens each root with no
// symlink followed (openat2 RESOLVE_NO_SYMLINKS from "/"), so the run is
// refused with a message naming the root, and the secret's directory is
// never served (nor the run falls back to mounts, which would follow it).
test('a served root replaced by a symlink between two runs: the run is refused, the target never served', async (t) => {
  if (!fs.existsSync('/dev/fuse')) return t.skip('no /dev/fuse');
  const base = tmpdir('swap-');
  const data = path.join(base, 'data'), secret = path.join(base, 'secret');
  fs.mkdirSync(data);
  fs.writeFileSync(path.join(data, 'note.txt'), 'public\n');
  fs.mkdirSync(secret, { mode: 0o755 });
  fs.writeFileSync(path.join(secret, 'key'), 'TOPSECRET\n', { mode: 0o644 });
  const srv = await start('stdio', { config: `[filesystem]\nallow_read = ["${data}"]\ndeny_write = ["**/.env"]\n` });
  try {
    const { session_id } = await srv.call('create_session', {});
    const first = await srv.call('session_bash', { session_id, command: `cat ${data}/note.txt; grep -c fuse.drun /proc/self/mountinfo` });
    assert.match(first.stdout, /public/);
    assert.ok(Number(first.stdout.trim().split('\n').pop()) >= 2, `the tree is served by the layer: ${first.stdout}`);
    fs.renameSync(data, `${data}.old`);
    fs.symlinkSync(secret, data);
    const r = await srv.callRaw('session_bash', { session_id, command: `cat ${data}/key; ls -la ${data}; echo RAN` });
    const text = JSON.stringify(r);
    assert.ok(!/TOPSECRET/.test(text), `the secret was served: ${text}`);
    assert.ok(!/RAN/.test(r.structuredContent?.stdout || ''), `the command ran: ${text}`);
    assert.match(text, /no longer the directory the policy was compiled for/);
    // the host: the secret's directory as it was, nothing made in it
    assert.deepEqual(fs.readdirSync(secret), ['key']);
    assert.equal(fs.readFileSync(path.join(secret, 'key'), 'utf8'), 'TOPSECRET\n');
    // the swap undone, the session runs again: the refusal was about the link
    fs.unlinkSync(data);
    fs.renameSync(`${data}.old`, data);
    const again = await srv.call('session_bash', { session_id, command: `cat ${data}/note.txt` });
    assert.match(again.stdout, /public/);
  } finally {
    await srv.close();
  }
});
