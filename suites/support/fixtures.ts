import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { rememberToken } from "./harness.js";

/**
 * The hand-written boundary fixtures of fixtures/boundaries (STYLE §2). Long or run-specific
 * values are written as generators, objects that `expandFixture` replaces:
 *
 * - `{"$repeat": s, "times": n}`: the string s repeated n times (`"😀"` × 4000).
 * - `{"$strings": "t{i}", "times": n}`: the list `["t0", "t1", …]` of n strings, `{i}` the index.
 * - `{"$concat": [list, …]}`: the lists (each expanded first) joined into one.
 * - `{"$token": true}`: a fresh platform token, remembered so the leak check looks for it (PROFILE §4).
 * - `{"$name": true, "suffix"?: s, "padTo"?: n, "pad"?: p}`: the test agent's name (`options.name`),
 *   with s appended, then padded with p up to n code points.
 *
 * Any other object or list is expanded member by member; other values stay as they are.
 */

const BOUNDARIES = new URL("../../fixtures/boundaries/", import.meta.url);

/** A fixture file of fixtures/boundaries (`"create.json"`) as written, generators unexpanded. */
export function loadFixture<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(file, BOUNDARIES), "utf8")) as T;
}

/** Expand the generators in `value`; `name` is the test agent's name that `$name` stands for. */
export function expandFixture(value: unknown, options: { name?: string } = {}): unknown {
  if (Array.isArray(value)) return value.map((v) => expandFixture(v, options));
  if (typeof value !== "object" || value === null) return value;
  const o = value as Record<string, unknown>;
  if (typeof o.$repeat === "string" && typeof o.times === "number") return o.$repeat.repeat(o.times);
  if (typeof o.$strings === "string" && typeof o.times === "number") {
    const pattern = o.$strings;
    return Array.from({ length: o.times }, (_, i) => pattern.replaceAll("{i}", String(i)));
  }
  if (Array.isArray(o.$concat)) return o.$concat.flatMap((part) => expandFixture(part, options) as unknown[]);
  if (o.$token === true) return rememberToken(`tok-${randomUUID()}`);
  if (o.$name === true) {
    if (options.name === undefined) throw new Error("fixture: a $name generator needs the test agent's name");
    let full = options.name + (typeof o.suffix === "string" ? o.suffix : "");
    if (typeof o.padTo === "number" && typeof o.pad === "string") while ([...full].length < o.padTo) full += o.pad;
    return full;
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, expandFixture(v, options)]));
}

/** A fixture of fixtures/boundaries with its generators expanded; it may not use `$name`. */
export function loadBoundaries<T>(file: string): T {
  return expandFixture(loadFixture(file)) as T;
}
