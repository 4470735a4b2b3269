import { z } from "zod";

/** PROFILE rules of reading: lengths are Unicode code points, not UTF-16 units. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** Whitespace only is blank (PROFILE §4 name, §5 text). */
export function isBlank(value: string): boolean {
  return value.trim().length === 0;
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
  schema = schema.meta(max === undefined ? { minLength: min } : { minLength: min, maxLength: max });
  return schema;
}
