import { describe, expect, expectTypeOf, test } from "vitest";
import { CURL_KEY_VARIABLE } from "../client/index.js";
import { EMBEDDED_DEFAULTS, type HarnessTarget, referenceKeys, targetSecrets } from "./harness-target.js";
import { KEY_ROLE_NAMES, KEY_ROLES, type KeyRole, keysOfRole, keyVariable, roleOfKey } from "./key-roles.js";

/** PROFILE §6: the one list of what a report, a replay and a recorder scrub. */
describe("every secret a target holds", () => {
  // two keys for every role, in every key set, a lane's labels and a capacity run's tenants
  const twoOfEach = (tag: string): HarnessTarget["keys"] => ({
    main: `${tag}-main-1`,
    mainKeys: [`${tag}-main-1`, `${tag}-main-2`],
    ...Object.fromEntries(KEY_ROLE_NAMES.filter((role) => role !== "main").map((role) => [role, `${tag}-${role}`])),
    propertyKeys: [`${tag}-property-1`, `${tag}-property-2`],
  });
  const target = {
    keys: twoOfEach("a"),
    keyPool: [twoOfEach("a"), twoOfEach("b")],
    keyLabels: { "label-key": { role: "main", account: "main", footprint: "main#0" } },
  } as const satisfies Pick<HarnessTarget, "keys" | "keyPool" | "keyLabels">;
  const tenants = { keys: [{ key: "tenant-1" }, { key: "tenant-2" }] };

  test("are every key of every role of every set, the labelled keys and the tenants' keys, each once", () => {
    const secrets = targetSecrets(target, tenants);
    const expected = [
      ...[target.keys, ...target.keyPool].flatMap((set) => KEY_ROLE_NAMES.flatMap((role) => keysOfRole(set, role))),
      "label-key",
      "tenant-1",
      "tenant-2",
    ];
    expect(secrets.sort()).toEqual([...new Set(expected)].sort());
    for (const key of ["a-main-2", "b-main-2", "a-property-2", "b-readOnly"]) expect(secrets).toContain(key);
  });

  test("of a started reference: a role shared by the sets has one key and one account; every other role one per set", () => {
    const { file, keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 3, mainKeys: 1 });
    const accountOf = (key: string) => file.keys.find((k) => k.key === key)?.account;
    for (const role of KEY_ROLE_NAMES) {
      const perSet = keys.map((set) => keysOfRole(set, role)[0]!);
      const shared = (KEY_ROLES[role] as KeyRole).sharedBySets === true;
      expect(new Set(perSet).size, role).toBe(shared ? 1 : 3);
      expect(new Set(perSet.map(accountOf)).size, role).toBe(shared ? 1 : 3);
    }
    expect(new Set(file.keys.map((k) => k.key)).size, "each key granted once").toBe(file.keys.length);
    const roles = KEY_ROLE_NAMES.map((role): KeyRole => KEY_ROLES[role]);
    const accountsPerSet = new Set(roles.filter((r) => !r.sharedBySets).map((r) => r.account)).size;
    const sharedAccounts = new Set(roles.filter((r) => r.sharedBySets).map((r) => r.account)).size;
    expect(file.accounts).toHaveLength(3 * accountsPerSet + sharedAccounts);
  });

  test("of a started reference: every key its keys file grants", () => {
    const { file, keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 2, mainKeys: 2 });
    const started = { keys: keys[0]!, keyPool: keys };
    expect(targetSecrets(started).sort()).toEqual(file.keys.map((k) => k.key).sort());
  });
});

/** The table itself: every key field of a target has a row, and a started reference follows it. */
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
});
