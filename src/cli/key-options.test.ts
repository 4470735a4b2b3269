import { describe, expect, test } from "vitest";
import { describeOptions } from "../report/model.js";
import { KEY_OPTIONS, VERIFY_OPTIONS } from "../run/config.js";
import { EMBEDDED_DEFAULTS, keyRoles, referenceKeys } from "../target/harness-target.js";
import {
  FLAGGED_ROLES,
  flagOf,
  KEY_ROLE_NAMES,
  KEY_ROLES,
  KEY_VARIABLES,
  type KeyRole,
  keyVariable,
  needsKey,
} from "../target/key-roles.js";
import { optionsHelp, parseVerifyConfig } from "./config.js";

/** The CLI reads every key option from the key-role table, and a report names each role by its row (the table itself: src/target/key-roles.test.ts). */
describe("the key options and their report", () => {
  const { keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 1, mainKeys: 2 });
  const set = keys[0]!;
  const row = (role: (typeof KEY_ROLE_NAMES)[number]): KeyRole => KEY_ROLES[role];

  test.for(FLAGGED_ROLES)("%s: its verify option, help line, env var and curl variable are the row's", (role) => {
    const { flag, env, help } = KEY_ROLES[role];
    expect(VERIFY_OPTIONS[KEY_OPTIONS[role]]).toMatchObject({ flag, env, help, type: "string" });
    expect(optionsHelp(VERIFY_OPTIONS)).toMatch(new RegExp(`^ {2}${flagOf(role)} VALUE +.*\\[\\$${env}\\]$`, "m"));
    expect(keyVariable(role)).toBe(env);
    expect(KEY_VARIABLES).toContain(env);
    // a small-quota account's key serves a reference-compatible deployment only (PROFILE §10)
    expect(needsKey(role)).toBe(`needs --${flag}${row(role).smallQuota ? " with --reference-faults" : ""}`);
    // the env var gives the key; without a base URL it is a missing CI secret, named by flag and variable
    const base = {
      [VERIFY_OPTIONS.baseUrl.env]: "http://127.0.0.1:9/v1",
      [VERIFY_OPTIONS.apiKey.env]: "main-key",
      // a tier-burst key comes with its account's tier
      ...(role === "tierBurst" ? { [VERIFY_OPTIONS.tierBurstTier.env]: "100" } : {}),
    };
    const config = parseVerifyConfig([], { ...base, [env]: "k-from-env" });
    expect(config[KEY_OPTIONS[role]]).toBe("k-from-env");
    expect(() => parseVerifyConfig([], { [env]: "k" })).toThrow(`--${flag} (or $${env}) is set but the base URL is missing`);
  });

  test("a report names each role by the row's label, never by a key", () => {
    const described = describeOptions({
      windowSeconds: 2,
      messageTimeoutSeconds: 4.5,
      tierLimit: null,
      referenceFaults: true,
      idField: "id",
      faults: [],
      keys: keyRoles(set),
    });
    const listed = described.find(([name]) => name === "keys")?.[1].split(", ");
    expect(listed).toEqual(
      KEY_ROLE_NAMES.map((role) => {
        const value = role === "main" ? set.mainKeys : set[role];
        return Array.isArray(value) && value.length > 1 ? `${row(role).label} ×${value.length}` : row(role).label;
      }),
    );
    for (const key of [set.main, set.readOnly!]) expect(JSON.stringify(described)).not.toContain(key);
  });
});
