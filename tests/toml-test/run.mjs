#!/usr/bin/env node
// run.mjs — the toml-test suite against `drun-policy toml-decode`, as TAP.
//
// For each case of tests/files-toml-1.0.0 (run with --toml 1.0) and
// tests/files-toml-1.1.0 (the default, 1.1): a valid case must exit 0 with an
// empty stderr and JSON equal to the expected .json, compared the way the
// official runner compares (objects as maps, arrays in order, type tags
// equal, integers and strings exactly, floats by value, date-times as
// instants); an invalid case must exit exactly 1 with a message on stderr.
//
// The cases go through `toml-decode --batch`, --batch-size of them per
// process (a process start costs more than a decode, most of all under the
// sanitizers), each answered with the exit status, stdout and stderr the
// single command would give. What a batch cannot hide:
//   - a process that dies (a crash, a sanitizer report, a hang killed after
//     20 s without an answer) fails the case whose answer is missing, with
//     the process's stderr; the cases after it run in a new batch;
//   - a process that answers every case but then exits non-zero or writes to
//     its own stderr (LeakSanitizer's report at exit) fails the run: its
//     cases are run again one process each to find the one to blame, and if
//     none shows it alone, the batch's last case carries the report;
//   - every --agree-every-th case is also run as the single command, whose
//     exit status, stdout and stderr must equal the batch's answer byte for
//     byte (1: every case; 0: none).
// --single runs every case as its own process, as toml-test's own runner does.
//
//   node run.mjs --bin build/drun-policy --dir tests/toml-test/suite [--jobs N] [--only REGEX]
//                [--batch-size N] [--agree-every N] [--single]

import { spawn } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

function parseArgs(argv) {
  const o = { bin: null, dir: null, jobs: Math.min(32, Math.max(2, cpus().length * 2)), only: null,
    batchSize: 64, agreeEvery: 64, single: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = argv[i + 1];
    if (a === '--bin') { o.bin = v; i++; }
    else if (a === '--dir') { o.dir = v; i++; }
    else if (a === '--jobs') { o.jobs = Number(v); i++; }
    else if (a === '--only') { o.only = new RegExp(v); i++; }
    else if (a === '--batch-size') { o.batchSize = Math.max(1, Number(v)); i++; }
    else if (a === '--agree-every') { o.agreeEvery = Number(v); i++; }
    else if (a === '--single') o.single = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.bin || !o.dir) throw new Error('usage: run.mjs --bin BIN --dir TOML_TEST_DIR');
  return o;
}

// ---- comparison, as toml-test does it --------------------------------------

const isObj = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);
const isTagged = (x) =>
  isObj(x) && Object.keys(x).length === 2 && typeof x.type === 'string' && typeof x.value === 'string';

function parseFloatTOML(s) {
  const t = s.replace(/_/g, '');
  if (/^[+]?inf$/.test(t)) return Infinity;
  if (t === '-inf') return -Infinity;
  return Number(t);
}

function cmpFloat(want, have) {
  if (want.endsWith('nan') || have.endsWith('nan'))
    return want.replace(/^[-+]/, '') === have.replace(/^[-+]/, '');
  const w = parseFloatTOML(want), h = parseFloatTOML(have);
  return !Number.isNaN(w) && w === h;
}

// A date-time reduced to a comparable string: an instant in nanoseconds for
// offset date-times, the normalized fields otherwise.
function normDatetime(kind, s) {
  s = s.replace(/ /g, 'T').replace(/t/g, 'T').replace(/z/g, 'Z');
  const frac = (f) => (f || '').replace(/0+$/, '').padEnd(9, '0');
  let m;
  if (kind === 'datetime') {
    m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
    if (!m) return null;
    let off = 0;
    if (m[8] !== 'Z') off = (m[8][0] === '-' ? -1 : 1) * (Number(m[8].slice(1, 3)) * 60 + Number(m[8].slice(4, 6)));
    const d = new Date(0);
    d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
    const secs = BigInt(d.getTime() / 1000) - BigInt(off * 60);
    return (secs * 1000000000n + BigInt(frac(m[7]))).toString();
  }
  if (kind === 'datetime-local') m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?$/.exec(s);
  else if (kind === 'time-local') m = /^()(\d{2}:\d{2}:\d{2})(?:\.(\d+))?$/.exec(s);
  else if (kind === 'date-local') m = /^(\d{4}-\d{2}-\d{2})()()$/.exec(s);
  return m ? `${m[1]}|${m[2]}|${frac(m[3])}` : null;
}

