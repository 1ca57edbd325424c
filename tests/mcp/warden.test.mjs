// warden.test.mjs — the occupant never reaches the warden (SPEC §13, issue
// 12 items 1, 3 and 4): under a policy whose allow_write covers drun-mcp's
// own config, state dir and token file (allow_write = ["~"]), session_bash
// cannot rewrite the config drun-mcp hot-reloads, cannot rename the state
// dir away, cannot read the token file, and the next call still enforces the
// deny rules; get_policy lists the runtime-owned paths. A directory the
// planner cannot list (mode 0311, a non-root drun-mcp) is hidden and named in
// the result's warnings. Every attack is checked on the HOST afterwards.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN, TRANSPORTS, start, tmpdir } from './lib.mjs';

const POLICY = `# warden test: a write grant over the whole home
[filesystem]
allow_write = ["~"]
deny_read = ["~/secret.txt"]
`;
const EVIL = '[filesystem]\nallow_read = ["/"]\n';

/** The command's stdout of a session_bash that must have run. */
async function bash(srv, session_id, command) {
  const r = await srv.call('session_bash', { session_id, command });
  return r;
}

for (const T of TRANSPORTS) {
  test(`${T}: with --config ~/.drun/config.toml under allow_write = ["~"], the sandbox cannot rewrite it, move the state dir or read the token; the next call still enforces`, async () => {
    const dir = tmpdir(`warden-${T}-`);
    const cfgDir = path.join(dir, '.drun');
    fs.mkdirSync(cfgDir);
    const configPath = path.join(cfgDir, 'config.toml');
    fs.writeFileSync(configPath, POLICY);
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'host secret\n');
    const stateDir = path.join(dir, '.local', 'state', 'drun');
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o711 }); // as root the sandbox user searches it (docs/security.md)
    const token = T === 'http' ? 'warden-token-0123456789abcdef' : undefined;
    const srv = await start(T, { dir, configPath, stateDir, token });
    try {
      const { session_id } = await srv.call('create_session', {});
      const before = fs.readFileSync(configPath, 'utf8');
      const stateIno = fs.statSync(stateDir).ino;
      const attack = [
        `cat '${configPath}' | grep -q allow_write && echo READ-CONFIG`,
        `printf '${EVIL.replace(/\n/g, '\\n')}' > '${configPath}' && echo WROTE-CONFIG`,
        `mv '${cfgDir}' '${dir}/.drun.old' && echo MOVED-CFGDIR`,
        `mv '${stateDir}' '${stateDir}.old' && echo MOVED-STATE`,
        `mv '${path.join(dir, '.local')}' '${dir}/.local.old' && echo MOVED-LOCAL`,
        `cat '${dir}/token' 2>/dev/null | grep -q warden && echo READ-TOKEN`,
        'echo control > in-workspace && echo CONTROL',
        'true',
      ].join('; ');
      const r = await bash(srv, session_id, attack);
      assert.match(r.stdout, /CONTROL/, `the attack did not run: ${JSON.stringify(r)}`);
      for (const m of ['WROTE-CONFIG', 'READ-CONFIG', 'MOVED-CFGDIR', 'MOVED-STATE', 'MOVED-LOCAL', 'READ-TOKEN'])
        assert.doesNotMatch(r.stdout, new RegExp(m), `${m}: ${r.stdout} ${r.stderr}`);
      // the host: the config, the state dir and its ancestors are where they were
      assert.equal(fs.readFileSync(configPath, 'utf8'), before, 'the host config changed');
      assert.equal(fs.statSync(stateDir).ino, stateIno, 'the state dir was replaced');
      for (const p of ['.drun.old', '.local.old']) assert.equal(fs.existsSync(path.join(dir, p)), false, p);
      assert.equal(fs.existsSync(`${stateDir}.old`), false);

      // the next call runs under the same policy: deny_read still holds
      const r2 = await bash(srv, session_id, `cat '${dir}/secret.txt' || echo DENIED`);
      assert.doesNotMatch(r2.stdout, /host secret/);
      assert.match(r2.stdout, /DENIED/);
      const pol = await srv.call('get_policy', {});
      assert.equal(pol.state, 'ok');
      assert.equal(pol.generation, 1, 'the config was reloaded');
      const owned = pol.policy.filesystem.filter((f) => f.rule === 'runtime-owned');
      const paths = owned.map((f) => f.path);
      assert.ok(paths.includes(fs.realpathSync(configPath)), `get_policy: ${JSON.stringify(owned)}`);
      assert.ok(paths.includes(fs.realpathSync(stateDir)), `get_policy: ${JSON.stringify(owned)}`);
      if (T === 'http') assert.ok(paths.includes(fs.realpathSync(path.join(dir, 'token'))), JSON.stringify(owned));
      for (const f of owned) assert.equal(f.level, 'none');
    } catch (e) {
      e.message += `\n--- drun-mcp stderr ---\n${srv.stderr().slice(-3000)}`;
      throw e;
    } finally {
      await srv.close();
    }
  });
}

