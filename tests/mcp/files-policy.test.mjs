// files-policy.test.mjs — the file tools obey the policy the sandbox is
// compiled from (issue 13 item 1, SPEC §12): under deny_read, deny_write and
// the default [protect], session_write_file, session_read_file,
// session_list_files and session_fetch's save_as refuse what a command
// inside could not do, at the workspace root and below, and name the
// deciding rule. Every refusal is checked on the HOST: the file under the
// state dir is absent or unchanged.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { TRANSPORTS, giveToSandbox, sharedServers } from './lib.mjs';

const CONFIG = `# files-policy test
[filesystem]
allow_read = ["\${WORKSPACE}/docs"]
allow_write = ["\${WORKSPACE}/docs/out"]
deny_read = ["**/.env"]
deny_write = ["**/secret.txt"]
`;
const DEPTHS = ['', 'sub/', 'sub/deeper/'];


/* One server per transport under CONFIG (sharedServers): every test makes a
 * session of its own on it and checks that session's workspace on the host. */
const withServer = sharedServers({ config: CONFIG });

/** Calls a tool that must be refused; returns the result's text. */
async function refused(srv, name, args) {
  const r = await srv.callRaw(name, args);
  assert.equal(r.isError, true, `${name} ${args.path} was not refused: ${JSON.stringify(r.structuredContent)}`);
  return r.content.map((c) => c.text).join('\n');
}

