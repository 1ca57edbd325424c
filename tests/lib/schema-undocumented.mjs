// schema-undocumented.mjs — for 72-schema: the keys of the schema that a
// doc page does not name (as `key` or `[table]`).
//
//   node tests/lib/schema-undocumented.mjs docs/config.schema.json docs/policy.md
//
// Prints one key a line (table.key for a table's keys); nothing when all are there.
import fs from "node:fs";

const s = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const doc = fs.readFileSync(process.argv[3], "utf8");
for (const [k, p] of Object.entries(s.properties)) {
  if (!doc.includes("`" + k + "`") && !doc.includes("`[" + k + "]`")) console.log(k);
  for (const k2 of Object.keys(p.properties ?? {})) if (!doc.includes("`" + k2 + "`")) console.log(k + "." + k2);
}
