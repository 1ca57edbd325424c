// network.test.mjs — network for sandboxed commands through drun-mcp (SPEC §15,
// issue 16), driven by the official MCP SDK client over stdio: session_bash with
// [network] command_domains (the refusals in network_denied and in the log at
// --log-level info), and session_package_install with pip and npm against a
// local index and a local registry this test serves on 127.0.0.1 (a wheel and an
// npm tarball it builds itself), through the proxy, into .packages/.
//
// Names are mapped by the test alone: drun-mcp runs in its own mount namespace
// (unshare -m, as root) with the test's /etc/hosts bound over the host's, so the
// proxy resolves allowed.test, other.test, pypi.test and npm.test to 127.0.0.1
// with no DNS. Without root the file is skipped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN, tmpdir, sleep } from './lib.mjs';

const root = process.getuid() === 0;
let web, port, dir, mcp, off;
const seen = []; // paths the local server was asked for

function buildWheel(out) {
  // the smallest wheel pip installs: a module, METADATA, WHEEL, RECORD
  execFileSync(process.env.PYTHON3 || 'python3', ['-c', `
import zipfile, sys
w = zipfile.ZipFile(sys.argv[1], "w")
w.writestr("demo_pkg/__init__.py", "VALUE = 'from-the-local-index'\\n")
w.writestr("demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: 1.0\\n")
w.writestr("demo_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
w.writestr("demo_pkg-1.0.dist-info/RECORD", "")
w.close()
`, out]);
}

function buildTarball(dirFor, out) {
  const pkg = path.join(dirFor, 'package');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'demo-npm', version: '1.0.0', main: 'index.js' }));
  fs.writeFileSync(path.join(pkg, 'index.js'), "module.exports = 'from-the-local-registry';\n");
  execFileSync('tar', ['czf', out, '-C', dirFor, 'package']);
}

