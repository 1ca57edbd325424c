// lib.mjs — shared helpers for the drun-mcp end-to-end tests.
//
// Every *.test.mjs file in this folder is run by tests/suites/60-mcp with
// `node --test` and this folder's reporter; a new test file needs no edit
// anywhere else. The helpers start a real `$B/drun-mcp` (the binary of the
// build under test: $B is build/ or build/san) and connect the official MCP
// TypeScript SDK client to it over stdio or Streamable HTTP.

import { spawn } from 'node:child_process';
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import './readbuf.mjs'; // the stdio client's read buffer without its quadratic copy

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = process.env.ROOT ? path.resolve(process.env.ROOT) : path.resolve(here, '../..');
export const B = process.env.B || 'build';
export const BIN = path.resolve(ROOT, B, 'drun-mcp');

/* DRUN_TEST_SANDBOX_USER (UID:GID), for a root drun-mcp: the sandbox user of
 * every server these helpers start. A suite that fills its sandbox user's
 * process count (RLIMIT_NPROC is per uid) gets a uid of its own, so it can
 * run beside the other suites (tests/run: "alone unless root"). */
export const SBX_ARGS = process.env.DRUN_TEST_SANDBOX_USER && process.getuid() === 0
  ? ['--sandbox-user', fileSandboxUser(process.env.DRUN_TEST_SANDBOX_USER)] : [];

/* 60-mcp runs two test processes at once (node --test
 * --test-concurrency=2, lane-0.mjs and lane-1.mjs: see lane.mjs): each
 * one's sandboxes get a uid of their own, UID + 1..997 from the name of the
 * file node runs, so that one lane's sandboxes never count against the
 * other's process limit either. */
function fileSandboxUser(spec) {
  const [uid, gid] = spec.split(':').map(Number);
  let h = 0;
  for (const c of path.basename(process.argv[1] || '')) h = (h * 31 + c.charCodeAt(0)) % 997;
  return `${uid + 1 + h}:${gid + 1 + h}`;
}
export const TRANSPORTS = ['stdio', 'http'];

/* drun-mcp refuses a state dir that another user could swap (an ancestor
 * they own or may write: see prepare_state_dir). A checkout can sit anywhere
 * (a 0775 CI workspace, say), so the tests' directories live in a private
 * 0700 directory of our own below the system temp dir, which is sticky and
 * root's, made once per process and removed at exit (DRUN_KEEP_TMP=1 keeps
 * it, for a post-mortem). */
let tmpRoot = null;
function tmpBase() {
  if (!tmpRoot) {
    tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'drun-mcp-test-'));
    fs.chmodSync(tmpRoot, 0o711); // as root the sandbox user must reach the state dirs below (docs/security.md)
    if (!process.env.DRUN_KEEP_TMP)
      process.on('exit', () => fs.rmSync(tmpRoot, { recursive: true, force: true, maxRetries: 3 }));
  }
  return tmpRoot;
}

/** As root, sandboxes run as the sandbox user (drun-sandbox, else 65534):
 * what a test makes in a workspace by hand is given to it, as the runtime
 * gives it the workspace (docs/security.md). */
export function giveToSandbox(p) {
  if (process.getuid() !== 0) return;
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('drun-sandbox:'));
  const [uid, gid] = SBX_ARGS.length ? SBX_ARGS[1].split(':').map(Number)
    : line ? line.split(':').slice(2, 4).map(Number) : [65534, 65534];
  fs.chownSync(p, uid, gid);
}

/** A fresh directory of the test's own (see tmpBase). */
export function tmpdir(prefix = 'mcp-') {
  const d = fs.mkdtempSync(path.join(tmpBase(), prefix));
  fs.chmodSync(d, 0o711); // as tmpBase
  return d;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Writes a config the way an editor that truncates and rewrites does (same inode). */
export function writeInPlace(file, text) {
  const fd = fs.openSync(file, 'r+');
  fs.ftruncateSync(fd, 0);
  fs.writeSync(fd, text, 0);
  fs.closeSync(fd);
}

/** Writes a config the way an editor that renames a temp file over it does (new inode). */
export function writeRename(file, text) {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** Processes whose command line matches the regular expression marker, as
 * `pgrep -f marker` says: /proc/PID/cmdline with its NULs read as spaces (a
 * zombie, with no command line, matches nothing; this process is left
 * out, as pgrep leaves itself out). Read here rather than by
 * running pgrep: the tests poll it every 50 ms, and a process started per
 * poll cost seconds of CPU per suite. The scan takes a few milliseconds, so
 * polls beside HTTP clients never hold up undici's keep-alive timers (a
 * blocked loop runs them late, and a request on a socket the server has
 * just cut fails). */
export function pgrep(marker) {
  const re = new RegExp(marker);
  const out = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue; // as pgrep, never itself
    let cmd;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    if (cmd && re.test(cmd.replace(/\0$/, '').replace(/\0/g, ' '))) out.push(pid);
  }
  return out;
}

