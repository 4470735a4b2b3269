import { z } from "zod";

/** PROFILE rules of reading: lengths are Unicode code points, not UTF-16 units. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * Whitespace only is blank (PROFILE §4 name, §5 text): a string is not blank when this finds a
 * character. `\S` is the complement of the set `trim()` removes, and reads the same in JSON
 * Schema's ECMA-262 `pattern`, so the emitted schema states the rule too.
 */
export const NOT_BLANK_PATTERN = /\S/;

export function isBlank(value: string): boolean {
  return !NOT_BLANK_PATTERN.test(value);
}

/**
 * A string bounded in code points. JSON Schema's minLength/maxLength also count code points,
 * so the emitted schema carries the same bounds.
 */
export function cpString(min: number, max?: number, opts: { notBlank?: boolean } = {}) {
  let schema = z.string().check((ctx) => {
    const n = codePointLength(ctx.value);
    if (n < min) ctx.issues.push({ code: "custom", input: ctx.value, message: `must be at least ${min} code points` });
    else if (max !== undefined && n > max)
      ctx.issues.push({ code: "custom", input: ctx.value, message: `must be at most ${max} code points` });
    else if (opts.notBlank && isBlank(ctx.value))
      ctx.issues.push({ code: "custom", input: ctx.value, message: "must not be blank" });
  });
  schema = schema.meta({
    minLength: min,
    ...(max !== undefined ? { maxLength: max } : {}),
    ...(opts.notBlank ? { pattern: NOT_BLANK_PATTERN.source } : {}),
  });
  return schema;
}

/** PROFILE §5 List: strings compare by code point (JS `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const cx = a.codePointAt(i) ?? x;
      const cy = b.codePointAt(i) ?? y;
      if (cx !== cy) return cx < cy ? -1 : 1;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
