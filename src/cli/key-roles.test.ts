import { describe, expect, expectTypeOf, test } from "vitest";
import { CURL_KEY_VARIABLE } from "../client/index.js";
import { describeOptions } from "../report/model.js";
import { KEY_OPTIONS, VERIFY_OPTIONS } from "../run/config.js";
import { EMBEDDED_DEFAULTS, type HarnessTarget, keyRoles, referenceKeys } from "../target/harness-target.js";
import {
  FLAGGED_ROLES,
  flagOf,
  KEY_ROLE_NAMES,
  KEY_ROLES,
  KEY_VARIABLES,
  type KeyRole,
  keyVariable,
  needsKey,
  roleOfKey,
} from "../target/key-roles.js";
import { optionsHelp, parseVerifyConfig } from "./config.js";

/** Every place that names a key role reads it from the table: each derived thing is compared with the table's own rows. */
describe("the key-role table", () => {
  const { file, keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 1, mainKeys: 2 });
  const set = keys[0]!;
  const row = (role: (typeof KEY_ROLE_NAMES)[number]): KeyRole => KEY_ROLES[role];

  test("has a row for each key field of a target, and a started reference fills every one", () => {
    expectTypeOf<(typeof KEY_ROLE_NAMES)[number] | "mainKeys">().toEqualTypeOf<keyof HarnessTarget["keys"]>();
    expect(Object.keys(set).filter((field) => field !== "mainKeys")).toEqual(expect.arrayContaining([...KEY_ROLE_NAMES]));
    expect(Object.keys(set)).toHaveLength(KEY_ROLE_NAMES.length + 1);
    expect(roleOfKey(set, set.mainKeys![1]!)).toBe("main");
    expect(roleOfKey(set, "ak_no_role_of_this_set")).toBeUndefined();
  });

  test.for(KEY_ROLE_NAMES)("%s: a started reference grants the row's permissions; the key reads back as its role", (role) => {
    const value = set[role];
    for (const key of typeof value === "string" ? [value] : (value ?? [])) {
      expect(file.keys.find((k) => k.key === key)?.permissions).toEqual([...row(role).permissions]);
      expect(roleOfKey(set, key)).toBe(role);
    }
  });

  test.for(FLAGGED_ROLES)("%s: its verify option, help line, env var and curl variable are the row's", (role) => {
    const { flag, env, help } = KEY_ROLES[role];
    expect(VERIFY_OPTIONS[KEY_OPTIONS[role]]).toMatchObject({ flag, env, help, type: "string" });
    expect(optionsHelp(VERIFY_OPTIONS)).toMatch(new RegExp(`^ {2}${flagOf(role)} VALUE +.*\\[\\$${env}\\]$`, "m"));
    expect(keyVariable(role)).toBe(env);
    expect(KEY_VARIABLES).toContain(env);
    expect(needsKey(role)).toBe(`needs --${flag}`);
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

  test("a curl line with no role of its own reads the main role's variable (the client knows no roles)", () => {
    expect(CURL_KEY_VARIABLE).toBe(keyVariable("main"));
  });

  test.for(
    KEY_ROLE_NAMES.filter((role) => !("flag" in KEY_ROLES[role])),
  )("%s: no flag; a curl line reads it from the variable of the role that stands in for it", (role) => {
    const { standsIn } = row(role);
    expect(standsIn).toBeDefined();
    expect(keyVariable(role)).toBe(row(standsIn!).env);
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
