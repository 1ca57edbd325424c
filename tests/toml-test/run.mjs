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
// The cases go through `toml-decode --batch` (tests/lib/toml-batch.mjs, shared
// with 21-toml-hostile and 72-schema), --batch-size of them per
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

import { readFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { decodeAll, exitText, stats } from '../lib/toml-batch.mjs';

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
// tests/lib/toml-batch.mjs runs the batches, blames what a batch hides (a
// process that dies, a report at exit) and takes the agreement sample.

const versionArgs = (c) => (c.version === '1.0' ? ['--toml', '1.0'] : []);
const caseInput = (o, c) => readFileSync(join(o.dir, 'tests', c.file));

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
const docs = cases.map((c) => ({ args: versionArgs(c), input: caseInput(o, c) }));
const res = await decodeAll(o.bin, docs, { batchSize: o.batchSize, jobs: o.jobs, single: o.single,
  agreeEvery: o.single ? 0 : o.agreeEvery });
const agreed = stats.agreed ?? 0;
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
console.log(`# ${cases.length} cases in ${secs.toFixed(1)}s, ${stats.processes} decoder processes` +
  (o.single ? ' (--single)' : `, ${agreed} cases also run as the single command and compared byte for byte`));
process.exit(results.every((r) => r.ok) ? 0 : 1);
