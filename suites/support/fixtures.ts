import { randomUUID } from "node:crypto";
import { type ExpandOptions, expandFixture as expand } from "../../fixtures/expand.js";
import { rememberToken } from "./harness.js";

export { loadBoundaries, loadFixture } from "../../fixtures/expand.js";

/**
 * fixtures/expand.ts's expander, where a `$token` is remembered so the leak check looks for it in
 * every response (PROFILE §4).
 */
export function expandFixture(value: unknown, options: ExpandOptions = {}): unknown {
  return expand(value, { token: () => rememberToken(`tok-${randomUUID()}`), ...options });
}
