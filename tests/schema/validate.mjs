// tests/schema/validate.mjs — a dependency-free validator for exactly the
// JSON Schema subset `drun-policy schema` emits, over TOML files decoded by
// `drun-policy toml-decode` (toml-test tagged JSON, un-tagged here so that
// TOML integers, floats, booleans and date-times keep their types).
//
//   node validate.mjs DRUN_POLICY SCHEMA FILE.toml...   (or in tests/lib/serve.mjs)
//
// Prints "PASS FILE" or "FAIL FILE: /json/pointer: problem | ..." per file;
// exits 1 when any file fails. The files are decoded by one `toml-decode
// --batch` process (tests/lib/toml-batch.mjs: a process that dies or reports
// at exit fails the file it is blamed on; every 32nd file is also decoded by
// the single command, which must agree byte for byte). A keyword the validator does not implement is
// an error, never skipped: the schema cannot grow a rule this test ignores.
import { readFileSync } from "node:fs";
import { cli } from "../lib/cli.mjs";
import { decodeAll } from "../lib/toml-batch.mjs";

const ANNOTATIONS = new Set(["$schema", "title", "description", "default", "definitions"]);
const SCALARS = new Set(["string", "integer", "float", "bool", "datetime", "datetime-local", "date-local", "time-local"]);

class DateTime {
  constructor(kind, text) {
    this.kind = kind;
    this.text = text;
  }
}

// toml-test tagged JSON -> values: integers as BigInt, floats as Number,
// date-times as DateTime, tables as plain objects, arrays as arrays.
export function untag(v) {
  if (Array.isArray(v)) return v.map(untag);
  const keys = Object.keys(v);
  if (keys.length === 2 && SCALARS.has(v.type) && typeof v.value === "string") {
    switch (v.type) {
      case "string": return v.value;
      case "integer": return BigInt(v.value);
      case "float": return v.value === "nan" ? NaN : v.value.endsWith("inf") ? (v.value[0] === "-" ? -Infinity : Infinity) : Number(v.value);
      case "bool": return v.value === "true";
      default: return new DateTime(v.type, v.value);
    }
  }
  const out = {};
  for (const k of keys) out[k] = untag(v[k]);
  return out;
}

function typeOf(v) {
  if (typeof v === "bigint") return "integer";
  if (typeof v === "number") return "number";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "boolean";
  if (Array.isArray(v)) return "array";
  if (v instanceof DateTime) return "date-time";
  return "object";
}

const show = (v) => (typeof v === "bigint" ? String(v) : JSON.stringify(v));
const ptr = (path) => "/" + path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

function resolveRef(root, ref) {
  const m = /^#\/definitions\/([A-Za-z0-9_]+)$/.exec(ref);
  if (!m || !root.definitions?.[m[1]]) throw new Error(`unsupported or dangling $ref ${ref}`);
  return root.definitions[m[1]];
}

function equal(a, b) {
  if (typeof a === "bigint" || typeof b === "bigint") return typeof a === typeof b ? a === b : BigInt(a) === BigInt(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

// Appends "pointer: problem" strings to errs; returns nothing.
export function validate(schema, v, root = schema, path = [], errs = []) {
  const at = ptr(path);
  for (const k of Object.keys(schema)) {
    const s = schema[k];
    if (ANNOTATIONS.has(k)) continue;
    switch (k) {
      case "$ref": validate(resolveRef(root, s), v, root, path, errs); break;
      case "type":
        if (typeOf(v) !== s) errs.push(`${at}: must be ${s}, not ${typeOf(v)}`);
        break;
      case "properties":
        if (typeOf(v) === "object")
          for (const [name, sub] of Object.entries(s)) if (name in v) validate(sub, v[name], root, [...path, name], errs);
        break;
      case "additionalProperties":
        if (typeOf(v) !== "object") break;
        for (const name of Object.keys(v)) {
          if (schema.properties && name in schema.properties) continue;
          if (s === false) errs.push(`${at}: unknown key '${name}'`);
          else validate(s, v[name], root, [...path, name], errs);
        }
        break;
      case "propertyNames":
        if (typeOf(v) === "object") for (const name of Object.keys(v)) validate(s, name, root, [...path, name], errs);
        break;
      case "items":
        if (Array.isArray(v)) v.forEach((e, i) => validate(s, e, root, [...path, i], errs));
        break;
      case "pattern":
        if (typeof v === "string" && !new RegExp(s, "u").test(v)) errs.push(`${at}: ${show(v)} does not match ${s}`);
        break;
      case "minLength":
        if (typeof v === "string" && [...v].length < s) errs.push(`${at}: shorter than ${s}`);
        break;
      case "maxLength":
        if (typeof v === "string" && [...v].length > s) errs.push(`${at}: longer than ${s}`);
        break;
      case "minimum":
        if (typeof v === "bigint" && v < BigInt(s)) errs.push(`${at}: ${v} is below ${s}`);
        break;
      case "maximum":
        if (typeof v === "bigint" && v > BigInt(s)) errs.push(`${at}: ${v} is above ${s}`);
        break;
      case "enum":
        if (!s.some((e) => equal(e, v))) errs.push(`${at}: not one of ${JSON.stringify(s)}`);
        break;
      case "not": {
        const sub = [];
        validate(s, v, root, path, sub);
        if (!sub.length) errs.push(`${at}: ${show(v)} matches a schema it must not (${JSON.stringify(s)})`);
        break;
      }
      default:
        throw new Error(`schema keyword '${k}' at ${at} is not implemented by this validator`);
    }
  }
  return errs;
}

export async function main([dp, schemaFile, ...files], io) {
  const schema = JSON.parse(readFileSync(schemaFile, "utf8"));
  const answers = await decodeAll(dp, files.map((f) => ({ args: [], input: readFileSync(f) })),
    { batchSize: files.length || 1, agreeEvery: 32 });
  let failed = 0;
  for (const [i, f] of files.entries()) {
    const r = answers[i];
    let value;
    try {
      if (r.died) throw new Error(r.died);
      if (r.code !== 0) throw new Error(r.err || `exit ${r.code}`);
      value = untag(JSON.parse(r.out));
    } catch (e) {
      io.out(`FAIL ${f}: not valid TOML (${String(e.message).trim().split("\n")[0]})\n`);
      failed++;
      continue;
    }
    const errs = validate(schema, value);
    if (errs.length) failed++;
    io.out(errs.length ? `FAIL ${f}: ${errs.join(" | ")}\n` : `PASS ${f}\n`);
  }
  return failed ? 1 : 0;
}
cli(import.meta, main);
