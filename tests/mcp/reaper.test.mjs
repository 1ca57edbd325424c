// reaper.test.mjs — no orphans, no zombies (issue 13 items 5 and 8, SPEC §12).
//
// 1. drun-mcp runs as pid 1 of its own pid namespace (`unshare -fp
//    --mount-proc`), as in a container, and makes 50 session_bash calls, some
//    of them leaving background processes. Afterwards, seen from the host,
//    drun-mcp has no child left: no zombie, no sandbox process. Every call's
//    exit status is the command's own (the reaper steals none).
// 2. A cancel (and a timeout) whose command outlives the process-group
//    kill, with the parent-death signal lost: bwrap is run through a wrapper
//    that drops --die-with-parent from its arguments, and the command leaves
//    its process group. Within 5 s of notifications/cancelled (or the timeout) no
//    process of it is alive on the host.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN, tmpdir, pgrep, sleep, start, waitFor } from './lib.mjs';

/** What /proc/PID/status says, or null when the process is gone. */
function status(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const f = (k) => (text.match(new RegExp(`^${k}:\\s*(.*)$`, 'm')) || [])[1];
  return { pid: Number(pid), state: f('State')[0], ppid: Number(f('PPid')), nspid: f('NSpid').split(/\s+/) };
}

/** Every process on the host below pid (not pid itself), with its status. */
function descendants(pid) {
  const all = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(status).filter(Boolean);
  const below = new Set([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all)
      if (!below.has(p.pid) && below.has(p.ppid)) {
        below.add(p.pid);
        grew = true;
      }
  }
  return all.filter((p) => p.pid !== pid && below.has(p.pid));
}

function haveUnshare() {
  try {
    execFileSync('unshare', ['-fp', '--mount-proc', 'true']);
    return true;
  } catch {
    return false;
  }
}

test('drun-mcp as pid 1 of its pid namespace: 50 calls leave no zombie and no sandbox process', { skip: !haveUnshare() && 'unshare -fp is not available' }, async () => {
  const dir = tmpdir('reaper-');
  const config = path.join(dir, 'config.toml');
  fs.writeFileSync(config, 'bash_timeout_ms = 20000\n');
  const transport = new StdioClientTransport({
    command: 'unshare',
    args: ['-fp', '--mount-proc', BIN, '--state-dir', path.join(dir, 'state'), '--config', config],
    env: { ...process.env, HOME: dir },
    stderr: 'pipe',
  });
  const log = [];
  transport.stderr?.on('data', (d) => log.push(String(d)));
  const client = new Client({ name: 'reaper-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    // unshare -f forks drun-mcp: pid 1 inside, this pid on the host
    const kids = fs.readFileSync(`/proc/${transport.pid}/task/${transport.pid}/children`, 'utf8').trim().split(/\s+/);
    assert.equal(kids.length, 1, `unshare has children ${kids}`);
    const drun = Number(kids[0]);
    assert.equal(status(drun).nspid.at(-1), '1', 'drun-mcp is pid 1 of its namespace');

    const call = async (name, args) => {
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
      if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
      return r.structuredContent;
    };
    const { session_id } = await call('create_session', {});
    const commands = [
      (i) => [`sleep 30 & echo ${i}`, 0],
      (i) => [`setsid sleep 30 & echo ${i}`, 0],
      (i) => [`(setsid sh -c 'trap "" HUP; sleep 30' &); echo ${i}; exit 3`, 3],
      (i) => [`echo ${i}; exit ${i % 7}`, i % 7],
      (i) => [`nohup sleep 30 >/dev/null 2>&1 & echo ${i}; exit 5`, 5],
    ];
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all([0, 1, 2, 3, 4].map(async (k) => {
        const i = batch * 5 + k;
        const [command, code] = commands[k](i);
        const r = await call('session_bash', { session_id, command });
        assert.equal(r.exit_code, code, `call ${i} (${command}): ${JSON.stringify(r)}`);
        assert.equal(r.stdout, `${i}\n`);
      }));
    }
    // Seen from the host: nothing is left below drun-mcp (a moment is allowed
    // for the last sandbox's pid 1 to end).
    const left = await waitFor(() => {
      const d = descendants(drun);
      return d.length === 0 ? [] : null;
    }, 10000, 100);
    const now = descendants(drun);
    assert.ok(left, `left below drun-mcp: ${JSON.stringify(now)}`);
    assert.deepEqual(now.filter((p) => p.state === 'Z'), [], 'zombies');
  } catch (e) {
    e.message += `\n--- drun-mcp stderr ---\n${log.join('').slice(-3000)}`;
    throw e;
  } finally {
    await client.close();
  }
  await sleep(50); // the last stderr bytes
  const san = log.join('').match(/(==\d+==ERROR: \w+Sanitizer|runtime error:|LeakSanitizer)[^\n]*/);
  assert.equal(san, null, `drun-mcp reported: ${log.join('').slice(-4000)}`);
});

