// json-get.mjs — print a value from a JSON document. For the bash suites.
//
//   node tests/lib/json-get.mjs FILE|- EXPR       (or tap_node, without "-")
//
// EXPR is a JavaScript expression over `j`, the parsed document (from FILE,
// or stdin for "-"). A string prints as it is (no newline added), an array
// one element per line, undefined and null as nothing, anything else as
// JSON. Exit 2 when the document does not parse or EXPR throws.
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([file, expr], io) {
  try {
    const j = JSON.parse(file === "-" ? io.stdin() : fs.readFileSync(file, "utf8"));
    const v = new Function("j", `return (${expr});`)(j);
    if (typeof v === "string") io.out(v);
    else if (Array.isArray(v)) for (const x of v) io.out((typeof x === "string" ? x : JSON.stringify(x)) + "\n");
    else if (v !== undefined && v !== null) io.out(JSON.stringify(v) + "\n");
    return 0;
  } catch (e) {
    io.err(`json-get: ${e.message}\n`);
    return 2;
  }
}
cli(import.meta, main);
