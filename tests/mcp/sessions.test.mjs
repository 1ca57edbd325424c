// sessions.test.mjs — drun's session model in drun-mcp (SPEC §14, issue 15),
// through the official SDK client over stdio and Streamable HTTP: a whole
// trajectory (mount a fixture repository, run its tests, edit, history and
// diff, fork, diverge, roll back, export and compare byte for byte,
// snapshot, close, restore), then every refusal, each checked on the HOST
// afterwards (nothing written outside, nothing read through a symlink,
// the object store out of every sandbox's reach).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { execFileSync } from 'node:child_process';

import { TRANSPORTS, tmpdir, withServer } from './lib.mjs';
import { sdkClient, spawnHttp } from './rawhttp.mjs';

/** A host tree: allowed/proj (the fixture repository), allowed/out (export
 * target), outside/ (never to be touched), and links out of allowed/. */
function hostTree() {
  const h = tmpdir('host-');
  const w = (rel, text, mode) => {
    fs.mkdirSync(path.dirname(path.join(h, rel)), { recursive: true });
    fs.writeFileSync(path.join(h, rel), text);
    if (mode) fs.chmodSync(path.join(h, rel), mode);
  };
  w('allowed/proj/src/add.sh', 'echo $(($1 + $2))\n');
  w('allowed/proj/test.sh', '#!/bin/sh\n[ "$(sh src/add.sh 2 3)" = 5 ] && echo PASS || echo FAIL\n', 0o755);
  w('allowed/proj/README', 'fixture\n');
  w('allowed/proj/.env', 'TOKEN=host\n');
  w('allowed/proj/deep/er/.bashrc', 'alias ls=evil\n');
  w('allowed/proj/key.pem', 'PRIVATE KEY\n');
  w('outside/host.txt', 'HOST-ONLY\n');
  fs.symlinkSync('../outside', path.join(h, 'allowed/escape'));
  fs.symlinkSync(path.join(h, 'outside/host.txt'), path.join(h, 'allowed/proj/link-out'));
  fs.mkdirSync(path.join(h, 'allowed/out'));
  fs.chmodSync(h, 0o755);
  for (const d of ['allowed', 'allowed/proj', 'outside']) fs.chmodSync(path.join(h, d), 0o755);
  return h;
}

const config = (h, extra = '') => `mount_allowlist = ["${h}/allowed"]
${extra}
[filesystem]
deny_read = ["**/*.pem"]
deny_write = ["**/.env"]
`;

/** Every file below dir (relative path -> content), symlinks as "-> target". */
function tree(dir) {
  const out = {};
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isSymbolicLink()) out[r] = `-> ${fs.readlinkSync(path.join(dir, r))}`;
      else out[r] = fs.readFileSync(path.join(dir, r), 'latin1');
    }
  };
  walk('');
  return out;
}

const text = (r) => r.content.map((c) => c.text).join('\n');