/* A bwrap that drops --die-with-parent from the arguments drun-mcp hands it
 * on fd 3 (--args 3), then runs the real one: the sandbox's pid 1 gets no
 * parent-death signal, as when it is lost. */
/* The wrapper's interpreter by its absolute path: through PATH, a version
 * manager's shim (pyenv's runs several shells first) cost 0.6 s of CPU per
 * start, and each server's bwrap probe (--version, --help) starts the
 * wrapper with the server's PATH, shim included. Not
 * tests/run's $PYTHON3: as root the sandbox user runs the wrapper, and a
 * shim's interpreter may sit in root's home. */
const WRAPPER_PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : '/usr/bin/env python3';

function bwrapWithoutDeathSignal(dir) {
  const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  // bwrap may run as the sandbox user (a root drun-mcp): it marks its work here
  fs.mkdirSync(path.join(bin, 'marks'));
  fs.chmodSync(path.join(bin, 'marks'), 0o777);
  fs.writeFileSync(path.join(bin, 'bwrap'), `#!${WRAPPER_PYTHON}
import os, sys
argv = sys.argv[1:]
if argv[:2] == ['--args', '3']:
    data = b''
    while True:
        chunk = os.read(3, 1 << 16)
        if not chunk:
            break
        data += chunk
    words = data.split(b'\\0')[:-1]
    if b'--die-with-parent' in words:
        open(${JSON.stringify(path.join(bin, 'marks', 'stripped'))}, 'a').close()
    words = [w for w in words if w != b'--die-with-parent']
    fd = os.memfd_create('args', 0)
    os.write(fd, b''.join(w + b'\\0' for w in words))
    os.lseek(fd, 0, 0)
    os.dup2(fd, 3)
    os.close(fd)
os.execv(${JSON.stringify(real)}, ['bwrap'] + argv)
`, { mode: 0o755 });
  return bin;
}

/* A command whose two sleeps (their own command lines, which bwrap's and the
 * shell's do not contain: the shell puts the numbers together) leave the
 * process group: the daemon by setsid, the command by bwrap's --new-session;
 * both ignore SIGHUP. */
function escaping() {
  const m1 = 3000 + Math.floor(Math.random() * 900), m2 = m1 + 1000;
  return {
    command: `n=${m1}; (setsid sh -c "trap '' HUP; exec sleep $n.5" &); trap "" HUP; n=${m2}; exec sleep $n.5`,
    daemon: `^sleep ${m1}\\.5$`,
    main: `^sleep ${m2}\\.5$`,
  };
}

const CASES = [['stdio', 'cancel'], ['http', 'cancel'], ['stdio', 'timeout']];
for (const [T, how] of CASES) {
  test(`${T}: ${how} kills the sandbox's pid 1: a command that left its process group is gone with the parent-death signal lost`, async () => {
    const dir = tmpdir(`${how}-`);
    const bin = bwrapWithoutDeathSignal(dir);
    const srv = await start(T, { dir, config: 'bash_timeout_ms = 60000\n', env: { PATH: `${bin}:${process.env.PATH}` } });
    const { command, daemon, main } = escaping();
    try {
      const { session_id } = await srv.call('create_session', {});
      const probe = await srv.call('session_bash', { session_id, command: 'echo ok' });
      assert.equal(probe.stdout, 'ok\n');
      assert.ok(fs.existsSync(path.join(bin, 'marks', 'stripped')), 'the wrapper took --die-with-parent away');
      if (how === 'cancel') {
        const ac = new AbortController();
        const p = srv.callRaw('session_bash', { session_id, command }, { signal: ac.signal });
        assert.ok(await waitFor(() => pgrep(daemon).length && pgrep(main).length, 10000), 'the command started');
        ac.abort();
        await assert.rejects(p);
      } else {
        const r = await srv.call('session_bash', { session_id, command, timeout_ms: 3000 });
        assert.equal(r.timed_out, true);
      }
      // within 5 s of it nothing of the command is alive on the host (the
      // poll ends as soon as both are gone: a process gone stays gone)
      await waitFor(() => pgrep(daemon).length === 0 && pgrep(main).length === 0, 5000, 100);
      assert.deepEqual(pgrep(daemon), [], `the daemon survived the ${how}`);
      assert.deepEqual(pgrep(main), [], `the command survived the ${how}`);
    } catch (e) {
      e.message += `\n--- drun-mcp stderr ---\n${srv.stderr().slice(-3000)}`;
      throw e;
    } finally {
      for (const pid of [...pgrep(daemon), ...pgrep(main)]) {
        try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone */ }
      }
      await srv.close();
    }
  });
}