/** Waits until fn() is truthy or ms pass; returns the last value. */
export async function waitFor(fn, ms = 5000, step = 50) {
  const end = Date.now() + ms;
  let v = await fn();
  while (!v && Date.now() < end) {
    await sleep(step);
    v = await fn();
  }
  return v;
}

/** Reads stderr lines of child until one matches re; resolves with the match. */
function waitForLine(child, re, ms, log) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no ${re} on stderr within ${ms} ms:\n${buf}`)), ms);
    child.stderr.on('data', (d) => {
      buf += d;
      log.push(String(d));
      const m = buf.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`drun-mcp exited with ${code} before listening:\n${buf}`));
    });
  });
}

/**
 * Starts drun-mcp and connects an SDK client.
 *   transport: 'stdio' | 'http'
 *   config:    config text (written to DIR/config.toml and passed with --config), or
 *   configPath: an existing config file; or neither (the default chain, with HOME=DIR)
 *   args:      extra arguments; env: extra environment; token: HTTP bearer token
 * Returns { client, call, callRaw, close, stateDir, configPath, dir, url, pid, stderr() }.
 */
export async function start(transport, opts = {}) {
  const dir = opts.dir || tmpdir(`${transport}-`);
  const stateDir = opts.stateDir || path.join(dir, 'state');
  let configPath = opts.configPath;
  if (opts.config !== undefined) {
    configPath = path.join(dir, 'config.toml');
    fs.writeFileSync(configPath, opts.config);
  }
  const args = ['--state-dir', stateDir, '--log-level', 'info', ...SBX_ARGS];
  if (configPath) args.push('--config', configPath);
  args.push(...(opts.args || []));
  const env = { ...process.env, HOME: dir, ...(opts.env || {}) };
  delete env.DRUN_CONFIG;
  if (opts.env && opts.env.DRUN_CONFIG) env.DRUN_CONFIG = opts.env.DRUN_CONFIG;
  const log = [];
  const client = new Client({ name: 'drun-mcp-tests', version: '1.0.0' });
  let proc = null;
  let url = null;
  let pid;
  let clientTransport;

  if (transport === 'stdio') {
    clientTransport = new StdioClientTransport({ command: BIN, args, env, stderr: 'pipe' });
    clientTransport.stderr?.on('data', (d) => log.push(String(d)));
    await client.connect(clientTransport);
    pid = clientTransport.pid;
  } else {
    let tokenFile = null;
    if (opts.token) {
      tokenFile = path.join(dir, 'token');
      fs.writeFileSync(tokenFile, `${opts.token}\n`, { mode: 0o600 });
      args.push('--token-file', tokenFile);
    }
    args.push('--listen', '127.0.0.1:0');
    proc = spawn(BIN, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    pid = proc.pid;
    const m = await waitForLine(proc, /listening on (http:\/\/[^\s]+\/mcp)/, 15000, log);
    url = m[1];
    const headers = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
    clientTransport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    await client.connect(clientTransport);
  }

  const exited = proc
    ? new Promise((r) => proc.once('exit', (code, sig) => r({ code, sig })))
    : null;

  async function callRaw(name, args = {}, options = {}) {
    return client.callTool({ name, arguments: args }, undefined, { timeout: 120000, ...options });
  }

  return {
    transport,
    client,
    dir,
    stateDir,
    configPath,
    url,
    get pid() { return pid; },
    proc,
    stderr: () => log.join(''),
    callRaw,
    /** Calls a tool; throws unless the result is a success; returns structuredContent. */
    async call(name, args = {}, options = {}) {
      const r = await callRaw(name, args, options);
      if (r.isError) throw new Error(`${name} failed: ${r.content?.[0]?.text}`);
      return r.structuredContent;
    },
    /** Calls a tool that must fail; returns its text. */
    async fail(name, args = {}) {
      const r = await callRaw(name, args);
      if (!r.isError) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(r.structuredContent)}`);
      return r.content[0].text;
    },
    /** Stops the server; throws when it printed a sanitizer report (build/san). */
    async close() {
      let result = null;
      if (transport === 'http') {
        try { await clientTransport.terminateSession(); } catch { /* already gone */ }
        await client.close().catch(() => {});
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
        result = await exited;
      } else {
        await client.close();
        await sleep(50); // the last stderr bytes
      }
      const m = log.join('').match(/(==\d+==ERROR: \w+Sanitizer|runtime error:|LeakSanitizer)[^\n]*/);
      if (m) throw new Error(`drun-mcp reported: ${m[0]}\n${log.join('').slice(-4000)}`);
      return result;
    },
  };
}

