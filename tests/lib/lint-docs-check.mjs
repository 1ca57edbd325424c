// lint-docs-check.mjs — for 40-lint: each rule's section in docs/lint-rules.md
// starts with the table's severity and summary.
//
//   drun-policy lint --rules --format json | node tests/lib/lint-docs-check.mjs docs/lint-rules.md
//
// For each rule of the table (stdin), the line two below "## ID" must be
// "**SEVERITY** · SUMMARY". Prints "# ID: want ..." per mismatch; exit 1 if any.
import fs from "node:fs";

const doc = fs.readFileSync(process.argv[2], "utf8").split("\n");
let bad = 0;
for (const r of JSON.parse(fs.readFileSync(0, "utf8"))) {
  const i = doc.indexOf("## " + r.id), want = "**" + r.severity + "** · " + r.summary;
  if (i < 0 || doc[i + 2] !== want) {
    console.log("# " + r.id + ': want "' + want + '"');
    bad++;
  }
}
process.exit(bad ? 1 : 0);
