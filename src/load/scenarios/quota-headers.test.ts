import { afterAll, beforeAll, expect, test } from "vitest";
import { PERMISSIONS } from "../../contract/index.js";
import { startReferenceServer } from "../../target/embedded.js";
import type { StartedReference } from "../../target/types.js";
import { ScenarioContext } from "../context.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt } from "../test-support.js";
import { QUOTA_HEADERS } from "./quota-headers.js";

/**
 * A conformant deployment whose quota account holds 45 messages: spending it leaves the agent's
 * message bucket (60 a window) 14, under the burst's 22 requests, and PROFILE §3 answers
 * RATE_LIMIT_EXCEEDED before the quota's refusal once the bucket is empty. No finding is due.
 */
const QUOTA = 45;
let reference: StartedReference;
beforeAll(async () => {
  reference = await startReferenceServer({
    windowSeconds: 2,
    keys: {
      accounts: [
        { id: "main", tierLimit: 10_000, messageQuota: null },
        { id: "quota", tierLimit: 10_000, messageQuota: QUOTA },
      ],
      keys: [
        { key: "ak_test_quota_headers_main_1", account: "main", permissions: [...PERMISSIONS] },
        { key: "ak_test_quota_headers_quota_1", account: "quota", permissions: [...PERMISSIONS] },
      ],
    },
  });
});
afterAll(() => reference.close());

test(
  "a quota large enough to empty the message bucket first: no finding, the burst waits for a window with room",
  { timeout: 60_000 },
  async () => {
    const target = deploymentAt(reference.baseUrl, {
      keys: { main: "ak_test_quota_headers_main_1", quota: "ak_test_quota_headers_quota_1" },
      referenceFaults: true,
      windowSeconds: 2,
      messageTimeoutSeconds: 5,
    });
    const recorder = new LoadRecorder(target, QUOTA_HEADERS.id);
    const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
    try {
      await QUOTA_HEADERS.run(ctx);
    } finally {
      await ctx.cleanup();
    }
    expect(recorder.failures.map((f) => `${f.clause}: expected ${f.expected}; received ${f.received}`)).toEqual([]);
  },
);
