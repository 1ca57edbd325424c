// bench.mjs — drun-mcp figures for `make bench` (run by tests/bench/60-mcp,
// which prints the table header). Prints markdown rows
// "| benchmark | value | unit | notes |".
//
//  - tools/list and session_bash "true" round trips over stdio and HTTP with
//    a raw JSON-RPC client (median latency, sequential requests/s), and
//    tools/list through the official SDK client for contrast;
//  - what drun-mcp adds to the sandboxed command: per call, round trip minus
//    the command's own spawn-to-exit time (duration_ms), median; and, for
//    context, a bare `bwrap` run of the same vector (BARE_ARGS/BARE_BPF from
//    tests/bench/vector_dump.c) spawned from this process;
//  - the per-call config check: time per unchanged check (get_policy
//    counters) and stat(2) calls per tool call (strace, when available);
//  - RSS of the server idle and with 50 sessions;
//  - under load (issue 13): session_bash "true" from 20 concurrent HTTP
//    clients (calls/s, p50/p99 latency), and the peak RSS while ten 60 MB
//    bodies arrive at once (the server-wide body budget).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import { BIN, INIT, start, tmpdir } from './lib.mjs';
import { JSON_SSE, hwmKb, initSession, spawnHttp } from './rawhttp.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
const row = (name, value, unit, notes) => console.log(`| ${name} | ${value} | ${unit} | ${notes} |`);
const rssKb = (pid) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)[1]);
const fmt = (x, d = 2) => x.toFixed(d);

const N_LIST = Number(process.env.BENCH_N_LIST || 2000);
const N_BASH = Number(process.env.BENCH_N_BASH || 40);
const CONFIG = 'max_sessions = 60\n';

/** A raw JSON-RPC client: the SDK client's own costs (zod parsing, ajv
 * compiling every outputSchema on tools/list) would otherwise dominate the
 * microsecond figures. stdio: a pipe; http: node:http with keep-alive;
 * http-raw: HTTP/1.1 written and read by hand on one TCP socket, so that the
 * figure holds as little of the client as it can (node:http's own request
 * and response handling is 0.2-0.3 ms a call here: measured against it,
 * drun-mcp would be charged for its client's parser). */
async function rawServer(transport) {
  const dir = tmpdir(`bench-${transport}-`);
  fs.writeFileSync(path.join(dir, 'config.toml'), CONFIG);
  const args = ['--state-dir', path.join(dir, 'state'), '--config', path.join(dir, 'config.toml')];
  let nextId = 1;
  if (transport === 'stdio') {
    const child = spawn(BIN, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, HOME: dir } });
    const waiting = new Map();
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        waiting.get(msg.id)?.(msg);
        waiting.delete(msg.id);
      }
    });
    const req = (method, params = {}) => new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
    await req('initialize', JSON.parse(INIT()).params);
    return { pid: child.pid, req, close: () => { child.stdin.end(); return new Promise((r) => child.once('exit', r)); } };
  }
  const child = spawn(BIN, [...args, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: dir } });
  const url = await listeningUrl(child);
  if (transport === 'http-raw') return rawHttp(child, url, () => nextId++);
  // node:http on one kept-alive socket, not fetch(): undici's own per-request
  // work (about 0.5 ms here, more after an idle wait) would be counted as the
  // server's. Python's http.client measures the same server within 0.1 ms.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (headers, body) => new Promise((resolve, reject) => {
    const r = http.request(url, { method: 'POST', agent, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ headers: res.headers, text }));
    });
    r.on('error', reject);
    r.end(body);
  });
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = await post(headers, INIT());
  headers['Mcp-Session-Id'] = init.headers['mcp-session-id'];
  headers['MCP-Protocol-Version'] = JSON.parse(init.text).result.protocolVersion;
  const req = async (method, params = {}) => {
    const r = await post(headers, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }));
    return JSON.parse(r.text);
  };
  return { pid: child.pid, req, close: () => { child.kill('SIGTERM'); return new Promise((r) => child.once('exit', r)); } };
}