/** The host file's bytes, or null when it does not exist. */
function host(ws, rel) {
  try {
    return fs.readFileSync(path.join(ws, rel), 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
    throw e;
  }
}

for (const T of TRANSPORTS) {
  test(`${T}: session_write_file refuses deny_write, deny_read and [protect] paths at every depth; the host is untouched`, async () => {
    await withServer(T, async (srv) => {
      const { session_id, workspace: ws } = await srv.call('create_session', {});
      for (const d of DEPTHS) {
        // never existed: refused and still absent
        const cases = [
          [`${d}secret.txt`, /config\.toml:6:\d+ filesystem\.deny_write "\*\*\/secret\.txt"/],
          [`${d}.env`, /config\.toml:5:\d+ filesystem\.deny_read "\*\*\/\.env"/],
          [`${d}.git/hooks/pre-commit`, /protect\.git_hooks "\*\*\/\.git\/hooks"/],
          [`${d}.git/config`, /protect\.git_config/],
          [`${d}.bashrc`, /protect\.shell_rc "\*\*\/\.bashrc"/],
          [`${d}.vscode/settings.json`, /protect\.editor_dirs/],
          [`${d}.claude/commands/x.md`, /protect\.agent_config/],
        ];
        for (const [rel, rule] of cases) {
          const text = await refused(srv, 'session_write_file', { session_id, path: rel, content: 'pwned' });
          assert.match(text, /Refused by the policy/, rel);
          assert.match(text, rule, rel);
          assert.equal(host(ws, rel), null, `${rel} was created on the host`);
        }
        // existing on the host: refused and unchanged
        fs.mkdirSync(path.join(ws, d, '.git/hooks'), { recursive: true });
        for (const rel of [`${d}secret.txt`, `${d}.env`, `${d}.bashrc`, `${d}.git/hooks/pre-commit`]) {
          fs.writeFileSync(path.join(ws, rel), 'original\n');
          await refused(srv, 'session_write_file', { session_id, path: rel, content: 'pwned' });
          assert.equal(host(ws, rel), 'original\n', `${rel} changed on the host`);
        }
        // session_fetch's save_as: refused before any connection is tried
        for (const rel of [`${d}secret.txt`, `${d}.bashrc`, `${d}.git/hooks/post-checkout`, `${d}.env`]) {
          const text = await refused(srv, 'session_fetch', { session_id, url: 'http://127.0.0.1:9/x', save_as: rel, overwrite: true });
          assert.match(text, /save_as: Refused by the policy/, rel);
        }
        assert.equal(host(ws, `${d}.git/hooks/post-checkout`), null);
        assert.equal(host(ws, `${d}secret.txt`), 'original\n');
        // what the policy allows still works
        const ok = await srv.call('session_write_file', { session_id, path: `${d}notes/ok.txt`, content: 'fine' });
        assert.equal(ok.created, true);
        assert.equal(host(ws, `${d}notes/ok.txt`), 'fine');
        await srv.call('session_write_file', { session_id, path: `${d}.git/info/exclude`, content: '*.o\n' });
        assert.equal(host(ws, `${d}.git/info/exclude`), '*.o\n');
      }
    });
  });

  test(`${T}: a write that would create an entry in a read-only directory is refused (docs is read, docs/out write)`, async () => {
    await withServer(T, async (srv) => {
      const { session_id, workspace: ws } = await srv.call('create_session', {});
      // docs missing: creating it in the workspace would be fine, but not docs/x
      let text = await refused(srv, 'session_write_file', { session_id, path: 'docs/x.txt', content: 'x' });
      assert.match(text, /cannot write "docs"|cannot write "docs\/x\.txt"/);
      assert.match(text, /config\.toml:3:\d+ filesystem\.allow_read "\$\{WORKSPACE\}\/docs"/);
      assert.equal(host(ws, 'docs'), null);
      // docs/out is writable by its grant, but docs/out cannot be made inside read-only docs
      fs.mkdirSync(path.join(ws, 'docs'));
      giveToSandbox(path.join(ws, 'docs'));
      text = await refused(srv, 'session_write_file', { session_id, path: 'docs/out/a.txt', content: 'x' });
      assert.match(text, /cannot write "docs"/);
      assert.equal(host(ws, 'docs/out'), null);
      // once docs/out exists (the user made it), writing inside works, as in the sandbox
      fs.mkdirSync(path.join(ws, 'docs/out'));
      giveToSandbox(path.join(ws, 'docs/out'));
      await srv.call('session_write_file', { session_id, path: 'docs/out/a.txt', content: 'made' });
      assert.equal(host(ws, 'docs/out/a.txt'), 'made');
      // and the sandbox agrees on both
      const b = await srv.call('session_bash', { session_id, command: 'echo y > docs/out/b.txt; echo $?; echo z > docs/c.txt 2>/dev/null; echo $?' });
      assert.equal(b.stdout, '0\n1\n');
    });
  });

  test(`${T}: session_read_file refuses deny_read paths at every depth without their content; others read`, async () => {
    await withServer(T, async (srv) => {
      const { session_id, workspace: ws } = await srv.call('create_session', {});
      for (const d of DEPTHS) {
        fs.mkdirSync(path.join(ws, d, '.git/hooks'), { recursive: true });
        fs.writeFileSync(path.join(ws, d, '.env'), 'TOKEN=hunter2\n');
        fs.writeFileSync(path.join(ws, d, 'secret.txt'), 'readable but not writable\n');
        fs.writeFileSync(path.join(ws, d, '.git/hooks/pre-commit'), '#!/bin/sh\n');
        const text = await refused(srv, 'session_read_file', { session_id, path: `${d}.env` });
        assert.doesNotMatch(text, /hunter2/);
        assert.match(text, /cannot read ".*\.env".*filesystem\.deny_read "\*\*\/\.env"/);
        const b64 = await srv.callRaw('session_read_file', { session_id, path: `${d}.env`, encoding: 'base64' });
        assert.equal(b64.isError, true);
        assert.doesNotMatch(JSON.stringify(b64), /hunter2|VE9LRU49aHVudGVyMg/);
        // deny_write and [protect] leave reading alone, as in the sandbox
        assert.equal((await srv.call('session_read_file', { session_id, path: `${d}secret.txt` })).content,
          'readable but not writable\n');
        assert.equal((await srv.call('session_read_file', { session_id, path: `${d}.git/hooks/pre-commit` })).content,
          '#!/bin/sh\n');
      }
      // a listing of a hidden directory is refused too
      fs.mkdirSync(path.join(ws, 'sub/deeper/.env.d'), { recursive: true });
      fs.mkdirSync(path.join(ws, 'vault/.env'), { recursive: true });
      fs.writeFileSync(path.join(ws, 'vault/.env/key'), 'hunter2');
      const text = await refused(srv, 'session_list_files', { session_id, path: 'vault/.env' });
      assert.doesNotMatch(text, /key|hunter2/);
    });
  });

  test(`${T}: session_list_files shows neither hidden paths nor placeholders, at every depth`, async () => {
    await withServer(T, async (srv) => {
      const { session_id, workspace: ws } = await srv.call('create_session', {});
      for (const d of DEPTHS) {
        fs.mkdirSync(path.join(ws, d), { recursive: true });
        fs.writeFileSync(path.join(ws, d, '.env'), 'TOKEN=hunter2\n');
        fs.writeFileSync(path.join(ws, d, 'file.txt'), 'x');
        // what bwrap leaves to block protected names that do not exist:
        // empty directories and empty files
        fs.mkdirSync(path.join(ws, d, '.git'));
        fs.mkdirSync(path.join(ws, d, '.claude'));
        fs.mkdirSync(path.join(ws, d, '.vscode'));
        fs.writeFileSync(path.join(ws, d, '.bashrc'), '');
        fs.writeFileSync(path.join(ws, d, '.gitconfig'), '');
        // a real, empty directory of the user's is not a placeholder
        fs.mkdirSync(path.join(ws, d, 'empty'));
      }
      const all = await srv.call('session_list_files', { session_id, recursive: true });
      const paths = all.entries.map((e) => e.path).sort();
      assert.deepEqual(paths, [
        'empty', 'file.txt', 'sub',
        'sub/deeper', 'sub/deeper/empty', 'sub/deeper/file.txt',
        'sub/empty', 'sub/file.txt',
      ]);
      for (const d of ['', 'sub', 'sub/deeper']) {
        const one = await srv.call('session_list_files', { session_id, path: d });
        assert.ok(!one.entries.some((e) => /\.env|\.git|\.claude|\.vscode|\.bashrc|\.gitconfig/.test(e.path)),
          JSON.stringify(one.entries));
      }
      // a .git that holds the user's files is shown, its placeholder hooks/ is not
      fs.writeFileSync(path.join(ws, '.git/HEAD'), 'ref: refs/heads/main\n');
      fs.mkdirSync(path.join(ws, '.git/hooks'));
      const git = await srv.call('session_list_files', { session_id, path: '.git' });
      assert.deepEqual(git.entries.map((e) => e.path), ['.git/HEAD']);
    });
  });

  test(`${T}: after real commands, no placeholder a run left is listed, and none is "Replaced"`, async () => {
    await withServer(T, async (srv) => {
      const { session_id } = await srv.call('create_session', {});
      for (let i = 0; i < 3; i++) {
        await srv.call('session_bash', { session_id, command: 'mkdir -p sub && echo hi > sub/a.txt' });
        const l = await srv.call('session_list_files', { session_id, recursive: true });
        assert.deepEqual(l.entries.map((e) => e.path).sort(), ['sub', 'sub/a.txt']);
      }
      const w = await srv.call('session_write_file', { session_id, path: '.git/info/exclude', content: 'x' });
      assert.equal(w.created, true);
    });
  });
}