function cmpValue(want, have, path) {
  if (want.type !== have.type) return `${path}: type ${have.type}, want ${want.type}`;
  let same;
  switch (want.type) {
    case 'float': same = cmpFloat(want.value, have.value); break;
    case 'datetime': case 'datetime-local': case 'date-local': case 'time-local': {
      const w = normDatetime(want.type, want.value), h = normDatetime(want.type, have.value);
      same = w !== null && w === h;
      break;
    }
    default: same = want.value === have.value;
  }
  return same ? null : `${path}: ${want.type} ${JSON.stringify(have.value)}, want ${JSON.stringify(want.value)}`;
}

function cmp(want, have, path = '$') {
  if (Array.isArray(want)) {
    if (!Array.isArray(have)) return `${path}: not an array`;
    if (want.length !== have.length) return `${path}: array of ${have.length}, want ${want.length}`;
    for (let i = 0; i < want.length; i++) {
      const e = cmp(want[i], have[i], `${path}[${i}]`);
      if (e) return e;
    }
    return null;
  }
  if (!isObj(want)) return `${path}: expected JSON is neither object nor array`;
  if (!isObj(have)) return `${path}: not an object`;
  if (isTagged(want) !== isTagged(have)) return `${path}: value vs table mismatch`;
  if (isTagged(want)) return cmpValue(want, have, path);
  const wk = Object.keys(want).sort(), hk = Object.keys(have).sort();
  for (const k of wk) if (!(k in have)) return `${path}: missing key ${JSON.stringify(k)}`;
  for (const k of hk) if (!(k in want)) return `${path}: unexpected key ${JSON.stringify(k)}`;
  for (const k of wk) {
    const e = cmp(want[k], have[k], `${path}.${JSON.stringify(k)}`);
    if (e) return e;
  }
  return null;
}

// ---- running the decoder ------------------------------------------------------

const HANG_MS = 20000; // a process that answers nothing for this long is killed

const versionArgs = (c) => (c.version === '1.0' ? ['--toml', '1.0'] : []);
const caseInput = (o, c) => readFileSync(join(o.dir, 'tests', c.file));

// An answer: { code, signal, out, err } as strings (what the checks read),
// with outB and errB, the same bytes, for the byte-exact agreement check;
// died: why the case failed whatever its answer says.
const answer = (code, signal, outB, errB) =>
  ({ code, signal, outB, errB, out: outB.toString('utf8'), err: errB.toString('utf8') });

let processes = 0;

// One case as its own process: `toml-decode [--toml 1.0]` with the case on stdin.
function decode(o, c) {
  processes++;
  return new Promise((resolve) => {
    const child = spawn(o.bin, ['toml-decode', ...versionArgs(c)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [], err = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', (e) => { clearTimeout(timer); resolve(answer(null, null, Buffer.alloc(0), Buffer.from(String(e)))); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(answer(code, signal, Buffer.concat(out), Buffer.concat(err)));
    });
    child.stdin.on('error', () => {}); // the decoder may exit before reading everything
    child.stdin.end(caseInput(o, c));
  });
}

// Moves the whole frames at the start of data ("STATUS OUTLEN ERRLEN\n", the
// stdout bytes, the stderr bytes) into answers; returns the unfinished rest.
// Throws on a header that is not one.
function takeFrames(data, answers) {
  let at = 0;
  for (let nl; (nl = data.indexOf(10, at)) >= 0; ) {
    const head = data.subarray(at, nl).toString('latin1');
    const m = /^(\d+) (\d+) (\d+)$/.exec(head);
    if (!m) throw new Error(`not a frame header: ${JSON.stringify(head.slice(0, 80))}`);
    const body = nl + 1, mid = body + Number(m[2]), end = mid + Number(m[3]);
    if (data.length < end) break;
    answers.push(answer(Number(m[1]), null, data.subarray(body, mid), data.subarray(mid, end)));
    at = end;
  }
  return data.subarray(at);
}

