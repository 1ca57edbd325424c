// tests/lint/validate.mjs — structural checks of drun-policy lint output, for
// the 40-lint suite: SARIF 2.1.0 (the properties GitHub code scanning needs)
// and the --format json object.
//   node validate.mjs sarif FILE...   node validate.mjs json FILE...   (or tap_node)
// Prints one line per problem; exits 1 when there is any.
import { readFileSync } from "node:fs";
import { cli } from "../lib/cli.mjs";

let problems = [];
const bad = (file, msg) => problems.push(`${file}: ${msg}`);
const isInt = (v, min) => Number.isInteger(v) && v >= min;
const LEVELS = ["none", "note", "warning", "error"];

function sarif(file, doc) {
  if (doc.version !== "2.1.0") bad(file, "version is not \"2.1.0\"");
  if (typeof doc.$schema !== "string" || !doc.$schema.includes("sarif-2.1.0")) bad(file, "$schema does not name SARIF 2.1.0");
  if (!Array.isArray(doc.runs) || doc.runs.length < 1) return bad(file, "runs is not a non-empty array");
  doc.runs.forEach((run, r) => {
    const d = run?.tool?.driver;
    if (!d || typeof d.name !== "string" || !d.name) return bad(file, `runs[${r}].tool.driver.name missing`);
    if (!Array.isArray(d.rules) || !d.rules.length) return bad(file, `runs[${r}].tool.driver.rules missing`);
    const ids = new Map();
    d.rules.forEach((rule, i) => {
      if (typeof rule.id !== "string" || !rule.id) bad(file, `rules[${i}].id missing`);
      if (ids.has(rule.id)) bad(file, `rules[${i}].id ${rule.id} repeated`);
      ids.set(rule.id, i);
      if (typeof rule.shortDescription?.text !== "string") bad(file, `rules[${i}].shortDescription.text missing`);
      if (!LEVELS.includes(rule.defaultConfiguration?.level)) bad(file, `rules[${i}].defaultConfiguration.level invalid`);
    });
    if (run.columnKind && !["utf16CodeUnits", "unicodeCodePoints"].includes(run.columnKind)) bad(file, "columnKind invalid");
    if (!Array.isArray(run.results)) return bad(file, `runs[${r}].results is not an array`);
    run.results.forEach((res, i) => {
      const at = `results[${i}]`;
      if (typeof res.ruleId !== "string" || !ids.has(res.ruleId)) bad(file, `${at}.ruleId is not a rule of the driver`);
      if (res.ruleIndex !== undefined && res.ruleIndex !== ids.get(res.ruleId)) bad(file, `${at}.ruleIndex does not match ruleId`);
      if (!LEVELS.includes(res.level)) bad(file, `${at}.level invalid`);
      if (typeof res.message?.text !== "string" || !res.message.text) bad(file, `${at}.message.text missing`);
      if (!Array.isArray(res.locations) || !res.locations.length) return bad(file, `${at}.locations missing`);
      res.locations.forEach((loc, k) => {
        const pl = loc.physicalLocation, w = `${at}.locations[${k}].physicalLocation`;
        const uri = pl?.artifactLocation?.uri;
        if (typeof uri !== "string" || !uri || /[\s%](?![0-9A-F]{2})/.test(uri.replace(/%[0-9A-F]{2}/g, ""))) bad(file, `${w}.artifactLocation.uri invalid: ${uri}`);
        const g = pl?.region;
        if (!g || !isInt(g.startLine, 1) || !isInt(g.startColumn, 1)) return bad(file, `${w}.region start invalid`);
        if (g.endLine !== undefined && (!isInt(g.endLine, g.startLine))) bad(file, `${w}.region.endLine before startLine`);
        if (g.endColumn !== undefined && !isInt(g.endColumn, 1)) bad(file, `${w}.region.endColumn invalid`);
        if (g.endLine === g.startLine && g.endColumn !== undefined && g.endColumn <= g.startColumn) bad(file, `${w}.region is empty`);
      });
      for (const s of res.suppressions ?? [])
        if (!["inSource", "external"].includes(s.kind)) bad(file, `${at}.suppressions kind invalid`);
    });
  });
}

function json(file, doc) {
  if (typeof doc.file !== "string") bad(file, "file missing");
  if (typeof doc.rejected !== "boolean") bad(file, "rejected missing");
  for (const key of ["findings", "suppressed"]) {
    if (!Array.isArray(doc[key])) { bad(file, `${key} is not an array`); continue; }
    doc[key].forEach((f, i) => {
      for (const k of ["rule", "severity", "message", "doc"]) if (typeof f[k] !== "string") bad(file, `${key}[${i}].${k} missing`);
      if (!["error", "warning", "note"].includes(f.severity)) bad(file, `${key}[${i}].severity invalid`);
      if (f.file !== null && (!isInt(f.line, 1) || !isInt(f.column, 1))) bad(file, `${key}[${i}] has no line:column`);
    });
  }
  const s = doc.summary ?? {};
  const count = (sev) => (doc.findings ?? []).filter((f) => f.severity === sev).length;
  if (s.errors !== count("error") || s.warnings !== count("warning") || s.notes !== count("note")) bad(file, "summary does not count the findings");
  if (s.suppressed !== (doc.suppressed ?? []).length) bad(file, "summary.suppressed does not count them");
}

export function main([kind, ...files], io) {
  problems = [];
  for (const file of files) {
    let doc;
    try { doc = JSON.parse(readFileSync(file, "utf8")); } catch (e) { bad(file, `not JSON: ${e.message}`); continue; }
    (kind === "sarif" ? sarif : json)(file, doc);
  }
  for (const p of problems) io.out(p + "\n");
  return problems.length ? 1 : 0;
}
cli(import.meta, main);
