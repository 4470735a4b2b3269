import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { STATUS_CODES } from "./errors.js";

/** The contract's table against the hand-written fixture of PROFILE §3: both ways, every status and code. */
test("STATUS_CODES is the PROFILE §3 table, no pair more or less", () => {
  const fixture: unknown = JSON.parse(
    readFileSync(new URL("../../fixtures/boundaries/status-codes.json", import.meta.url), "utf8"),
  );
  expect(fixture).toMatchObject({ pairs: STATUS_CODES });
  expect(Object.keys(STATUS_CODES)).toEqual(Object.keys(Object(fixture).pairs));
});
