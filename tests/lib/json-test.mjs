// json-test.mjs — does a JSON document pass a check? For the bash suites.
//
//   node tests/lib/json-test.mjs FILE|- EXPR
//
// EXPR is a JavaScript expression over `j`, the parsed document (from FILE,
// or stdin for "-"). Exit 0 when it is truthy, 1 when it is falsy, 2 when
// the document does not parse or EXPR throws (with the reason on stderr).
import fs from "node:fs";

const [file, expr] = process.argv.slice(2);
try {
  const j = JSON.parse(fs.readFileSync(file === "-" ? 0 : file, "utf8"));
  process.exit(new Function("j", `return (${expr});`)(j) ? 0 : 1);
} catch (e) {
  console.error(`json-test: ${e.message}`);
  process.exit(2);
}
