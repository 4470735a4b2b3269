import type { z } from "zod";

/** Where a body broke its schema. Reported, never thrown: the harness reports bad shapes (PROFILE §2). */
export interface ParseIssue {
  /** dotted path into the parsed value (`data.modelSettings.temperature`), "" for the whole */
  path: string;
  code: string;
  message: string;
}

function issuesOf(error: z.ZodError, prefix = ""): ParseIssue[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((p) => p !== "").join("."),
    code: issue.code,
    message: issue.message,
  }));
}

/** Parse with `schema`, turning failure into issues. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix = ""): { value?: T; issues: ParseIssue[] } {
  const result = schema.safeParse(value);
  return result.success ? { value: result.data, issues: [] } : { issues: issuesOf(result.error, prefix) };
}
