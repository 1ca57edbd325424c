// man-keys.mjs — for 71-man: drun-policy.toml(5) documents every key of
// the compiler's key table under its table, with its default and range, and
// no key the compiler does not know.
//
//   node tests/lib/man-keys.mjs SCHEMA.json PAGE.txt
//
// SCHEMA.json is `drun-policy schema`; PAGE.txt the page rendered as plain
// text (man -l, unwrapped). Prints "OK N" (N keys checked) or one problem a line.
import fs from "node:fs";

const s = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const lines = fs.readFileSync(process.argv[3], "utf8").split("\n");
// entries by subsection: "   [filesystem]" or "   drun's keys (top level)" heads; "       key = type" entries
const entries = {}; let sub = null, inKeys = false, cur = null;
for (const l of lines) {
  if (/^[A-Z]/.test(l)) { inKeys = l === "KEYS"; sub = null; continue; }
  if (!inKeys) continue;
  let m;
  if ((m = /^ {3}(\S.*)$/.exec(l))) { sub = /^\[(\w+)\]$/.test(m[1]) ? m[1].slice(1, -1) : ""; cur = null; continue; }
  if ((m = /^ {7}([a-z_]+) = (.*)$/.exec(l))) { cur = (entries[sub] ??= {})[m[1]] = { type: m[2], body: "" }; continue; }
  if (cur && /^ {11}/.test(l)) cur.body += " " + l.trim();
}
const out = [];
const check = (table, key, p) => {
  const name = table ? table + "." + key : key;
  const e = entries[table ?? ""]?.[key];
  if (!e) return out.push(`${name}: no entry under ${table ? "[" + table + "]" : "the top-level keys"}`);
  const d = p.default;
  const want = Array.isArray(d) ? d.map(String) : typeof d === "object" && d ? [] : [String(d)];
  for (const w of want) if (!e.body.includes(w)) out.push(`${name}: the default ${JSON.stringify(d)} is not stated`);
  if (Array.isArray(d) && !d.length && !/Default \[\]/.test(e.body)) out.push(`${name}: the default [] is not stated`);
  if (p.type === "integer" && !e.body.includes(`${p.minimum} to ${p.maximum}`)) out.push(`${name}: the range ${p.minimum} to ${p.maximum} is not stated`);
};
let count = 0;
for (const [k, p] of Object.entries(s.properties)) {
  if (p.type === "object" && p.properties) {
    for (const [k2, p2] of Object.entries(p.properties)) { check(k, k2, p2); count++; }
  } else { check(null, k, p); count++; }
}
// and no entry the compiler does not know
for (const [t, es] of Object.entries(entries)) for (const k of Object.keys(es)) {
  const p = t ? s.properties[t]?.properties?.[k] : s.properties[k];
  if (!p) out.push(`${t ? t + "." : ""}${k}: documented but not a key of the compiler`);
}
console.log(out.length ? out.join("\n") : `OK ${count}`);