async function startWeb(files) {
  const wheel = fs.readFileSync(files.wheel);
  const tgz = fs.readFileSync(files.tgz);
  const sha256 = crypto.createHash('sha256').update(wheel).digest('hex');
  const integrity = 'sha512-' + crypto.createHash('sha512').update(tgz).digest('base64');
  const s = http.createServer((req, res) => {
    seen.push(req.url);
    const host = (req.headers.host || '').split(':')[0];
    if (req.url === '/hello') return res.end('hello-mcp');
    if (req.url === '/simple/demo-pkg/') {
      res.setHeader('Content-Type', 'text/html');
      return res.end(`<html><body><a href="/files/demo_pkg-1.0-py3-none-any.whl#sha256=${sha256}">demo_pkg-1.0-py3-none-any.whl</a></body></html>`);
    }
    if (req.url.startsWith('/files/demo_pkg-1.0-py3-none-any.whl')) return res.end(wheel);
    if (req.url === '/demo-npm') {
      res.setHeader('Content-Type', 'application/json');
      return res.end(JSON.stringify({
        name: 'demo-npm', 'dist-tags': { latest: '1.0.0' },
        versions: { '1.0.0': { name: 'demo-npm', version: '1.0.0', dist: { tarball: `http://${host}:${port}/demo-npm/-/demo-npm-1.0.0.tgz`, integrity } } },
      }));
    }
    if (req.url === '/demo-npm/-/demo-npm-1.0.0.tgz') return res.end(tgz);
    res.statusCode = 404;
    res.end('no');
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return s;
}

// drun-mcp under config, in its own mount namespace with the test's /etc/hosts.
async function startNet(config) {
  const d = tmpdir('net-');
  fs.writeFileSync(path.join(d, 'config.toml'), config);
  const args = ['-m', 'sh', '-c', 'mount --bind "$1" /etc/hosts && shift && exec "$@"', 'sh', path.join(dir, 'hosts'),
    BIN, '--state-dir', path.join(d, 'state'), '--log-level', 'info', '--config', path.join(d, 'config.toml')];
  const log = [];
  const t = new StdioClientTransport({ command: 'unshare', args, env: { ...process.env, HOME: d }, stderr: 'pipe' });
  t.stderr?.on('data', (x) => log.push(String(x)));
  const client = new Client({ name: 'drun-mcp-network-tests', version: '1.0.0' });
  await client.connect(t);
  const callRaw = (name, a) => client.callTool({ name, arguments: a }, undefined, { timeout: 180000 });
  const { structuredContent: { session_id: sid } } = await callRaw('create_session', {});
  return {
    sid, log: () => log.join(''), callRaw,
    bash: (command) => callRaw('session_bash', { session_id: sid, command, timeout_ms: 120000 }),
    close: async () => { await client.close(); await sleep(50); },
  };
}

before(async () => {
  if (!root) return;
  dir = tmpdir('netfiles-');
  fs.writeFileSync(path.join(dir, 'hosts'), '127.0.0.1 localhost\n127.0.0.1 allowed.test other.test pypi.test npm.test\n');
  buildWheel(path.join(dir, 'demo_pkg-1.0-py3-none-any.whl'));
  buildTarball(path.join(dir, 'npm'), path.join(dir, 'demo-npm-1.0.0.tgz'));
  web = await startWeb({ wheel: path.join(dir, 'demo_pkg-1.0-py3-none-any.whl'), tgz: path.join(dir, 'demo-npm-1.0.0.tgz') });
  port = web.address().port;
  mcp = await startNet(`package_install_enabled = true
[network]
command_domains = ["allowed.test"]
command_ports = [${port}]
allow_private_addresses = true
pip_registries = ["pypi.test"]
npm_registries = ["npm.test"]
[env]
set = { PIP_INDEX_URL = "http://pypi.test:${port}/simple/", PIP_TRUSTED_HOST = "pypi.test", npm_config_registry = "http://npm.test:${port}/" }
`);
  off = await startNet(`[network]\ncommand_domains = ["allowed.test"]\ncommand_ports = [${port}]\nallow_private_addresses = true\n`);
});

after(async () => {
  for (const m of [mcp, off]) if (m) await m.close().catch(() => {});
  if (web) web.close();
});

test('session_bash reaches an allowed host through the proxy; network_denied is empty', { skip: !root && 'needs root (unshare -m)' }, async () => {
  const r = await mcp.bash(`curl -sS http://allowed.test:${port}/hello`);
  assert.notEqual(r.isError, true, r.content?.[0]?.text);
  assert.equal(r.structuredContent.stdout, 'hello-mcp');
  assert.deepEqual(r.structuredContent.network_denied, []);
});

test('a refused host is in network_denied with time, session, host, port and reason, and in the info log', { skip: !root && 'needs root (unshare -m)' }, async () => {
  const before = seen.length;
  const r = await mcp.bash(`curl -sS http://other.test:${port}/refused-marker; curl -sS http://other.test:${port}/refused-marker`);
  const nd = r.structuredContent.network_denied;
  assert.equal(nd.length, 1, JSON.stringify(nd));
  assert.equal(nd[0].host, 'other.test');
  assert.equal(nd[0].port, port);
  assert.equal(nd[0].count, 2);
  assert.equal(nd[0].session_id, mcp.sid);
  assert.match(nd[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.match(nd[0].reason, /host 'other\.test' is not in \[network\] command_domains/);
  assert.match(r.content[0].text, /Network refused other\.test port \d+ \(2 times\)/);
  assert.equal(seen.slice(before).filter((u) => u.includes('refused-marker')).length, 0, 'the server was never reached');
  assert.match(mcp.log(), new RegExp(`info: session ${mcp.sid}: network: refused other\\.test port ${port}: host 'other\\.test'`));
});

test('the registries are for session_package_install only: session_bash cannot reach pypi.test', { skip: !root && 'needs root (unshare -m)' }, async () => {
  const r = await mcp.bash(`curl -sS http://pypi.test:${port}/simple/demo-pkg/`);
  assert.equal(r.structuredContent.network_denied[0]?.host, 'pypi.test');
});

test('session_package_install pip: a wheel from the local index lands in .packages/pip', { skip: !root && 'needs root (unshare -m)' }, async () => {
  const r = await mcp.callRaw('session_package_install', { session_id: mcp.sid, manager: 'pip', packages: ['demo-pkg'] });
  assert.notEqual(r.isError, true, r.content?.[0]?.text);
  assert.equal(r.structuredContent.exit_code, 0, r.structuredContent.stderr);
  assert.equal(r.structuredContent.installed_to, '.packages/pip');
  assert.ok(r.structuredContent.checkpoint_id > 0, 'the install is a checkpoint');
  const h = await mcp.callRaw('session_history', { session_id: mcp.sid });
  const last = h.structuredContent.checkpoints.at(-1);
  assert.equal(last.tool, 'session_package_install');
  assert.equal(last.summary, 'pip demo-pkg');
  assert.ok(last.added.some((p) => p.endsWith('demo_pkg/__init__.py')), JSON.stringify(last.added));
  assert.ok(seen.includes('/simple/demo-pkg/'), 'pip asked the local index');
  const f = await mcp.callRaw('session_read_file', { session_id: mcp.sid, path: '.packages/pip/demo_pkg/__init__.py' });
  assert.match(f.content[0].text, /from-the-local-index/);
  const b = await mcp.bash('PYTHONPATH=.packages/pip python3 -c "import demo_pkg; print(demo_pkg.VALUE)"');
  assert.equal(b.structuredContent.stdout.trim(), 'from-the-local-index');
});

test('session_package_install npm: a tarball from the local registry lands in .packages/npm', { skip: !root && 'needs root (unshare -m)' }, async () => {
  const r = await mcp.callRaw('session_package_install', { session_id: mcp.sid, manager: 'npm', packages: ['demo-npm@1.0.0'] });
  assert.notEqual(r.isError, true, r.content?.[0]?.text);
  assert.equal(r.structuredContent.exit_code, 0, r.structuredContent.stderr);
  const f = await mcp.callRaw('session_read_file', { session_id: mcp.sid, path: '.packages/npm/node_modules/demo-npm/index.js' });
  assert.match(f.content[0].text, /from-the-local-registry/);
});

test("the spec check refuses options, paths and URLs before anything runs", { skip: !root && 'needs root (unshare -m)' }, async () => {
  const before = seen.length;
  for (const [spec, why] of [['-e', /starts with '-'/], ['--index-url=http://evil', /starts with '-'/],
    ['../x', /local path|'\.\.'/], ['/etc', /local path/], ['git+https://evil/x', /character outside/],
    ['a b', /character outside/], ['', /./]]) {
    const r = await mcp.callRaw('session_package_install', { session_id: mcp.sid, manager: 'pip', packages: ['demo-pkg', spec] });
    assert.equal(r.isError, true, spec);
    if (spec) assert.match(r.content[0].text, why, spec);
  }
  assert.equal(seen.length, before, 'nothing reached the index');
});

test('session_package_install is refused unless package_install_enabled', { skip: !root && 'needs root (unshare -m)' }, async () => {
  const r = await off.callRaw('session_package_install', { session_id: off.sid, manager: 'npm', packages: ['demo-npm'] });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /package_install_enabled = true/);
});
