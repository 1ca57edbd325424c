// json-get.mjs — print a value from a JSON document. For the bash suites.
//
//   node tests/lib/json-get.mjs FILE|- EXPR
//
// EXPR is a JavaScript expression over `j`, the parsed document (from FILE,
// or stdin for "-"). A string prints as it is (no newline added), an array
// one element per line, undefined and null as nothing, anything else as
// JSON. Exit 2 when the document does not parse or EXPR throws.
import fs from "node:fs";

const [file, expr] = process.argv.slice(2);
try {
  const j = JSON.parse(fs.readFileSync(file === "-" ? 0 : file, "utf8"));
  const v = new Function("j", `return (${expr});`)(j);
  if (typeof v === "string") process.stdout.write(v);
  else if (Array.isArray(v)) for (const x of v) console.log(typeof x === "string" ? x : JSON.stringify(x));
  else if (v !== undefined && v !== null) console.log(JSON.stringify(v));
} catch (e) {
  console.error(`json-get: ${e.message}`);
  process.exit(2);
}
