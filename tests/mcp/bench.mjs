// bench.mjs — drun-mcp figures for `make bench` (run by tests/bench/60-mcp,
// which prints the table header). Prints markdown rows
// "| benchmark | value | unit | notes |".
//
//  - tools/list and session_bash "true" round trips over stdio and HTTP with
//    the official SDK client: median latency and sequential requests/s;
//  - what drun-mcp adds to the sandboxed command: per call, round trip minus
//    the command's own spawn-to-exit time (duration_ms), median; and, for
//    context, a bare `bwrap` run of the same vector (BARE_ARGS/BARE_BPF from
//    tests/bench/vector_dump.c) spawned from this process;
//  - the per-call config check: time per unchanged check (get_policy
//    counters) and stat(2) calls per tool call (strace, when available);
//  - RSS of the server idle and with 50 sessions.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';

import { start } from './lib.mjs';

const rows = [];
const row = (name, value, unit, notes) => {
  const line = `| ${name} | ${value} | ${unit} | ${notes} |`;
  rows.push(line);
  console.log(line);
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
const rssKb = (pid) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)[1]);
const fmt = (x, d = 2) => x.toFixed(d);

const N_LIST = Number(process.env.BENCH_N_LIST || 1000);
const N_BASH = Number(process.env.BENCH_N_BASH || 40);

async function transportBench(transport) {
  const srv = await start(transport, { config: 'max_sessions = 60\n' });
  try {
    for (let i = 0; i < 50; i++) await srv.client.listTools();
    const lat = [];
    const t0 = performance.now();
    for (let i = 0; i < N_LIST; i++) {
      const t = performance.now();
      await srv.client.listTools();
      lat.push(performance.now() - t);
    }
    const secs = (performance.now() - t0) / 1000;
    row(`${transport}: tools/list round trip`, fmt(median(lat) * 1000, 0), 'µs', `median of ${N_LIST}, SDK client`);
    row(`${transport}: tools/list throughput`, fmt(N_LIST / secs, 0), 'req/s', 'sequential, one client');

    const { session_id } = await srv.call('create_session', {});
    for (let i = 0; i < 3; i++) await srv.call('session_bash', { session_id, command: 'true' });
    const rt = [];
    const added = [];
    const inner = [];
    const b0 = performance.now();
    for (let i = 0; i < N_BASH; i++) {
      const t = performance.now();
      const r = await srv.call('session_bash', { session_id, command: 'true' });
      const ms = performance.now() - t;
      rt.push(ms);
      inner.push(r.duration_ms);
      added.push(ms - r.duration_ms);
    }
    const bsecs = (performance.now() - b0) / 1000;
    row(`${transport}: session_bash "true" round trip`, fmt(median(rt)), 'ms', `median of ${N_BASH}`);
    row(`${transport}: session_bash "true" throughput`, fmt(N_BASH / bsecs, 1), 'req/s', 'sequential, one client');
    row(`${transport}: sandboxed command itself`, fmt(median(inner)), 'ms', 'duration_ms: sandbox_spawn (plan, fork, bwrap, bash -c true) to exit');
    row(`${transport}: drun-mcp overhead per session_bash`, fmt(median(added), 3), 'ms',
      'round trip minus the command\'s own duration, median; target <= 1 ms');

    // the per-call config check
    const p0 = await srv.call('get_policy', {});
    for (let i = 0; i < 500; i++) await srv.call('session_list', {});
    const p1 = await srv.call('get_policy', {});
    const checks = p1.counters.checks - p0.counters.checks;
    const ns = (p1.counters.check_ns_total - p0.counters.check_ns_total) / Math.max(1, checks);
    if (transport === 'stdio') {
      row('config check, unchanged file', fmt(ns / 1000, 2), 'µs', `per call (stat + compare under the lock), ${checks} calls, ` +
        `${p1.counters.compiles - p0.counters.compiles} recompiles`);
      const straced = strace(srv.pid, () => Promise.all([...Array(200)].map(() => srv.call('session_list', {}))));
      const n = await straced;
      if (n !== null) row('stat calls per tool call', fmt(n / 200, 2), 'stat/call', 'strace of 200 session_list calls; target: 1');
    }
    return srv;
  } catch (e) {
    await srv.close();
    throw e;
  }
}

/** Runs fn while strace counts the stat-family syscalls of pid; null without strace. */
async function strace(pid, fn) {
  if (spawnSync('strace', ['-V']).status !== 0) return null;
  const out = `${process.env.ROOT || '.'}/${process.env.B || 'build'}/bench-strace.txt`;
  const st = spawn('strace', ['-f', '-qq', '-c', '-S', 'name', '-o', out, '-e', 'trace=stat,lstat,newfstatat,statx,fstat', '-p', String(pid)]);
  await new Promise((r) => setTimeout(r, 500));
  await fn();
  st.kill('SIGINT');
  await new Promise((r) => st.once('exit', r));
  const text = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
  let calls = 0;
  for (const m of text.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(stat|lstat|newfstatat|statx|fstat)\s*$/gm)) calls += Number(m[1]);
  return calls;
}

function bareBwrap() {
  const args = process.env.BARE_ARGS;
  const bpf = process.env.BARE_BPF;
  if (!args || !bpf || !fs.existsSync(args)) return;
  const runs = [];
  for (let i = 0; i < N_BASH + 3; i++) {
    const fa = fs.openSync(args, 'r');
    const fb = fs.openSync(bpf, 'r');
    const t = performance.now();
    const r = spawnSync('bwrap', ['--args', '3', '--seccomp', '4', '--', '/bin/bash', '-c', 'true'],
      { stdio: ['ignore', 'ignore', 'ignore', fa, fb] });
    const ms = performance.now() - t;
    fs.closeSync(fa);
    fs.closeSync(fb);
    if (r.status !== 0) return;
    if (i >= 3) runs.push(ms);
  }
  row('bare bwrap, same vector, bash -c true', fmt(median(runs)), 'ms', `median of ${N_BASH}, spawned from node; no drun-mcp involved`);
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

for (const t of ['stdio', 'http']) {
  const srv = await transportBench(t);
  await srv.close();
}
bareBwrap();
await rssBench();
