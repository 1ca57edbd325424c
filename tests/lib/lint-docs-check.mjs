// lint-docs-check.mjs — for 40-lint: each rule's section in docs/lint-rules.md
// starts with the table's severity and summary.
//
//   drun-policy lint --rules --format json | node tests/lib/lint-docs-check.mjs docs/lint-rules.md
//   tap_node tests/lib/lint-docs-check.mjs docs/lint-rules.md RULES.json
//
// For each rule of the table (stdin, or RULES.json), the line two below "## ID" must be
// "**SEVERITY** · SUMMARY". Prints "# ID: want ..." per mismatch; exit 1 if any.
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([docFile, rulesFile], io) {
  const doc = fs.readFileSync(docFile, "utf8").split("\n");
  let bad = 0;
  for (const r of JSON.parse(rulesFile ? fs.readFileSync(rulesFile, "utf8") : io.stdin())) {
    const i = doc.indexOf("## " + r.id), want = "**" + r.severity + "** · " + r.summary;
    if (i < 0 || doc[i + 2] !== want) {
      io.out("# " + r.id + ': want "' + want + '"\n');
      bad++;
    }
  }
  return bad ? 1 : 0;
}
cli(import.meta, main);