async function refused(srv, name, args, re) {
  const r = await srv.callRaw(name, args);
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} was not refused: ${text(r)}`);
  if (re) assert.match(text(r), re);
  return text(r);
}

for (const T of TRANSPORTS) {
  test(`${T}: a trajectory: mount, test, edit, diff, fork, diverge, roll back, export, snapshot, restore`, async () => {
    const h = hostTree();
    await withServer(T, { config: config(h) }, async (srv) => {
      // mount the fixture repository at creation
      const a = await srv.call('create_session', { label: 'traj', mounts: [`${h}/allowed/proj`] });
      assert.equal(a.checkpoint_id, 1);
      const A = a.session_id;
      assert.equal(fs.readFileSync(path.join(a.workspace, 'proj/src/add.sh'), 'utf8'), 'echo $(($1 + $2))\n');
      assert.equal(fs.existsSync(path.join(a.workspace, 'proj/key.pem')), false, 'deny_read left out');
      assert.ok(a.mounts[0].skipped.some((s) => s.path === 'key.pem'), 'and reported');
      assert.equal(fs.readlinkSync(path.join(a.workspace, 'proj/link-out')), `${h}/outside/host.txt`,
        'a symlink inside is copied as a symlink');

      // run its tests: nothing changes, no checkpoint
      let r = await srv.call('session_bash', { session_id: A, command: 'cd proj && sh test.sh' });
      assert.equal(r.stdout, 'PASS\n');
      assert.equal(r.checkpoint_id, undefined, 'an unchanged workspace records no checkpoint');

      // edit a file: checkpoint 2, history, diff
      r = await srv.call('session_write_file', { session_id: A, path: 'proj/src/add.sh', content: 'echo $(($1 + $2 + 0))\n' });
      assert.equal(r.checkpoint_id, 2);
      const hist = await srv.call('session_history', { session_id: A });
      assert.deepEqual(hist.checkpoints.map((c) => c.checkpoint_id), [1, 2]);
      assert.equal(hist.checkpoints[0].tool, 'create_session');
      assert.ok(hist.checkpoints[0].added.includes('proj/src/add.sh'));
      assert.deepEqual(hist.checkpoints[1].modified, ['proj/src/add.sh']);
      assert.equal(hist.checkpoints[1].tool, 'session_write_file');
      const d = await srv.call('session_diff', { session_id: A });
      assert.match(d.diff, /-echo \$\(\(\$1 \+ \$2\)\)\n\+echo \$\(\(\$1 \+ \$2 \+ 0\)\)/);

      // fork, diverge
      const b = await srv.call('session_fork', { session_id: A, label: 'b' });
      const B = b.session_id;
      assert.equal(b.checkpoint_id, 2);
      r = await srv.call('session_bash', { session_id: A, command: 'echo a > proj/a.txt' });
      assert.equal(r.checkpoint_id, 3);
      r = await srv.call('session_bash', { session_id: B, command: 'echo b > proj/b.txt; ln -s /etc/passwd proj/pw' });
      assert.equal(r.checkpoint_id, 3);
      assert.ok(fs.existsSync(path.join(a.workspace, 'proj/a.txt')) && !fs.existsSync(path.join(a.workspace, 'proj/b.txt')));
      assert.ok(fs.existsSync(path.join(b.workspace, 'proj/b.txt')) && !fs.existsSync(path.join(b.workspace, 'proj/a.txt')));

      // roll A back: a new checkpoint, a.txt gone on the host
      r = await srv.call('session_rollback', { session_id: A, checkpoint: 2 });
      assert.equal(r.checkpoint_id, 4);
      assert.equal(fs.existsSync(path.join(a.workspace, 'proj/a.txt')), false);
      const ha = await srv.call('session_history', { session_id: A });
      assert.deepEqual(ha.checkpoints[3].deleted, ['proj/a.txt']);

      // label B's checkpoint, export it and compare byte for byte
      await srv.call('session_label', { session_id: B, checkpoint: 3, label: 'good' });
      const out = path.join(h, 'allowed/out');
      fs.writeFileSync(path.join(out, 'stale.txt'), 'stale\n');
      const dry = await srv.call('session_export', { session_id: B, output_dir: out, checkpoint: 'good', dry_run: true, delete: true });
      assert.deepEqual(dry.removed, ['stale.txt']);
      assert.match(dry.diff, /\+b/);
      assert.deepEqual(Object.keys(tree(out)), ['stale.txt'], 'a dry run writes nothing');
      const ex = await srv.call('session_export', { session_id: B, output_dir: out, checkpoint: 'good', delete: true });
      const skipped = Object.fromEntries(ex.skipped.map((s) => [s.path, s.reason]));
      assert.match(skipped['proj/.env'], /deny_write/);
      assert.match(skipped['proj/deep/er/.bashrc'], /protect/);
      assert.match(skipped['proj/pw'], /symbolic link/);
      assert.match(skipped['proj/link-out'], /symbolic link/);
      assert.deepEqual(tree(out), {
        'proj/README': 'fixture\n',
        'proj/b.txt': 'b\n',
        'proj/src/add.sh': 'echo $(($1 + $2 + 0))\n',
        'proj/test.sh': '#!/bin/sh\n[ "$(sh src/add.sh 2 3)" = 5 ] && echo PASS || echo FAIL\n',
      });
      assert.equal(fs.statSync(path.join(out, 'proj/test.sh')).mode & 0o111, 0o111, 'the exec bit is kept');
      assert.deepEqual(ex.removed, ['stale.txt']);

      // snapshot B, close it, restore: the history is intact
      const before = await srv.call('session_history', { session_id: B });
      await srv.call('session_snapshot', { session_id: B, name: 'b-snap' });
      await srv.call('session_close', { session_id: B });
      const ls = await srv.call('list_snapshots', {});
      assert.ok(ls.snapshots.some((s) => s.name === 'b-snap'));
      const c = await srv.call('session_restore', { name: 'b-snap' });
      const after = await srv.call('session_history', { session_id: c.session_id });
      const strip = (v) => v.checkpoints.map(({ time, ...rest }) => rest);
      assert.deepEqual(strip(after), strip(before));
      assert.equal(after.checkpoints[2].label, 'good');
      assert.equal(fs.readFileSync(path.join(c.workspace, 'proj/b.txt'), 'utf8'), 'b\n');
      r = await srv.call('session_bash', { session_id: c.session_id, command: 'echo c > c.txt' });
      assert.equal(r.checkpoint_id, 4, 'the restored session goes on');

      // get_policy shows the allowlist and the snapshots dir
      const pol = await srv.call('get_policy', {});
      assert.deepEqual(pol.policy.mount_allowlist, [`${h}/allowed`]);
      assert.ok(pol.snapshots_dir.endsWith('/snapshots/p0'), 'the one principal of a server with no tokens');
      assert.deepEqual(tree(path.join(h, 'outside')), { 'host.txt': 'HOST-ONLY\n' }, 'outside is untouched');
    });
  });
}

test('refusals change nothing on the host', async () => {
  const h = hostTree();
  await withServer('stdio', { config: config(h, 'max_workspace_mb = 1') }, async (srv) => {
    const s = await srv.call('create_session', {});
    const S = s.session_id;
    const wsBefore = () => tree(s.workspace);
    const empty = wsBefore();
    // mounts
    await refused(srv, 'session_mount', { session_id: S, path: `${h}/outside` }, /outside mount_allowlist/);
    await refused(srv, 'session_mount', { session_id: S, path: `${h}/allowed/escape` }, /outside mount_allowlist/);
    await refused(srv, 'session_mount', { session_id: S, path: `${h}/allowed/../outside` }, /"\.\."/);
    await refused(srv, 'session_mount', { session_id: S, path: `${h}/allowed/proj`, target: '../x' }, /"\.\."/);
    await refused(srv, 'session_mount', { session_id: S, path: 'allowed/proj' }, /absolute/);
    fs.writeFileSync(path.join(h, 'allowed/big.bin'), Buffer.alloc(2 << 20, 1));
    await refused(srv, 'session_mount', { session_id: S, path: `${h}/allowed/big.bin` }, /max_workspace_mb/);
    assert.deepEqual(wsBefore(), empty, 'no refused mount wrote into the workspace');
    await refused(srv, 'create_session', { mounts: [`${h}/outside`] }, /outside mount_allowlist/);

    // checkpoints and labels
    await srv.call('session_write_file', { session_id: S, path: 'f.txt', content: 'x' });
    await refused(srv, 'session_diff', { session_id: S, from: 99 }, /no checkpoint 99/);
    await refused(srv, 'session_rollback', { session_id: S, checkpoint: 'nope' }, /labelled "nope"/);
    await refused(srv, 'session_label', { session_id: S, label: '12' }, /not only digits/);
    await refused(srv, 'session_label', { session_id: S, label: 'a/b' }, /not accepted/);
    await refused(srv, 'session_fork', { session_id: S, checkpoint: 42 }, /no checkpoint 42/);

    // exports
    await refused(srv, 'session_export', { session_id: S, output_dir: `${h}/outside/x` }, /outside mount_allowlist/);
    fs.symlinkSync('../outside', path.join(h, 'allowed/outlink'));
    await refused(srv, 'session_export', { session_id: S, output_dir: `${h}/allowed/outlink` }, /symlink/);
    await refused(srv, 'session_export', { session_id: S, output_dir: `${h}/allowed/outlink/sub` }, /symlink/);
    await refused(srv, 'session_export', { session_id: S, output_dir: `${h}/allowed/../outside` }, /"\.\."/);
    await refused(srv, 'session_export', { session_id: S, output_dir: `${h}/allowed/o`, checkpoint: 'missing' }, /labelled "missing"/);
    assert.deepEqual(tree(path.join(h, 'outside')), { 'host.txt': 'HOST-ONLY\n' }, 'nothing was written outside');
    assert.equal(fs.existsSync(path.join(h, 'allowed/o')), false);

    // snapshots
    await refused(srv, 'session_snapshot', { session_id: S, name: 'a/b' }, /no slash/);
    await refused(srv, 'session_snapshot', { session_id: S, name: '../../x' }, /no slash/);
    await refused(srv, 'session_restore', { name: '../sessions/x' }, /no slash/);
    await refused(srv, 'session_restore', { name: 'never-made' }, /No snapshot/);
    const snaps = path.join(srv.stateDir, 'snapshots/p0');
    fs.mkdirSync(snaps, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(snaps, 'junk.drun'), '# v2 git bundle\nnot a bundle\n');
    await refused(srv, 'session_restore', { name: 'junk' }, /not a drun-mcp snapshot/);
    fs.symlinkSync(path.join(h, 'outside/host.txt'), path.join(snaps, 'link.drun'));
    await refused(srv, 'session_restore', { name: 'link' }, /No snapshot/);
    assert.equal(fs.readdirSync(snaps).filter((n) => !['junk.drun', 'link.drun'].includes(n)).length, 0);
  });
});

test('the object store and the snapshots are out of every sandbox\'s reach', async () => {
  const h = hostTree();
  // a policy that tries to grant the state dir: the runtime-owned caps hold anyway
  await withServer('stdio', { config: config(h) }, async (srv) => {
    const s = await srv.call('create_session', { mounts: [`${h}/allowed/proj`] });
    await srv.call('session_snapshot', { session_id: s.session_id, name: 'snap' });
    const store = path.join(srv.stateDir, 'sessions', `ckpt-${s.session_id}`);
    assert.ok(fs.existsSync(path.join(store, 'HEAD')), 'the store is where the test looks');
    const headBefore = fs.readFileSync(path.join(store, 'HEAD'), 'utf8');
    const snap = path.join(srv.stateDir, 'snapshots/p0', 'snap.drun');
    const snapBefore = fs.readFileSync(snap);
    const r = await srv.call('session_bash', {
      session_id: s.session_id,
      command: `cat ${store}/HEAD; ls ${store}/objects; echo evil > ${store}/HEAD; echo x > ${store}/evil; ` +
        `cat ${snap} | head -c 20; echo x > ${snap}; ls ${srv.stateDir}/snapshots; true`,
    });
    assert.doesNotMatch(r.stdout, /ref:|# v2 git bundle/, 'nothing of the store or the snapshots was read');
    assert.equal(fs.readFileSync(path.join(store, 'HEAD'), 'utf8'), headBefore, 'the store is unchanged');
    assert.equal(fs.existsSync(path.join(store, 'evil')), false);
    assert.deepEqual(fs.readFileSync(snap), snapBefore, 'the snapshot is unchanged');
    // a symlink the command plants is recorded as a link and not followed by any tool
    await srv.call('session_bash', { session_id: s.session_id, command: `ln -s ${h}/outside/host.txt leak` });
    const d = await srv.call('session_diff', { session_id: s.session_id });
    assert.doesNotMatch(d.diff, /HOST-ONLY/);
    assert.match(d.diff, /\+\S*outside\/host\.txt/);
  });
});

test('a mount source swapped for a symlink while it is copied never brings in what lies outside', async () => {
  const h = hostTree();
  fs.writeFileSync(path.join(h, 'outside/secret'), 'OUTSIDE-SECRET\n');
  const src = path.join(h, 'allowed/flip');
  fs.mkdirSync(src);
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(src, `f${i}`), 'inside\n');
  await withServer('stdio', { config: config(h) }, async (srv) => {
    const s = await srv.call('create_session', {});
    let stop = false;
    // the swapper: the directory and a symlink out, exchanged as fast as it can
    const swapper = (async () => {
      while (!stop) {
        try {
          fs.renameSync(src, `${src}.real`);
          fs.symlinkSync(path.join(h, 'outside'), src);
          await new Promise((r) => setImmediate(r));
          fs.unlinkSync(src);
          fs.renameSync(`${src}.real`, src);
        } catch { /* a lost race: retry */ }
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 0; i < 30; i++)
      await srv.callRaw('session_mount', { session_id: s.session_id, path: src, target: `m${i}` });
    stop = true;
    await swapper;
    const all = JSON.stringify(tree(s.workspace));
    assert.doesNotMatch(all, /OUTSIDE-SECRET|HOST-ONLY/, 'nothing from outside reached the workspace');
  });
});

test('an export target swapped for a symlink while it is written gets nothing outside', async () => {
  const h = hostTree();
  await withServer('stdio', { config: config(h) }, async (srv) => {
    const s = await srv.call('create_session', { mounts: [`${h}/allowed/proj`] });
    const target = path.join(h, 'allowed/out/t');
    fs.mkdirSync(target, { recursive: true });
    let stop = false;
    const swapper = (async () => {
      while (!stop) {
        try {
          fs.renameSync(target, `${target}.real`);
          fs.symlinkSync(path.join(h, 'outside'), target);
          await new Promise((r) => setImmediate(r));
          fs.unlinkSync(target);
          fs.renameSync(`${target}.real`, target);
        } catch { /* lost race */ }
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 0; i < 30; i++)
      await srv.callRaw('session_export', { session_id: s.session_id, output_dir: target, delete: i % 2 === 1 });
    stop = true;
    await swapper;
    assert.deepEqual(tree(path.join(h, 'outside')), { 'host.txt': 'HOST-ONLY\n' }, 'nothing was written outside');
  });
});

test('an empty mount_allowlist allows no mount and no export', async () => {
  const h = hostTree();
  await withServer('stdio', { config: '' }, async (srv) => {
    const s = await srv.call('create_session', {});
    await refused(srv, 'session_mount', { session_id: s.session_id, path: `${h}/allowed/proj` }, /empty/);
    await refused(srv, 'session_export', { session_id: s.session_id, output_dir: `${h}/allowed/out` }, /empty/);
    assert.deepEqual(fs.readdirSync(path.join(h, 'allowed/out')), []);
  });
});

test('an allowlist that covers the state dir still keeps the store, the snapshots and other sessions out', async () => {
  const dir = tmpdir('wide-');
  const h = hostTree();
  await withServer('stdio', { dir, config: `mount_allowlist = ["${dir}", "${h}/allowed"]\n` }, async (srv) => {
    const a = await srv.call('create_session', { mounts: [`${h}/allowed/proj`] });
    const b = await srv.call('create_session', {});
    await srv.call('session_snapshot', { session_id: a.session_id, name: 'a' });
    const state = srv.stateDir;
    const before = JSON.stringify(tree(state));
    await refused(srv, 'session_mount', { session_id: b.session_id, path: `${state}/sessions`, target: 's' }, /hidden by the policy/);
    await refused(srv, 'session_mount', { session_id: b.session_id, path: a.workspace, target: 'w' }, /hidden by the policy/);
    await refused(srv, 'session_export', { session_id: a.session_id, output_dir: `${state}/snapshots` }, /runtime|protected/);
    await refused(srv, 'session_export', { session_id: a.session_id, output_dir: `${b.workspace}/x` }, /runtime|protected/);
    assert.equal(fs.existsSync(path.join(b.workspace, 's')) || fs.existsSync(path.join(b.workspace, 'w')), false);
    assert.equal(JSON.stringify(tree(state)), before, 'nothing under the state dir changed');
  });
});

test('a family\'s object store lives while one of its sessions does, and goes with the last', async () => {
  await withServer('stdio', { config: '' }, async (srv) => {
    const a = await srv.call('create_session', {});
    await srv.call('session_write_file', { session_id: a.session_id, path: 'x', content: 'x' });
    const b = await srv.call('session_fork', { session_id: a.session_id });
    const store = path.join(srv.stateDir, 'sessions', `ckpt-${a.session_id}`);
    await srv.call('session_close', { session_id: a.session_id });
    assert.ok(fs.existsSync(store), 'the fork still uses the store');
    const r = await srv.call('session_rollback', { session_id: b.session_id, checkpoint: 1 });
    assert.equal(r.checkpoint_id, 3);
    await srv.call('session_close', { session_id: b.session_id });
    assert.deepEqual(fs.readdirSync(path.join(srv.stateDir, 'sessions')), [], 'store and sessions are gone');
  });
});

/* ---- git on the host: an export never hands host git code to run (SPEC §14, §16) ---- */

/** git on the host as a user would run it in dir; '' when it fails. */
const git = (dir, ...a) => {
  try {
    return execFileSync('git', ['-c', 'safe.directory=*', '-C', dir, ...a], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch { return ''; }
};
const skipsOf = (ex) => Object.fromEntries(ex.skipped.map((s) => [s.path, s.reason]));
/** Writes rel in the workspace from the host side: what a command could do
 * under the mount fallback (no access-time layer, SPEC §13), so that the
 * export's own check is what a test sees (the layer refuses these names). */
const plant = (ws, rel, text) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};

test('an export over a host repository by its structure writes neither its config nor its hooks', async () => {
  const h = hostTree();
  const out = path.join(h, 'allowed/out');
  // a bare repository with no .git in its name (no protected-name pattern
  // matches) and a host repo with a submodule gitdir .git/modules/lib
  execFileSync('git', ['init', '-q', '--bare', path.join(out, 'barerepo')]);
  execFileSync('git', ['init', '-q', path.join(out, 'host')]);
  execFileSync('git', ['init', '-q', '--bare', path.join(out, 'host/.git/modules/lib')]);
  const before = tree(out);
  await withServer('stdio', { config: config(h) }, async (srv) => {
    const s = await srv.call('create_session', {});
    const S = s.session_id;
    // no repository in the workspace: the sandbox's layer has nothing to recognise
    await srv.call('session_bash', { session_id: S, command: `
      mkdir -p barerepo/hooks
      printf '[core]\\n\\tbare = true\\n\\tfsmonitor = touch /tmp/pwned\\n' > barerepo/config
      printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > barerepo/hooks/post-update; chmod +x barerepo/hooks/post-update
      echo ok > barerepo/description.txt` });
    plant(s.workspace, 'host/.git/modules/lib/config', '[core]\n\tfsmonitor = touch /tmp/pwned\n');
    plant(s.workspace, 'host/.git/modules/lib/hooks/post-update', '#!/bin/sh\ntouch /tmp/pwned\n');
    const ex = await srv.call('session_export', { session_id: S, output_dir: out });
    const sk = skipsOf(ex);
    for (const p of ['barerepo/config', 'barerepo/hooks/post-update', 'host/.git/modules/lib/config', 'host/.git/modules/lib/hooks/post-update'])
      assert.match(sk[p] ?? '', /protect\.git_(config|hooks)/, `${p} skipped with the rule: ${JSON.stringify(sk)}`);
    assert.deepEqual(ex.written, ['barerepo/description.txt'], 'the rest is written');
    // the host: the repositories' config and hooks are what git init made
    const after = tree(out);
    delete after['barerepo/description.txt'];
    assert.deepEqual(after, before, 'no config or hook of a host repository changed or appeared');
    assert.equal(git(path.join(out, 'barerepo'), 'config', '--get', 'core.fsmonitor'), '');
    // an output_dir inside a repository's hooks is refused before any mkdir
    await refused(srv, 'session_export', { session_id: S, output_dir: path.join(out, 'barerepo/hooks/x') }, /protect\.git_hooks/);
    assert.equal(fs.existsSync(path.join(out, 'barerepo/hooks/x')), false);
  });
});

test('an export never writes a git redirection: gitfile, commondir, or a repository completed around a config', async () => {
  const h = hostTree();
  const out = path.join(h, 'allowed/out');
  execFileSync('git', ['init', '-q', '--bare', path.join(out, 'hostrepo')]);
  // a host directory that is no repository yet but holds a config
  fs.mkdirSync(path.join(out, 'half'));
  fs.writeFileSync(path.join(out, 'half/config'), '[core]\n\tfsmonitor = touch /tmp/pwned\n');
  const before = tree(out);
  await withServer('stdio', { config: config(h) }, async (srv) => {
    const s = await srv.call('create_session', {});
    const S = s.session_id;
    plant(s.workspace, 'hostrepo/commondir', '../c\n');
    plant(s.workspace, 'r/config', '[core]\n\tbare = false\n\tfsmonitor = touch /tmp/pwned\n');
    for (const [rel, t] of [['r/HEAD', 'ref: refs/heads/main\n'], ['r/objects/k', 'x\n'], ['r/refs/k', 'x\n']]) plant(s.workspace, rel, t);
    await srv.call('session_bash', { session_id: S, command: `
      mkdir -p c/objects c/refs c/hooks sub half/objects half/refs
      printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > c/config
      echo 'gitdir: ../r' > sub/.git
      echo 'ref: refs/heads/main' > half/HEAD; echo x > half/objects/k; echo x > half/refs/k` });
    const ex = await srv.call('session_export', { session_id: S, output_dir: out });
    const sk = skipsOf(ex);
    assert.match(sk['sub/.git'] ?? '', /gitfile/);
    assert.match(sk['hostrepo/commondir'] ?? '', /redirection/);
    assert.match(sk['r/config'] ?? '', /protect\.git_config/, `the repository the export builds counts: ${JSON.stringify(sk)}`);
    for (const p of ['half/HEAD', 'half/objects/k', 'half/refs/k'])
      assert.match(sk[p] ?? '', /would make "half" a git repository/, p);
    // the host
    const after = tree(out);
    for (const p of ['sub/.git', 'hostrepo/commondir', 'r/config', 'half/HEAD', 'half/objects/k', 'half/refs/k'])
      assert.equal(after[p], undefined, `${p} is not on the host`);
    for (const [p, v] of Object.entries(before)) assert.equal(after[p], v, `${p} unchanged`);
    for (const d of ['sub', 'hostrepo', 'half', 'r'])
      assert.equal(git(path.join(out, d), 'config', '--get', 'core.fsmonitor'), '', `host git in ${d} reads no planted config`);
  });
});

/* ---- snapshots belong to their principal (SPEC §12, §14) ---- */

test('a snapshot is listed and restored only by the principal that made it', async () => {
  const TOK_A = 'principal-a-0123456789abcdef', TOK_B = 'principal-b-fedcba9876543210';
  const srv = await spawnHttp({ tokens: [TOK_A, TOK_B] });
  const a = await sdkClient(srv.url, TOK_A), b = await sdkClient(srv.url, TOK_B);
  try {
    const A = (await a.call('create_session', {})).session_id;
    await a.call('session_write_file', { session_id: A, path: 'secret.txt', content: 'A-SECRET\n' });
    const snap = await a.call('session_snapshot', { session_id: A, name: 'a-private' });
    const aFile = path.join(srv.stateDir, 'snapshots/p0/a-private.drun');
    assert.equal(snap.path, aFile, 'the snapshot lives in its principal\'s dir');
    const aBytes = fs.readFileSync(aFile);
    // B: not listed, not restorable (the unknown-name answer), its own name space
    const ls = await b.call('list_snapshots', {});
    assert.deepEqual(ls.snapshots, []);
    const unknown = await b.fail('session_restore', { name: 'never-made' });
    const other = await b.fail('session_restore', { name: 'a-private' });
    assert.equal(other, unknown.replaceAll('never-made', 'a-private'), 'the same answer as for no snapshot');
    const Bs = (await b.call('create_session', {})).session_id;
    await b.call('session_write_file', { session_id: Bs, path: 'secret.txt', content: 'B-FORGED\n' });
    await b.call('session_snapshot', { session_id: Bs, name: 'a-private' });
    // the host: A's snapshot is byte for byte what A wrote, B's is elsewhere
    assert.deepEqual(fs.readFileSync(aFile), aBytes, 'A\'s snapshot is untouched');
    assert.ok(fs.existsSync(path.join(srv.stateDir, 'snapshots/p1/a-private.drun')));
    const r = await a.call('session_restore', { name: 'a-private' });
    assert.equal(fs.readFileSync(path.join(r.workspace, 'secret.txt'), 'utf8'), 'A-SECRET\n');
    assert.deepEqual((await a.call('list_snapshots', {})).snapshots.map((x) => x.name), ['a-private']);
  } finally {
    await a.close(); await b.close(); await srv.close();
  }
});

test('labels and snapshot names that read as paths or options are refused', async () => {
  await withServer('stdio', { config: '' }, async (srv) => {
    const S = (await srv.call('create_session', {})).session_id;
    for (const label of ['.', '..', '-rf', '.hidden'])
      await refused(srv, 'session_label', { session_id: S, label }, /not starting with '\.' or '-'/);
    const h = await srv.call('session_history', { session_id: S });
    assert.ok(h.checkpoints.every((c) => !c.label), 'no label was set');
    for (const name of ['-rf', '--help', '.x'])
      await refused(srv, 'session_snapshot', { session_id: S, name }, /not starting with '\.' or '-'/);
    await refused(srv, 'session_restore', { name: '-rf' }, /not starting with/);
    const dir = path.join(srv.stateDir, 'snapshots/p0');
    assert.deepEqual(fs.existsSync(dir) ? fs.readdirSync(dir) : [], [], 'no snapshot file was made');
  });
});