/** The session IDs with a directory in the state dir. */
export function sessionDirs(stateDir) {
  try {
    // sessions only: a family's checkpoint store (ckpt-ID) lives beside them
    return fs.readdirSync(path.join(stateDir, 'sessions')).filter((n) => !n.startsWith('ckpt-'));
  } catch {
    return [];
  }
}

/** Raw JSON-RPC lines over stdio, for protocol edge cases the SDK never sends. */
export function rawStdio(args = [], env = {}) {
  const dir = tmpdir('raw-');
  const child = spawn(BIN, ['--state-dir', path.join(dir, 'state'), ...SBX_ARGS, ...args], {
    env: { ...process.env, HOME: dir, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters = [];
  child.stdout.on('data', (d) => {
    out += d;
    for (const w of [...waiters]) w();
  });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r({ code, sig })));
  return {
    child,
    dir,
    stderr: () => err,
    send(line) { child.stdin.write(line.endsWith('\n') ? line : `${line}\n`); },
    sendBytes(buf) { child.stdin.write(buf); },
    /** Resolves with the lines printed so far once at least n are there. */
    lines(n, ms = 10000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const ls = out.split('\n').filter(Boolean);
          if (ls.length >= n) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(t);
            resolve(ls);
          }
        };
        const t = setTimeout(() => reject(new Error(`wanted ${n} lines, have:\n${out}`)), ms);
        waiters.push(check);
        check();
      });
    },
    output: () => out,
    /** Closes stdin and waits for the exit; throws on a sanitizer report. */
    async end() {
      child.stdin.end();
      const r = await exited;
      const m = err.match(/(==\d+==ERROR: \w+Sanitizer|runtime error:|LeakSanitizer)[^\n]*/);
      if (m) throw new Error(`drun-mcp reported: ${m[0]}\n${err.slice(-4000)}`);
      return r;
    },
    exited,
  };
}

export const INIT = (id = 1, version = '2025-11-25') =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

/* fn(srv); a failure carries the tail of the server's stderr */
async function withStderr(srv, fn) {
  try {
    return await fn(srv);
  } catch (e) {
    e.message += `\n--- drun-mcp stderr ---\n${srv.stderr().slice(-3000)}`;
    throw e;
  }
}

/** Starts a server, runs fn(srv), always closes it; a failure carries the
 * tail of the server's stderr. */
export async function withServer(transport, opts, fn) {
  const srv = await start(transport, opts);
  try {
    return await withStderr(srv, fn);
  } finally {
    await srv.close();
  }
}

/** For the tests of one file that ask nothing of the server itself (each
 * makes sessions of its own): one server per transport under opts, started
 * on first use. A server costs two processes and, under ASan, a third of a
 * CPU second to start and stop. They stop after the file's last test, so a
 * sanitizer report then fails the file. Returns withShared(transport, fn),
 * which runs fn(srv) as withServer does, without the close. */
export function sharedServers(opts) {
  const servers = {};
  after(async () => {
    for (const srv of Object.values(servers)) await (await srv).close();
  });
  return async (transport, fn) => {
    servers[transport] ??= start(transport, opts);
    return withStderr(await servers[transport], fn);
  };
}
