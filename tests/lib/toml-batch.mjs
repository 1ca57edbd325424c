// toml-batch.mjs — many TOML documents through `drun-policy toml-decode
// --batch`, each answered with the exit status, stdout and stderr the single
// command would give, and every failure a batch could hide blamed on a
// document. Shared by 20-toml-test (tests/toml-test/run.mjs), 21-toml-hostile
// (through tap_node) and 72-schema (tests/schema/validate.mjs): a process
// start costs more than a decode, most of all under the sanitizers.
//
// What a batch cannot hide:
//   - a process that dies (a crash, a sanitizer report, a hang killed after
//     20 s without an answer) fails the document whose answer is missing,
//     with the process's stderr; the documents after it run in a new batch;
//   - a process that answers every document but then exits non-zero or
//     writes to its own stderr (LeakSanitizer's report at exit) fails the
//     run: its documents are run again one process each to find the one to
//     blame, and if none shows it alone, the batch's last one carries the
//     report;
//   - with agreeEvery N, every Nth document is also run as the single
//     command, whose exit status, stdout and stderr must equal the batch's
//     answer byte for byte.
// An answer: { code, signal, out, err (strings), outB, errB (the bytes),
// died (why the document failed whatever the answer says, or absent) }.
//
//   import { decodeAll } from "../lib/toml-batch.mjs";
//   const answers = await decodeAll(bin, [{ args: ["--toml", "1.0"], input: Buffer }, ...],
//                                   { batchSize, jobs, agreeEvery, single });
//   (stats.processes counts the decoder processes started)
//
// As a helper (tap_node, or node toml-batch.mjs ...):
//   toml-batch.mjs BIN QUEUE ANSWERS AGREE_EVERY [ARGS...]
// decodes the records of QUEUE ("LEN\n" then LEN bytes, each) with
// `toml-decode ARGS`, and writes ANSWERS: per record "STATUS OUTLEN ERRLEN
// WHYLEN\n", then the stdout, stderr and why bytes (STATUS -1 and a why when
// the document failed whatever it answered).
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cli } from "./cli.mjs";

const HANG_MS = 20000; // a process that answers nothing for this long is killed

export const stats = { processes: 0 };

const answer = (code, signal, outB, errB) =>
  ({ code, signal, outB, errB, out: outB.toString("utf8"), err: errB.toString("utf8") });

export function exitText(r) {
  return r.signal ? `killed by ${r.signal}` : r.code === null ? `did not run (${r.err.trim()})` : `exit ${r.code}`;
}

// One document as its own process: `toml-decode ARGS` with it on stdin.
export function decodeOne(bin, doc) {
  stats.processes++;
  return new Promise((resolve) => {
    const child = spawn(bin, ["toml-decode", ...doc.args], { stdio: ["pipe", "pipe", "pipe"] });
    const out = [], err = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS);
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    child.on("error", (e) => { clearTimeout(timer); resolve(answer(null, null, Buffer.alloc(0), Buffer.from(String(e)))); });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve(answer(code, signal, Buffer.concat(out), Buffer.concat(err)));
    });
    child.stdin.on("error", () => {}); // the decoder may exit before reading everything
    child.stdin.end(doc.input);
  });
}

// Moves the whole frames at the start of data ("STATUS OUTLEN ERRLEN\n", the
// stdout bytes, the stderr bytes) into answers; returns the unfinished rest.
// Throws on a header that is not one.
function takeFrames(data, answers) {
  let at = 0;
  for (let nl; (nl = data.indexOf(10, at)) >= 0; ) {
    const head = data.subarray(at, nl).toString("latin1");
    const m = /^(\d+) (\d+) (\d+)$/.exec(head);
    if (!m) throw new Error(`not a frame header: ${JSON.stringify(head.slice(0, 80))}`);
    const body = nl + 1, mid = body + Number(m[2]), end = mid + Number(m[3]);
    if (data.length < end) break;
    answers.push(answer(Number(m[1]), null, data.subarray(body, mid), data.subarray(mid, end)));
    at = end;
  }
  return data.subarray(at);
}

// One `toml-decode ARGS --batch` process over docs (all with the same ARGS):
// { answers (in order, maybe fewer than docs), code, signal, err (its own
// stderr), bad (why its stdout could not be read, or null) }.
function batch(bin, docs) {
  stats.processes++;
  return new Promise((resolve) => {
    const child = spawn(bin, ["toml-decode", ...docs[0].args, "--batch"], { stdio: ["pipe", "pipe", "pipe"] });
    const answers = [], err = [];
    let rest = Buffer.alloc(0), bad = null, timer = null;
    const arm = () => { clearTimeout(timer); timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS); };
    const done = (code, signal, e) => {
      clearTimeout(timer);
      if (!bad && rest.length) bad = `${rest.length} bytes of an unfinished answer`;
      if (!bad && answers.length > docs.length) bad = `${answers.length} answers to ${docs.length} documents`;
      resolve({ answers: answers.slice(0, docs.length), code, signal, err: e ?? Buffer.concat(err).toString("utf8"), bad });
    };
    arm();
    child.stdout.on("data", (d) => {
      if (bad) return;
      const before = answers.length;
      try { rest = takeFrames(rest.length ? Buffer.concat([rest, d]) : d, answers); } catch (e) { bad = e.message; child.kill("SIGKILL"); }
      if (answers.length > before) arm();
    });
    child.stderr.on("data", (d) => err.push(d));
    child.on("error", (e) => done(null, null, String(e)));
    child.on("close", (code, signal) => done(code, signal));
    child.stdin.on("error", () => {}); // a process that dies stops reading
    const records = [];
    for (const d of docs) records.push(Buffer.from(`${d.input.length}\n`), d.input);
    child.stdin.end(Buffer.concat(records));
  });
}

