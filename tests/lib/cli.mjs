// cli.mjs — a tests/lib helper runs as its own program or inside serve.mjs.
//
//   export function main(args, io) { ...; io.out(text); io.err(text); return STATUS; }
//   cli(import.meta, main);
//
// io.stdin() reads all of stdin (only when run as a program: serve.mjs
// helpers are given files). Run as a program (node HELPER.mjs ARGS...), the
// helper's output goes to stdout and stderr and its status is node's.
import fs from "node:fs";
import { pathToFileURL } from "node:url";

export function cli(meta, main) {
  if (!process.argv[1] || meta.url !== pathToFileURL(fs.realpathSync(process.argv[1])).href) return;
  Promise.resolve(main(process.argv.slice(2), {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    stdin: () => fs.readFileSync(0, "utf8"),
  })).then((code) => { process.exitCode = code ?? 0; });
}