/** The URL an HTTP drun-mcp says it listens on (its stderr). */
function listeningUrl(child) {
  return new Promise((resolve, reject) => {
    let e = '';
    child.stderr.on('data', (d) => {
      e += d;
      const m = e.match(/listening on (http:\/\/\S+\/mcp)/);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error(e)));
  });
}

/** HTTP/1.1 by hand on one kept-alive socket: each response is read to its
 * Content-Length (drun-mcp answers JSON with a length). */
async function rawHttp(child, href, nextId) {
  const url = new URL(href);
  const sock = net.connect(Number(url.port), url.hostname);
  sock.setNoDelay(true);
  await new Promise((r) => sock.once('connect', r));
  let buf = Buffer.alloc(0);
  let pending = null;
  sock.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0 || !pending) return;
    const head = buf.subarray(0, end).toString('latin1');
    const len = Number((head.match(/\r\ncontent-length: *(\d+)/i) || [0, 0])[1]);
    if (buf.length < end + 4 + len) return;
    const text = buf.subarray(end + 4, end + 4 + len).toString('utf8');
    buf = buf.subarray(end + 4 + len);
    const p = pending;
    pending = null;
    p({ head, text });
  });
  let extra = '';
  const post = (body) => new Promise((resolve) => {
    pending = resolve;
    sock.write(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
  const init = await post(INIT());
  const sid = init.head.match(/\r\nmcp-session-id: *(\S+)/i)[1];
  extra = `Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: ${JSON.parse(init.text).result.protocolVersion}\r\n`;
  const req = async (method, params = {}) => JSON.parse((await post(JSON.stringify({ jsonrpc: '2.0', id: nextId(), method, params }))).text);
  return { pid: child.pid, req, close: () => { sock.destroy(); child.kill('SIGTERM'); return new Promise((r) => child.once('exit', r)); } };
}

async function transportBench(transport) {
  const srv = await rawServer(transport);
  try {
    for (let i = 0; i < 100; i++) await srv.req('tools/list');
    const lat = [];
    const t0 = performance.now();
    for (let i = 0; i < N_LIST; i++) {
      const t = performance.now();
      await srv.req('tools/list');
      lat.push(performance.now() - t);
    }
    const secs = (performance.now() - t0) / 1000;
    row(`${transport}: tools/list round trip`, fmt(median(lat) * 1000, 0), 'µs', `median of ${N_LIST}, raw JSON-RPC client (the SDK client adds its own schema compilation)`);
    row(`${transport}: tools/list throughput`, fmt(N_LIST / secs, 0), 'req/s', 'sequential, one client');

    const tool = async (name, args) => (await srv.req('tools/call', { name, arguments: args })).result.structuredContent;
    const { session_id } = await tool('create_session', {});
    for (let i = 0; i < 3; i++) await tool('session_bash', { session_id, command: 'true' });
    const rt = [];
    const added = [];
    const inner = [];
    const b0 = performance.now();
    for (let i = 0; i < N_BASH; i++) {
      const t = performance.now();
      const r = await tool('session_bash', { session_id, command: 'true' });
      const ms = performance.now() - t;
      rt.push(ms);
      inner.push(r.duration_ms);
      added.push(ms - r.duration_ms);
    }
    const bsecs = (performance.now() - b0) / 1000;
    row(`${transport}: session_bash "true" round trip`, fmt(median(rt)), 'ms', `median of ${N_BASH}`);
    row(`${transport}: session_bash "true" throughput`, fmt(N_BASH / bsecs, 1), 'req/s', 'sequential, one client');
    row(`${transport}: the sandboxed command itself`, fmt(median(inner)), 'ms', 'its duration_ms: sandbox_spawn (plan, fork, bwrap, bash -c true) until reaped and its output closed');
    row(`${transport}: drun-mcp overhead per session_bash`, fmt(median(added), 3), 'ms',
      'per call, round trip minus the command\'s own duration; median; target <= 1 ms');

    if (transport === 'stdio') {
      const p0 = (await tool('get_policy', {}));
      for (let i = 0; i < 1000; i++) await tool('session_list', {});
      const p1 = (await tool('get_policy', {}));
      const checks = p1.counters.checks - p0.counters.checks;
      const ns = (p1.counters.check_ns_total - p0.counters.check_ns_total) / Math.max(1, checks);
      row('config check, unchanged file', fmt(ns / 1000, 2), 'µs', `per call: one stat + compare under the lock; ${checks} calls, ` +
        `${p1.counters.compiles - p0.counters.compiles} recompiles`);
      const n = await strace(srv.pid, async () => { for (let i = 0; i < 200; i++) await tool('session_list', {}); });
      if (n !== null) {
        row('stat calls on the config per tool call', fmt(n.config / 200, 2), 'stat/call', `strace of 200 session_list calls (${n.all} stat-family calls in all); target: 1`);
      }
    }
  } finally {
    await srv.close();
  }
}

/** The SDK client as an agent would use it, for contrast. */
async function sdkBench(transport) {
  const srv = await start(transport, { config: CONFIG });
  try {
    for (let i = 0; i < 20; i++) await srv.client.listTools();
    const lat = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      await srv.client.listTools();
      lat.push(performance.now() - t);
    }
    row(`${transport}: tools/list through the SDK client`, fmt(median(lat), 2), 'ms', 'median of 300; mostly the client compiling the ten outputSchemas');
  } finally {
    await srv.close();
  }
}

/** Runs fn while strace records the stat-family syscalls of pid; returns
 * { config, all } counts, or null without strace. */
async function strace(pid, fn) {
  if (spawnSync('strace', ['-V']).status !== 0) return null;
  const out = path.resolve(process.env.ROOT || '.', process.env.B || 'build', 'bench-strace.txt');
  const st = spawn('strace', ['-f', '-qq', '-o', out, '-e', 'trace=stat,lstat,newfstatat,statx,fstat,fstatat64', '-p', String(pid)]);
  await new Promise((r) => setTimeout(r, 500));
  await fn();
  st.kill('SIGINT');
  await new Promise((r) => st.once('exit', r));
  const lines = (fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '').split('\n')
    .filter((l) => /stat/.test(l) && !/resumed>/.test(l));
  fs.rmSync(out, { force: true });
  return { config: lines.filter((l) => l.includes('config.toml')).length, all: lines.length };
}

function bareBwrap() {
  const args = process.env.BARE_ARGS;
  const bpf = process.env.BARE_BPF;
  if (!args || !bpf || !fs.existsSync(args)) return;
  // The vector reads data (blocked files) from fds it names: give each /dev/null.
  const words = fs.readFileSync(args, 'utf8').split('\0');
  const dataFds = [];
  words.forEach((w, i) => { if (/^--(ro-)?bind-data$|^--file$/.test(w)) dataFds.push(Number(words[i + 1])); });
  const runs = [];
  for (let i = 0; i < N_BASH + 3; i++) {
    const stdio = ['ignore', 'ignore', 'ignore', fs.openSync(args, 'r'), fs.openSync(bpf, 'r')];
    for (const fd of dataFds) {
      while (stdio.length <= fd) stdio.push('ignore');
      stdio[fd] = fs.openSync('/dev/null', 'r');
    }
    const t = performance.now();
    const r = spawnSync('bwrap', ['--args', '3', '--seccomp', '4', '--', '/bin/bash', '-c', 'true'], { stdio });
    const ms = performance.now() - t;
    for (const fd of stdio) if (typeof fd === 'number') fs.closeSync(fd);
    if (r.status !== 0) {
      row('bare bwrap, same vector', 'failed', '', `bwrap exited ${r.status}`);
      return;
    }
    if (i >= 3) runs.push(ms);
  }
  row('bare bwrap, same vector, bash -c true', fmt(median(runs)), 'ms', `median of ${N_BASH}, spawned from node (no planning, no drun-mcp)`);
}

async function rssBench() {
  const srv = await start('stdio', { config: 'max_sessions = 60\n' });
  try {
    await new Promise((r) => setTimeout(r, 300));
    row('RSS idle', fmt(rssKb(srv.pid) / 1024, 1), 'MiB', 'after initialize; target < 10 MiB');
    for (let i = 0; i < 50; i++) await srv.call('create_session', {});
    await new Promise((r) => setTimeout(r, 300));
    row('RSS with 50 sessions', fmt(rssKb(srv.pid) / 1024, 1), 'MiB', '50 open sessions, idle');
  } finally {
    await srv.close();
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

/** One raw JSON-RPC client over node:http with its own kept-alive socket and MCP session. */
async function httpClient(url) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { 'Content-Type': 'application/json', Accept: JSON_SSE };
  const postJson = (body) => new Promise((resolve, reject) => {
    const r = http.request(url, { method: 'POST', agent, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    r.on('error', reject);
    r.end(body);
  });
  const init = await postJson(INIT());
  headers['Mcp-Session-Id'] = init.headers['mcp-session-id'];
  let id = 1;
  const tool = async (name, args) => {
    const r = await postJson(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }));
    const m = JSON.parse(r.text);
    if (!m.result || m.result.isError) throw new Error(`${name}: ${r.text.slice(0, 300)}`);
    return m.result.structuredContent;
  };
  return { tool, close: () => agent.destroy() };
}

const N_CLIENTS = 20;
const N_EACH = Number(process.env.BENCH_N_EACH || 15);

async function concurrentBench() {
  const srv = await spawnHttp({ config: CONFIG });
  try {
    const clients = await Promise.all(Array.from({ length: N_CLIENTS }, () => httpClient(srv.url)));
    const sids = await Promise.all(clients.map((c) => c.tool('create_session', {}).then((r) => r.session_id)));
    await Promise.all(clients.map((c, k) => c.tool('session_bash', { session_id: sids[k], command: 'true' })));
    const lat = [];
    const t0 = performance.now();
    await Promise.all(clients.map(async (c, k) => {
      for (let i = 0; i < N_EACH; i++) {
        const t = performance.now();
        await c.tool('session_bash', { session_id: sids[k], command: 'true' });
        lat.push(performance.now() - t);
      }
    }));
    const secs = (performance.now() - t0) / 1000;
    const notes = `${N_CLIENTS} HTTP clients at once, ${N_EACH} calls each, raw JSON-RPC on node:http`;
    row(`http: session_bash "true", ${N_CLIENTS} concurrent clients`, fmt(lat.length / secs, 1), 'calls/s', notes);
    row(`http: session_bash "true", ${N_CLIENTS} concurrent clients, p50`, fmt(pct(lat, 50), 1), 'ms', 'latency of one call under that load');
    row(`http: session_bash "true", ${N_CLIENTS} concurrent clients, p99`, fmt(pct(lat, 99), 1), 'ms', 'latency of one call under that load');
    for (const c of clients) c.close();
  } finally {
    await srv.close();
  }
}

/** Ten 60 MB bodies at once: the peak RSS (VmHWM) the server reaches. */
async function floodBench() {
  const srv = await spawnHttp({ config: CONFIG });
  try {
    const sid = await initSession(srv.url);
    const pre = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"';
    const body = Buffer.alloc(pre.length + 60e6 + 3, 'x');
    body.write(pre, 0);
    body.write('"}}', pre.length + 60e6);
    const u = new URL(srv.url);
    const before = hwmKb(srv.pid);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => new Promise((resolve) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false,
        headers: { 'Content-Type': 'application/json', Accept: JSON_SSE, 'Content-Length': body.length, 'Mcp-Session-Id': sid } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', () => resolve('reset'));
      req.end(body);
    })));
    const peak = hwmKb(srv.pid);
    const served = outcomes.filter((o) => o === 200).length;
    row('RSS peak, ten 60 MB bodies at once', fmt(peak / 1024, 0), 'MiB', `VmHWM, from ${fmt(before / 1024, 0)} MiB; ` +
      `${served} served, ${outcomes.filter((o) => o === 503).length} refused (503, body budget 128 MiB); bound 352 MiB`);
  } finally {
    await srv.close();
  }
}

// BENCH_ONLY=load runs the two load rows alone.
if (process.env.BENCH_ONLY !== 'load') for (const t of ['stdio', 'http', 'http-raw']) await transportBench(t);
await concurrentBench();
await floodBench();
if (process.env.BENCH_ONLY !== 'load') {
  bareBwrap();
  for (const t of ['stdio', 'http']) await sdkBench(t);
  await rssBench();
}