// One `toml-decode --batch` process over cases (all of one TOML version):
// { answers (in order, maybe fewer than cases), code, signal, err (its own
// stderr), bad (why its stdout could not be read, or null) }.
function batch(o, cases) {
  processes++;
  return new Promise((resolve) => {
    const child = spawn(o.bin, ['toml-decode', ...versionArgs(cases[0]), '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const answers = [], err = [];
    let rest = Buffer.alloc(0), bad = null, timer = null;
    const arm = () => { clearTimeout(timer); timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS); };
    const done = (code, signal, e) => {
      clearTimeout(timer);
      if (!bad && rest.length) bad = `${rest.length} bytes of an unfinished answer`;
      if (!bad && answers.length > cases.length) bad = `${answers.length} answers to ${cases.length} cases`;
      resolve({ answers: answers.slice(0, cases.length), code, signal, err: e ?? Buffer.concat(err).toString('utf8'), bad });
    };
    arm();
    child.stdout.on('data', (d) => {
      if (bad) return;
      const before = answers.length;
      try { rest = takeFrames(rest.length ? Buffer.concat([rest, d]) : d, answers); } catch (e) { bad = e.message; child.kill('SIGKILL'); }
      if (answers.length > before) arm();
    });
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', (e) => done(null, null, String(e)));
    child.on('close', (code, signal) => done(code, signal));
    child.stdin.on('error', () => {}); // a process that dies stops reading
    const records = [];
    for (const c of cases) { const input = caseInput(o, c); records.push(Buffer.from(`${input.length}\n`), input); }
    child.stdin.end(Buffer.concat(records));
  });
}

// A single run's sign that it is the one a batch's exit report is about.
const alone = (r) => r.signal !== null || (r.code !== 0 && r.code !== 1) || /Sanitizer|runtime error:/.test(r.err);

// Answers for cases (one TOML version, in order): batches until each case
// has one. A batch that dies blames the case it did not answer and the rest
// go on in a new batch; one that answers all but then fails (exit status,
// stderr: LeakSanitizer's report at exit) has its cases run one by one.
async function runBatch(o, cases) {
  const res = [];
  for (let todo = cases; todo.length; ) {
    const b = await batch(o, todo);
    res.push(...b.answers);
    if (b.answers.length < todo.length) {
      const why = b.bad ? `unreadable batch output (${b.bad})` : `the batch process ended on this case: ${exitText(b)}`;
      res.push({ ...answer(b.code, b.signal, Buffer.alloc(0), Buffer.from(b.err)), died: why });
      todo = todo.slice(b.answers.length + 1);
      continue;
    }
    if (b.code !== 0 || b.signal || b.err !== '' || b.bad) {
      const first = res.length - todo.length;
      let blamed = 0;
      for (let i = 0; i < todo.length; i++) {
        const r = await decode(o, todo[i]);
        if (alone(r)) { res[first + i] = { ...r, died: `a batch ended with ${exitText(b)} after its last answer; this case alone: ${exitText(r)}` }; blamed++; }
      }
      if (!blamed) {
        const why = `a batch ended with ${exitText(b)} after answering its ${todo.length} cases, the last of them this one${b.bad ? ` (${b.bad})` : ''}; none shows it alone`;
        res[res.length - 1] = { ...answer(b.code, b.signal, Buffer.alloc(0), Buffer.from(b.err)), died: why };
      }
    }
    todo = [];
  }
  return res;
}

function exitText(r) {
  return r.signal ? `killed by ${r.signal}` : r.code === null ? `did not run (${r.err.trim()})` : `exit ${r.code}`;
}

// The verdict on case c from its answer r.
function judge(o, c, r) {
  if (r.died) return { ok: false, why: r.died, r };
  if (!c.valid) {
    if (r.code === 1 && r.err.trim() !== '') return { ok: true };
    return { ok: false, why: `invalid TOML accepted or mishandled: ${exitText(r)}`, r };
  }
  if (r.code !== 0) return { ok: false, why: `valid TOML rejected: ${exitText(r)}`, r };
  if (r.err !== '') return { ok: false, why: 'stderr not empty', r };
  let have;
  try { have = JSON.parse(r.out); } catch (e) { return { ok: false, why: `output is not JSON: ${e.message}`, r }; }
  const want = JSON.parse(readFileSync(join(o.dir, 'tests', c.file.replace(/\.toml$/, '.json')), 'utf8'));
  const diff = cmp(want, have);
  return diff ? { ok: false, why: diff, r } : { ok: true };
}

// Where the single command's answer s and the batch's b differ, or null.
function disagree(s, b) {
  if (s.code !== b.code || s.signal !== b.signal) return `single ${exitText(s)}, batch ${exitText(b)}`;
  if (!s.outB.equals(b.outB)) return `stdout differs (single ${s.outB.length} bytes, batch ${b.outB.length})`;
  if (!s.errB.equals(b.errB)) return `stderr differs (single ${s.errB.length} bytes, batch ${b.errB.length})`;
  return null;
}

async function pool(items, n, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => { while (next < items.length) { const i = next++; results[i] = await fn(items[i]); } };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return results;
}

// Every case's answer, in the order of cases: batches of --batch-size (each
// of one version), or one process a case with --single.
async function answers(o, cases) {
  if (o.single) return pool(cases, o.jobs, (c) => decode(o, c));
  const chunks = [];
  for (let i = 0; i < cases.length; i++) {
    const last = chunks.at(-1);
    if (last && last.length < o.batchSize && last[0].version === cases[i].version) last.push(cases[i]);
    else chunks.push([cases[i]]);
  }
  return (await pool(chunks, o.jobs, (ch) => runBatch(o, ch))).flat();
}

// The agreement sample: every agreeEvery-th case again as the single
// command; a difference fails the case.
async function agree(o, cases, res) {
  if (o.single || !(o.agreeEvery > 0)) return 0;
  const sample = cases.map((c, i) => i).filter((i) => i % o.agreeEvery === 0 && !res[i].died);
  const singles = await pool(sample, o.jobs, (i) => decode(o, cases[i]));
  sample.forEach((i, k) => {
    const d = disagree(singles[k], res[i]);
    if (d) res[i] = { ...res[i], died: `the single command and --batch disagree: ${d}`, err: singles[k].err || res[i].err };
  });
  return sample.length;
}

// ---- main ------------------------------------------------------------------------

const o = parseArgs(process.argv.slice(2));
const lists = [['1.0', 'files-toml-1.0.0'], ['1.1', 'files-toml-1.1.0']];
const cases = [];
for (const [version, list] of lists) {
  const path = join(o.dir, 'tests', list);
  if (!existsSync(path)) {
    console.log(`not ok 1 - toml-test list ${path} not found (set TOML_TEST_DIR)`);
    process.exit(1);
  }
  for (const file of readFileSync(path, 'utf8').split('\n')) {
    if (!file.endsWith('.toml') || (o.only && !o.only.test(file))) continue;
    cases.push({ version, file, valid: file.startsWith('valid/') });
  }
}

const started = process.hrtime.bigint();
const res = await answers(o, cases);
const agreed = await agree(o, cases, res);
const results = cases.map((c, i) => judge(o, c, res[i]));
const counts = {};
results.forEach((res, i) => {
  const c = cases[i], key = `${c.version} ${c.valid ? 'valid' : 'invalid'}`;
  counts[key] ??= { pass: 0, total: 0 };
  counts[key].total++;
  if (res.ok) counts[key].pass++;
  console.log(`${res.ok ? 'ok' : 'not ok'} ${i + 1} - ${c.version} ${c.file}`);
  if (!res.ok) {
    console.log(`# ${res.why}`);
    const show = (label, s) => s && s.trim() && console.log(s.trim().split('\n').slice(0, 6).map((l) => `#   ${label}: ${l}`).join('\n'));
    show('stderr', res.r && res.r.err);
    if (c.valid === false) show('stdout', res.r && res.r.out.slice(0, 400));
  }
});
console.log(`1..${cases.length}`);
const secs = Number(process.hrtime.bigint() - started) / 1e9;
for (const [version] of lists) {
  const v = counts[`${version} valid`] ?? { pass: 0, total: 0 }, inv = counts[`${version} invalid`] ?? { pass: 0, total: 0 };
  console.log(`# toml ${version}: valid ${v.pass}/${v.total}, invalid ${inv.pass}/${inv.total}`);
}
console.log(`# ${cases.length} cases in ${secs.toFixed(1)}s, ${processes} decoder processes` +
  (o.single ? ' (--single)' : `, ${agreed} cases also run as the single command and compared byte for byte`));
process.exit(results.every((r) => r.ok) ? 0 : 1);
