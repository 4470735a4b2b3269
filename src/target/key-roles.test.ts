import { describe, expect, test } from "vitest";
import { EMBEDDED_DEFAULTS, type HarnessTarget, referenceKeys, targetSecrets } from "./harness-target.js";
import { KEY_ROLE_NAMES, keysOfRole } from "./key-roles.js";

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

  test("of a started reference: every key its keys file grants", () => {
    const { file, keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 2, mainKeys: 2 });
    const started = { keys: keys[0]!, keyPool: keys };
    expect(targetSecrets(started).sort()).toEqual(file.keys.map((k) => k.key).sort());
  });
});
