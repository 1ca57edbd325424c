// json-test.mjs — does a JSON document pass a check? For the bash suites.
//
//   node tests/lib/json-test.mjs FILE|- EXPR      (or tap_node, without "-")
//
// EXPR is a JavaScript expression over `j`, the parsed document (from FILE,
// or stdin for "-"). Exit 0 when it is truthy, 1 when it is falsy, 2 when
// the document does not parse or EXPR throws (with the reason on stderr).
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([file, expr], io) {
  try {
    const j = JSON.parse(file === "-" ? io.stdin() : fs.readFileSync(file, "utf8"));
    return new Function("j", `return (${expr});`)(j) ? 0 : 1;
  } catch (e) {
    io.err(`json-test: ${e.message}\n`);
    return 2;
  }
}
cli(import.meta, main);
