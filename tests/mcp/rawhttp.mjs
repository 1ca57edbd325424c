// rawhttp.mjs — helpers for the HTTP abuse, ownership, soak and bench code:
// a drun-mcp started with any flags and token file (lib.mjs's start() takes
// one token), SDK clients with a token of their choosing, raw sockets, and
// what /proc says about the server (RSS, peak RSS, fds, child processes).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, INIT, SBX_ARGS, tmpdir } from './lib.mjs';

export const JSON_SSE = 'application/json, text/event-stream';

/**
 * Starts drun-mcp --listen 127.0.0.1:0.
 *   tokens: bearer tokens written one a line to a 0600 --token-file (none: no file)
 *   config: config text (default: ""), args: extra arguments
 * Returns { url, port, pid, proc, dir, stateDir, configPath, stderr(), close() }.
 */
export async function spawnHttp({ tokens = null, config = '', args = [], env = {} } = {}) {
  const dir = tmpdir('http-');
  const stateDir = path.join(dir, 'state');
  const configPath = path.join(dir, 'config.toml');
  fs.writeFileSync(configPath, config);
  const argv = ['--state-dir', stateDir, '--config', configPath, '--log-level', 'info', ...SBX_ARGS, ...args];
  if (tokens) {
    const tf = path.join(dir, 'tokens');
    fs.writeFileSync(tf, `${tokens.join('\n')}\n`, { mode: 0o600 });
    argv.push('--token-file', tf);
  }
  argv.push('--listen', '127.0.0.1:0');
  const proc = spawn(BIN, argv, { env: { ...process.env, HOME: dir, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`drun-mcp did not listen:\n${err}`)), 15000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/\S+\/mcp)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`drun-mcp exited with ${code}:\n${err}`));
    });
  });
  const exited = new Promise((r) => proc.once('exit', (code, sig) => r({ code, sig })));
  return {
    url,
    port: Number(new URL(url).port),
    pid: proc.pid,
    proc,
    dir,
    stateDir,
    configPath,
    stderr: () => err,
    /** SIGTERM and wait; throws on a sanitizer report. */
    async close() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const r = await exited;
      const m = err.match(/(==\d+==ERROR: \w+Sanitizer|runtime error:|LeakSanitizer)[^\n]*/);
      if (m) throw new Error(`drun-mcp reported: ${m[0]}\n${err.slice(-4000)}`);
      return r;
    },
  };
}

/** An SDK client on url with an optional bearer token: { client, transport, call, callRaw, fail, close }. */
export async function sdkClient(url, token = null, name = 'drun-mcp-tests') {
  const client = new Client({ name, version: '1.0.0' });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  const callRaw = (tool, args = {}, options = {}) =>
    client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120000, ...options });
  return {
    client,
    transport,
    callRaw,
    async call(tool, args = {}) {
      const r = await callRaw(tool, args);
      if (r.isError) throw new Error(`${tool} failed: ${r.content?.[0]?.text}`);
      return r.structuredContent;
    },
    async fail(tool, args = {}) {
      const r = await callRaw(tool, args);
      if (!r.isError) throw new Error(`${tool} unexpectedly succeeded: ${JSON.stringify(r.structuredContent)}`);
      return r.content[0].text;
    },
    async close() {
      try { await transport.terminateSession(); } catch { /* gone already */ }
      await client.close().catch(() => {});
    },
  };
}

/* the headers every JSON-RPC POST here carries */
const POST_HEADERS = { 'Content-Type': 'application/json', Accept: JSON_SSE };

/** POST one JSON-RPC message with fetch. */
export function post(url, body, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body), // bytes as they are
  });
}

/** POSTs one JSON-RPC message as post() does, on a keep-alive agent, reads
 * the whole answer and resolves with its status (0 when the request failed).
 * node's own http, not fetch: undici cost 2 ms of CPU more per request,
 * 2 s over abuse.test's flood of 1,000. */
export function postStatus(url, body, agent) {
  return new Promise((resolve) => {
    const req = http.request(url, {
      method: 'POST', agent, headers: { ...POST_HEADERS, 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** initialize + notifications/initialized over fetch; returns the Mcp-Session-Id. */
export async function initSession(url, headers = {}) {
  const r = await post(url, INIT(1), headers);
  if (r.status !== 200) throw new Error(`initialize: HTTP ${r.status} ${await r.text()}`);
  await r.text();
  const sid = r.headers.get('mcp-session-id');
  const n = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'Mcp-Session-Id': sid, ...headers });
  await n.text();
  return sid;
}

/** A raw TCP socket to port from localAddress; resolves once connected or
 * closed (node's socket.closed tells which, and later when it closed);
 * .received collects what the server sent. */
export function rawSocket(port, localAddress = '127.0.0.1') {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress });
    s.received = '';
    s.on('data', (d) => { s.received += d; });
    s.on('error', () => {});
    s.on('close', () => resolve(s));
    s.once('connect', () => resolve(s));
  });
}

const status = (pid) => fs.readFileSync(`/proc/${pid}/status`, 'utf8');
export const rssKb = (pid) => Number(status(pid).match(/^VmRSS:\s+(\d+) kB/m)[1]);
export const hwmKb = (pid) => Number(status(pid).match(/^VmHWM:\s+(\d+) kB/m)[1]);
export const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;
export const threadCount = (pid) => Number(status(pid).match(/^Threads:\s+(\d+)/m)[1]);

/** Every descendant pid of pid (from /proc/PID/task/TID/children). */
export function descendants(pid) {
  const out = [];
  const walk = (p) => {
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { return; }
    for (const t of tasks) {
      let kids = '';
      try { kids = fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8'); } catch { continue; }
      for (const k of kids.split(' ').filter(Boolean)) {
        out.push(Number(k));
        walk(k);
      }
    }
  };
  walk(pid);
  return out;
}

/** Mount points (host view) under dir. */
export function mountsUnder(dir) {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((l) => l.split(' ')[4]).filter((m) => m && (m === dir || m.startsWith(`${dir}/`)));
}

/** Every path below dir (relative), sorted. */
export function filesUnder(dir) {
  const out = [];
  const walk = (d, rel) => {
    let ents = [];
    try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of ents) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(r);
      if (e.isDirectory()) walk(path.join(d, e.name), r);
    }
  };
  walk(dir, '');
  return out.sort();
}
