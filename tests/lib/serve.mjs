// serve.mjs — one node process for a suite's many small checks (tap.sh's
// tap_node): starting node costs some 140 ms of CPU, a check well under one.
//
//   node tests/lib/serve.mjs       (started by tap_node; talks on stdin/stdout)
//
// A request is NUL-terminated fields: N, then N fields: the helper (a path
// to a tests/lib/*.mjs that exports main, see cli.mjs) and its arguments.
// The answer: the helper's stdout, NUL, its stderr, NUL, its exit status,
// NUL. Requests are answered one at a time, in order. A helper that throws
// answers status 2 with the error on its stderr.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const helpers = new Map();
async function run(fields) {
  const [helper, ...args] = fields;
  let out = "", err = "", code;
  try {
    const url = pathToFileURL(resolve(helper)).href;
    if (!helpers.has(url)) helpers.set(url, (await import(url)).main);
    const main = helpers.get(url);
    if (typeof main !== "function") throw new Error(`${helper} exports no main`);
    code = await main(args, {
      out: (s) => { out += s; },
      err: (s) => { err += s; },
      stdin: () => { throw new Error("no stdin inside serve.mjs: pass a file"); },
    });
  } catch (e) {
    err += `${helper}: ${e.message}\n`;
    code = 2;
  }
  process.stdout.write(`${out}\0${err}\0${code ?? 0}\0`);
}

let buf = Buffer.alloc(0), fields = [], want = -1, busy = Promise.resolve();
process.stdin.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  let i;
  while ((i = buf.indexOf(0)) >= 0) {
    const f = buf.subarray(0, i).toString("utf8");
    buf = buf.subarray(i + 1);
    if (want < 0) { want = Number(f); fields = []; } else fields.push(f);
    if (want >= 0 && fields.length === want) {
      const req = fields;
      want = -1;
      busy = busy.then(() => run(req));
    }
  }
});
