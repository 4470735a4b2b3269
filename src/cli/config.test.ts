import { describe, expect, test } from "vitest";
import { UsageError } from "../run/usage-error.js";
import { parseVerifyConfig } from "./config.js";

describe("verify options", () => {
  test("no flags: the embedded target with its defaults", () => {
    const config = parseVerifyConfig([], {});
    expect(config).toMatchObject({ target: "embedded", referenceFaults: false, idField: "id", reportDir: "reports", fault: [] });
    expect(config.baseUrl).toBeUndefined();
  });

  test("a network between the harness and the target: delay ± jitter each way, and the intermediaries", () => {
    expect(
      parseVerifyConfig(["--network-delay", "150±50", "--network-proxy", "close-after-response,buffer-responses"], {}),
    ).toMatchObject({
      networkDelay: { ms: 150, jitterMs: 50 },
      networkProxy: ["close-after-response", "buffer-responses"],
    });
    expect(parseVerifyConfig([], { AGENT_HARNESS_NETWORK_DELAY: "40+-20" }).networkDelay).toEqual({ ms: 40, jitterMs: 20 });
  });

  test("$AGENT_API_KEYS of commas alone gives no key: the base URL still needs one", () => {
    expect(() => parseVerifyConfig(["--base-url", "https://h.example/v1"], { AGENT_API_KEYS: " , ," })).toThrow(
      /needs --api-key/,
    );
  });

  test("a switch in the environment is on or off in so many words; anything else is refused, not read as off", () => {
    for (const on of ["1", "true", "YES"]) expect(parseVerifyConfig([], { AGENT_HARNESS_BAIL: on }).bail).toBe(true);
    for (const off of ["0", "false", "No"]) expect(parseVerifyConfig([], { AGENT_HARNESS_BAIL: off }).bail).toBe(false);
    // read as off, "on" made a cleanup delete for real
    expect(() => parseVerifyConfig([], { AGENT_HARNESS_BAIL: "on" })).toThrow(/AGENT_HARNESS_BAIL=on: takes 1, true or yes/);
  });

  test("a dry run comes from --dry-run alone: $AGENT_HARNESS_DRY_RUN on (a CI job's, cleanup's) is refused, never a green that ran nothing", () => {
    expect(parseVerifyConfig(["--dry-run"]).dryRun).toBe(true);
    expect(parseVerifyConfig(["--dry-run"], { AGENT_HARNESS_DRY_RUN: "0" }).dryRun).toBe(true);
    for (const on of ["1", "true", "YES"])
      expect(() => parseVerifyConfig([], { AGENT_HARNESS_DRY_RUN: on })).toThrow(
        new RegExp(`^\\$AGENT_HARNESS_DRY_RUN=${on} is not read here: a dry run runs no check and exits 0.*--dry-run`),
      );
    for (const off of ["0", "false", "No", ""]) expect(parseVerifyConfig([], { AGENT_HARNESS_DRY_RUN: off }).dryRun).toBe(false);
    expect(() => parseVerifyConfig([], { AGENT_HARNESS_DRY_RUN: "on" })).toThrow(
      /AGENT_HARNESS_DRY_RUN=on: takes 1, true or yes/,
    );
  });

  test("each flag also reads its env var, and a flag wins over the env", () => {
    const env = { AGENT_API_BASE_URL: "http://127.0.0.1:9/v1", AGENT_API_KEY: "from-env", AGENT_API_TIER: "60" };
    expect(parseVerifyConfig([], env)).toMatchObject({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "from-env", tier: 60 });
    expect(parseVerifyConfig(["--api-key", "from-flag"], env).apiKey).toBe("from-flag");
  });

  test.for([
    [["--bogus"], /Unknown option/],
    [["--base-url", "http://x/v1"], /needs --api-key/],
    [["--base-url", "http://x/v2", "--api-key", "k"], /must end with \/v1/],
    [["--base-url", "ftp://x/v1", "--api-key", "k"], /http\(s\) URL/],
    [["--tier", "1.5"], /whole number/],
    [["--tier", "0"], /at least 1/],
    [["--rate-window", "abc"], /must be a number/],
    [["--suites", "functional,nope"], /--suites takes/],
    [["--sections", "12"], /--sections takes PROFILE sections \(§1 … §10\) or clause ids .*; §12 is neither/],
    [["--sections", "§5,list.ordr"], /list\.ordr is neither/],
    [["--target", "cloud"], /embedded or container/],
    [["--base-url", "http://x/v1", "--api-key", "k", "--fault", "drop-request-id"], /--fault applies only/],
    [["extra"], /Unexpected argument|positional/i],
    [["--profile", "quick"], /--profile must be one of: full, smoke/],
    [["--workers", "0"], /--workers must be at least 1/],
    [["--base-url", "http://x/v1", "--api-key", "k", "--tier-burst-key", "t"], /--tier-burst-key needs --tier-burst-tier/],
    [["--base-url", "http://x/v1", "--api-key", "k", "--load-tier", "5000"], /--load-tier needs --load-key/],
    [["--base-url", "http://x/v1", "--api-key", "k", "--tier-burst-tier", "100"], /--tier-burst-tier needs --tier-burst-key/],
    [["--load-key", "L"], /--load-key \(or \$AGENT_API_LOAD_KEY\) is set but the base URL is missing/],
    [["--network-delay", "fast"], /--network-delay takes MS or MS±JITTER/],
    [["--network-delay", "20±40"], /--network-delay takes/],
    [["--network-proxy", "cache"], /--network-proxy takes: close-after-response, buffer-responses/],
    [["--base-url", "http://user:PASSWORDx@127.0.0.1:8080/v1", "--api-key", "k"], /--base-url must not carry a user or password/],
    [["--base-url", "http://x/v1", "--api-key", "k", "--read-only-key="], /^--read-only-key must not be empty$/],
    [["--base-url", "http://x/v1", "--api-key", "ak_live_1\n"], /^--api-key holds a space or a control character/],
    [["--base-url", "http://x/v1", "--api-key", "k", "--quota-key", "q 1"], /^--quota-key holds a space/],
  ] as const)("%j is a usage error: %s", ([argv, message]) => {
    expect(() => parseVerifyConfig([...argv], {})).toThrow(UsageError);
    expect(() => parseVerifyConfig([...argv], {})).toThrow(message);
  });

  test("a base URL variable set but empty is a usage error, never a green run of the embedded server", () => {
    expect(() => parseVerifyConfig([], { AGENT_API_BASE_URL: "" })).toThrow(UsageError);
    expect(() => parseVerifyConfig([], { AGENT_API_BASE_URL: "" })).toThrow(/^\$AGENT_API_BASE_URL is set but empty/);
    // unset, or given by the flag: as before
    expect(parseVerifyConfig([], {}).baseUrl).toBeUndefined();
    expect(parseVerifyConfig(["--base-url", "http://x/v1", "--api-key", "k"], { AGENT_API_BASE_URL: "" }).baseUrl).toBe(
      "http://x/v1",
    );
  });

  test("a proxy variable the run cannot use is a usage error naming it, whatever the flags", () => {
    expect(() => parseVerifyConfig([], { HTTP_PROXY: "not a url" })).toThrow(UsageError);
    expect(() => parseVerifyConfig([], { HTTP_PROXY: "not a url" })).toThrow(/^\$HTTP_PROXY \(not a url\) is not a proxy URL/);
    expect(parseVerifyConfig([], { HTTPS_PROXY: "proxy.corp:3128" }).target).toBe("embedded");
  });

  test("sections accept 5 or §5, and clause ids", () => {
    expect(parseVerifyConfig(["--sections", "5,§7"], {}).sections).toEqual(["§5", "§7"]);
    expect(parseVerifyConfig(["--sections", "§7, list.order"], {}).sections).toEqual(["§7", "list.order"]);
  });

  test("a key pool: --api-key repeated and $AGENT_API_KEYS; the first is the main key, duplicates once", () => {
    const config = parseVerifyConfig(
      ["--base-url", "http://x/v1", "--api-key", "k1", "--api-key", "k2", "--api-keys", "k2, k3"],
      {},
    );
    expect(config).toMatchObject({ apiKey: "k1", mainKeys: ["k1", "k2", "k3"] });
    expect(parseVerifyConfig(["--base-url", "http://x/v1"], { AGENT_API_KEYS: "a,b" })).toMatchObject({
      apiKey: "a",
      mainKeys: ["a", "b"],
    });
  });

  test("a key without a base URL is a usage error naming the missing variable, never a green run of the embedded server", () => {
    expect(() => parseVerifyConfig(["--api-key", "k1"], {})).toThrow(
      /base URL is missing: set --base-url or \$AGENT_API_BASE_URL/,
    );
    expect(() => parseVerifyConfig([], { AGENT_API_KEYS: "a,b" })).toThrow(/--api-keys/);
  });

  test("the load scenarios' accounts on a deployment: flags or env vars", () => {
    const env = { AGENT_API_TIER_BURST_KEY: "tb", AGENT_API_TIER_BURST_TIER: "100" };
    const config = parseVerifyConfig(
      ["--base-url", "http://x/v1", "--api-key", "k", "--load-key", "L", "--load-tier", "5000"],
      env,
    );
    expect(config).toMatchObject({ loadKey: "L", loadTier: 5000, tierBurstKey: "tb", tierBurstTier: 100 });
  });

  test("profile full by default, smoke on request", () => {
    expect(parseVerifyConfig([], {}).profile).toBe("full");
    expect(parseVerifyConfig(["--profile", "smoke"], {}).profile).toBe("smoke");
  });
});

test("a value starting with a dash, given apart from its flag, is one line of usage error", () => {
  expect(() => parseVerifyConfig(["--seed", "-1"], {})).toThrow(/^Option '--seed' argument is ambiguous\. [^\n]*--seed=-XYZ'\.$/);
});