// A single run's sign that it is the one a batch's exit report is about.
const alone = (r) => r.signal !== null || (r.code !== 0 && r.code !== 1) || /Sanitizer|runtime error:/.test(r.err);

// Answers for docs (one ARGS, in order): batches until each has one. A batch
// that dies blames the document it did not answer and the rest go on in a
// new batch; one that answers all but then fails (exit status, stderr:
// LeakSanitizer's report at exit) has its documents run one by one.
async function runBatch(bin, docs) {
  const res = [];
  for (let todo = docs; todo.length; ) {
    const b = await batch(bin, todo);
    res.push(...b.answers);
    if (b.answers.length < todo.length) {
      const why = b.bad ? `unreadable batch output (${b.bad})` : `the batch process ended on this document: ${exitText(b)}`;
      res.push({ ...answer(b.code, b.signal, Buffer.alloc(0), Buffer.from(b.err)), died: why });
      todo = todo.slice(b.answers.length + 1);
      continue;
    }
    if (b.code !== 0 || b.signal || b.err !== "" || b.bad) {
      const first = res.length - todo.length;
      let blamed = 0;
      for (let i = 0; i < todo.length; i++) {
        const r = await decodeOne(bin, todo[i]);
        if (alone(r)) { res[first + i] = { ...r, died: `a batch ended with ${exitText(b)} after its last answer; this document alone: ${exitText(r)}` }; blamed++; }
      }
      if (!blamed) {
        const why = `a batch ended with ${exitText(b)} after answering its ${todo.length} documents, the last of them this one${b.bad ? ` (${b.bad})` : ""}; none shows it alone`;
        res[res.length - 1] = { ...answer(b.code, b.signal, Buffer.alloc(0), Buffer.from(b.err)), died: why };
      }
    }
    todo = [];
  }
  return res;
}

export async function pool(items, n, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => { while (next < items.length) { const i = next++; results[i] = await fn(items[i]); } };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return results;
}

// Where the single command's answer s and the batch's b differ, or null.
function disagree(s, b) {
  if (s.code !== b.code || s.signal !== b.signal) return `single ${exitText(s)}, batch ${exitText(b)}`;
  if (!s.outB.equals(b.outB)) return `stdout differs (single ${s.outB.length} bytes, batch ${b.outB.length})`;
  if (!s.errB.equals(b.errB)) return `stderr differs (single ${s.errB.length} bytes, batch ${b.errB.length})`;
  return null;
}

// Every document's answer, in order: batches of batchSize (each of one ARGS,
// jobs of them at a time), or one process a document with single; then the
// agreement sample (every agreeEvery-th document again as the single
// command; a difference fails the document).
export async function decodeAll(bin, docs, { batchSize = 64, jobs = 1, agreeEvery = 0, single = false } = {}) {
  if (single) return pool(docs, jobs, (d) => decodeOne(bin, d));
  const key = (d) => d.args.join("\0");
  const chunks = [];
  for (const d of docs) {
    const last = chunks.at(-1);
    if (last && last.length < batchSize && key(last[0]) === key(d)) last.push(d);
    else chunks.push([d]);
  }
  const res = (await pool(chunks, jobs, (ch) => runBatch(bin, ch))).flat();
  if (agreeEvery > 0) {
    const sample = docs.map((d, i) => i).filter((i) => i % agreeEvery === 0 && !res[i].died);
    const singles = await pool(sample, jobs, (i) => decodeOne(bin, docs[i]));
    sample.forEach((i, k) => {
      const d = disagree(singles[k], res[i]);
      if (d) res[i] = { ...res[i], died: `the single command and --batch disagree: ${d}`, err: singles[k].err || res[i].err };
    });
    stats.agreed = (stats.agreed ?? 0) + sample.length;
  }
  return res;
}

// The records of a queue file: "LEN\n" then LEN bytes, each.
function records(buf) {
  const out = [];
  for (let at = 0; at < buf.length; ) {
    const nl = buf.indexOf(10, at);
    if (nl < 0) throw new Error(`record ${out.length + 1}: no length line`);
    const len = Number(buf.subarray(at, nl).toString("latin1"));
    out.push(buf.subarray(nl + 1, nl + 1 + len));
    at = nl + 1 + len;
  }
  return out;
}

export async function main([bin, queue, answers, agreeEvery, ...args], io) {
  if (!bin || !queue || !answers) { io.err("usage: toml-batch.mjs BIN QUEUE ANSWERS AGREE_EVERY [ARGS...]\n"); return 2; }
  const docs = records(readFileSync(queue)).map((input) => ({ args, input }));
  const res = await decodeAll(bin, docs, { batchSize: 1 << 30, agreeEvery: Number(agreeEvery) || 0 });
  const parts = [];
  for (const r of res) {
    const why = Buffer.from(r.died ?? "");
    const code = r.died ? -1 : r.code;
    parts.push(Buffer.from(`${code} ${r.outB.length} ${r.errB.length} ${why.length}\n`), r.outB, r.errB, why);
  }
  writeFileSync(answers, Buffer.concat(parts));
  return 0;
}
cli(import.meta, main);