test('stdio: --artifacts DIR under allow_write = ["~"]: the served artifacts cannot be rewritten from inside', async () => {
  const dir = tmpdir('warden-art-');
  const src = path.join(dir, 'policy.toml');
  fs.writeFileSync(src, POLICY);
  const art = path.join(dir, 'art');
  execFileSync(path.join(path.dirname(BIN), 'drun-policy'), ['compile', src, '--target', 'linux', '-o', art], {
    env: { ...process.env, HOME: dir },
  });
  fs.rmSync(src);
  const before = fs.readFileSync(path.join(art, 'policy.json'));
  const srv = await start('stdio', { dir, args: ['--artifacts', art] });
  try {
    const { session_id } = await srv.call('create_session', {});
    const r = await bash(srv, session_id,
      `echo x >> '${art}/policy.json' && echo WROTE; mv '${art}' '${dir}/art.old' && echo MOVED; echo END`);
    assert.match(r.stdout, /END/);
    assert.doesNotMatch(r.stdout, /WROTE|MOVED/, r.stdout);
    assert.deepEqual(fs.readFileSync(path.join(art, 'policy.json')), before, 'the host artifacts changed');
    assert.equal(fs.existsSync(path.join(dir, 'art.old')), false);
  } catch (e) {
    e.message += `\n--- drun-mcp stderr ---\n${srv.stderr().slice(-3000)}`;
    throw e;
  } finally {
    await srv.close();
  }
});

/* Root lists a mode-0311 directory anyway, so this drun-mcp runs as nobody
 * (setpriv), on a state dir nobody owns. */
function canBeNobody() {
  if (process.getuid() !== 0) return false;
  try {
    execFileSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups',
      'bwrap', '--unshare-all', '--unshare-user', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('stdio, a non-root drun-mcp: a directory it cannot list is hidden and named in warnings; no hook is planted through it', { skip: !canBeNobody() && 'needs root (to become nobody) and unprivileged user namespaces' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drun-warden-nobody-'));
  try {
    fs.chmodSync(dir, 0o755);
    const stateDir = path.join(dir, 'state');
    fs.mkdirSync(stateDir, { mode: 0o700 });
    const cfg = path.join(dir, 'config.toml');
    fs.writeFileSync(cfg, '[filesystem]\ndeny_read = ["**/*.pem"]\n');
    execFileSync('chown', ['-R', '65534:65534', dir]);
    const transport = new StdioClientTransport({
      command: 'setpriv',
      args: ['--reuid=65534', '--regid=65534', '--clear-groups', BIN, '--state-dir', stateDir, '--config', cfg],
      // the mount plan's scan is what this test is about: with /dev/fuse open to
      // nobody the access-time layer would refuse the first run's hooks dir itself
      env: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8', DRUN_FS_LAYER: 'off' },
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (d) => { log += String(d); });
    const client = new Client({ name: 'warden-nobody', version: '1.0.0' });
    await client.connect(transport);
    try {
      const call = async (name, args) => {
        const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
        assert.ok(!r.isError, `${name}: ${JSON.stringify(r)}`);
        return r.structuredContent;
      };
      const { session_id, workspace } = await call('create_session', {});
      // first run: a repo whose hooks dir the next run's scan cannot see
      const r1 = await call('session_bash', { session_id,
        command: 'mkdir -p sub/.git/hooks && echo "PRIVATE KEY" > sub/key.pem && chmod 0311 sub && echo READY' });
      assert.match(r1.stdout, /READY/, JSON.stringify(r1));
      const r2 = await call('session_bash', { session_id,
        command: 'cat sub/key.pem; echo "#!/bin/sh" > sub/.git/hooks/pre-commit && echo HOOKED; echo END' });
      assert.match(r2.stdout, /END/, JSON.stringify(r2));
      assert.doesNotMatch(r2.stdout, /PRIVATE KEY|HOOKED/, r2.stdout);
      assert.ok(Array.isArray(r2.warnings) && r2.warnings.some((w) => w.includes(`'${path.join(fs.realpathSync(workspace), 'sub')}' cannot be listed`)),
        `warnings: ${JSON.stringify(r2.warnings)}`);
      fs.chmodSync(path.join(workspace, 'sub'), 0o755);
      assert.equal(fs.existsSync(path.join(workspace, 'sub/.git/hooks/pre-commit')), false, 'a hook landed on the host');
    } catch (e) {
      e.message += `\n--- drun-mcp stderr ---\n${log.slice(-3000)}`;
      throw e;
    } finally {
      await client.close();
    }
  } finally {
    try { execFileSync('chmod', ['-R', 'u+rwx', dir]); } catch { /* best effort */ }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
