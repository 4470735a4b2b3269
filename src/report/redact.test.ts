import { describe, expect, test } from "vitest";
import { redactAuthorizationValue, redactRun, redactSecrets, reportableRun } from "./redact.js";
import { SAMPLE_OPTIONS, SAMPLE_SECRETS, sampleRun } from "./test-support.js";

describe("redactSecrets", () => {
  test("every occurrence of every secret, also percent-encoded, becomes ***", () => {
    expect(redactSecrets("k1 and k1 then k/2 or k%2F2", ["k1", "k/2"])).toBe("*** and *** then *** or ***");
  });

  test("a key that contains another key is scrubbed whole", () => {
    expect(redactSecrets("ak_test_abc_extra", ["ak_test_abc", "ak_test_abc_extra"])).toBe("***");
  });

  test("an empty secret is ignored", () => {
    expect(redactSecrets("nothing to hide", [""])).toBe("nothing to hide");
  });

  test.for([
    ["curl -H 'Authorization: Bearer abc.def' -H 'X: y'", "curl -H 'Authorization: Bearer ***' -H 'X: y'"],
    ['curl -H "authorization: bEaReR abc"', 'curl -H "authorization: bEaReR ***"'],
    ['{"authorization":"Bearer abc","accept":"*/*"}', '{"authorization":"Bearer ***","accept":"*/*"}'],
    ['{\\"Authorization\\": \\"Bearer abc\\"}', '{\\"Authorization\\": \\"Bearer ***\\"}'],
    ["Authorization: Token abc\nX-Other: 1", "Authorization: Token ***\nX-Other: 1"],
    ["Authorization: rawkeywithoutscheme", "Authorization: ***"],
  ] as const)("an Authorization credential in text: %s", ([text, redacted]) => {
    expect(redactSecrets(text, [])).toBe(redacted);
  });

  test.for([
    "curl -H 'Authorization: Bearer $AGENT_HARNESS_KEY'",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, as a recorded curl may use
    "curl -H 'Authorization: Bearer ${AGENT_HARNESS_KEY}'",
    "Authorization: Bearer",
    "Authorization: Bearer ",
    'WWW-Authenticate: Bearer realm="agents"',
    "the Authorization header was missing",
  ])("leaves alone what is no credential: %s", (text) => {
    expect(redactSecrets(text, [])).toBe(text);
  });
});

describe("redactAuthorizationValue", () => {
  test.for([
    ["Bearer abc", "Bearer ***"],
    ["  Basic dXNlcjpwYXNz ", "  Basic *** "],
    ["abc", "***"],
    ["Bearer", "Bearer"],
    ["", ""],
  ] as const)("%j → %j", ([value, redacted]) => {
    expect(redactAuthorizationValue(value)).toBe(redacted);
  });
});

describe("redactRun", () => {
  test("scrubs every string of the run, header maps by name, and leaves the original alone", () => {
    const run = sampleRun({
      options: { ...SAMPLE_OPTIONS, keys: { [SAMPLE_SECRETS[0]]: 1 }, faults: [SAMPLE_SECRETS[1]] },
    });
    const before = JSON.stringify(run);
    const redacted = redactRun(run, [...SAMPLE_SECRETS]);
    const text = JSON.stringify(redacted);
    for (const secret of SAMPLE_SECRETS) expect(text).not.toContain(secret);
    expect(redacted.options).toMatchObject({ keys: { "***": 1 }, faults: ["***"] });
    expect(JSON.stringify(run)).toBe(before);
  });

  test("an Authorization header is masked even when its key is not in the list", () => {
    const run = sampleRun();
    const redacted = redactRun(run, []);
    const headers = redacted.checks.flatMap((c) => c.evidence ?? []).map((e) => e.request.headers);
    expect(headers.map((h) => h.authorization ?? h.Authorization)).toEqual(["Bearer ***", "Bearer ***"]);
  });
});

describe("reportableRun", () => {
  test("drops terminal colour codes from messages, keeps evidence byte for byte", () => {
    const run = sampleRun();
    const failed = run.checks[2];
    if (!failed?.evidence?.[0]?.response) throw new Error("sample changed");
    failed.message =
      "\u001b[32m- Expected\u001b[39m\n\u001b[31m+ Received\u001b[39m \u001b]8;;http://x\u0007link\u001b]8;;\u0007";
    failed.evidence[0].response.body = "\u001b[31mred\u001b[0m";
    const out = reportableRun(run).checks[2];
    expect(out?.message).toBe("- Expected\n+ Received link");
    expect(out?.evidence?.[0]?.response?.body).toBe("\u001b[31mred\u001b[0m");
  });
});
